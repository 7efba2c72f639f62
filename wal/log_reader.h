#ifndef STRAND_WAL_LOG_READER_H_
#define STRAND_WAL_LOG_READER_H_

// Reads one compute node's log (<wal_dir>/node-<id>/, log_format.h) record
// by record in LSN order, as recovery and LogWriter::Open do.
//
// It accepts a record whose CRC matches and whose LSN is the next one. A
// segment's records end at the first place that fails; the bytes after it
// are cut (non-zero ones counted in stats().dropped_bytes), and reading goes
// on in the next segment only if its header names exactly the next LSN.
// A cut is damage (durable, perhaps acknowledged records lost), not a
// crash's torn tail, when a later record's durable watermark covers it, the
// next segment starts at another LSN, a segment is missing that no
// truncation explains (log_truncation.h), or a segment's header is damaged
// or its file short. Damage is DataLoss naming the node, segment, offset and
// LSN (kFail, the default); under kStopAtDamage the log ends there and
// stats().damage says the same. Refused, naming the file: another database
// or a newer format version (FailedPrecondition), not a strand log
// (InvalidArgument), a record with a matching CRC but an unknown type
// (DataLoss). Cost: each segment's written extents are read into memory and
// decoded in place (a payload is valid until the next segment loads); a cut
// costs one scan of the rest of its segment. No internal locking.
// The evidence and its limits: docs/design/wal.md, "Torn tail or damage".

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "wal/log_format.h"
#include "wal/log_truncation.h"

namespace strand::wal {

struct LogRecord {
  RecordHeader header;
  // Valid until Next() moves to another segment; copy to keep longer.
  std::string_view payload;
  uint32_t compute_node_id = 0;
  uint64_t segment_index = 0;
  uint64_t offset = 0;         // of the record in its segment file
  uint32_t segment_flags = 0;  // its segment header's (log_format.h)
};

// What the reader does with damage before the end of the log.
enum class DamagePolicy {
  kFail,          // Next returns DataLoss naming it
  kStopAtDamage,  // the log ends before it; stats().damage describes it
};

struct LogReaderStats {
  std::string node;            // the node directory's name, e.g. "node-0"
  uint64_t segments = 0;       // segment files looked at
  uint64_t records = 0;        // records returned
  Lsn last_lsn = 0;            // LSN of the last record returned
  uint64_t dropped_bytes = 0;  // non-zero bytes cut (torn/corrupt/stale)
  // Why and where reading stopped, for recovery's report, e.g.
  // "torn or corrupt record at node-0/00000002.wal+12288".
  std::string end;
  // kStopAtDamage only: non-empty if the log was damaged before its end
  // (what kFail returns as the error); the log was read up to it.
  std::string damage;
  // The node truncated its log after a checkpoint: every record with a
  // commit timestamp <= this may be gone (log_truncation.h); 0 if never.
  uint64_t truncated_ts = 0;
  // Segments not read: a checkpoint holds all their records.
  uint64_t segments_skipped = 0;
};

class LogReader {
 public:
  // Lists the segments of the log in `node_dir` (NodeDirectory()). NotFound
  // if the directory does not exist; an empty directory is an empty log.
  // Every segment must belong to `database_id`.
  // `skip_through_ts` (recovery from a checkpoint at that timestamp): a
  // segment whose next segment's header says every record in it has a
  // commit timestamp at or below it is not read at all (format version 6,
  // log_format.h); neither are its records checked for damage: the
  // checkpoint holds them.
  static absl::StatusOr<std::unique_ptr<LogReader>> Open(
      std::string node_dir, uint64_t database_id,
      DamagePolicy policy = DamagePolicy::kFail, uint64_t skip_through_ts = 0);

  // The next record: true and `*record` filled, or false at the end of the
  // log. After false, stats() says how the log ended.
  absl::StatusOr<bool> Next(LogRecord* record);

  const LogReaderStats& stats() const { return stats_; }
  // Index of the last segment file (0 if none): LogWriter continues after.
  // After the end: where a writer continues (0 if nowhere yet): the last
  // segment's index, and the LSN of the last record, counting the
  // segments and records a truncation deleted (log_truncation.h).
  uint64_t last_segment_index() const;
  Lsn end_lsn() const;
  // The segment files found at Open, ascending.
  const std::vector<uint64_t>& segment_indexes() const { return segments_; }
  // The node's truncation note, if it ever truncated its log.
  const std::optional<TruncationNote>& truncation() const { return note_; }
  const std::string& node_dir() const { return node_dir_; }

 private:
  LogReader(std::string node_dir, uint64_t database_id, DamagePolicy policy,
            std::vector<uint64_t> segments);

  // Whether segments_[next_segment_] may go unread (skip_through_ts_); if
  // so, the LSN the segment after it starts at.
  std::optional<Lsn> SkippableNext();

  // Loads segments_[next_segment_]; false at the end of the log (or at
  // damage under kStopAtDamage).
  absl::StatusOr<bool> LoadNextSegment();
  // Ends the current segment's records at pos_, counting what is cut, and
  // checks the rest of the segment for records that prove damage.
  absl::Status EndSegment(std::string_view why);
  // "the records of 00000001.wal end at offset 8192 (zeros) after LSN 41".
  std::string EndOfRecords() const;
  // Reports damage at the last cut: `evidence` says why it is not a torn
  // tail. kFail: the error; kStopAtDamage: ends the log, returns OK.
  absl::Status Damage(std::string_view evidence);
  // Counts the non-zero bytes of every segment not yet loaded.
  absl::Status DropRemainingSegments();

  std::string node_dir_;
  uint64_t database_id_;
  DamagePolicy policy_;
  uint64_t skip_through_ts_ = 0;
  std::vector<uint64_t> segments_;  // indexes, ascending
  size_t next_segment_ = 0;
  std::string data_;  // the loaded segment
  std::string path_;  // its path
  uint64_t segment_index_ = 0;
  uint32_t segment_flags_ = 0;
  uint32_t node_id_ = 0;
  size_t pos_ = 0;
  bool in_segment_ = false;
  bool done_ = false;
  Lsn expected_lsn_ = 0;  // 0 until the first segment header is read
  uint64_t previous_segment_index_ = 0;  // of the last segment looked at
  std::optional<TruncationNote> note_;
  bool finished_ = false;  // remaining segments counted
  // Where the records stopped last (segment 0: nowhere yet) and why, for
  // damage reports.
  uint64_t cut_segment_ = 0;
  uint64_t cut_offset_ = 0;
  std::string cut_why_;
  LogReaderStats stats_;
};

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_READER_H_
