#ifndef STRAND_WAL_LOG_FILE_H_
#define STRAND_WAL_LOG_FILE_H_

// The file layer under the log writer: a segment file that takes a batch of
// block-aligned writes and returns once they are durable. LogWriter writes
// only through these interfaces, so tests can inject failures and delays
// (tests/wal/wal_test_util.h) and check what was durable when a
// commit was acknowledged.
//
// The real implementation uses io_uring (liburing), one ring per open
// segment: WriteAndSync queues one write SQE per LogWrite (all in flight at
// once, up to the ring depth) and an fdatasync SQE flagged IOSQE_IO_DRAIN so
// it starts only after every write has completed, then submits them with a
// single system call and reaps the completions. Cost per call: one
// io_uring_enter (more only past the ring depth) plus the device's flush
// latency, which dominates (see wal_bench: "fsync latency").
//
// Failure model: any error, including a failed fdatasync, is final for the
// file. After a failed fsync Linux may already have dropped the dirty pages
// and reports the error once ("fsyncgate"), so a retry could falsely
// succeed; LogWriter therefore never retries and fails every pending commit.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strand::wal {

// How segment data reaches the device.
enum class LogIoMode {
  // write() into the page cache, then fdatasync.
  kBuffered,
  // O_DIRECT writes (4 KiB aligned buffers, offsets and lengths) bypassing
  // the page cache, then fdatasync (still needed: it flushes the device's
  // write cache and the extent metadata of preallocated blocks).
  //
  // The default. wal_bench on the development VM (virtio disk, ext4): the
  // 4 KiB write+fdatasync p50 was 130-240 us in every run with O_DIRECT,
  // while buffered's p50 was as low in some runs and ~4 ms in others;
  // group-commit throughput was the same within the VM's noise. O_DIRECT
  // also copies nothing into the page cache and leaves no dirty pages for
  // background writeback to compete with the next flush. Where the file
  // system refuses O_DIRECT (tmpfs: EINVAL), Create falls back to buffered
  // and logs a warning once.
  kDirect,
};

std::string_view LogIoModeName(LogIoMode mode);
// "buffered" or "direct".
absl::StatusOr<LogIoMode> ParseLogIoMode(std::string_view name);

struct LogFileOptions {
  LogIoMode io_mode = LogIoMode::kDirect;
  // The file is preallocated to this size with fallocate when created.
  uint64_t size_bytes = 0;
  // Also write zeros over the whole file at creation (and sync), so later
  // fdatasyncs need not convert unwritten extents (a journal commit each).
  bool zero_fill = false;
  // Submission queue entries of the file's io_uring ring: writes in flight.
  unsigned queue_depth = 64;
};

// One write of a batch. In kDirect mode `data` must be kBlockBytes aligned
// and `offset` and `size` multiples of kBlockBytes; LogWriter always
// writes whole blocks in either mode.
struct LogWrite {
  uint64_t offset = 0;
  const char* data = nullptr;
  size_t size = 0;
};

// One open segment file. Not thread-safe: LogWriter calls it from its
// flusher thread only.
class LogFile {
 public:
  virtual ~LogFile() = default;

  // Writes every LogWrite (concurrently, in any order) and then makes them
  // durable (fdatasync). OK means all of them are on stable storage; any
  // error means nothing can be assumed about any of them.
  virtual absl::Status WriteAndSync(std::span<const LogWrite> writes) = 0;

  virtual const std::string& path() const = 0;
};

// Creates segment files. Create must make the new file's existence durable
// (fsync of the directory) before returning OK.
class LogFileFactory {
 public:
  virtual ~LogFileFactory() = default;
  // Fails with AlreadyExists if `path` exists.
  virtual absl::StatusOr<std::unique_ptr<LogFile>> Create(
      const std::string& path, const LogFileOptions& options) = 0;
};

// fsync of a directory: makes the creation of its entries durable.
absl::Status SyncDirectory(const std::string& dir);

// The io_uring factory (stateless, process-wide).
LogFileFactory& UringLogFileFactory();

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_FILE_H_
