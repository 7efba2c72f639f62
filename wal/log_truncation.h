#ifndef STRAND_WAL_LOG_TRUNCATION_H_
#define STRAND_WAL_LOG_TRUNCATION_H_

// What a node deleted from the front of its log: the file
// <node_dir>/TRUNCATED, written (atomically: a temporary file, fsync,
// rename, fsync of the directory) before the first segment it covers is
// deleted. It is what lets a reader tell a log truncated after a
// checkpoint from one that lost its first segments (log_reader.h), and
// recovery refuse a base older than what was deleted
// (docs/design/checkpoints.md):
//
//   segments below `first_segment` are deleted, or being deleted (a crash
//   may leave some of them, oldest last); every record they held had a
//   commit timestamp <= `truncated_ts`; the first record of
//   `first_segment` is LSN `first_lsn`.
//
// A note only moves forward (each field only grows). One line of text:
//   strand-log-truncation 1 first_segment=N first_lsn=L truncated_ts=T
//   crc=C
// C is the CRC32C of the text before " crc=".

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "wal/log_format.h"

namespace strand::wal {

struct TruncationNote {
  uint64_t first_segment = 1;
  Lsn first_lsn = 1;
  uint64_t truncated_ts = 0;

  friend bool operator==(const TruncationNote&,
                         const TruncationNote&) = default;
};

// "<node_dir>/TRUNCATED".
std::string TruncationNotePath(const std::string& node_dir);

// The node's note, nullopt if it never truncated. DataLoss (naming the
// file) if the note is damaged: what was deleted is then unknown.
absl::StatusOr<std::optional<TruncationNote>> ReadTruncationNote(
    const std::string& node_dir);

// Replaces the note, durably, before the caller deletes anything it
// covers.
absl::Status WriteTruncationNote(const std::string& node_dir,
                                 const TruncationNote& note);

// What a truncation deleted (LogWriter::Truncate, DiscardLog).
struct LogTruncationStats {
  uint64_t segments_deleted = 0;
  uint64_t bytes_deleted = 0;  // their file sizes
  uint64_t first_segment = 0;  // the log's first segment now
  uint64_t segments_left = 0;  // in the log now, the one written included
};

// Deletes the node's segments `indexes` (after its note covers them),
// adding their count and sizes to `*stats` and running
// `after_each_delete` after each, then syncs the directory.
absl::Status DeleteSegments(const std::string& node_dir,
                            absl::Span<const uint64_t> indexes,
                            absl::FunctionRef<void()> after_each_delete,
                            LogTruncationStats* stats);

// Truncates a log no writer has open, all of it: for recovery that
// resumes in place, once a checkpoint of the recovered pool above every
// record of the log (`ts`) is verified. The note records `ts`, and a
// writer opened later continues the segment and LSN numbering. A log
// damaged before its end (read as far as it goes) is discarded too.
// `after_each_delete` runs after each deleted segment.
absl::StatusOr<LogTruncationStats> DiscardLog(
    const std::string& node_dir, uint64_t database_id, uint64_t ts,
    absl::FunctionRef<void()> after_each_delete = [] {});

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_TRUNCATION_H_
