#include "wal/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "wal/crc32c.h"
#include "wal/log_file.h"

namespace strand::wal {
namespace {

absl::Status Errno(int err, std::string_view what, const std::string& path) {
  const std::string message =
      absl::StrFormat("%s %s: %s", what, path, std::strerror(err));
  if (err == ENOSPC) return absl::ResourceExhaustedError(message);
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status WriteAll(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno, "write to", path);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 std::string_view contents) {
  const std::string tmp = path + ".tmp";
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(errno, "create", tmp);
  absl::Status status = WriteAll(fd, contents, tmp);
  if (status.ok() && ::fsync(fd) != 0) status = Errno(errno, "fsync", tmp);
  ::close(fd);
  if (!status.ok()) return status;
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Errno(errno, "rename to " + path + ":", tmp);
  }
  return SyncDirectory(DirectoryOf(path));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open", path);
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Errno(err, "read", path);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status SyncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "open", path);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : Errno(err, "fsync", path);
}

absl::StatusOr<SyncedFileWriter> SyncedFileWriter::Create(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(errno, "create", path);
  return SyncedFileWriter(path, fd);
}

SyncedFileWriter::SyncedFileWriter(std::string path, int fd)
    : path_(std::move(path)), fd_(fd) {
  buffer_.reserve(kBufferBytes);
}

SyncedFileWriter::SyncedFileWriter(SyncedFileWriter&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      buffer_(std::move(other.buffer_)),
      bytes_(other.bytes_),
      crc_(other.crc_) {}

SyncedFileWriter::~SyncedFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SyncedFileWriter::Append(std::string_view bytes) {
  crc_ = Crc32cExtend(crc_, bytes);
  bytes_ += bytes.size();
  if (buffer_.size() + bytes.size() > kBufferBytes) {
    if (absl::Status s = Flush(); !s.ok()) return s;
  }
  if (bytes.size() >= kBufferBytes) return WriteAll(fd_, bytes, path_);
  buffer_.append(bytes);
  return absl::OkStatus();
}

absl::Status SyncedFileWriter::Flush() {
  absl::Status s = WriteAll(fd_, buffer_, path_);
  buffer_.clear();
  return s;
}

absl::Status SyncedFileWriter::Finish() {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(path_ + " is finished already");
  }
  absl::Status status = Flush();
  if (status.ok() && ::fsync(fd_) != 0) status = Errno(errno, "fsync", path_);
  ::close(fd_);
  fd_ = -1;
  return status;
}

}  // namespace strand::wal
