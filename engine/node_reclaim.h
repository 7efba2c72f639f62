#ifndef STRAND_ENGINE_NODE_RECLAIM_H_
#define STRAND_ENGINE_NODE_RECLAIM_H_

// Reclaiming a failed compute node (docs/design/node_failure.md): what the
// one survivor whose DeclareFailed won (txn/membership.h) does, in order,
// publishing each stage so every survivor's cache acts on it:
//   1. fence it (rdma Fabric::Fence): it can write no more; survivors stop
//      waiting for its answers (stage kFenced);
//   2. read its redo ring (txn/redo_ring.h) and redo the physical writes
//      of every record not marked done, in timestamp order: its
//      half-applied commits are complete in memory (stage kStealable:
//      survivors may take its part out of latch words they meet);
//   3. with a log: log every ring record above its published node mark
//      again, as kAdopted, then a kNodeExcluded record (wal/log_format.h),
//      wait until they are durable, and raise its node mark to kClosed:
//      the cluster's durable watermark no longer waits for it, and
//      recovery drops the records of its own log that are not part of
//      the history the survivors went on from;
//   4. take its holder field and reader bits out of every latch word
//      (cc/selcc/latch_scan.h); stage kReclaimed: it may rejoin.
// A paused node that resumes finds every operation failing (fenced).
// Run again on a reclaim that stopped part-way, it resumes: no redo past
// kStealable, no relog once the mark is closed (docs/design/
// node_failure.md, "A reclaimer that fails too").

// Partitioned mode: once it is fenced, the survivors' branches of its
// transactions are resolved from its decision words (resolve_branches;
// partition/decision_board.h), and of its ring records, a distributed
// commit not done whose decision word does not name it was never decided:
// it is neither redone nor logged again (presumed abort). Before the
// survivors learn of the failure, its prepared branches of their
// transactions (ring records written before its yes votes) are decided
// with their coordinators' words: redone if decided commit, else marked
// aborted there and dropped (partition/decision_board.h).

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/selcc/latch_scan.h"
#include "rdma/fabric.h"
#include "txn/membership.h"
#include "wal/log_writer.h"

namespace strand::engine {

struct ReclaimReport {
  rdma::ComputeNodeId node = 0;       // the failed one
  rdma::ComputeNodeId reclaimer = 0;  // who reclaimed it
  absl::Duration fence_time, ring_time, relog_time, scan_time, total_time;
  uint64_t node_mark = 0;          // its published durable mark when fenced
  uint64_t oracle = 0;             // the timestamp oracle when fenced
  uint64_t ring_records = 0;       // intact records in its ring
  uint64_t records_reapplied = 0;  // not done: redone
  uint64_t records_relogged = 0;   // above its mark: adopted
  // Partitioned mode: undecided distributed commits left out of its ring;
  // survivors' branches of its transactions committed and aborted.
  uint64_t records_undecided = 0;
  uint64_t branches_committed = 0, branches_aborted = 0;
  // Its own prepared branches (as participant) redone and dropped.
  uint64_t prepared_committed = 0, prepared_aborted = 0;
  cc::selcc::LatchScanResult latches;

  std::string ToString() const;
};

struct ReclaimContext {
  rdma::Fabric* fabric = nullptr;
  const txn::Membership* membership = nullptr;
  rdma::ComputeNodeId self = 0;        // the reclaimer
  rdma::Endpoint* endpoint = nullptr;  // one of self's
  wal::LogWriter* log = nullptr;       // self's; null without a log
  uint32_t gcl_size = 0;
  // Called after each stage is published, so this process's caches learn
  // it at once rather than at the monitor's next look.
  std::function<void()> on_stage;
  // Partitioned mode, once the failed node is fenced: ends the branches of
  // its transactions on every survivor, counting them in the report.
  std::function<absl::Status(ReclaimReport&)> resolve_branches;
};

absl::StatusOr<ReclaimReport> ReclaimNode(const ReclaimContext& context,
                                          rdma::ComputeNodeId failed);

}  // namespace strand::engine

#endif  // STRAND_ENGINE_NODE_RECLAIM_H_
