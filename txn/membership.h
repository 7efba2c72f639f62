#ifndef STRAND_TXN_MEMBERSHIP_H_
#define STRAND_TXN_MEMBERSHIP_H_

// Which compute nodes are live, agreed through memory node 0 with one-sided
// atomics (docs/design/node_failure.md). Words (cc/root_words.h,
// kMembershipOffset):
//   live       bit n set: compute node n is a member
//   epoch      advanced by one on every change of the words below
//   fenced     bit n: n was declared failed and can write no more
//   stealable  bit n: n's unfinished commits are complete in memory, so
//              anyone may take its holder field and reader bits out of a
//              latch word
//   reclaimed  bit n: no latch word names n and its commits are durable
//              elsewhere: n may rejoin
//   beat[n]    node n's heartbeat, advanced by n every lease / 8
// A node joins by setting its bit (and clearing its stage bits), leaves by
// clearing it. A node whose heartbeat has not moved for a lease, by the
// observer's clock, has expired; DeclareFailed clears its bit with one
// CAS, so of all the survivors that see it expire exactly one succeeds:
// that one reclaims its state (after fencing it, rdma/fabric.h) and
// publishes each stage as it reaches it. A node that only paused learns
// on its next Beat that it is no longer a member.
//
// A change others must have applied before it takes effect (a rejoin)
// waits for every member to acknowledge its epoch (kSeenEpochsOffset;
// docs/design/node_failure.md, "Membership acknowledgements").
//
// Cost in round trips: Join 3 + lost races, Leave, DeclareFailed,
// Publish 2 (+1 per lost race); Beat 1; Scan 1 (every word in one batch);
// Acknowledge 1; AllAcknowledged 1. Thread-safe: each call uses the
// endpoint it is given; Scan's lease bookkeeping is the caller's to
// serialize (one monitor thread).

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rdma/fabric.h"
#include "txn/node_words.h"

namespace strand::txn {

class Membership {
 public:
  // The words of a deployment of `compute_nodes` nodes.
  static absl::StatusOr<Membership> Open(int compute_nodes,
                                         absl::Duration lease);

  int compute_nodes() const { return compute_nodes_; }
  absl::Duration lease() const { return lease_; }

  // Sets `node`'s live bit (whatever it was), clears its stage bits, and
  // advances the epoch.
  absl::Status Join(rdma::Endpoint& endpoint, rdma::ComputeNodeId node) const;
  // Clears it: the node left in good order (nothing to reclaim).
  absl::Status Leave(rdma::Endpoint& endpoint, rdma::ComputeNodeId node) const;
  // Advances `node`'s heartbeat. FailedPrecondition if it is no longer a
  // member (declared failed while it paused): it must stop.
  absl::Status Beat(rdma::Endpoint& endpoint, rdma::ComputeNodeId node) const;

  // What one look at the words found.
  struct View {
    uint64_t live = 0;  // the bitmaps
    uint64_t fenced = 0;
    uint64_t stealable = 0;
    uint64_t reclaimed = 0;
    uint64_t epoch = 0;
    // Members whose heartbeat did not move for a lease (by this observer's
    // clock, since it first saw the value).
    std::vector<rdma::ComputeNodeId> expired;
  };
  // Reads every word; `tracker` remembers, per node, the heartbeat last
  // seen and since when. Keep one per observer.
  struct Tracker {
    std::vector<uint64_t> beat;
    std::vector<absl::Time> since;
  };
  absl::StatusOr<View> Scan(rdma::Endpoint& endpoint, Tracker& tracker,
                            absl::Time now) const;

  // Clears `node`'s bit if it is set: true if this call did (the caller
  // reclaims the node), false if it was not a member (someone else
  // declared it, or it left).
  absl::StatusOr<bool> DeclareFailed(rdma::Endpoint& endpoint,
                                     rdma::ComputeNodeId node) const;

  // The reclaimer of failed node `node` reached `stage` (the words above).
  // kReclaimed also clears its stealable bit.
  enum class Stage { kFenced, kStealable, kReclaimed };
  absl::Status Publish(rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
                       Stage stage) const;

  // `observer` applied every view up to `epoch`.
  absl::Status Acknowledge(rdma::Endpoint& endpoint,
                           rdma::ComputeNodeId observer, uint64_t epoch) const;
  // Whether every node of `members` acknowledged `epoch` or later.
  absl::StatusOr<bool> AllAcknowledged(rdma::Endpoint& endpoint,
                                       uint64_t members, uint64_t epoch) const;

  static bool IsLive(uint64_t live, rdma::ComputeNodeId node) {
    return (live >> node) & 1;
  }

 private:
  Membership(int compute_nodes, absl::Duration lease, NodeWords beats,
             NodeWords seen)
      : compute_nodes_(compute_nodes),
        lease_(lease),
        beats_(beats),
        seen_(seen) {}
  // Applies `change` to the word at `word` (CAS loop); returns its value
  // before the change. Does not advance the epoch.
  absl::StatusOr<uint64_t> Change(rdma::Endpoint& endpoint,
                                  rdma::GlobalAddress word,
                                  uint64_t (*change)(uint64_t bits, int node),
                                  int node) const;
  absl::Status AdvanceEpoch(rdma::Endpoint& endpoint) const;

  int compute_nodes_;
  absl::Duration lease_;
  NodeWords beats_;
  NodeWords seen_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_MEMBERSHIP_H_
