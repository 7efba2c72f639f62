#include "wal/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace strand::wal {
namespace {

absl::Status ReadError(std::string_view what, const std::string& path,
                       int err) {
  return absl::InternalError(
      absl::StrFormat("%s %s: %s", what, path, std::strerror(err)));
}

// Reads [begin, end) of `fd` into out[begin, end).
absl::Status ReadRange(int fd, const std::string& path, uint64_t begin,
                       uint64_t end, std::string* out) {
  if (out->size() < end) out->resize(end, '\0');
  while (begin < end) {
    const ssize_t n = ::pread(fd, out->data() + begin, end - begin,
                              static_cast<off_t>(begin));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadError("read", path, errno);
    if (n == 0) {
      out->resize(begin);
      break;
    }
    begin += n;
  }
  return absl::OkStatus();
}

// Reads a segment file. Holes and unwritten (preallocated, never written)
// extents read as zeros, so only the extents that hold data are read
// (SEEK_DATA/SEEK_HOLE) and `out` ends where the last of them ends: a
// 64 MiB segment with 1 MiB of records costs a 1 MiB read.
absl::Status ReadSegmentFile(const std::string& path, std::string* out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError("open", path, errno);
  out->clear();
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = ReadError("stat", path, errno);
  } else {
    uint64_t pos = 0;
    while (status.ok() && pos < static_cast<uint64_t>(st.st_size)) {
      const off_t data = ::lseek(fd, static_cast<off_t>(pos), SEEK_DATA);
      if (data < 0 && errno == ENXIO) break;  // only a hole remains
      if (data < 0) {                         // no SEEK_DATA: read it all
        status = ReadRange(fd, path, pos, st.st_size, out);
        break;
      }
      off_t hole = ::lseek(fd, data, SEEK_HOLE);
      if (hole < 0) hole = st.st_size;
      status = ReadRange(fd, path, data, hole, out);
      pos = hole;
    }
  }
  ::close(fd);
  return status;
}

// Non-zero bytes from `from` to the last non-zero byte of `data`.
uint64_t NonZeroTail(std::string_view data, size_t from) {
  if (from >= data.size()) return 0;
  const size_t last = data.find_last_not_of('\0');
  return last == std::string_view::npos || last < from ? 0 : last + 1 - from;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogReader>> LogReader::Open(
    std::string node_dir, uint64_t database_id) {
  std::error_code ec;
  if (!std::filesystem::is_directory(node_dir, ec)) {
    return absl::NotFoundError(
        absl::StrFormat("log directory %s does not exist", node_dir));
  }
  std::vector<uint64_t> segments;
  for (const auto& entry : std::filesystem::directory_iterator(node_dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint64_t index = 0;
    if (name.size() == 12 && name.ends_with(".wal") &&
        absl::SimpleAtoi(name.substr(0, 8), &index) && index > 0) {
      segments.push_back(index);
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("list %s: %s", node_dir, ec.message()));
  }
  std::sort(segments.begin(), segments.end());
  return std::unique_ptr<LogReader>(
      new LogReader(std::move(node_dir), database_id, std::move(segments)));
}

absl::StatusOr<bool> LogReader::LoadNextSegment() {
  in_segment_ = false;
  if (next_segment_ >= segments_.size()) return false;
  segment_index_ = segments_[next_segment_++];
  path_ = SegmentPath(node_dir_, segment_index_);
  ++stats_.segments;
  if (absl::Status s = ReadSegmentFile(path_, &data_); !s.ok()) return s;
  const std::string_view data = data_;
  const bool zero_header =
      data.size() < kSegmentHeaderBytes ||
      data.substr(0, kSegmentHeaderBytes).find_first_not_of('\0') ==
          std::string_view::npos;
  absl::StatusOr<SegmentHeader> header =
      zero_header ? absl::DataLossError("zero header")
                  : DecodeSegmentHeader(data.substr(0, kSegmentHeaderBytes),
                                        database_id_, path_);
  if (!header.ok()) {
    if (header.status().code() != absl::StatusCode::kDataLoss) {
      return header.status();  // another database, newer version, not a log
    }
    // Torn while being created: skip it; the LSN check on the next segment
    // decides whether the log goes on.
    stats_.dropped_bytes += NonZeroTail(data, 0);
    stats_.end = absl::StrFormat("torn segment header in %s", path_);
    return true;
  }
  if (expected_lsn_ != 0 && header->first_lsn != expected_lsn_) {
    stats_.dropped_bytes += NonZeroTail(data, 0);
    stats_.end =
        absl::StrFormat("%s starts at LSN %d, but the log ends at LSN %d",
                        path_, header->first_lsn, expected_lsn_ - 1);
    return false;
  }
  if (expected_lsn_ == 0) {
    expected_lsn_ = std::max<Lsn>(header->first_lsn, 1);
    node_id_ = header->compute_node_id;
  }
  pos_ = kSegmentHeaderBytes;
  in_segment_ = true;
  return true;
}

void LogReader::CutSegment(std::string_view why) {
  const uint64_t dropped = NonZeroTail(data_, pos_);
  stats_.dropped_bytes += dropped;
  if (dropped > 0 || !why.empty()) {
    stats_.end =
        absl::StrFormat("%s at %s+%d (%d bytes cut)",
                        why.empty() ? "zeros" : why, path_, pos_, dropped);
  } else {
    stats_.end = absl::StrFormat("clean end at %s+%d", path_, pos_);
  }
  in_segment_ = false;
}

absl::Status LogReader::DropRemainingSegments() {
  std::string data;
  while (next_segment_ < segments_.size()) {
    const std::string path = SegmentPath(node_dir_, segments_[next_segment_++]);
    if (absl::Status s = ReadSegmentFile(path, &data); !s.ok()) return s;
    ++stats_.segments;
    stats_.dropped_bytes += NonZeroTail(data, 0);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> LogReader::Next(LogRecord* record) {
  while (!done_) {
    if (!in_segment_) {
      absl::StatusOr<bool> loaded = LoadNextSegment();
      if (!loaded.ok()) return loaded.status();
      if (!*loaded) {
        done_ = true;
        if (absl::Status s = DropRemainingSegments(); !s.ok()) return s;
        if (stats_.end.empty()) stats_.end = "empty log";
        break;
      }
      continue;
    }
    RecordHeader header;
    std::string_view payload;
    const std::string_view rest = std::string_view(data_).substr(pos_);
    switch (DecodeRecord(rest, &header, &payload)) {
      case DecodeResult::kEnd:
        CutSegment("");
        continue;
      case DecodeResult::kCorrupt:
        CutSegment("torn or corrupt record");
        continue;
      case DecodeResult::kBadType:
        return absl::DataLossError(absl::StrFormat(
            "%s+%d: record with a valid CRC but unknown type %d", path_, pos_,
            static_cast<uint8_t>(rest[8])));
      case DecodeResult::kOk:
        break;
    }
    if (header.lsn != expected_lsn_) {
      CutSegment(absl::StrFormat("stale record (LSN %d, expected %d)",
                                 header.lsn, expected_lsn_));
      continue;
    }
    record->header = header;
    record->payload = payload;
    record->compute_node_id = node_id_;
    record->segment_index = segment_index_;
    record->offset = pos_;
    pos_ += EncodedRecordBytes(header.payload_bytes);
    ++expected_lsn_;
    ++stats_.records;
    stats_.last_lsn = header.lsn;
    return true;
  }
  return false;
}

}  // namespace strand::wal
