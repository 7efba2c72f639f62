#include "engine/recovery.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/cost_breakdown.h"
#include "cc/root_words.h"
#include "engine/parallel.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "storage/heap_table.h"
#include "storage/tuple_address.h"
#include "storage/tuple_header.h"
#include "wal/log_merger.h"
#include "wal/redo_record.h"

namespace strand::engine {

std::string RecoveryReport::Summary() const {
  const double replay_s = absl::ToDoubleSeconds(replay_time);
  std::string out = absl::StrFormat("recovery: %s %s at timestamp %d",
                                    base_kind.empty() ? "image" : base_kind,
                                    base_path, image_timestamp);
  for (const std::string& passed : bases_passed_over) {
    absl::StrAppendFormat(&out, "\n  passed over: %s", passed);
  }
  if (base_kind == "checkpoint") {
    absl::StrAppendFormat(
        &out, "\n  loaded %d tuples and %d index entries (%.1f MiB) in %.2f s",
        checkpoint_tuples, checkpoint_entries, checkpoint_bytes / 1048576.0,
        absl::ToDoubleSeconds(load_time));
  } else {
    absl::StrAppendFormat(&out, "\n  restored in %.2f s",
                          absl::ToDoubleSeconds(load_time));
  }
  absl::StrAppendFormat(&out,
                        "\n  CPU seconds, all threads: load %.2f, logs %.2f, "
                        "replay %.2f",
                        load_cpu_s, read_cpu_s, replay_cpu_s);
  absl::StrAppendFormat(
      &out,
      "\n  logs read in %.2f s (%d segments the base holds not read); "
      "replayed %d records (%d ops, %.1f MiB) in %.2f s (%.0f records/s, "
      "%.1f MiB/s), skipped %d already in the base",
      absl::ToDoubleSeconds(read_time), segments_skipped, records_replayed,
      ops_replayed, replayed_bytes / 1048576.0, replay_s,
      replay_s > 0 ? records_replayed / replay_s : 0.0,
      replay_s > 0 ? replayed_bytes / 1048576.0 / replay_s : 0.0,
      records_skipped);
  if (batches > 1) absl::StrAppendFormat(&out, "; in %d batches", batches);
  if (ops_already_applied > 0) {
    absl::StrAppendFormat(&out,
                          "; %d ops found already applied or moot "
                          "(idempotent replay over a fuzzy checkpoint)",
                          ops_already_applied);
  }
  absl::StrAppendFormat(&out, "; last commit timestamp %d", max_commit_ts);
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

// The tables and indexes of the pool by the catalog id the logs use:
// the pool's own, or (a checkpoint base) the one the checkpoint had.
class Objects {
 public:
  absl::Status Open(cc::GclManager& manager, cc::ThreadContext& ctx,
                    storage::Catalog& catalog, const LoadedCheckpoint* base) {
    absl::flat_hash_map<uint32_t, uint32_t> logged_id;  // pool id -> logs'
    if (base != nullptr) {
      for (const auto& [old_id, new_id] : base->object_ids) {
        logged_id[new_id] = old_id;
      }
    }
    auto log_id = [&](uint32_t id) {
      auto it = logged_id.find(id);
      return it == logged_id.end() ? id : it->second;
    };
    auto names = catalog.ListNames(ctx);
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      auto table = catalog.FindTable(ctx, name);
      if (table.ok()) {
        auto heap =
            storage::HeapTable::Open(manager, ctx, table->root, table->schema);
        if (!heap.ok()) return heap.status();
        tables_[log_id(table->id)] = *std::move(heap);
        continue;
      }
      if (!absl::IsFailedPrecondition(table.status())) return table.status();
      auto index = catalog.FindIndex(ctx, name);
      if (!index.ok()) return index.status();
      auto tree = index::BLinkTree::Open(manager, ctx, index->anchor);
      if (!tree.ok()) return tree.status();
      indexes_[log_id(index->id)] = *std::move(tree);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<storage::HeapTable*> table(uint32_t id) const {
    auto it = tables_.find(id);
    if (it == tables_.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the log names table %d, which the base's catalog does not have "
          "(created after it?)",
          id));
    }
    return it->second.get();
  }
  absl::StatusOr<index::BLinkTree*> index(uint32_t id) const {
    auto it = indexes_.find(id);
    if (it == indexes_.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the log names index %d, which the base's catalog does not have "
          "(created after it?)",
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
  // Logged address -> pool address: `added` (what replayed inserts placed)
  // then `base` (null: none). `fuzzy`: a checkpoint base (every address is
  // mapped; idempotent rules), else an image (an unmapped address is the
  // pool's own).
  Replayer(cc::ThreadContext& ctx, const Objects& objects,
           const absl::flat_hash_map<uint64_t, uint64_t>* base,
           absl::flat_hash_map<uint64_t, uint64_t>& added, bool fuzzy)
      : ctx_(ctx),
        objects_(objects),
        base_(base),
        added_(added),
        fuzzy_(fuzzy) {}

  uint64_t moot() const { return moot_; }

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
        const auto tuple = absl::MakeConstSpan(
            reinterpret_cast<const uint8_t*>(op.after_image.data()),
            op.after_image.size());
        if (fuzzy_) {
          if (const std::optional<uint64_t> at = Find(op.address)) {
            // The copy holds this slot (this insert's tuple, or an
            // earlier or later one of the same slot): it now holds this.
            ++moot_;
            return (*table)->Overwrite(
                ctx_, storage::TupleAddress::FromRaw(*at), tuple);
          }
        }
        auto address = (*table)->Insert(ctx_, tuple);
        if (!address.ok()) return address.status();
        added_[op.address] = address->raw();
        return absl::OkStatus();
      }
      case wal::RedoKind::kIndexInsert: {
        auto tree = objects_.index(op.object_id);
        if (!tree.ok()) return tree.status();
        const std::optional<uint64_t> value = Map(op.address);
        if (!value) return Moot();
        absl::Status s = (*tree)->Insert(ctx_, op.after_image, *value);
        if (!fuzzy_ || !absl::IsAlreadyExists(s)) return s;
        ++moot_;
        return (*tree)->unique() ? (*tree)->Update(ctx_, op.after_image, *value)
                                 : absl::OkStatus();
      }
      case wal::RedoKind::kIndexRemove: {
        auto tree = objects_.index(op.object_id);
        if (!tree.ok()) return tree.status();
        const std::optional<uint64_t> value = Map(op.address);
        if (!value) return Moot();
        if (!(*tree)->unique()) {
          absl::Status s = (*tree)->DeleteEntry(ctx_, op.after_image, *value);
          return fuzzy_ && absl::IsNotFound(s) ? Moot() : s;
        }
        if (fuzzy_) {
          // Only this entry: the key may hold a later one already.
          auto present = (*tree)->Lookup(ctx_, op.after_image);
          if (absl::IsNotFound(present.status())) return Moot();
          if (!present.ok()) return present.status();
          if (*present != *value) return Moot();
        }
        return (*tree)->Delete(ctx_, op.after_image);
      }
      case wal::RedoKind::kUpdate: {
        auto table = objects_.table(op.object_id);
        if (!table.ok()) return table.status();
        const std::optional<uint64_t> at = Map(op.address);
        if (!at) return Moot();
        const auto address = storage::TupleAddress::FromRaw(*at);
        const size_t tuple_bytes = (*table)->schema().tuple_bytes();
        if (op.offset + op.after_image.size() > tuple_bytes) {
          return absl::DataLossError(
              absl::StrFormat("update of %s writes past the tuple's %d bytes",
                              address.ToString(), tuple_bytes));
        }
        // The columns only: the header is the running engine's.
        std::string_view image = op.after_image;
        uint32_t offset = op.offset;
        if (offset < storage::kTupleHeaderBytes) {
          const size_t skip = std::min<size_t>(
              image.size(), storage::kTupleHeaderBytes - offset);
          image.remove_prefix(skip);
          offset = storage::kTupleHeaderBytes;
        }
        return (*table)->UpdateRange(
            ctx_, address, offset,
            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(image.data()),
                                image.size()));
      }
      case wal::RedoKind::kDelete: {
        auto table = objects_.table(op.object_id);
        if (!table.ok()) return table.status();
        const std::optional<uint64_t> at = Map(op.address);
        if (!at) return Moot();
        return (*table)->Delete(ctx_, storage::TupleAddress::FromRaw(*at));
      }
    }
    return absl::DataLossError("unknown redo op");
  }

 private:
  std::optional<uint64_t> Find(uint64_t address) const {
    if (auto it = added_.find(address); it != added_.end()) return it->second;
    if (base_ == nullptr) return std::nullopt;
    auto it = base_->find(address);
    if (it == base_->end()) return std::nullopt;
    return it->second;
  }
  // Where a logged address is now; nullopt (a checkpoint base only): the
  // tuple is neither in the copy nor inserted since, so the op is moot.
  std::optional<uint64_t> Map(uint64_t address) const {
    std::optional<uint64_t> found = Find(address);
    if (found || fuzzy_) return found;
    return address;
  }
  absl::Status Moot() {
    ++moot_;
    return absl::OkStatus();
  }

  cc::ThreadContext& ctx_;
  const Objects& objects_;
  const absl::flat_hash_map<uint64_t, uint64_t>* const base_;
  absl::flat_hash_map<uint64_t, uint64_t>& added_;
  const bool fuzzy_;
  uint64_t moot_ = 0;
};

