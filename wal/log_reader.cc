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
#include "wal/log_truncation.h"

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
absl::Status ReadSegmentFile(const std::string& path, std::string* out,
                             uint64_t* file_bytes = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError("open", path, errno);
  out->clear();
  struct stat st;
  absl::Status status;
  if (::fstat(fd, &st) != 0) {
    status = ReadError("stat", path, errno);
  } else {
    if (file_bytes != nullptr) *file_bytes = static_cast<uint64_t>(st.st_size);
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
    std::string node_dir, uint64_t database_id, DamagePolicy policy,
    uint64_t skip_through_ts) {
  std::error_code ec;
  if (!std::filesystem::is_directory(node_dir, ec)) {
    return absl::NotFoundError(
        absl::StrFormat("log directory %s does not exist", node_dir));
  }
  absl::StatusOr<std::optional<TruncationNote>> note =
      ReadTruncationNote(node_dir);
  if (!note.ok() && policy == DamagePolicy::kFail) return note.status();
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
  std::unique_ptr<LogReader> reader(new LogReader(
      std::move(node_dir), database_id, policy, std::move(segments)));
  reader->skip_through_ts_ = skip_through_ts;
  // A damaged note under kStopAtDamage: read as if there were none (a
  // log that does not start at segment 1 is then damaged at its start).
  if (note.ok()) reader->note_ = *note;
  if (reader->note_.has_value()) {
    reader->stats_.truncated_ts = reader->note_->truncated_ts;
  }
  return reader;
}

Lsn LogReader::end_lsn() const {
  if (expected_lsn_ != 0) return expected_lsn_ - 1;
  return note_.has_value() ? note_->first_lsn - 1 : 0;
}

uint64_t LogReader::last_segment_index() const {
  const uint64_t noted = note_.has_value() ? note_->first_segment - 1 : 0;
  return segments_.empty() ? noted : std::max(segments_.back(), noted);
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

std::optional<Lsn> LogReader::SkippableNext() {
  if (skip_through_ts_ == 0 || next_segment_ + 1 >= segments_.size() ||
      segments_[next_segment_ + 1] != segments_[next_segment_] + 1) {
    return std::nullopt;
  }
  const std::string next = SegmentPath(node_dir_, segments_[next_segment_ + 1]);
  const int fd = ::open(next.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string block(kSegmentHeaderBytes, '\0');
  const ssize_t n = ::pread(fd, block.data(), block.size(), 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(block.size())) return std::nullopt;
  absl::StatusOr<SegmentHeader> header =
      DecodeSegmentHeader(block, database_id_, next);
  // Anything doubtful: read the segment as usual (and meet what is wrong).
  if (!header.ok() || header->previous_max_commit_ts_plus_one == 0 ||
      header->previous_max_commit_ts_plus_one - 1 > skip_through_ts_) {
    return std::nullopt;
  }
  return header->first_lsn;
}

absl::StatusOr<bool> LogReader::LoadNextSegment() {
  in_segment_ = false;
  if (next_segment_ >= segments_.size()) return false;
  // A segment a checkpoint holds whole, with the next segment right after
  // it, is stepped over: the next one then continues the log (its header
  // names its first LSN). Not past a gap the truncation note does not
  // explain, which is reported as usual.
  while (next_segment_ + 1 < segments_.size()) {
    if (previous_segment_index_ == 0 &&
        (note_.has_value() ? segments_[next_segment_] > note_->first_segment
                           : segments_[next_segment_] != 1)) {
      break;
    }
    const std::optional<Lsn> next_first = SkippableNext();
    if (!next_first.has_value()) break;
    previous_segment_index_ = segments_[next_segment_++];
    ++stats_.segments;
    ++stats_.segments_skipped;
    expected_lsn_ = *next_first;
  }
  segment_index_ = segments_[next_segment_++];
  path_ = SegmentPath(node_dir_, segment_index_);
  ++stats_.segments;
  const bool first = previous_segment_index_ == 0;
  // The first segment: 1, or with a truncation note the note's first
  // segment, or one below it that a crash kept while the segments below
  // the note's were being deleted (log_truncation.h).
  const uint64_t expected_index =
      !first               ? previous_segment_index_ + 1
      : !note_.has_value() ? 1
                           : std::min(note_->first_segment, segment_index_);
  previous_segment_index_ = segment_index_;
  uint64_t file_bytes = 0;
  if (absl::Status s = ReadSegmentFile(path_, &data_, &file_bytes); !s.ok()) {
    return s;
  }
  const std::string_view data = data_;
  // The LSN the segment must start at; 0: any (a segment a truncation
  // left in place, whose predecessors are gone).
  Lsn next_lsn = std::max<Lsn>(expected_lsn_, 1);
  if (first && note_.has_value()) {
    next_lsn = segment_index_ == note_->first_segment ? note_->first_lsn : 0;
  }
  if (segment_index_ != expected_index) {
    stats_.dropped_bytes += NonZeroTail(data, 0);
    std::string what;
    if (first && !note_.has_value()) {
      what = absl::StrFormat(
          "segment %s is missing (the log starts with %s, and no "
          "truncation after a checkpoint deleted anything): the records "
          "from LSN 1 on are lost",
          SegmentName(1), SegmentName(segment_index_));
    } else if (first) {
      what = absl::StrFormat(
          "segment %s is missing (the log starts with %s; a truncation "
          "after a checkpoint deleted only the segments before %s, %s): the "
          "records from LSN %d on are lost",
          SegmentName(note_->first_segment), SegmentName(segment_index_),
          SegmentName(note_->first_segment), TruncationNotePath(node_dir_),
          note_->first_lsn);
    } else {
      what = absl::StrFormat(
          "%s, and segment %s is missing (%s follows): the records from LSN "
          "%d on are lost",
          EndOfRecords(), SegmentName(expected_index),
          SegmentName(segment_index_), next_lsn);
    }
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
    // A writer creates a segment under another name and renames it into
    // place once its header is synced (log_writer.h): a segment without a
    // valid header was damaged afterwards, whatever it holds.
    stats_.dropped_bytes += NonZeroTail(data, 0);
    if (absl::Status s = Damage(absl::StrFormat(
            "the header of segment %s is %s (the file has %d bytes): the "
            "records from LSN %d on are lost",
            SegmentName(segment_index_),
            file_bytes < kSegmentHeaderBytes ? "cut short"
            : zero_header                    ? "zeros"
                                             : "corrupt",
            file_bytes, std::max<Lsn>(next_lsn, 1)));
        !s.ok()) {
      return s;
    }
    return false;
  }
  if (file_bytes < header->segment_bytes) {
    // Segments are preallocated to their full size before their header
    // is written: a shorter one was truncated, which no crash does.
    stats_.dropped_bytes += NonZeroTail(data, 0);
    if (absl::Status s = Damage(absl::StrFormat(
            "segment %s is %d bytes, shorter than the %d bytes its header "
            "records (it was preallocated to that size): it was truncated, "
            "and the records from LSN %d on may be lost",
            SegmentName(segment_index_), file_bytes, header->segment_bytes,
            header->first_lsn));
        !s.ok()) {
      return s;
    }
    return false;
  }
  if (next_lsn == 0) next_lsn = header->first_lsn;
  if (header->first_lsn != next_lsn) {
    stats_.dropped_bytes += NonZeroTail(data, 0);
    std::string what;
    if (expected_lsn_ == 0 && note_.has_value()) {
      what = absl::StrFormat(
          "the first segment %s starts at LSN %d, but the truncation note "
          "%s says it starts at LSN %d",
          SegmentName(segment_index_), header->first_lsn,
          TruncationNotePath(node_dir_), next_lsn);
    } else if (expected_lsn_ == 0) {
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
  if (expected_lsn_ == 0) expected_lsn_ = next_lsn;
  node_id_ = header->compute_node_id;
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
