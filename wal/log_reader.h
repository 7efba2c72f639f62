#ifndef STRAND_WAL_LOG_READER_H_
#define STRAND_WAL_LOG_READER_H_

// Reads one compute node's log (<wal_dir>/node-<id>/, log_format.h) record
// by record in LSN order, as recovery and LogWriter::Open do.
//
// What it accepts: a record whose CRC matches and whose LSN is the next one.
// The log ends at the first place that fails: zeros (the clean end), a torn
// or corrupt record (CRC mismatch, impossible length), or a record with the
// wrong LSN (stale bytes). The bytes after that point are "cut": ignored and
// counted in stats().dropped_bytes (non-zero bytes only, so the unused,
// zeroed rest of a preallocated segment is not counted). Nothing after the
// cut was ever acknowledged: LogWriter acknowledges a commit only after
// every byte before it is durable, and a new segment continues with the
// next LSN, so reading resumes in the next segment only if its header names
// exactly that LSN. A segment whose header is torn (zeros, CRC mismatch;
// the writer crashed while creating it) is skipped the same way.
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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "wal/log_format.h"

namespace strand::wal {

struct LogRecord {
  RecordHeader header;
  // Valid until Next() moves to another segment; copy to keep longer.
  std::string_view payload;
  uint32_t compute_node_id = 0;
  uint64_t segment_index = 0;
  uint64_t offset = 0;  // of the record in its segment file
};

struct LogReaderStats {
  uint64_t segments = 0;       // segment files looked at
  uint64_t records = 0;        // records returned
  Lsn last_lsn = 0;            // LSN of the last record returned
  uint64_t dropped_bytes = 0;  // non-zero bytes cut (torn/corrupt/stale)
  // Why and where reading stopped, for recovery's report, e.g.
  // "torn or corrupt record at node-0/00000002.wal+12288".
  std::string end;
};

class LogReader {
 public:
  // Lists the segments of the log in `node_dir` (NodeDirectory()). NotFound
  // if the directory does not exist; an empty directory is an empty log.
  // Every segment must belong to `database_id`.
  static absl::StatusOr<std::unique_ptr<LogReader>> Open(std::string node_dir,
                                                         uint64_t database_id);

  // The next record: true and `*record` filled, or false at the end of the
  // log. After false, stats() says how the log ended.
  absl::StatusOr<bool> Next(LogRecord* record);

  const LogReaderStats& stats() const { return stats_; }
  // Index of the last segment file (0 if none): LogWriter continues after.
  uint64_t last_segment_index() const {
    return segments_.empty() ? 0 : segments_.back();
  }

 private:
  LogReader(std::string node_dir, uint64_t database_id,
            std::vector<uint64_t> segments)
      : node_dir_(std::move(node_dir)),
        database_id_(database_id),
        segments_(std::move(segments)) {}

  // Loads segments_[next_segment_]; false if it cannot continue the log.
  absl::StatusOr<bool> LoadNextSegment();
  // Ends the current segment at pos_, counting what is cut.
  void CutSegment(std::string_view why);
  // Counts the non-zero bytes of every segment not yet loaded.
  absl::Status DropRemainingSegments();

  std::string node_dir_;
  uint64_t database_id_;
  std::vector<uint64_t> segments_;  // indexes, ascending
  size_t next_segment_ = 0;
  std::string data_;  // the loaded segment
  std::string path_;  // its path
  uint64_t segment_index_ = 0;
  uint32_t node_id_ = 0;
  size_t pos_ = 0;
  bool in_segment_ = false;
  bool done_ = false;
  Lsn expected_lsn_ = 0;  // 0 until the first segment header is read
  LogReaderStats stats_;
};

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_READER_H_
