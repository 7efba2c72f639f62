#include "engine/recovery.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cc/root_words.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "storage/heap_table.h"
#include "storage/tuple_address.h"
#include "wal/log_merger.h"
#include "wal/redo_record.h"

namespace strand::engine {

std::string RecoveryReport::Summary() const {
  std::string out = absl::StrFormat(
      "recovery: image at timestamp %d; replayed %d records (%d ops), "
      "skipped %d already in the image; last commit timestamp %d",
      image_timestamp, records_replayed, ops_replayed, records_skipped,
      max_commit_ts);
  for (const wal::LogReaderStats& n : nodes) {
    absl::StrAppendFormat(&out, "\n  log %s: %d records up to LSN %d; %s",
                          n.node, n.records, n.last_lsn,
                          n.end.empty() ? "clean end" : n.end);
    if (!n.damage.empty()) {
      absl::StrAppendFormat(&out, "\n  DATA LOST (allowed): %s", n.damage);
    } else if (n.dropped_bytes > 0) {
      absl::StrAppendFormat(&out, "; torn/corrupt tail cut: %d bytes dropped",
                            n.dropped_bytes);
    }
  }
  if (two_phase.distributed_commits + two_phase.prepared_committed +
          two_phase.prepared_in_doubt >
      0) {
    absl::StrAppendFormat(
        &out,
        "\n  two-phase commit: %d distributed commits; %d prepared branches "
        "committed, %d in doubt and presumed aborted (no decision logged)",
        two_phase.distributed_commits, two_phase.prepared_committed,
        two_phase.prepared_in_doubt);
  }
  if (acked_by_watermark) {
    absl::StrAppendFormat(
        &out,
        "\n  acknowledged by durable watermark: replayed up to commit "
        "timestamp %d; %d durable records above it dropped (never "
        "acknowledged)",
        watermark_cut_ts, records_above_watermark);
  }
  if (data_lost) {
    absl::StrAppendFormat(
        &out,
        "\n  DATA LOST (allowed): every node's log was replayed only up to "
        "commit timestamp %d; %d readable records above it were dropped",
        damage_cut_ts, records_dropped_at_cut);
  }
  return out;
}

namespace {

// The tables and indexes of the pool by catalog id.
class Objects {
 public:
  absl::Status Open(cc::GclManager& manager, cc::ThreadContext& ctx,
                    storage::Catalog& catalog) {
    auto names = catalog.ListNames(ctx);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      auto table = catalog.FindTable(ctx, name);
      if (table.ok()) {
        auto heap =
            storage::HeapTable::Open(manager, ctx, table->root, table->schema);
        if (!heap.ok()) return heap.status();
        tables_[table->id] = *std::move(heap);
        continue;
      }
      if (!absl::IsFailedPrecondition(table.status())) return table.status();
      auto index = catalog.FindIndex(ctx, name);
      if (!index.ok()) return index.status();
      auto tree = index::BLinkTree::Open(manager, ctx, index->anchor);
      if (!tree.ok()) return tree.status();
      indexes_[index->id] = *std::move(tree);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<storage::HeapTable*> table(uint32_t id) const {
    auto it = tables_.find(id);
    if (it == tables_.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the log names table %d, which the image's catalog does not have "
          "(created after the image?)",
          id));
    }
    return it->second.get();
  }
  absl::StatusOr<index::BLinkTree*> index(uint32_t id) const {
    auto it = indexes_.find(id);
    if (it == indexes_.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the log names index %d, which the image's catalog does not have "
          "(created after the image?)",
          id));
    }
    return it->second.get();
  }

 private:
  absl::flat_hash_map<uint32_t, std::unique_ptr<storage::HeapTable>> tables_;
  absl::flat_hash_map<uint32_t, std::unique_ptr<index::BLinkTree>> indexes_;
};

class Replayer {
 public:
  Replayer(cc::ThreadContext& ctx, const Objects& objects)
      : ctx_(ctx), objects_(objects) {}

