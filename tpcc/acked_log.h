#ifndef STRAND_TPCC_ACKED_LOG_H_
#define STRAND_TPCC_ACKED_LOG_H_

// The acknowledged-New-Order side file (`tpcc --acked_log=FILE`): the
// driver appends one fixed-size record per New-Order whose Session::Call
// returned OK, with a single write(2) on an O_APPEND descriptor, right after
// the call returned. The kernel keeps written bytes across a SIGKILL of the
// writer, so after a kill -9 the file holds whole records, except perhaps a
// partial last one (a write cut short), which the reader detects and drops.
// A crash test checks every record against the recovered database: with the
// WAL on, an acknowledged New-Order is durable (tests/tpcc/tpcc_crash_test.cc).
//
// Record: 16 bytes, host byte order: magic, warehouse, district, order id.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/append_only_file.h"

namespace strand::tpcc {

struct AckedNewOrder {
  static constexpr uint32_t kMagic = 0x4e4f4b41;  // "AKON"
  uint32_t magic = kMagic;
  int32_t w = 0, d = 0, o_id = 0;
};
static_assert(sizeof(AckedNewOrder) == 16, "one fixed-size record");

// Appends records; thread-safe (each Append is one write(2) on O_APPEND).
class AckedLogWriter {
 public:
  // Creates `path` or appends to it, after cutting a partial last record
  // a killed writer left.
  static absl::StatusOr<std::unique_ptr<AckedLogWriter>> Open(
      const std::string& path);

  absl::Status Append(int w, int d, int o_id);

 private:
  explicit AckedLogWriter(std::unique_ptr<AppendOnlyFile> file)
      : file_(std::move(file)) {}
  std::unique_ptr<AppendOnlyFile> file_;
};

struct AckedLogContents {
  std::vector<AckedNewOrder> records;
  uint64_t partial_tail_bytes = 0;  // a last record cut short, dropped
};

// Reads every whole record. DataLoss if a whole record has a bad magic
// (the file is not a side file, or was corrupted).
absl::StatusOr<AckedLogContents> ReadAckedLog(const std::string& path);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_ACKED_LOG_H_
