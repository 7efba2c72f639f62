#ifndef STRAND_WAL_LOG_READER_H_
#define STRAND_WAL_LOG_READER_H_

// Reads one compute node's log (<wal_dir>/node-<id>/, log_format.h) record
// by record in LSN order, as recovery and LogWriter::Open do.
//
// What it accepts: a record whose CRC matches and whose LSN is the next one.
// A segment's records end at the first place that fails: zeros (the clean
// end), a torn or corrupt record (CRC mismatch, impossible length), or a
// record with the wrong LSN. The bytes after that point are "cut": ignored
// and counted in stats().dropped_bytes (non-zero bytes only, so the unused,
// zeroed rest of a preallocated segment is not counted). Reading goes on in
// the next segment only if its header names exactly the next LSN (a writer
// that reopened the log after a crash continues there, log_writer.h).
//
// Torn tail or damage: a cut is the torn tail of a crash only if nothing
// that was durable can lie after it. The reader decides from what the
// writer guarantees (log_writer.h): a commit is acknowledged only after
// every record before it is synced; segment N+1 is created only after all
// of segment N's records were synced; a segment is preallocated to its
// full size and its header synced under a temporary name, before it is
// renamed into place and gets any record. So the cut before the expected
// LSN E is damage (committed, perhaps acknowledged transactions lost) when
//   - a valid record after it in its segment was appended when E was
//     already durable (its durable watermark, log_format.h, is >= E);
//   - the next segment file exists but starts at another LSN than E;
//   - a segment file is missing: a gap in the indexes, or a first segment
//     other than 00000001.wal at LSN 1 that no truncation after a
//     checkpoint explains (log_truncation.h: the first segment must be
//     the note's, at the note's LSN, or one below it that a crash kept
//     while the segments below the note's were being deleted);
//   - a segment's header is damaged, or the file is shorter than the
//     size its header records (truncated: to 0 bytes, to its header, in
//     the middle of a record).
// Everything else is a torn tail: the cut in the newest segment, or one a
// restarted writer continued after. Records of the crashed flush may follow
// a torn record (a flush writes its blocks concurrently); their watermark
// predates E, they were never acknowledged, and they are cut. Limit: a
// damaged record whose successors all belong to its own flush, or damage
// in a log of format < 4 (no watermark) within the last segment, looks
// exactly like a torn tail and is read as one; a whole newest segment that
// was deleted leaves no trace.
//
// Damage is an error (DataLoss, `DamagePolicy::kFail`, the default) whose
// message names the node, segment, offset and LSN of the first missing
// record and the evidence; with `kStopAtDamage` the log ends there
// instead and stats().damage says the same (recovery's explicit opt-in to
// lose what follows).
//
// What it refuses (Next or Open returns the error, naming the file): a
// segment of another database (FailedPrecondition), of a newer format
// version (FailedPrecondition), a file that is not a strand log
// (InvalidArgument), and a record with a matching CRC but an unknown type
// (DataLoss: a bug, not a torn write).
//
// Cost: each segment's written extents are read into memory (found with
// SEEK_DATA/SEEK_HOLE, so the preallocated, never-written rest of a segment
// is not read unless it was zero-filled), then records are decoded in
// place; a record's payload stays valid until the next segment is loaded.
// A cut costs one pass over the rest of its segment (an 8-byte-step scan
// that computes a CRC only for a candidate record with a watermark >= E).

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
