#ifndef STRAND_TXN_MEMBERSHIP_H_
#define STRAND_TXN_MEMBERSHIP_H_

// Which compute nodes are live, agreed through memory node 0 with one-sided
// atomics. Words (cc/root_words.h, kMembershipOffset): `live` (bit n: a
// member), `epoch` (advanced on every change), the reclaim stages
// `fenced`, `stealable` and `reclaimed` (bit n: n reached that stage), and
// `beat[n]` (n's heartbeat, every lease / 8). A node whose heartbeat has
// not moved for a lease has expired; DeclareFailed clears its bit with one
// CAS, so exactly one survivor wins and reclaims it, publishing each
// stage. A paused node learns on its next Beat that it is out. A rejoin
// waits until every member acknowledged its epoch.
// Design: docs/design/node_failure.md ("Membership", "Membership
// acknowledgements").
//
// Cost in round trips: Join 3 + lost races, Leave, DeclareFailed,
// Publish 2 (+1 per lost race); Beat 1; Scan 1 (every word in one batch);
// Acknowledge 1; AllAcknowledged 1; WaitAcknowledged 1 + 2 per look.
// Thread-safe: each call uses the
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

  // Reads the epoch, then waits until every member acknowledged it (so
  // every process applied each view up to it: a reclaimer's fence reached
  // them all) or stopped being one; DeadlineExceeded by `deadline`,
  // naming the members that did neither.
  absl::Status WaitAcknowledged(rdma::Endpoint& endpoint,
                                absl::Time deadline) const;

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
