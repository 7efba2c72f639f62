#include "tpcc/acked_log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "absl/strings/str_format.h"

namespace strand::tpcc {

absl::StatusOr<std::unique_ptr<AckedLogWriter>> AckedLogWriter::Open(
    const std::string& path) {
  // A run killed in the middle of a write left a partial last record:
  // cut it, so the records this run appends stay whole (a run that carries
  // on after a crash appends to its predecessor's file).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 &&
      st.st_size % static_cast<off_t>(sizeof(AckedNewOrder)) != 0 &&
      ::truncate(path.c_str(),
                 st.st_size - st.st_size % static_cast<off_t>(
                                               sizeof(AckedNewOrder))) != 0) {
    return absl::InternalError(
        absl::StrFormat("cutting the partial last record of %s: %s", path,
                        std::strerror(errno)));
  }
  auto file = AppendOnlyFile::Open(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<AckedLogWriter>(new AckedLogWriter(*std::move(file)));
}

absl::Status AckedLogWriter::Append(int w, int d, int o_id) {
  AckedNewOrder r;
  r.w = w;
  r.d = d;
  r.o_id = o_id;
  return file_->Append(
      std::string_view(reinterpret_cast<const char*>(&r), sizeof(r)));
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
