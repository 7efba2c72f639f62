#ifndef STRAND_WAL_LOG_MERGER_H_
#define STRAND_WAL_LOG_MERGER_H_

// LogMerger: the committed transactions of every compute node's log, in
// commit-timestamp order, as recovery replays them.
//
// Why commit-timestamp order: conflicting transactions have ordered commit
// timestamps under every protocol strand runs (log_format.h), so replaying
// all records sorted by commit timestamp applies each tuple's after-images in
// the order they were committed; non-conflicting transactions commute. Ties
// (which a global timestamp counter does not produce) break by compute node
// id, then LSN, so the order is deterministic.
//
// Two-phase commit (log_format.h, kPrepare / kDistributedCommit /
// kParticipantCommit): a transaction distributed over several nodes'
// logs committed iff its coordinator's kDistributedCommit or any
// participant's kParticipantCommit is in some log. The merger yields the
// coordinator's redo and every prepared participant's redo of a committed
// one (each as a record of its own node, with the transaction's commit
// timestamp and its payload reduced to the redo ops), and drops the
// prepared branches of the others: nothing was acknowledged of them
// (presumed abort). Markers (kParticipantCommit) are not yielded.
//
// Why not a streaming k-way merge: within one node's log, records are in
// LSN order, which is not commit-timestamp order (a transaction can take its
// timestamp, be descheduled, and append after a later one). So the merger
// reads every node's log to its end (cutting torn tails as LogReader does),
// keeps the records in memory and sorts them. Cost: memory and time
// proportional to the log since the last checkpoint (checkpoint.h), which
// bounds it; one sort of (timestamp, node, LSN) keys.
//
// Acknowledgement by watermark (log_format.h, kSegmentAckedByWatermark):
// the records of such segments with a commit timestamp above the largest
// cluster watermark any log persisted (kWatermark records, or the
// checkpoint's end timestamp E, LogMergerOptions::watermark_floor: the
// checkpointer saw a cluster watermark >= E persisted, and truncation may
// have deleted the records that said so) are dropped.
// None of them was acknowledged, and each may depend on a record of
// another node that the crash lost; every record at or below that mark is
// durable in its node's log (txn/commit_watermark.h;
// docs/design/durable_acks.md). Records of other segments (acknowledged
// one by one as each became durable) are all kept.
//
// Failed nodes (docs/design/node_failure.md): a survivor that reclaimed a
// failed node logged kAdopted copies of its records that the failed
// node's log may not have made durable, then a kNodeExcluded record. The
// merger yields each adopted record as its original (of its original
// node; duplicates, from a reclaim that started over, once) and drops
// the failed node's own records in the excluded range: each is either
// adopted or never reached memory, so no survivor depends on it. Both
// happen before the watermark cut.
//
// The node set: with LogMergerOptions::compute_nodes = n (known from the
// checkpoint manifest or the image), node-0 ... node-(n-1) must all exist;
// a missing one is damage naming it (under kStopAtDamage: its log is read
// as empty and damaged at its start, so the cut below drops every record
// of the others too).
//
// Damage (log_reader.h): by default a node's damaged log fails Open. With
// DamagePolicy::kStopAtDamage (recovery's explicit opt-in) each damaged log
// is read up to its damage, and the merged history is cut at the same
// point in commit order for every node: records with a commit timestamp
// above T are dropped, T being (over the damaged nodes) the smallest
// largest commit timestamp of a record read before the damage. Without
// that cut, other nodes' later transactions, which may have read what the
// lost records wrote, would replay over a state without them (e.g. an
// index entry's removal of a row whose insert was lost). The cut is as
// close to consistent as the logs allow, not exact: a node appends in LSN
// order, not commit order, so a lost record may carry a timestamp below T.
//
//   auto merger = LogMerger::Open(wal_dir, database_id);
//   MergedRecord r;
//   while (*(*merger)->Next(&r)) Replay(r.header, r.payload);

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace strand::wal {

struct MergedRecord {
  uint32_t compute_node_id = 0;
  RecordHeader header;
  std::string payload;         // the redo ops (redo_record.h)
  uint32_t segment_flags = 0;  // of the segment it was read from
  // Logged again by the survivor that reclaimed compute_node_id
  // (kAdopted, unwrapped): exempt from that node's exclusion.
  bool adopted = false;
};

// How the two-phase commit records of partitioned mode were resolved.
struct TwoPhaseStats {
  uint64_t distributed_commits = 0;  // coordinators' kDistributedCommit
  uint64_t prepared_committed = 0;   // participants' branches replayed
  uint64_t prepared_in_doubt = 0;    // no decision found: presumed aborted
};

struct LogMergerOptions {
  // What each node's reader does with damage (see above).
  DamagePolicy policy = DamagePolicy::kFail;
  // The deployment's compute nodes, whose logs must all exist; 0: unknown
  // (whatever node-<id>/ there are).
  uint32_t compute_nodes = 0;
  // A cluster watermark known to have been persisted (see above).
  uint64_t watermark_floor = 0;
  // Recovery from a checkpoint at this timestamp: records at or below it
  // are not kept (nor, where a segment's successor says so, read:
  // LogReader::Open).
  uint64_t skip_through_ts = 0;
};

class LogMerger {
 public:
  // Reads every <wal_dir>/node-<id>/ log. A node's error (another database,
  // newer format version, a bug-shaped record) fails the whole open: replay
  // must not proceed with part of the committed history.
  static absl::StatusOr<std::unique_ptr<LogMerger>> Open(
      const std::string& wal_dir, uint64_t database_id,
      const LogMergerOptions& options);
  static absl::StatusOr<std::unique_ptr<LogMerger>> Open(
      const std::string& wal_dir, uint64_t database_id,
      DamagePolicy policy = DamagePolicy::kFail) {
    return Open(wal_dir, database_id, LogMergerOptions{.policy = policy});
  }

  // Merges the given per-node readers (each consumed to its end).
  static absl::StatusOr<std::unique_ptr<LogMerger>> FromReaders(
      std::vector<std::unique_ptr<LogReader>> readers,
      uint64_t watermark_floor = 0, uint64_t skip_through_ts = 0);

  // The next record in commit-timestamp order; false at the end.
  bool Next(MergedRecord* record);

  // Per node, how its log ended (torn tails cut, dropped bytes, damage).
  const std::vector<LogReaderStats>& node_stats() const { return stats_; }
  size_t record_count() const { return records_.size(); }
  const TwoPhaseStats& two_phase_stats() const { return two_phase_; }
  // With damage under kStopAtDamage: the commit timestamp T of the cut,
  // and how many records (of any node) it dropped because their timestamp
  // was above T.
  bool damaged() const { return damaged_; }
  // Acknowledgement by watermark: whether any segment used it, the largest
  // cluster watermark persisted (the cut), and how many records above it
  // were dropped.
  bool acked_by_watermark() const { return acked_by_watermark_; }
  uint64_t watermark_cut_ts() const { return watermark_cut_ts_; }
  uint64_t records_dropped_above_watermark() const {
    return dropped_above_watermark_;
  }
  // The largest commit timestamp of any record read, dropped or not: new
  // transactions must start above it.
  uint64_t max_commit_ts_read() const { return max_commit_ts_read_; }
  // Over every node: the largest timestamp up to which a node's log may
  // have been truncated (log_truncation.h); a base older than it cannot
  // be continued with these logs.
  uint64_t truncated_ts() const { return truncated_ts_; }
  // Records at or below LogMergerOptions::skip_through_ts read and not
  // kept, and segments not read at all.
  uint64_t records_skipped() const { return records_skipped_; }
  uint64_t segments_skipped() const { return segments_skipped_; }
  // Failed nodes' records: adopted ones yielded, excluded ones dropped.
  uint64_t records_adopted() const { return adopted_; }
  uint64_t records_excluded() const { return excluded_; }
  uint64_t damage_cut_ts() const { return damage_cut_ts_; }
  uint64_t records_dropped_at_cut() const { return dropped_at_cut_; }

 private:
  // Resolves two-phase records into redo records (see above).
  absl::Status ResolveTwoPhase();

  LogMerger() = default;

  std::vector<MergedRecord> records_;  // sorted
  size_t next_ = 0;
  std::vector<LogReaderStats> stats_;
  TwoPhaseStats two_phase_;
  bool damaged_ = false;
  uint64_t damage_cut_ts_ = 0;
  uint64_t dropped_at_cut_ = 0;
  bool acked_by_watermark_ = false;
  uint64_t watermark_cut_ts_ = 0;
  uint64_t dropped_above_watermark_ = 0;
  uint64_t max_commit_ts_read_ = 0;
  uint64_t truncated_ts_ = 0;
  uint64_t records_skipped_ = 0;
  uint64_t segments_skipped_ = 0;
  uint64_t adopted_ = 0;
  uint64_t excluded_ = 0;
};

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_MERGER_H_
