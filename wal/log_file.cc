#include "wal/log_file.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "wal/log_format.h"

namespace strand::wal {
namespace {

absl::Status ErrnoStatus(int err, std::string_view what,
                         std::string_view path) {
  const std::string message =
      absl::StrFormat("%s %s: %s", what, path, std::strerror(err));
  return err == ENOSPC ? absl::ResourceExhaustedError(message)
                       : absl::InternalError(message);
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

class UringLogFile : public LogFile {
 public:
  UringLogFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~UringLogFile() override {
    if (ring_ready_) io_uring_queue_exit(&ring_);
    ::close(fd_);
  }

  absl::Status Init(unsigned queue_depth) {
    const int rc = io_uring_queue_init(queue_depth, &ring_, 0);
    if (rc < 0) return ErrnoStatus(-rc, "io_uring_queue_init for", path_);
    ring_ready_ = true;
    depth_ = queue_depth;
    return absl::OkStatus();
  }

  absl::Status WriteAndSync(std::span<const LogWrite> writes) override {
    // Writes in waves of at most depth-1 (one entry stays for the sync);
    // a short write is resubmitted for its remainder in the next wave.
    std::vector<LogWrite> pending(writes.begin(), writes.end());
    while (!pending.empty()) {
      const size_t wave = std::min<size_t>(pending.size(), depth_ - 1);
      for (size_t i = 0; i < wave; ++i) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        io_uring_prep_write(sqe, fd_, pending[i].data,
                            static_cast<unsigned>(pending[i].size),
                            pending[i].offset);
        io_uring_sqe_set_data64(sqe, i);
      }
      absl::Status status = SubmitAndReap(wave, &pending);
      if (!status.ok()) return status;
    }
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
    io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
    io_uring_sqe_set_data64(sqe, kSyncTag);
    return SubmitAndReap(1, nullptr);
  }

  const std::string& path() const override { return path_; }

 private:
  static constexpr uint64_t kSyncTag = ~uint64_t{0};

  // Submits `count` queued entries, waits for all their completions. For
  // writes, removes the completed ones from the front of `pending` and keeps
  // the remainder of short writes.
  absl::Status SubmitAndReap(size_t count, std::vector<LogWrite>* pending) {
    int rc = io_uring_submit_and_wait(&ring_, static_cast<unsigned>(count));
    if (rc < 0) return ErrnoStatus(-rc, "io_uring_submit on", path_);
    absl::Status status;
    std::vector<LogWrite> remainder;
    for (size_t done = 0; done < count; ++done) {
      io_uring_cqe* cqe = nullptr;
      do {
        rc = io_uring_wait_cqe(&ring_, &cqe);
      } while (rc == -EINTR);
      if (rc < 0) return ErrnoStatus(-rc, "io_uring_wait_cqe on", path_);
      const uint64_t tag = io_uring_cqe_get_data64(cqe);
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      if (tag == kSyncTag) {
        if (res < 0 && status.ok())
          status = ErrnoStatus(-res, "fdatasync", path_);
        continue;
      }
      const LogWrite& w = (*pending)[tag];
      if (res < 0) {
        if (status.ok()) status = ErrnoStatus(-res, "write to", path_);
      } else if (res == 0) {
        if (status.ok()) status = ErrnoStatus(EIO, "zero-byte write to", path_);
      } else if (static_cast<size_t>(res) < w.size) {
        remainder.push_back({w.offset + res, w.data + res, w.size - res});
      }
    }
    if (pending != nullptr) {
      pending->erase(pending->begin(), pending->begin() + count);
      pending->insert(pending->end(), remainder.begin(), remainder.end());
    }
    return status;
  }

  std::string path_;
  int fd_;
  io_uring ring_{};
  bool ring_ready_ = false;
  unsigned depth_ = 0;
};

absl::Status ZeroFill(LogFile& file, uint64_t size_bytes) {
  constexpr size_t kChunk = 1 << 20;
  void* zeros = std::aligned_alloc(kBlockBytes, kChunk);
  std::memset(zeros, 0, kChunk);
  std::vector<LogWrite> writes;
  for (uint64_t off = 0; off < size_bytes; off += kChunk) {
    writes.push_back(
        {off, static_cast<const char*>(zeros),
         static_cast<size_t>(std::min<uint64_t>(kChunk, size_bytes - off))});
  }
  absl::Status status = file.WriteAndSync(writes);
  std::free(zeros);
  return status;
}

class UringFactory : public LogFileFactory {
 public:
  absl::StatusOr<std::unique_ptr<LogFile>> Create(
      const std::string& path, const LogFileOptions& options) override {
    if (options.queue_depth < 2) {
      return absl::InvalidArgumentError("LogFileOptions.queue_depth < 2");
    }
    if (options.io_mode == LogIoMode::kDirect &&
        options.size_bytes % kBlockBytes != 0) {
      return absl::InvalidArgumentError(
          "O_DIRECT segment size must be a multiple of 4 KiB");
    }
    int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    if (options.io_mode == LogIoMode::kDirect) flags |= O_DIRECT;
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0 && errno == EINVAL && (flags & O_DIRECT) != 0) {
      // The file system does not do O_DIRECT (tmpfs before Linux 6.6):
      // buffered instead. The refused open has created the file already
      // (the O_DIRECT check follows the create; O_EXCL would have failed
      // first on a file that existed), so this open must not be exclusive.
      LOG_FIRST_N(WARNING, 1) << path << ": O_DIRECT not supported here, "
                              << "writing the log buffered + fdatasync";
      fd = ::open(path.c_str(), flags & ~(O_DIRECT | O_EXCL), 0644);
    }
    if (fd < 0) {
      if (errno == EEXIST) {
        return absl::AlreadyExistsError(path + " already exists");
      }
      return ErrnoStatus(errno, "create", path);
    }
    auto file = std::make_unique<UringLogFile>(path, fd);
    if (options.size_bytes > 0 &&
        ::fallocate(fd, 0, 0, static_cast<off_t>(options.size_bytes)) != 0) {
      const int err = errno;
      ::unlink(path.c_str());
      return ErrnoStatus(err, "fallocate", path);
    }
    absl::Status status = file->Init(options.queue_depth);
    if (status.ok() && options.zero_fill) {
      status = ZeroFill(*file, options.size_bytes);
    }
    if (status.ok()) status = SyncDirectory(DirName(path));
    if (!status.ok()) {
      ::unlink(path.c_str());
      return status;
    }
    return std::unique_ptr<LogFile>(std::move(file));
  }
};

}  // namespace

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open directory", dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoStatus(err, "fsync directory", dir);
  return absl::OkStatus();
}

std::string_view LogIoModeName(LogIoMode mode) {
  return mode == LogIoMode::kDirect ? "direct" : "buffered";
}

absl::StatusOr<LogIoMode> ParseLogIoMode(std::string_view name) {
  if (name == "buffered") return LogIoMode::kBuffered;
  if (name == "direct") return LogIoMode::kDirect;
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown log I/O mode '%s' (expected buffered or direct)", name));
}

LogFileFactory& UringLogFileFactory() {
  static UringFactory* factory = new UringFactory;
  return *factory;
}

}  // namespace strand::wal
