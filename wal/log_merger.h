#ifndef STRAND_WAL_LOG_MERGER_H_
#define STRAND_WAL_LOG_MERGER_H_

// LogMerger: the committed transactions of every compute node's log, in
// commit-timestamp order (ties: compute node id, then LSN), as recovery
// replays them: conflicting transactions have ordered commit timestamps, so
// this reapplies each tuple's after-images as they were committed.
//
//   auto merger = LogMerger::Open(wal_dir, database_id);
//   MergedRecord r;
//   while (*(*merger)->Next(&r)) Replay(r.header, r.payload);  // or error
//
// What it yields: a two-phase commit transaction's redo of every node iff
// its decision or a participant's marker is in some log (else presumed
// aborted); from segments acknowledged by watermark, only records at or
// below the largest persisted cluster watermark (or watermark_floor); a
// failed node's records its reclaimer logged again (kAdopted) once each, as
// that node's, and none of its own in the range excluded (kNodeExcluded).
// With compute_nodes = n, node-0 ... node-(n-1) must all exist. Damage
// fails Open (kFail); kStopAtDamage cuts every node's history at one commit
// timestamp (damage_cut_ts()).
// Cost: Open reads every log to its end, keeps each record's position
// (about 90 bytes a record) and sorts once; Next reads the record again
// (usually from the page cache) and rechecks its CRC. No internal locking.
// Design: docs/design/wal.md, "Merging: every node's log in commit order".

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
  // A cluster watermark known to have been persisted: a checkpoint's end
  // timestamp E (docs/design/durable_acks.md).
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

  ~LogMerger();  // closes the segment file Next read last
  LogMerger(const LogMerger&) = delete;
  LogMerger& operator=(const LogMerger&) = delete;

  // The next record in commit-timestamp order; false at the end, or the
  // error reading its redo back.
  absl::StatusOr<bool> Next(MergedRecord* record);

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
  // A kept record, its redo left in its segment file.
  struct Entry {
    uint32_t compute_node_id = 0;  // as yielded (adopted: the original's)
    bool adopted = false;
    uint32_t segment_flags = 0;
    // The on-disk record's (its LSN and payload length; only the type of
    // an adopted or two-phase record is replaced).
    RecordHeader header;
    uint32_t log = 0;  // index in node_dirs_ of the log holding the redo
    uint64_t segment_index = 0;
    // The record in its segment file (read again, and its CRC checked, by
    // Next), and the redo within its payload.
    uint64_t record_offset = 0;
    uint32_t redo_begin = 0;
    uint32_t redo_bytes = 0;
  };
  // Where `redo` (a view into `record`'s payload) is in its file.
  static Entry EntryOf(const LogRecord& record, uint32_t log,
                       std::string_view redo);

  // Resolves two-phase records into redo records (see above).
  void ResolveTwoPhase();

  LogMerger() = default;

  std::vector<std::string> node_dirs_;
  std::vector<Entry> records_;  // sorted
  size_t next_ = 0;
  // The segment file Next read last (records in commit order mostly stay
  // in one segment of each node for a while).
  int fd_ = -1;
  std::string fd_path_;
  std::string record_bytes_;  // the record Next read last
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
