#include "engine/node_reclaim.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/failure_point.h"
#include "cc/root_words.h"
#include "partition/decision_board.h"
#include "rdma/batch.h"
#include "txn/commit_watermark.h"
#include "txn/node_words.h"
#include "txn/redo_ring.h"
#include "wal/failover_records.h"
#include "wal/two_phase_records.h"

namespace strand::engine {
namespace {

using Stage = txn::Membership::Stage;

// How long, beyond 8 leases, the survivors get to acknowledge a fence.
constexpr absl::Duration kFenceAckBound = absl::Seconds(30);

absl::Status Publish(const ReclaimContext& c, rdma::ComputeNodeId failed,
                     Stage stage) {
  if (absl::Status s = c.membership->Publish(*c.endpoint, failed, stage);
      !s.ok()) {
    return s;
  }
  if (c.on_stage) c.on_stage();
  return absl::OkStatus();
}

// Redoes the physical writes of the records not marked done, oldest
// first: the failed node held every line they wrote, so nothing newer is
// there to be overwritten.
absl::Status Reapply(rdma::Endpoint& endpoint,
                     std::vector<txn::RedoRing::Record>& records,
                     ReclaimReport& report) {
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return a.commit_ts < b.commit_ts;
  });
  for (const txn::RedoRing::Record& r : records) {
    if (r.done) continue;
    for (const auto& w : r.writes) {
      if (absl::Status s = endpoint.Write(
              w.remote, w.bytes.data(), static_cast<uint32_t>(w.bytes.size()));
          !s.ok()) {
        return s;
      }
    }
    ++report.records_reapplied;
  }
  return absl::OkStatus();
}

// A distributed commit whose record is not done may have stopped between
// its ring record and its decision word (partition/decision_board.h), or
// lost that word to a failed participant's reclaimer: then none of its
// data reached memory, and its participants abort. Such a record is
// dropped. One not done and decided is still its slot's last decision.
absl::Status DropUndecided(rdma::Endpoint& endpoint, const rdma::Fabric& fabric,
                           rdma::ComputeNodeId failed,
                           std::vector<txn::RedoRing::Record>& records,
                           ReclaimReport& report) {
  for (auto it = records.begin(); it != records.end();) {
    if (it->done || it->type != wal::RecordType::kDistributedCommit ||
        wal::CoordinatorOf(it->txn_id) != failed) {
      ++it;
      continue;
    }
    absl::StatusOr<bool> decided =
        partition::Decided(endpoint, fabric, it->txn_id, failed);
    if (!decided.ok()) return decided.status();
    if (*decided) {
      ++it;
    } else {
      ++report.records_undecided;
      it = records.erase(it);
    }
  }
  return absl::OkStatus();
}

// A prepared branch of the failed node as participant (Txn::RecordPrepared:
// a kPrepare record not done, of another node's transaction) is redone iff
// its coordinator, perhaps alive, decided commit; otherwise the reclaimer
// marks it aborted on the coordinator's word, first, and drops it
// (partition/decision_board.h's Resolve). Run before the survivors learn
// of the failure, while their coordinators still wait for its
// acknowledgement of their last decisions (Slot::WaitAcked).
absl::Status ResolvePrepared(rdma::Endpoint& endpoint,
                             const rdma::Fabric& fabric,
                             rdma::ComputeNodeId failed,
                             std::vector<txn::RedoRing::Record>& records,
                             ReclaimReport& report) {
  for (auto it = records.begin(); it != records.end();) {
    if (it->done || it->type != wal::RecordType::kPrepare ||
        wal::CoordinatorOf(it->txn_id) == failed) {
      ++it;  // a commit of its own
      continue;
    }
    absl::StatusOr<bool> commit =
        partition::Resolve(endpoint, fabric, it->txn_id);
    if (!commit.ok()) return commit.status();
    if (*commit) {
      ++report.prepared_committed;
      ++it;
    } else {
      ++report.prepared_aborted;
      it = records.erase(it);
    }
  }
  return absl::OkStatus();
}

// Step 3 (node_reclaim.h).
absl::Status Relog(const ReclaimContext& c, rdma::ComputeNodeId failed,
                   const std::vector<txn::RedoRing::Record>& records,
                   ReclaimReport& report) {
  for (const txn::RedoRing::Record& r : records) {
    if (r.commit_ts <= report.node_mark || r.redo.empty()) continue;
    auto lsn =
        c.log->AppendRecord(wal::RecordType::kAdopted, r.txn_id, r.commit_ts,
                            wal::EncodeAdoptedPayload(failed, r.type, r.redo));
    if (!lsn.ok()) return lsn.status();
    ++report.records_relogged;
  }
  auto lsn = c.log->AppendRecord(
      wal::RecordType::kNodeExcluded, failed, report.oracle,
      wal::EncodeExclusionPayload(report.node_mark, report.oracle));
  if (!lsn.ok()) return lsn.status();
  if (absl::Status s = c.log->WaitDurable(*lsn); !s.ok()) return s;
  // Only now: every record of it a survivor may depend on is durable.
  absl::StatusOr<txn::NodeWords> marks =
      txn::NodeWords::At(cc::kDurableMarksOffset, cc::kDurableMarksBytes,
                         c.fabric->compute_node_count());
  if (!marks.ok()) return marks.status();
  return marks
      ->RaiseTo(*c.endpoint, failed, report.node_mark,
                txn::CommitWatermark::kClosed)
      .status();
}

}  // namespace

