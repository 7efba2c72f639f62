#include "tpcc/acked_log.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "absl/strings/str_format.h"

namespace strand::tpcc {

absl::StatusOr<std::unique_ptr<AckedLogWriter>> AckedLogWriter::Open(
    const std::string& path) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("open %s: %s", path, std::strerror(errno)));
  }
  return std::unique_ptr<AckedLogWriter>(new AckedLogWriter(fd));
}

AckedLogWriter::~AckedLogWriter() { ::close(fd_); }

absl::Status AckedLogWriter::Append(int w, int d, int o_id) {
  AckedNewOrder r;
  r.w = w;
  r.d = d;
  r.o_id = o_id;
  const ssize_t n = ::write(fd_, &r, sizeof(r));
  if (n != static_cast<ssize_t>(sizeof(r))) {
    return absl::InternalError(absl::StrFormat(
        "acked log: write returned %d: %s", n, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<AckedLogContents> ReadAckedLog(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("open %s", path));
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  AckedLogContents out;
  const size_t whole = bytes.size() / sizeof(AckedNewOrder);
  out.partial_tail_bytes = bytes.size() % sizeof(AckedNewOrder);
  out.records.resize(whole);
  if (whole > 0) {
    std::memcpy(out.records.data(), bytes.data(),
                whole * sizeof(AckedNewOrder));
  }
  for (size_t i = 0; i < whole; ++i) {
    if (out.records[i].magic != AckedNewOrder::kMagic) {
      return absl::DataLossError(
          absl::StrFormat("%s: record %d (byte %d) has magic %#x, not %#x",
                          path, i, i * sizeof(AckedNewOrder),
                          out.records[i].magic, AckedNewOrder::kMagic));
    }
  }
  return out;
}

}  // namespace strand::tpcc
