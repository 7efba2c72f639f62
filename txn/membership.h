#ifndef STRAND_TXN_MEMBERSHIP_H_
#define STRAND_TXN_MEMBERSHIP_H_

// Which compute nodes are live, agreed through memory node 0 with one-sided
// atomics. Words (cc/root_words.h, kMembershipOffset): `live` (bit n: a
// member), `epoch` (advanced on every change), the reclaim stages
// `fenced`, `stealable` and `reclaimed` (bit n: n reached that stage), and
// `beat[n]` (n's heartbeat, every lease / 8). A node whose heartbeat has
// not moved for a lease has expired; DeclareFailed claims its reclaim with
// one CAS, so exactly one survivor wins, clears its bit and reclaims it,
// publishing each stage. A paused node learns on its next Beat that it is out.
// A rejoin waits until every member acknowledged its epoch. `reclaimer[n]`
// names the survivor that claimed n's reclaim: a reclaim whose claimant failed
// too (fenced) is claimed again by another survivor (Claim), which
// resumes it from the stages published.
// Design: docs/design/node_failure.md ("Membership", "Membership
// acknowledgements").
//
// Cost in round trips: Join 4 + lost races, Leave, DeclareFailed 4, Claim,
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

  // Sets `node`'s live bit (whatever it was), clears its stage bits and
  // reclaimer, and advances the epoch.
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
    // Per node, who claimed its last reclaim (-1: nobody).
    std::vector<int> reclaimer;
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

  // Claims `node`'s reclaim for `claimant`, then clears its bit: true if
  // this call did both (the caller reclaims the node); false if someone
  // else claimed it first, or it was not a member (it left: the claim is
  // dropped again). Claiming first means a failed node is never out of
  // the membership with nobody named to reclaim it.
  absl::StatusOr<bool> DeclareFailed(rdma::Endpoint& endpoint,
                                     rdma::ComputeNodeId node,
                                     rdma::ComputeNodeId claimant) const;
  // Moves the claim on `node`'s reclaim from `from` to `to` (-1: nobody);
  // true if this call did. For a claimant that failed too, once it is
  // fenced (it can write no more): another survivor takes its reclaim
  // over, or drops the claim if `node` is well after all.
  absl::StatusOr<bool> Claim(rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
                             int from, int to) const;
  // The `reclaimed` bitmap as it is now (a Scan's may be older).
  absl::StatusOr<uint64_t> Reclaimed(rdma::Endpoint& endpoint) const;
  // Clears a member's bit for a survivor that took its claim over (the
  // claimant failed between DeclareFailed's two steps); true if this call
  // did.
  absl::StatusOr<bool> Remove(rdma::Endpoint& endpoint,
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
             NodeWords seen, NodeWords reclaimers)
      : compute_nodes_(compute_nodes),
        lease_(lease),
        beats_(beats),
        seen_(seen),
        reclaimers_(reclaimers) {}
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
  NodeWords reclaimers_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_MEMBERSHIP_H_