  absl::Status Apply(const wal::RedoOp& op) {
    switch (op.kind) {
      case wal::RedoKind::kInsert: {
        auto table = objects_.table(op.object_id);
        if (!table.ok()) return table.status();
        if (op.after_image.size() != (*table)->schema().tuple_bytes()) {
          return absl::DataLossError(absl::StrFormat(
              "insert into table %d logs %d bytes, tuples have %d",
              op.object_id, op.after_image.size(),
              (*table)->schema().tuple_bytes()));
        }
        auto address = (*table)->Insert(
            ctx_, absl::MakeConstSpan(
                      reinterpret_cast<const uint8_t*>(op.after_image.data()),
                      op.after_image.size()));
        if (!address.ok()) return address.status();
        moved_[op.address] = address->raw();
        return absl::OkStatus();
      }
      case wal::RedoKind::kIndexInsert: {
        auto tree = objects_.index(op.object_id);
        if (!tree.ok()) return tree.status();
        return (*tree)->Insert(ctx_, op.after_image, Map(op.address));
      }
      case wal::RedoKind::kIndexRemove: {
        auto tree = objects_.index(op.object_id);
        if (!tree.ok()) return tree.status();
        return (*tree)->unique() ? (*tree)->Delete(ctx_, op.after_image)
                                 : (*tree)->DeleteEntry(ctx_, op.after_image,
                                                        Map(op.address));
      }
      case wal::RedoKind::kUpdate: {
        auto table = objects_.table(op.object_id);
        if (!table.ok()) return table.status();
        const auto address = storage::TupleAddress::FromRaw(Map(op.address));
        tuple_.resize((*table)->schema().tuple_bytes());
        if (op.offset + op.after_image.size() > tuple_.size()) {
          return absl::DataLossError(
              absl::StrFormat("update of %s writes past the tuple's %d bytes",
                              address.ToString(), tuple_.size()));
        }
        if (absl::Status s =
                (*table)->Read(ctx_, address, absl::MakeSpan(tuple_));
            !s.ok()) {
          return s;
        }
        std::memcpy(tuple_.data() + op.offset, op.after_image.data(),
                    op.after_image.size());
        return (*table)->Update(ctx_, address, absl::MakeConstSpan(tuple_));
      }
      case wal::RedoKind::kDelete: {
        auto table = objects_.table(op.object_id);
        if (!table.ok()) return table.status();
        return (*table)->Delete(
            ctx_, storage::TupleAddress::FromRaw(Map(op.address)));
      }
    }
    return absl::DataLossError("unknown redo op");
  }

 private:
  uint64_t Map(uint64_t address) const {
    auto it = moved_.find(address);
    return it == moved_.end() ? address : it->second;
  }

  cc::ThreadContext& ctx_;
  const Objects& objects_;
  absl::flat_hash_map<uint64_t, uint64_t> moved_;  // old -> new address
  std::vector<uint8_t> tuple_;
};

}  // namespace

absl::StatusOr<RecoveryReport> ReplayLogs(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& wal_dir, uint64_t database_id, uint64_t image_timestamp,
    const RecoveryOptions& options) {
  RecoveryReport report;
  report.image_timestamp = image_timestamp;
  if (database_id == 0) {
    return absl::FailedPreconditionError(
        "the image has no database id (it was never opened with a log): "
        "nothing to match the logs against");
  }
  auto merger = wal::LogMerger::Open(wal_dir, database_id,
                                     options.allow_log_data_loss
                                         ? wal::DamagePolicy::kStopAtDamage
                                         : wal::DamagePolicy::kFail);
  if (absl::IsDataLoss(merger.status())) {
    return absl::DataLossError(absl::StrCat(
        merger.status().message(),
        ". Restore the log if a copy exists; otherwise recovery can replay "
        "each log only up to its damage, losing what follows, when told to "
        "(EngineOptions::recover_allow_log_data_loss, "
        "RecoveryOptions::allow_log_data_loss, strand_recover "
        "--allow_log_data_loss)"));
  }
  if (!merger.ok()) return merger.status();
  report.nodes = (*merger)->node_stats();
  report.data_lost = (*merger)->damaged();
  report.damage_cut_ts = (*merger)->damage_cut_ts();
  report.records_dropped_at_cut = (*merger)->records_dropped_at_cut();
  report.acked_by_watermark = (*merger)->acked_by_watermark();
  report.watermark_cut_ts = (*merger)->watermark_cut_ts();
  report.records_above_watermark = (*merger)->records_dropped_above_watermark();
  const uint64_t max_read = (*merger)->max_commit_ts_read();
  report.two_phase = (*merger)->two_phase_stats();
  for (const auto& n : report.nodes) report.dropped_bytes += n.dropped_bytes;
  Objects objects;
  if (absl::Status s = objects.Open(manager, ctx, catalog); !s.ok()) return s;
  Replayer replayer(ctx, objects);
  wal::MergedRecord record;
  std::vector<wal::RedoOp> ops;
  while ((*merger)->Next(&record)) {
    if (record.header.commit_ts <= image_timestamp) {
      ++report.records_skipped;
      continue;
    }
    ops.clear();
    if (absl::Status s = wal::ParseRedo(record.payload, &ops); !s.ok()) {
      return s;
    }
    for (const wal::RedoOp& op : ops) {
      if (absl::Status s = replayer.Apply(op); !s.ok()) {
        return absl::Status(
            s.code(), absl::StrFormat("replaying the record of node %d LSN %d "
                                      "(commit timestamp %d): %s",
                                      record.compute_node_id, record.header.lsn,
                                      record.header.commit_ts, s.message()));
      }
      ++report.ops_replayed;
    }
    ++report.records_replayed;
    report.max_commit_ts =
        std::max(report.max_commit_ts, record.header.commit_ts);
  }
  // New transactions must get timestamps above every replayed one, and
  // above the dropped ones too, which are still in the logs.
  const uint64_t past = std::max(report.max_commit_ts, max_read);
  const rdma::GlobalAddress oracle =
      cc::RootWordAddress(cc::RootWord::kTimestampOracle);
  auto now = manager.FetchAndAdd(ctx, oracle, 0);
  if (!now.ok()) return now.status();
  if (*now <= past) {
    auto moved = manager.FetchAndAdd(ctx, oracle, past - *now + 1);
    if (!moved.ok()) return moved.status();
  }
  return report;
}

}  // namespace strand::engine
