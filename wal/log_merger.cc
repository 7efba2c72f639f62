#include "wal/log_merger.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "wal/failover_records.h"
#include "wal/two_phase_records.h"

namespace strand::wal {
namespace {

// The redo in a record's payload: all of it, but a two-phase record's.
absl::StatusOr<std::string_view> RedoOf(RecordType type,
                                        std::string_view payload) {
  if (type == RecordType::kDistributedCommit) {
    auto p = DecodeDistributedCommitPayload(payload);
    if (!p.ok()) return p.status();
    return p->redo;
  }
  if (type == RecordType::kPrepare) {
    auto p = DecodePreparePayload(payload);
    if (!p.ok()) return p.status();
    return p->redo;
  }
  return payload;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogMerger>> LogMerger::Open(
    const std::string& wal_dir, uint64_t database_id,
    const LogMergerOptions& options) {
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
  std::vector<uint32_t> missing;
  for (uint32_t id = 0; id < options.compute_nodes; ++id) {
    if (!std::binary_search(nodes.begin(), nodes.end(), id)) {
      missing.push_back(id);
    }
  }
  if (!missing.empty() && options.policy == DamagePolicy::kFail) {
    return absl::DataLossError(absl::StrFormat(
        "the log of compute node %d is missing: %s does not exist, but the "
        "deployment had %d compute nodes (node-0 to node-%d), each of which "
        "logged there; gather every node's node-<id>/ into %s. Without it "
        "its commits, and every later commit of the others, are lost",
        missing.front(), NodeDirectory(wal_dir, missing.front()),
        options.compute_nodes, options.compute_nodes - 1, wal_dir));
  }
  std::vector<std::unique_ptr<LogReader>> readers;
  for (uint32_t id : nodes) {
    auto reader = LogReader::Open(NodeDirectory(wal_dir, id), database_id,
                                  options.policy, options.skip_through_ts);
    if (!reader.ok()) return reader.status();
    readers.push_back(*std::move(reader));
  }
  auto merger = FromReaders(std::move(readers), options.watermark_floor,
                            options.skip_through_ts);
  if (!merger.ok() || missing.empty()) return merger;
  // kStopAtDamage: a missing log is damaged at its start. Nothing of it
  // was read, so the common cut is below every record.
  LogMerger& m = **merger;
  for (uint32_t id : missing) {
    LogReaderStats stats;
    stats.node = absl::StrFormat("node-%d", id);
    stats.end = "missing";
    stats.damage = absl::StrFormat(
        "%s does not exist: the whole log of compute node %d is lost",
        NodeDirectory(wal_dir, id), id);
    m.stats_.push_back(std::move(stats));
  }
  m.dropped_at_cut_ += m.records_.size();
  m.records_.clear();
  m.damaged_ = true;
  m.damage_cut_ts_ = 0;
  return merger;
}

absl::StatusOr<std::unique_ptr<LogMerger>> LogMerger::FromReaders(
    std::vector<std::unique_ptr<LogReader>> readers, uint64_t watermark_floor,
    uint64_t skip_through_ts) {
  std::unique_ptr<LogMerger> merger(new LogMerger);
  merger->watermark_cut_ts_ = watermark_floor;
  LogRecord r;
  uint64_t cut_ts = UINT64_MAX;
  std::vector<Exclusion> exclusions;
  absl::flat_hash_set<std::tuple<uint32_t, uint64_t, uint64_t>> adopted;
  for (auto& reader : readers) {
    const auto log = static_cast<uint32_t>(merger->node_dirs_.size());
    merger->node_dirs_.push_back(reader->node_dir());
    uint64_t max_ts = 0;
    for (;;) {
      absl::StatusOr<bool> more = reader->Next(&r);
      if (!more.ok()) return more.status();
      if (!*more) break;
      if ((r.segment_flags & kSegmentAckedByWatermark) != 0) {
        merger->acked_by_watermark_ = true;
      }
      if (r.header.type == RecordType::kWatermark) {
        absl::StatusOr<uint64_t> cluster = DecodeWatermarkPayload(r.payload);
        if (!cluster.ok()) return cluster.status();
        merger->watermark_cut_ts_ =
            std::max(merger->watermark_cut_ts_, *cluster);
        continue;
      }
      if (r.header.type == RecordType::kNodeExcluded) {
        // Kept whatever its timestamp: it drops records above it.
        absl::StatusOr<Exclusion> e =
            DecodeExclusion(r.header.txn_id, r.payload);
        if (!e.ok()) return e.status();
        exclusions.push_back(*e);
        continue;
      }
      if (r.header.commit_ts <= skip_through_ts) {
        // In the checkpoint (with its two-phase records' decisions, which
        // carry the same timestamp).
        ++merger->records_skipped_;
        continue;
      }
      max_ts = std::max(max_ts, r.header.commit_ts);
      merger->max_commit_ts_read_ =
          std::max(merger->max_commit_ts_read_, r.header.commit_ts);
      if (r.header.type == RecordType::kAdopted) {
        absl::StatusOr<AdoptedPayload> a = DecodeAdoptedPayload(r.payload);
        if (!a.ok()) return a.status();
        RecordHeader original = r.header;
        original.type = a->type;
        if (!adopted.insert({a->node, r.header.commit_ts, r.header.txn_id})
                 .second) {
          continue;  // adopted twice
        }
        absl::StatusOr<std::string_view> redo = RedoOf(a->type, a->payload);
        if (!redo.ok()) return redo.status();
        Entry e = EntryOf(r, log, *redo);
        e.compute_node_id = a->node;
        e.header = original;
        e.adopted = true;
        merger->records_.push_back(e);
        continue;
      }
      absl::StatusOr<std::string_view> redo = RedoOf(r.header.type, r.payload);
      if (!redo.ok()) return redo.status();
      merger->records_.push_back(EntryOf(r, log, *redo));
    }
    merger->stats_.push_back(reader->stats());
    merger->segments_skipped_ += reader->stats().segments_skipped;
    merger->truncated_ts_ =
        std::max(merger->truncated_ts_, reader->stats().truncated_ts);
    if (!reader->stats().damage.empty()) {
      merger->damaged_ = true;
      cut_ts = std::min(cut_ts, max_ts);
    }
  }
  merger->adopted_ = adopted.size();
  if (!exclusions.empty()) {
    const size_t before = merger->records_.size();
    std::erase_if(merger->records_, [&exclusions](const Entry& m) {
      if (m.adopted) return false;
      for (const Exclusion& e : exclusions) {
        if (e.Drops(m.compute_node_id, m.header.commit_ts)) return true;
      }
      return false;
    });
    merger->excluded_ = before - merger->records_.size();
  }
  if (merger->acked_by_watermark_) {
    const uint64_t mark = merger->watermark_cut_ts_;
    const size_t before = merger->records_.size();
    std::erase_if(merger->records_, [mark](const Entry& m) {
      return (m.segment_flags & kSegmentAckedByWatermark) != 0 &&
             m.header.commit_ts > mark;
    });
    merger->dropped_above_watermark_ = before - merger->records_.size();
  }
  if (merger->damaged_) {
    // The same point in commit order for every node (see the header).
    merger->damage_cut_ts_ = cut_ts;
    const size_t before = merger->records_.size();
    std::erase_if(merger->records_, [cut_ts](const Entry& m) {
      return m.header.commit_ts > cut_ts;
    });
    merger->dropped_at_cut_ = before - merger->records_.size();
  }
  merger->ResolveTwoPhase();
  std::sort(
      merger->records_.begin(), merger->records_.end(),
      [](const Entry& a, const Entry& b) {
        return std::tie(a.header.commit_ts, a.compute_node_id, a.header.lsn) <
               std::tie(b.header.commit_ts, b.compute_node_id, b.header.lsn);
      });
  return merger;
}

LogMerger::Entry LogMerger::EntryOf(const LogRecord& record, uint32_t log,
                                    std::string_view redo) {
  Entry e;
  e.compute_node_id = record.compute_node_id;
  e.segment_flags = record.segment_flags;
  e.header = record.header;
  e.log = log;
  e.segment_index = record.segment_index;
  e.record_offset = record.offset;
  e.redo_begin = static_cast<uint32_t>(redo.data() - record.payload.data());
  e.redo_bytes = static_cast<uint32_t>(redo.size());
  return e;
}

void LogMerger::ResolveTwoPhase() {
  // A gtid is unique only within its coordinator's incarnation (a rejoined
  // or restarted node's slots count again from 1); with the commit
  // timestamp, which every record of the transaction carries and which no
  // two transactions share, it names one.
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> committed;
  for (const Entry& r : records_) {
    if (r.header.type == RecordType::kDistributedCommit ||
        r.header.type == RecordType::kParticipantCommit) {
      committed.insert({r.header.txn_id, r.header.commit_ts});
    }
  }
  std::vector<Entry> kept;
  kept.reserve(records_.size());
  for (Entry& r : records_) {
    switch (r.header.type) {
      case RecordType::kCommit:
        break;
      case RecordType::kWatermark:  // never kept (FromReaders)
      case RecordType::kAdopted:    // unwrapped (FromReaders)
      case RecordType::kNodeExcluded:
        continue;
      case RecordType::kParticipantCommit:
        continue;
      case RecordType::kDistributedCommit:
        ++two_phase_.distributed_commits;
        break;
      case RecordType::kPrepare:
        if (!committed.contains({r.header.txn_id, r.header.commit_ts})) {
          ++two_phase_.prepared_in_doubt;
          continue;
        }
        ++two_phase_.prepared_committed;
        break;
    }
    r.header.type = RecordType::kCommit;
    kept.push_back(r);
  }
  records_ = std::move(kept);
}

LogMerger::~LogMerger() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<bool> LogMerger::Next(MergedRecord* record) {
  if (next_ >= records_.size()) return false;
  const Entry& e = records_[next_++];
  const std::string path = SegmentPath(node_dirs_[e.log], e.segment_index);
  if (path != fd_path_) {
    if (fd_ >= 0) ::close(fd_);
    fd_path_.clear();
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      return absl::DataLossError(absl::StrFormat(
          "reading the redo of node %d LSN %d back: open %s: %s",
          e.compute_node_id, e.header.lsn, path, std::strerror(errno)));
    }
    fd_path_ = path;
  }
  // The whole record, so that its CRC is checked again: the file must
  // still hold what Open read.
  const size_t bytes = kRecordHeaderBytes + e.header.payload_bytes;
  record_bytes_.resize(bytes);
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, record_bytes_.data() + done, bytes - done,
                              static_cast<off_t>(e.record_offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrFormat(
          "reading the record of node %d LSN %d back from %s+%d: %s",
          e.compute_node_id, e.header.lsn, path, e.record_offset,
          n == 0 ? "the file is shorter than when it was read"
                 : std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  RecordHeader header;
  std::string_view payload;
  if (DecodeRecord(record_bytes_, &header, &payload) != DecodeResult::kOk ||
      header.lsn != e.header.lsn || payload.size() != e.header.payload_bytes) {
    return absl::DataLossError(absl::StrFormat(
        "the record of node %d LSN %d at %s+%d changed after it was read "
        "(its CRC or LSN no longer match): the log was modified during "
        "recovery",
        e.compute_node_id, e.header.lsn, path, e.record_offset));
  }
  record->compute_node_id = e.compute_node_id;
  record->header = e.header;
  record->segment_flags = e.segment_flags;
  record->adopted = e.adopted;
  record->payload.assign(payload.substr(e.redo_begin, e.redo_bytes));
  return true;
}

}  // namespace strand::wal
