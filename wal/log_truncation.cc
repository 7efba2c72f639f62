#include "wal/log_truncation.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "wal/crc32c.h"
#include "wal/durable_file.h"
#include "wal/log_file.h"
#include "wal/log_reader.h"

namespace strand::wal {
namespace {

constexpr absl::string_view kMagic = "strand-log-truncation 1";

std::string Body(const TruncationNote& note) {
  return absl::StrFormat("%s first_segment=%d first_lsn=%d truncated_ts=%d",
                         kMagic, note.first_segment, note.first_lsn,
                         note.truncated_ts);
}

bool ParseField(absl::string_view token, absl::string_view name,
                uint64_t* value) {
  return token.size() > name.size() + 1 && absl::StartsWith(token, name) &&
         token[name.size()] == '=' &&
         absl::SimpleAtoi(token.substr(name.size() + 1), value);
}

}  // namespace

std::string TruncationNotePath(const std::string& node_dir) {
  return node_dir + "/TRUNCATED";
}

absl::StatusOr<std::optional<TruncationNote>> ReadTruncationNote(
    const std::string& node_dir) {
  const std::string path = TruncationNotePath(node_dir);
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (absl::IsNotFound(text.status())) return std::nullopt;
  if (!text.ok()) return text.status();
  auto damaged = [&path](std::string_view why) {
    return absl::DataLossError(absl::StrFormat(
        "the log truncation note %s is damaged (%s): which segments were "
        "deleted after a checkpoint is unknown",
        path, why));
  };
  absl::string_view line = *text;
  if (absl::EndsWith(line, "\n")) line.remove_suffix(1);
  const size_t crc_at = line.rfind(" crc=");
  uint64_t crc = 0;
  if (crc_at == absl::string_view::npos ||
      !absl::SimpleAtoi(line.substr(crc_at + 5), &crc)) {
    return damaged("no crc");
  }
  const absl::string_view body = line.substr(0, crc_at);
  if (Crc32c(std::string_view(body.data(), body.size())) != crc) {
    return damaged("crc mismatch");
  }
  if (!absl::StartsWith(body, kMagic)) return damaged("not a truncation note");
  std::vector<absl::string_view> tokens =
      absl::StrSplit(body.substr(kMagic.size()), ' ', absl::SkipEmpty());
  TruncationNote note;
  if (tokens.size() != 3 ||
      !ParseField(tokens[0], "first_segment", &note.first_segment) ||
      !ParseField(tokens[1], "first_lsn", &note.first_lsn) ||
      !ParseField(tokens[2], "truncated_ts", &note.truncated_ts) ||
      note.first_segment == 0 || note.first_lsn == 0) {
    return damaged("bad fields");
  }
  return note;
}

absl::Status WriteTruncationNote(const std::string& node_dir,
                                 const TruncationNote& note) {
  const std::string body = Body(note);
  return WriteFileAtomically(TruncationNotePath(node_dir),
                             absl::StrCat(body, " crc=", Crc32c(body), "\n"));
}

absl::Status DeleteSegments(const std::string& node_dir,
                            absl::Span<const uint64_t> indexes,
                            absl::FunctionRef<void()> after_each_delete,
                            LogTruncationStats* stats) {
  for (uint64_t index : indexes) {
    const std::string path = SegmentPath(node_dir, index);
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) stats->bytes_deleted += st.st_size;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(
          absl::StrFormat("delete %s: %s", path, std::strerror(errno)));
    }
    ++stats->segments_deleted;
    after_each_delete();
  }
  return SyncDirectory(node_dir);
}

absl::StatusOr<LogTruncationStats> DiscardLog(
    const std::string& node_dir, uint64_t database_id, uint64_t ts,
    absl::FunctionRef<void()> after_each_delete) {
  auto reader =
      LogReader::Open(node_dir, database_id, DamagePolicy::kStopAtDamage);
  if (!reader.ok()) return reader.status();
  LogRecord record;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&record);
    if (!more.ok()) return more.status();
    if (!*more) break;
  }
  TruncationNote note;
  if ((*reader)->truncation().has_value()) note = *(*reader)->truncation();
  note.first_segment = (*reader)->last_segment_index() + 1;
  note.first_lsn = (*reader)->end_lsn() + 1;
  note.truncated_ts = std::max(note.truncated_ts, ts);
  if (absl::Status s = WriteTruncationNote(node_dir, note); !s.ok()) return s;
  LogTruncationStats stats;
  if (absl::Status s = DeleteSegments(node_dir, (*reader)->segment_indexes(),
                                      after_each_delete, &stats);
      !s.ok()) {
    return s;
  }
  stats.first_segment = note.first_segment;
  return stats;
}

}  // namespace strand::wal
