#ifndef STRAND_TESTS_WAL_WAL_TEST_UTIL_H_
#define STRAND_TESTS_WAL_WAL_TEST_UTIL_H_

// Helpers for the wal/ suites: a temporary directory, whole-file access,
// and a LogFileFactory that injects failures and delays and records what
// was made durable, so tests can check acknowledgements against it.

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "wal/log_file.h"
#include "wal/log_reader.h"

namespace strand::wal::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& data);

// Reads a node's log to its end; fails the test on an error.
std::vector<LogRecord> ReadAll(const std::string& node_dir,
                               uint64_t database_id,
                               std::vector<std::string>* payloads,
                               LogReaderStats* stats = nullptr);

// Where a byte of a node's log is: (segment index, offset). Segments are
// written in index order, so positions compare lexicographically.
using LogPosition = std::tuple<uint64_t, uint64_t>;

class FaultInjectingLogFileFactory : public LogFileFactory {
 public:
  enum class Fault {
    kWrite,  // WriteAndSync fails without writing anything
    kSync,   // data written, then the sync fails
  };

  explicit FaultInjectingLogFileFactory(
      LogFileFactory* inner = &UringLogFileFactory())
      : inner_(inner) {}

  // WriteAndSync call number `call` (counting from 1 over all files) and
  // every later one fail with `fault`.
  void FailFromCall(int64_t call, Fault fault);
  // Every successful WriteAndSync sleeps this long after the data is durable
  // and before it is recorded and returned: a writer that acknowledges early
  // is caught in the window.
  void set_sync_delay(absl::Duration delay);
  void set_fail_create(bool fail);
  // WriteAndSync hands its writes to the real file one at a time, last
  // first: io_uring may complete the writes of one submission in any
  // order, so a writer must never give it two that overlap.
  void set_reverse_writes(bool reverse);
  // WriteAndSync of a file whose path contains `path_part` blocks, before
  // writing anything, until ReleaseWrites: that log stops becoming durable
  // (a node whose disk stalls, or that a crash will catch with nothing of
  // it on disk). Several parts may be held.
  void HoldWrites(const std::string& path_part);
  void ReleaseWrites();
  // Writes blocked by HoldWrites now.
  int held_writes() const;

  // The end of the last byte made durable.
  LogPosition durable() const;
  int64_t calls() const;

  absl::StatusOr<std::unique_ptr<LogFile>> Create(
      const std::string& path, const LogFileOptions& options) override;

 private:
  class File;

  LogFileFactory* const inner_;
  mutable absl::Mutex mu_;
  int64_t calls_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t fail_from_ ABSL_GUARDED_BY(mu_) = 0;
  Fault fault_ ABSL_GUARDED_BY(mu_) = Fault::kWrite;
  absl::Duration sync_delay_ ABSL_GUARDED_BY(mu_);
  bool fail_create_ ABSL_GUARDED_BY(mu_) = false;
  bool reverse_writes_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> held_ ABSL_GUARDED_BY(mu_);
  int held_writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::CondVar released_;
  LogPosition durable_ ABSL_GUARDED_BY(mu_){0, 0};
};

}  // namespace strand::wal::testing

#endif  // STRAND_TESTS_WAL_WAL_TEST_UTIL_H_
