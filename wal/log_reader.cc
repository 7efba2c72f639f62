#include "wal/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/coding.h"

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

// "00000002.wal": a segment's file name, as messages name it.
std::string SegmentName(uint64_t index) {
  return std::filesystem::path(SegmentPath("", index)).filename().string();
}

// A valid record in data[from..] whose watermark says `lsn` was durable
// when it was appended (log_format.h), or nullopt. Cheap tests first: a
// CRC only for a candidate.
struct Evidence {
  uint64_t offset;
  RecordHeader header;
};
std::optional<Evidence> FindRecordAppendedAfterDurable(std::string_view data,
                                                       size_t from, Lsn lsn) {
  for (size_t q = from; q + kRecordHeaderBytes <= data.size();
       q += kRecordAlignment) {
    const char* p = data.data() + q;
    // A record type, then 3 reserved zero bytes.
    const uint32_t type = DecodeFixed<uint32_t>(p + 8);
    if (type < static_cast<uint8_t>(RecordType::kCommit) ||
        type > kMaxRecordType) {
      continue;
    }
    const uint32_t distance = DecodeFixed<uint32_t>(p + 12);
    const Lsn record_lsn = DecodeFixed<uint64_t>(p + 16);
    if (distance == 0 || record_lsn <= distance ||
        record_lsn - distance < lsn) {
      continue;
    }
    Evidence e{q, {}};
    std::string_view payload;
    if (DecodeRecord(data.substr(q), &e.header, &payload) ==
        DecodeResult::kOk) {
      return e;
    }
  }
  return std::nullopt;
}

}  // namespace

LogReader::LogReader(std::string node_dir, uint64_t database_id,
                     DamagePolicy policy, std::vector<uint64_t> segments)
    : node_dir_(std::move(node_dir)),
      database_id_(database_id),
      policy_(policy),
      segments_(std::move(segments)) {
  std::filesystem::path dir(node_dir_);
  stats_.node =
      (dir.has_filename() ? dir : dir.parent_path()).filename().string();
}

absl::StatusOr<std::unique_ptr<LogReader>> LogReader::Open(
    std::string node_dir, uint64_t database_id, DamagePolicy policy) {
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
  return std::unique_ptr<LogReader>(new LogReader(
      std::move(node_dir), database_id, policy, std::move(segments)));
}

std::string LogReader::EndOfRecords() const {
  if (cut_segment_ == 0) return "the log has no record before it";
  return absl::StrFormat("the records of %s end at offset %d (%s) after LSN %d",
                         SegmentName(cut_segment_), cut_offset_, cut_why_,
                         expected_lsn_ - 1);
}

absl::Status LogReader::Damage(std::string_view what) {
  const std::string message = absl::StrFormat(
      "%s: the log is damaged before its end: %s. Replaying only the "
      "records before the damage would silently lose the committed "
      "transactions after it",
      node_dir_, what);
  if (policy_ == DamagePolicy::kFail) return absl::DataLossError(message);
  stats_.damage = message;
  done_ = true;
  in_segment_ = false;
  return absl::OkStatus();
}

