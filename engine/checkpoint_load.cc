#include "engine/checkpoint_load.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/coding.h"
#include "engine/checkpoint_format.h"
#include "engine/parallel.h"
#include "index/blink_tree.h"
#include "storage/heap_table.h"
#include "wal/durable_file.h"
#include "wal/log_format.h"
#include "wal/log_truncation.h"

namespace strand::engine {
namespace {

struct TableJob {
  uint32_t old_id = 0;
  std::unique_ptr<storage::HeapTable> heap;
  std::string path;
  uint64_t file_bytes = 0;
  absl::flat_hash_map<uint64_t, uint64_t> addresses;
  uint64_t tuples = 0;
};

struct IndexJob {
  uint32_t old_id = 0;
  std::unique_ptr<index::BLinkTree> tree;
  std::string path;
  uint64_t file_bytes = 0;
  uint64_t entries = 0;
  uint64_t dropped = 0;
};

uint64_t FileBytes(const wal::CheckpointManifest& manifest,
                   const std::string& name) {
  for (const wal::CheckpointFile& f : manifest.files) {
    if (f.name == name) return f.bytes;
  }
  return 0;
}

}  // namespace

absl::StatusOr<RecoveryBase> ChooseRecoveryBase(const std::string& wal_dir,
                                                const std::string& image_path) {
  RecoveryBase base;
  // How far the logs were truncated: no base older than that can be
  // continued with them.
  std::error_code ec;
  if (std::filesystem::is_directory(wal_dir, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(wal_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_directory() || !name.starts_with("node-")) continue;
      auto note = wal::ReadTruncationNote(entry.path().string());
      if (!note.ok()) return note.status();
      if (note->has_value()) {
        base.logs_truncated_ts =
            std::max(base.logs_truncated_ts, (*note)->truncated_ts);
      }
    }
  }
  auto listed = wal::ListCheckpoints(wal_dir);
  if (!listed.ok()) return listed.status();
  for (const wal::CheckpointEntry& e : *listed) {
    if (!e.published) {
      base.passed_over.push_back(absl::StrFormat(
          "%s has no manifest: it was never finished (a crash during its "
          "copy), so it does not exist",
          e.dir));
      continue;
    }
    auto manifest = wal::ReadManifest(e.dir);
    if (!manifest.ok()) {
      base.passed_over.push_back(std::string(manifest.status().message()));
      continue;
    }
    if (manifest->start_ts < base.logs_truncated_ts) {
      base.passed_over.push_back(absl::StrFormat(
          "%s starts at timestamp %d, but the logs were truncated up to "
          "timestamp %d after a newer checkpoint: they do not continue it",
          e.dir, manifest->start_ts, base.logs_truncated_ts));
      continue;
    }
    if (absl::Status s = wal::VerifyCheckpoint(e.dir, *manifest); !s.ok()) {
      base.passed_over.push_back(std::string(s.message()));
      continue;
    }
    base.kind = RecoveryBase::Kind::kCheckpoint;
    base.path = e.dir;
    base.manifest = *std::move(manifest);
    base.timestamp = base.manifest.start_ts;
    return base;
  }
  if (!image_path.empty()) {
    auto image = ReadImageHeader(image_path);
    if (!image.ok()) {
      base.passed_over.push_back(absl::StrFormat("image %s: %s", image_path,
                                                 image.status().message()));
    } else if (image->timestamp < base.logs_truncated_ts) {
      base.passed_over.push_back(absl::StrFormat(
          "image %s is at timestamp %d, but the logs were truncated up to "
          "timestamp %d after a checkpoint: they do not continue it",
          image_path, image->timestamp, base.logs_truncated_ts));
    } else {
      base.kind = RecoveryBase::Kind::kImage;
      base.path = image_path;
      base.image = *image;
      base.timestamp = image->timestamp;
      return base;
    }
  }
  if (base.passed_over.empty()) {
    return absl::NotFoundError(absl::StrFormat(
        "%s holds no checkpoint, and no image was given: nothing to recover "
        "from",
        wal_dir));
  }
  return absl::DataLossError(absl::StrFormat(
      "no usable checkpoint or image to recover %s from (never starting "
      "from a damaged copy): %s",
      wal_dir, absl::StrJoin(base.passed_over, "; ")));
}

absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& dir, const wal::CheckpointManifest& manifest,
    int threads) {
  const absl::Time start = absl::Now();
  LoadedCheckpoint loaded;
  const std::string catalog_path = dir + "/catalog";
  auto catalog_bytes = wal::ReadWholeFile(catalog_path);
  if (!catalog_bytes.ok()) return catalog_bytes.status();
  loaded.bytes += catalog_bytes->size();
  auto objects = DecodeCatalog(*catalog_bytes, catalog_path);
  if (!objects.ok()) return objects.status();

  // The objects again, in their order.
  std::vector<TableJob> tables;
  std::vector<IndexJob> indexes;
  for (const CheckpointObject& o : *objects) {
    if (o.kind == CheckpointObject::Kind::kTable) {
      auto schema = storage::Schema::Deserialize(o.schema);
      if (!schema.ok()) return schema.status();
      auto created = catalog.CreateTable(ctx, o.name, *schema, o.table_options);
      if (!created.ok()) return created.status();
      loaded.object_ids[o.id] = created->id;
      TableJob job;
      job.old_id = o.id;
      auto heap =
          storage::HeapTable::Open(manager, ctx, created->root, *schema);
      if (!heap.ok()) return heap.status();
      job.heap = *std::move(heap);
      job.path = dir + "/" + TableFileName(o.id);
      job.file_bytes = FileBytes(manifest, TableFileName(o.id));
      tables.push_back(std::move(job));
      continue;
    }
    storage::IndexSpec spec = o.index;
    if (spec.table_id != 0) {
      auto it = loaded.object_ids.find(spec.table_id);
      if (it == loaded.object_ids.end()) {
        return absl::DataLossError(absl::StrFormat(
            "checkpoint %s: index %s names table %d, which precedes it in no "
            "catalog entry",
            dir, o.name, spec.table_id));
      }
      spec.table_id = it->second;
    }
    auto created = catalog.CreateIndex(ctx, o.name, spec, [&](uint32_t) {
      return index::BLinkTree::Create(
          manager, ctx, {.key_width = spec.key_width, .unique = spec.unique});
    });
    if (!created.ok()) return created.status();
    loaded.object_ids[o.id] = created->id;
    IndexJob job;
    job.old_id = o.id;
    auto tree = index::BLinkTree::Open(manager, ctx, created->anchor);
    if (!tree.ok()) return tree.status();
    job.tree = *std::move(tree);
    job.path = dir + "/" + IndexFileName(o.id);
    job.file_bytes = FileBytes(manifest, IndexFileName(o.id));
    indexes.push_back(std::move(job));
  }
  // Largest first, so the threads finish together.
  auto by_size = [](const auto& a, const auto& b) {
    return a.file_bytes > b.file_bytes;
  };
  std::sort(tables.begin(), tables.end(), by_size);
  std::sort(indexes.begin(), indexes.end(), by_size);

  std::atomic<uint64_t> bytes_read{0};
  absl::Status status = RunParallel(
      manager, threads, tables,
      [&](TableJob& job, cc::ThreadContext& tctx) -> absl::Status {
        auto bytes = wal::ReadWholeFile(job.path);
        if (!bytes.ok()) return bytes.status();
        bytes_read += bytes->size();
        const uint32_t tuple_bytes = job.heap->schema().tuple_bytes();
        auto records =
            ParseTableFile(*bytes, job.old_id, tuple_bytes, job.path);
        if (!records.ok()) return records.status();
        job.addresses.reserve(records->count);
        for (uint64_t i = 0; i < records->count; ++i) {
          const char* r = records->records.data() + i * records->record_bytes;
          const uint64_t old_address = DecodeFixed<uint64_t>(r);
          auto placed = job.heap->Insert(
              tctx, absl::MakeConstSpan(
                        reinterpret_cast<const uint8_t*>(r + sizeof(uint64_t)),
                        tuple_bytes));
          if (!placed.ok()) return placed.status();
          if (!job.addresses.emplace(old_address, placed->raw()).second) {
            return absl::DataLossError(
                absl::StrFormat("checkpoint file %s holds address %d twice",
                                job.path, old_address));
          }
        }
        job.tuples = records->count;
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  size_t total = 0;
  for (const TableJob& t : tables) total += t.addresses.size();
  loaded.addresses.reserve(total);
  for (TableJob& t : tables) {
    loaded.tuples += t.tuples;
    loaded.addresses.insert(t.addresses.begin(), t.addresses.end());
    t.addresses = {};
  }

  status = RunParallel(
      manager, threads, indexes,
      [&](IndexJob& job, cc::ThreadContext& tctx) -> absl::Status {
        auto bytes = wal::ReadWholeFile(job.path);
        if (!bytes.ok()) return bytes.status();
        bytes_read += bytes->size();
        const uint16_t key_width = job.tree->key_width();
        auto records = ParseIndexFile(*bytes, job.old_id, key_width, job.path);
        if (!records.ok()) return records.status();
        // Runs of ascending entries (InsertBatch), mapped to the new
        // addresses; a non-unique tree orders equal keys by value, which
        // the mapping reorders, so each run is sorted again.
        constexpr size_t kRun = 512;
        std::vector<index::BLinkTree::Entry> run;
        run.reserve(kRun);
        auto flush = [&]() -> absl::Status {
          if (run.empty()) return absl::OkStatus();
          if (!job.tree->unique()) {
            std::sort(run.begin(), run.end(), [](const auto& a, const auto& b) {
              const int c = a.key.compare(b.key);
              return c != 0 ? c < 0 : a.value < b.value;
            });
          }
          size_t inserted = 0;
          absl::Status s = job.tree->InsertBatch(tctx, run, &inserted);
          job.entries += inserted;
          run.clear();
          return s;
        };
        for (uint64_t i = 0; i < records->count; ++i) {
          const char* r = records->records.data() + i * records->record_bytes;
          const uint64_t old_value = DecodeFixed<uint64_t>(r + key_width);
          auto it = loaded.addresses.find(old_value);
          if (it == loaded.addresses.end()) {
            ++job.dropped;
            continue;
          }
          run.push_back({std::string_view(r, key_width), it->second});
          if (run.size() == kRun) {
            if (absl::Status s = flush(); !s.ok()) return s;
          }
        }
        return flush();
      });
  if (!status.ok()) return status;
  for (const IndexJob& i : indexes) {
    loaded.index_entries += i.entries;
    loaded.entries_dropped += i.dropped;
  }
  loaded.bytes += bytes_read.load();
  loaded.duration = absl::Now() - start;
  return loaded;
}

}  // namespace strand::engine