std::string ReclaimReport::ToString() const {
  return absl::StrFormat(
      "compute node %d reclaimed by node %d in %s (fence %s, ring %s, relog "
      "%s, latch scan %s): node mark %d, oracle %d, %d ring records, %d "
      "redone, %d logged again, %d undecided dropped; %d branches of its "
      "transactions committed and %d aborted; of its prepared branches %d "
      "committed and %d aborted; %d latch words read, %d held exclusive and "
      "%d shared by it",
      node, reclaimer, absl::FormatDuration(total_time),
      absl::FormatDuration(fence_time), absl::FormatDuration(ring_time),
      absl::FormatDuration(relog_time), absl::FormatDuration(scan_time),
      node_mark, oracle, ring_records, records_reapplied, records_relogged,
      records_undecided, branches_committed, branches_aborted,
      prepared_committed, prepared_aborted, latches.lines,
      latches.holder_fields, latches.reader_bits);
}

absl::StatusOr<ReclaimReport> ReclaimNode(const ReclaimContext& c,
                                          rdma::ComputeNodeId failed) {
  ReclaimReport report;
  report.node = failed;
  report.reclaimer = c.self;
  rdma::Endpoint& endpoint = *c.endpoint;
  const absl::Time start = absl::Now();

  if (absl::Status s = c.fabric->Fence(failed); !s.ok()) return s;
  if (absl::Status s = Publish(c, failed, Stage::kFenced); !s.ok()) return s;
  // Every survivor's process applied the fence before anything of the
  // failed node is taken over: their listeners drop its messages, their
  // caches wait for its answers no more and hand it nothing (a survivor in
  // another process learns of the fence from the membership words alone).
  // A survivor that neither acknowledges nor beats is declared failed
  // after its lease and stops counting.
  if (absl::Status s = c.membership->WaitAcknowledged(
          endpoint, absl::Now() + kFenceAckBound + 8 * c.membership->lease());
      !s.ok()) {
    return s;
  }
  ReachFailurePoint(c.self, FailurePoint::kReclaimFenced);
  // Resumed (an earlier claimant failed, or this reclaim ended in an
  // error): past kStealable, survivors may have taken its latches and
  // written the lines since, so its ring must not be redone again.
  txn::Membership::Tracker scratch;
  absl::StatusOr<txn::Membership::View> view =
      c.membership->Scan(endpoint, scratch, absl::Now());
  if (!view.ok()) return view.status();
  const bool redone =
      (((view->stealable | view->reclaimed) >> failed) & 1) != 0;
  absl::StatusOr<std::vector<txn::RedoRing::Record>> records =
      txn::RedoRing::Read(endpoint, failed);
  if (!records.ok()) return records.status();
  report.ring_records = records->size();
  if (absl::Status s =
          ResolvePrepared(endpoint, *c.fabric, failed, *records, report);
      !s.ok()) {
    return s;
  }
  if (c.resolve_branches) {
    if (absl::Status s = c.resolve_branches(report); !s.ok()) return s;
  }
  const absl::Time fenced = absl::Now();
  report.fence_time = fenced - start;

  // Its mark and the oracle, now that it can move neither.
  absl::StatusOr<txn::NodeWords> marks =
      txn::NodeWords::At(cc::kDurableMarksOffset, cc::kDurableMarksBytes,
                         c.fabric->compute_node_count());
  if (!marks.ok()) return marks.status();
  rdma::Batch batch;
  batch.FetchAndAdd(marks->word(failed), 0, &report.node_mark);
  batch.FetchAndAdd(cc::RootWordAddress(cc::RootWord::kTimestampOracle), 0,
                    &report.oracle);
  if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;

  if (absl::Status s =
          DropUndecided(endpoint, *c.fabric, failed, *records, report);
      !s.ok()) {
    return s;
  }
  if (!redone) {
    if (absl::Status s = Reapply(endpoint, *records, report); !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = Publish(c, failed, Stage::kStealable); !s.ok()) return s;
  ReachFailurePoint(c.self, FailurePoint::kReclaimStealable);
  const absl::Time ring_done = absl::Now();
  report.ring_time = ring_done - fenced;

  // A mark of kClosed: an earlier claimant's relog is durable already.
  if (c.log != nullptr && report.node_mark != txn::CommitWatermark::kClosed) {
    if (absl::Status s = Relog(c, failed, *records, report); !s.ok()) return s;
  }
  const absl::Time relogged = absl::Now();
  report.relog_time = relogged - ring_done;

  std::vector<cc::selcc::SkipRange> rings;
  for (int n = 0; n < c.fabric->compute_node_count(); ++n) {
    absl::StatusOr<txn::RedoRing::Span> ring = txn::RedoRing::Where(
        endpoint, static_cast<rdma::ComputeNodeId>(n), c.fabric->chunk_bytes());
    if (!ring.ok()) return ring.status();
    if (!ring->start.is_null()) rings.push_back({ring->start, ring->bytes});
  }
  absl::StatusOr<cc::selcc::LatchScanResult> scan =
      cc::selcc::ClearNodeFromLatchWords(endpoint, *c.fabric, failed,
                                         c.gcl_size, rings);
  if (!scan.ok()) return scan.status();
  report.latches = *scan;
  if (absl::Status s = Publish(c, failed, Stage::kReclaimed); !s.ok()) return s;
  const absl::Time end = absl::Now();
  report.scan_time = end - relogged;
  report.total_time = end - start;
  return report;
}

}  // namespace strand::engine
