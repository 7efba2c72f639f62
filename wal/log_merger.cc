#include "wal/log_merger.h"

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace strand::wal {

absl::StatusOr<std::unique_ptr<LogMerger>> LogMerger::Open(
    const std::string& wal_dir, uint64_t database_id) {
  std::error_code ec;
  if (!std::filesystem::is_directory(wal_dir, ec)) {
    return absl::NotFoundError(
        absl::StrFormat("log directory %s does not exist", wal_dir));
  }
  std::vector<uint32_t> nodes;
  for (const auto& entry : std::filesystem::directory_iterator(wal_dir, ec)) {
    const std::string name = entry.path().filename().string();
    uint32_t id = 0;
    if (entry.is_directory() && name.starts_with("node-") &&
        absl::SimpleAtoi(name.substr(5), &id) &&
        NodeDirectory(wal_dir, id) == entry.path().string()) {
      nodes.push_back(id);
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("list %s: %s", wal_dir, ec.message()));
  }
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::unique_ptr<LogReader>> readers;
  for (uint32_t id : nodes) {
    auto reader = LogReader::Open(NodeDirectory(wal_dir, id), database_id);
    if (!reader.ok()) return reader.status();
    readers.push_back(*std::move(reader));
  }
  return FromReaders(std::move(readers));
}

absl::StatusOr<std::unique_ptr<LogMerger>> LogMerger::FromReaders(
    std::vector<std::unique_ptr<LogReader>> readers) {
  std::unique_ptr<LogMerger> merger(new LogMerger);
  LogRecord r;
  for (auto& reader : readers) {
    for (;;) {
      absl::StatusOr<bool> more = reader->Next(&r);
      if (!more.ok()) return more.status();
      if (!*more) break;
      merger->records_.push_back(
          {r.compute_node_id, r.header, std::string(r.payload)});
    }
    merger->stats_.push_back(reader->stats());
  }
  std::sort(
      merger->records_.begin(), merger->records_.end(),
      [](const MergedRecord& a, const MergedRecord& b) {
        return std::tie(a.header.commit_ts, a.compute_node_id, a.header.lsn) <
               std::tie(b.header.commit_ts, b.compute_node_id, b.header.lsn);
      });
  return merger;
}

bool LogMerger::Next(MergedRecord* record) {
  if (next_ >= records_.size()) return false;
  *record = std::move(records_[next_++]);
  return true;
}

}  // namespace strand::wal
