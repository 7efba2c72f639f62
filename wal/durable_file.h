#ifndef STRAND_WAL_DURABLE_FILE_H_
#define STRAND_WAL_DURABLE_FILE_H_

// Small helpers for files that must be either wholly there or not at all
// after a crash: checkpoint files and manifests (checkpoint_store.h), the
// log's truncation note (log_truncation.h).
//
// Errors name the file and the system call; ENOSPC is ResourceExhausted,
// a missing file NotFound, others Internal.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strand::wal {

// Writes `contents` to <path>.tmp, fsyncs it, renames it to `path` and
// fsyncs the directory: afterwards `path` holds `contents`, and a crash at
// any point leaves either the old file (or none) or the new one.
absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents);

// The whole file.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path);

// fsync of a file by path (after a writer closed it).
absl::Status SyncFile(const std::string& path);

// Streams a new file through a buffer, computing its CRC32C and size;
// Finish() writes the rest and fsyncs it. Not thread-safe.
class SyncedFileWriter {
 public:
  // Creates `path` (truncating a leftover of a crashed writer).
  static absl::StatusOr<SyncedFileWriter> Create(const std::string& path);
  SyncedFileWriter(SyncedFileWriter&& other) noexcept;
  SyncedFileWriter& operator=(SyncedFileWriter&&) = delete;
  ~SyncedFileWriter();

  absl::Status Append(std::string_view bytes);
  // Writes what is buffered and fsyncs the file; no Append afterwards.
  absl::Status Finish();

  uint64_t bytes() const { return bytes_; }
  uint32_t crc() const { return crc_; }
  const std::string& path() const { return path_; }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;
  SyncedFileWriter(std::string path, int fd);
  absl::Status Flush();

  std::string path_;
  int fd_ = -1;
  std::string buffer_;
  uint64_t bytes_ = 0;
  uint32_t crc_ = 0;
};

}  // namespace strand::wal

#endif  // STRAND_WAL_DURABLE_FILE_H_
