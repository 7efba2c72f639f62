#ifndef STRAND_BASE_APPEND_ONLY_FILE_H_
#define STRAND_BASE_APPEND_ONLY_FILE_H_

// A file that records are appended to, each with one write(2) on an
// O_APPEND descriptor: appends from several threads never interleave, and
// the kernel keeps written bytes across a SIGKILL of the writer (a crash
// can cut only the last record short). Side files of benchmark runs (tpcc's
// acknowledged New-Orders, its Delivery results) use it. No fsync: what a
// power failure keeps is not promised.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strand {

class AppendOnlyFile {
 public:
  // Creates `path` or appends to it.
  static absl::StatusOr<std::unique_ptr<AppendOnlyFile>> Open(
      const std::string& path);
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // Thread-safe. An error if the write was short or failed.
  absl::Status Append(std::string_view record);

  const std::string& path() const { return path_; }

 private:
  AppendOnlyFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  const int fd_;
  const std::string path_;
};

}  // namespace strand

#endif  // STRAND_BASE_APPEND_ONLY_FILE_H_