absl::StatusOr<bool> LogReader::LoadNextSegment() {
  in_segment_ = false;
  if (next_segment_ >= segments_.size()) return false;
  segment_index_ = segments_[next_segment_++];
  path_ = SegmentPath(node_dir_, segment_index_);
  ++stats_.segments;
  const uint64_t expected_index = previous_segment_index_ + 1;
  previous_segment_index_ = segment_index_;
  if (absl::Status s = ReadSegmentFile(path_, &data_); !s.ok()) return s;
  const std::string_view data = data_;
  const Lsn next_lsn = std::max<Lsn>(expected_lsn_, 1);
  if (segment_index_ != expected_index) {
    stats_.dropped_bytes += NonZeroTail(data, 0);
    const std::string what =
        expected_index == 1
            ? absl::StrFormat(
                  "segment %s is missing (the log starts with %s): the "
                  "records from LSN 1 on are lost",
                  SegmentName(1), SegmentName(segment_index_))
            : absl::StrFormat(
                  "%s, and segment %s is missing (%s follows): the records "
                  "from LSN %d on are lost",
                  EndOfRecords(), SegmentName(expected_index),
                  SegmentName(segment_index_), next_lsn);
    if (absl::Status s = Damage(what); !s.ok()) return s;
    return false;
  }
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
    stats_.dropped_bytes += NonZeroTail(data, 0);
    const uint64_t record_bytes = NonZeroTail(data, kSegmentHeaderBytes);
    if (record_bytes > 0) {
      // A writer syncs a segment's header before its first record.
      if (absl::Status s = Damage(absl::StrFormat(
              "the header of segment %s is %s, but the segment holds %d "
              "bytes of records: the records from LSN %d on are lost",
              SegmentName(segment_index_), zero_header ? "zeros" : "corrupt",
              record_bytes, next_lsn));
          !s.ok()) {
        return s;
      }
      return false;
    }
    // Torn while being created, before any record: skip it; the next
    // segment (a restarted writer's) must start at next_lsn.
    stats_.end = absl::StrFormat("torn segment header in %s", path_);
    return true;
  }
  if (header->first_lsn != next_lsn) {
    stats_.dropped_bytes += NonZeroTail(data, 0);
    std::string what;
    if (expected_lsn_ == 0) {
      what = absl::StrFormat(
          "the first segment %s starts at LSN %d: the records from LSN 1 on "
          "are missing",
          SegmentName(segment_index_), header->first_lsn);
    } else if (header->first_lsn > next_lsn) {
      what = absl::StrFormat(
          "%s, but the next segment %s starts at LSN %d: LSN %d to LSN %d "
          "are lost",
          EndOfRecords(), SegmentName(segment_index_), header->first_lsn,
          next_lsn, header->first_lsn - 1);
    } else {
      what = absl::StrFormat(
          "%s, but the next segment %s starts at LSN %d, which the log had "
          "passed",
          EndOfRecords(), SegmentName(segment_index_), header->first_lsn);
    }
    if (absl::Status s = Damage(what); !s.ok()) return s;
    return false;
  }
  if (expected_lsn_ == 0) {
    expected_lsn_ = next_lsn;
    node_id_ = header->compute_node_id;
  }
  segment_flags_ = header->flags;
  pos_ = kSegmentHeaderBytes;
  in_segment_ = true;
  return true;
}

absl::Status LogReader::EndSegment(std::string_view why) {
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
  cut_segment_ = segment_index_;
  cut_offset_ = pos_;
  cut_why_ = why.empty() ? "zeros" : std::string(why);
  if (dropped == 0) return absl::OkStatus();
  const std::optional<Evidence> later =
      FindRecordAppendedAfterDurable(data_, pos_, expected_lsn_);
  if (!later.has_value()) return absl::OkStatus();  // a torn tail
  return Damage(absl::StrFormat(
      "record LSN %d at %s offset %d is missing or damaged (%s), but record "
      "LSN %d at offset %d of the same segment was appended after LSN %d "
      "was durable",
      expected_lsn_, SegmentName(segment_index_), pos_, cut_why_,
      later->header.lsn, later->offset, later->header.durable_lsn));
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
      if (!*loaded) done_ = true;
      continue;
    }
    RecordHeader header;
    std::string_view payload;
    const std::string_view rest = std::string_view(data_).substr(pos_);
    absl::Status ended;
    switch (DecodeRecord(rest, &header, &payload)) {
      case DecodeResult::kEnd:
        ended = EndSegment("");
        break;
      case DecodeResult::kCorrupt:
        ended = EndSegment("torn or corrupt record");
        break;
      case DecodeResult::kBadType:
        return absl::DataLossError(absl::StrFormat(
            "%s+%d: record with a valid CRC but unknown type %d", path_, pos_,
            static_cast<uint8_t>(rest[8])));
      case DecodeResult::kOk:
        if (header.lsn != expected_lsn_) {
          ended = EndSegment(absl::StrFormat(
              "stale record (LSN %d, expected %d)", header.lsn, expected_lsn_));
          break;
        }
        record->header = header;
        record->payload = payload;
        record->compute_node_id = node_id_;
        record->segment_index = segment_index_;
        record->offset = pos_;
        record->segment_flags = segment_flags_;
        pos_ += EncodedRecordBytes(header.payload_bytes);
        ++expected_lsn_;
        ++stats_.records;
        stats_.last_lsn = header.lsn;
        return true;
    }
    if (!ended.ok()) return ended;
  }
  if (!finished_) {
    finished_ = true;
    if (absl::Status s = DropRemainingSegments(); !s.ok()) return s;
    if (stats_.end.empty()) stats_.end = "empty log";
  }
  return false;
}

}  // namespace strand::wal
