#include "base/append_only_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace strand {

absl::StatusOr<std::unique_ptr<AppendOnlyFile>> AppendOnlyFile::Open(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("open %s: %s", path, std::strerror(errno)));
  }
  return std::unique_ptr<AppendOnlyFile>(new AppendOnlyFile(fd, path));
}

AppendOnlyFile::~AppendOnlyFile() { ::close(fd_); }

absl::Status AppendOnlyFile::Append(std::string_view record) {
  const ssize_t n = ::write(fd_, record.data(), record.size());
  if (n != static_cast<ssize_t>(record.size())) {
    return absl::InternalError(absl::StrFormat(
        "%s: write of %d bytes returned %d: %s", path_, record.size(), n,
        n < 0 ? std::strerror(errno) : "short write"));
  }
  return absl::OkStatus();
}

}  // namespace strand