// The ops of one table or index, in commit-timestamp order, each with the
// record it came from (for errors).
struct ObjectOps {
  uint32_t object_id = 0;
  std::vector<std::pair<wal::RedoOp, uint32_t>> ops;
  absl::flat_hash_map<uint64_t, uint64_t> added;  // a table's new addresses
  uint64_t moot = 0;
};

absl::Status InRecord(const absl::Status& s, const wal::MergedRecord& record) {
  return absl::Status(
      s.code(),
      absl::StrFormat("replaying the record of node %d LSN %d (commit "
                      "timestamp %d): %s",
                      record.compute_node_id, record.header.lsn,
                      record.header.commit_ts, s.message()));
}

bool IsIndexOp(wal::RedoKind kind) {
  return kind == wal::RedoKind::kIndexInsert ||
         kind == wal::RedoKind::kIndexRemove;
}

void Account(const wal::MergedRecord& record, RecoveryReport& report) {
  ++report.records_replayed;
  report.replayed_bytes += record.payload.size();
  report.max_commit_ts =
      std::max(report.max_commit_ts, record.header.commit_ts);
}

// One batch of records over a checkpoint base: every table's ops, in
// parallel, then every index's; the tables' new addresses join the base's.
absl::Status ReplayBatch(cc::GclManager& manager, const Objects& objects,
                         LoadedCheckpoint& checkpoint,
                         const std::vector<wal::MergedRecord>& records,
                         int threads, RecoveryReport& report) {
  absl::flat_hash_map<uint32_t, size_t> table_at, index_at;
  std::vector<ObjectOps> tables, indexes;
  std::vector<wal::RedoOp> ops;
  for (size_t i = 0; i < records.size(); ++i) {
    ops.clear();
    if (absl::Status s = wal::ParseRedo(records[i].payload, &ops); !s.ok()) {
      return InRecord(s, records[i]);
    }
    for (const wal::RedoOp& op : ops) {
      const bool index = IsIndexOp(op.kind);
      auto& at = index ? index_at : table_at;
      auto& objects_ops = index ? indexes : tables;
      auto [it, fresh] = at.try_emplace(op.object_id, objects_ops.size());
      if (fresh) {
        objects_ops.emplace_back();
        objects_ops.back().object_id = op.object_id;
      }
      objects_ops[it->second].ops.emplace_back(op, static_cast<uint32_t>(i));
    }
  }
  auto by_size = [](const ObjectOps& a, const ObjectOps& b) {
    return a.ops.size() > b.ops.size();
  };
  std::sort(tables.begin(), tables.end(), by_size);
  std::sort(indexes.begin(), indexes.end(), by_size);
  auto replay = [&](ObjectOps& job, cc::ThreadContext& tctx) {
    Replayer replayer(tctx, objects, &checkpoint.addresses, job.added,
                      /*fuzzy=*/true);
    for (const auto& [op, record] : job.ops) {
      if (absl::Status s = replayer.Apply(op); !s.ok()) {
        return InRecord(s, records[record]);
      }
    }
    job.moot = replayer.moot();
    return absl::OkStatus();
  };
  threads = std::max(1, threads);
  if (absl::Status s = RunParallel(manager, threads, tables, replay); !s.ok()) {
    return s;
  }
  for (ObjectOps& t : tables) {
    checkpoint.addresses.insert(t.added.begin(), t.added.end());
  }
  if (absl::Status s = RunParallel(manager, threads, indexes, replay);
      !s.ok()) {
    return s;
  }
  for (const auto* objects_ops : {&tables, &indexes}) {
    for (const ObjectOps& o : *objects_ops) {
      report.ops_replayed += o.ops.size();
      report.ops_already_applied += o.moot;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RecoveryReport> ReplayLogs(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& wal_dir, uint64_t database_id, const ReplayBase& base,
    const RecoveryOptions& options) {
  RecoveryReport report;
  const uint64_t image_timestamp = base.timestamp;
  report.image_timestamp = image_timestamp;
  if (database_id == 0) {
    return absl::FailedPreconditionError(
        "the image has no database id (it was never opened with a log): "
        "nothing to match the logs against");
  }
  absl::Time step = absl::Now();
  int64_t step_cpu = ProcessCpuNanos();
  auto merger = wal::LogMerger::Open(
      wal_dir, database_id,
      {.policy = options.allow_log_data_loss ? wal::DamagePolicy::kStopAtDamage
                                             : wal::DamagePolicy::kFail,
       .compute_nodes = base.compute_nodes,
       .watermark_floor = base.watermark_floor,
       .skip_through_ts = base.timestamp});
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
  if ((*merger)->truncated_ts() > image_timestamp) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the logs in %s were truncated up to timestamp %d after a "
        "checkpoint, past the base's timestamp %d: recover from that "
        "checkpoint (or a newer one)",
        wal_dir, (*merger)->truncated_ts(), image_timestamp));
  }
  report.read_time = absl::Now() - step;
  report.read_cpu_s = (ProcessCpuNanos() - step_cpu) / 1e9;
  step_cpu = ProcessCpuNanos();
  report.records_skipped = (*merger)->records_skipped();
  report.segments_skipped = (*merger)->segments_skipped();
  step = absl::Now();
  Objects objects;
  if (absl::Status s = objects.Open(manager, ctx, catalog, base.checkpoint);
      !s.ok()) {
    return s;
  }
  if (base.checkpoint == nullptr) {
    // Over an image, in commit order on one thread: an address no insert
    // has placed yet is the image's, so the order of the map's growth
    // matters.
    absl::flat_hash_map<uint64_t, uint64_t> moves;
    Replayer replayer(ctx, objects, nullptr, moves, /*fuzzy=*/false);
    std::vector<wal::RedoOp> ops;
    wal::MergedRecord record;
    for (;;) {
      absl::StatusOr<bool> more = (*merger)->Next(&record);
      if (!more.ok()) return more.status();
      if (!*more) break;
      Account(record, report);
      ops.clear();
      if (absl::Status s = wal::ParseRedo(record.payload, &ops); !s.ok()) {
        return s;
      }
      for (const wal::RedoOp& op : ops) {
        if (absl::Status s = replayer.Apply(op); !s.ok()) {
          return InRecord(s, record);
        }
        ++report.ops_replayed;
      }
    }
  } else {
    // Over a checkpoint, every address is mapped from the start and a
    // mapping never changes once made, so each table's ops replay on
    // their own (in commit order), in parallel, then each index's with
    // every table's mappings (docs/design/checkpoints.md). In batches of
    // about options.batch_bytes of redo, one after the other: what each
    // object replays stays in commit order, and an index op finds every
    // insert of its batch or an earlier one mapped.
    std::vector<wal::MergedRecord> records;
    for (;;) {
      records.clear();
      uint64_t bytes = 0;
      while (bytes < std::max<uint64_t>(1, options.batch_bytes)) {
        records.emplace_back();
        absl::StatusOr<bool> more = (*merger)->Next(&records.back());
        if (!more.ok()) return more.status();
        if (!*more) {
          records.pop_back();
          break;
        }
        Account(records.back(), report);
        bytes += records.back().payload.size();
      }
      if (records.empty()) break;
      if (absl::Status s = ReplayBatch(manager, objects, *base.checkpoint,
                                       records, options.threads, report);
          !s.ok()) {
        return s;
      }
      ++report.batches;
    }
  }
  report.replay_time = absl::Now() - step;
  report.replay_cpu_s = (ProcessCpuNanos() - step_cpu) / 1e9;
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
