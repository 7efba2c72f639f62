#include "engine/checkpointer.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string_view>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/coding.h"
#include "base/thread_ledger.h"
#include "cc/root_words.h"
#include "engine/checkpoint_format.h"
#include "engine/crash_point.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "storage/heap_table.h"
#include "wal/durable_file.h"
#include "wal/log_file.h"

namespace strand::engine {
namespace {

// Holds the copy to a rate: after every piece it sleeps until the bytes
// so far took as long as the rate allows.
class Throttle {
 public:
  explicit Throttle(double mb_per_s)
      : bytes_per_second_(mb_per_s * 1048576.0), start_(absl::Now()) {}
  void Add(uint64_t bytes) {
    bytes_ += bytes;
    if (bytes_per_second_ <= 0 || bytes_ < next_check_) return;
    next_check_ = bytes_ + kCheckBytes;
    const absl::Time due =
        start_ + absl::Seconds(static_cast<double>(bytes_) / bytes_per_second_);
    const absl::Time now = absl::Now();
    if (due > now) absl::SleepFor(due - now);
  }

 private:
  static constexpr uint64_t kCheckBytes = 64 << 10;
  const double bytes_per_second_;
  const absl::Time start_;
  uint64_t bytes_ = 0;
  uint64_t next_check_ = kCheckBytes;
};

// A uint64 as the checkpoint files store it (base/coding.h), for Append.
class Fixed64 {
 public:
  explicit Fixed64(uint64_t value) { EncodeFixed(bytes_, value); }
  std::string_view bytes() const { return {bytes_, sizeof(bytes_)}; }

 private:
  char bytes_[sizeof(uint64_t)];
};

bool StartsAddressSpace(const std::string& kind) {
  return kind == "initial" || kind == "resume";
}

}  // namespace

std::string CheckpointResult::Summary() const {
  std::string out = absl::StrFormat(
      "checkpoint %d (%s) at timestamps %d..%d: %d tables, %d tuples, %d "
      "indexes, %d entries; %.1f MiB written, %.1f MiB read from the memory "
      "nodes; %.2f s, %.2f s of CPU (waits %.3f + %.3f s, copy %.2f s, "
      "publish and verify %.2f s, truncation %.2f s)",
      sequence, kind, start_ts, end_ts, tables, tuples, indexes, index_entries,
      bytes_written / 1048576.0, bytes_read / 1048576.0,
      absl::ToDoubleSeconds(total), cpu_s, absl::ToDoubleSeconds(wait_start),
      absl::ToDoubleSeconds(wait_end), absl::ToDoubleSeconds(copy),
      absl::ToDoubleSeconds(publish), absl::ToDoubleSeconds(truncate));
  if (truncated_to_ts != 0) {
    absl::StrAppendFormat(
        &out,
        "; logs truncated to timestamp %d (%d segments, %.1f MiB), %d older "
        "checkpoints deleted",
        truncated_to_ts, log_segments_deleted, log_bytes_deleted / 1048576.0,
        checkpoints_deleted);
  }
  return out;
}

Checkpointer::Checkpointer(cc::GclManager& manager, storage::Catalog& catalog,
                           const txn::TimestampOracle& oracle,
                           TruncateLogs truncate_logs,
                           const CheckpointerOptions& options,
                           std::unique_ptr<cc::ThreadContext> ctx)
    : manager_(manager),
      catalog_(catalog),
      oracle_(oracle),
      truncate_logs_(std::move(truncate_logs)),
      options_(options),
      ctx_(std::move(ctx)) {}

void Checkpointer::AttachMarks(txn::CommitWatermark* marks) {
  absl::MutexLock lock(&mu_);
  marks_ = marks;
}

void Checkpointer::StartPeriodic() {
  absl::MutexLock lock(&stop_mu_);
  if (periodic_.joinable() || stopping_ ||
      options_.interval <= absl::ZeroDuration()) {
    return;
  }
  periodic_ = std::thread([this] { PeriodicLoop(); });
}

absl::StatusOr<std::unique_ptr<Checkpointer>> Checkpointer::Create(
    cc::GclManager& manager, storage::Catalog& catalog,
    const txn::TimestampOracle& oracle, TruncateLogs truncate_logs,
    const CheckpointerOptions& options) {
  if (options.wal_dir.empty() || options.database_id == 0 ||
      options.compute_nodes == 0 || options.keep < 1) {
    return absl::InvalidArgumentError(
        "a checkpointer needs a log directory, a database id, the compute "
        "node count and keep >= 1");
  }
  auto ctx = manager.NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  return std::unique_ptr<Checkpointer>(
      new Checkpointer(manager, catalog, oracle, std::move(truncate_logs),
                       options, *std::move(ctx)));
}

Checkpointer::~Checkpointer() {
  {
    absl::MutexLock lock(&stop_mu_);
    stopping_ = true;
  }
  if (periodic_.joinable()) periodic_.join();
}

void Checkpointer::PeriodicLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&stop_mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stop_mu_) {
        return stopping_;
      };
      if (stop_mu_.AwaitWithTimeout(absl::Condition(&stop),
                                    options_.interval)) {
        return;
      }
    }
    absl::StatusOr<CheckpointResult> taken = Take("periodic");
    if (!taken.ok()) {
      LOG(WARNING) << "periodic checkpoint failed: " << taken.status();
      absl::MutexLock lock(&results_mu_);
      last_error_ = taken.status();
    }
  }
}

std::vector<CheckpointResult> Checkpointer::history() const {
  absl::MutexLock lock(&results_mu_);
  return history_;
}

absl::Status Checkpointer::last_error() const {
  absl::MutexLock lock(&results_mu_);
  return last_error_;
}

absl::StatusOr<CheckpointResult> Checkpointer::Take(const std::string& kind,
                                                    bool quiescent) {
  absl::MutexLock lock(&mu_);
  running_.store(true, std::memory_order_relaxed);
  absl::Cleanup not_running = [this] {
    running_.store(false, std::memory_order_relaxed);
  };
  CheckpointResult result;
  result.kind = kind;
  result.started = absl::Now();
  const rdma::FabricCounters counters_before = ctx_->endpoint().Counters();
  const int64_t cpu_before = ThreadCpuNanos();

  // A directory without a manifest is a crashed checkpoint's: no one
  // else writes here (only compute node 0's process checkpoints).
  auto listed = wal::ListCheckpoints(options_.wal_dir);
  if (!listed.ok()) return listed.status();
  for (const wal::CheckpointEntry& e : *listed) {
    if (!e.published) {
      if (absl::Status s = wal::DeleteCheckpoint(e.dir); !s.ok()) return s;
    }
  }
  result.sequence = listed->empty() ? 1 : listed->front().sequence + 1;
  result.dir = wal::CheckpointDirectory(options_.wal_dir, result.sequence);
  std::error_code ec;
  std::filesystem::create_directories(result.dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("create %s: %s", result.dir, ec.message()));
  }
  if (absl::Status s = wal::SyncDirectory(options_.wal_dir); !s.ok()) return s;

  if (!quiescent && marks_ == nullptr) {
    return absl::FailedPreconditionError(
        "a checkpoint while transactions may run needs compute node 0's log "
        "(its durable marks)");
  }
  // 1. Every commit at or below S is durable and applied on every node.
  absl::Time step = absl::Now();
  auto start_ts = oracle_.Current(*ctx_);
  if (!start_ts.ok()) return start_ts.status();
  result.start_ts = *start_ts;
  CrashPoint("checkpoint.barrier");
  if (!quiescent) {
    if (absl::Status s = marks_->WaitAcknowledged(result.start_ts); !s.ok()) {
      return s;
    }
  }
  result.wait_start = absl::Now() - step;

  // 2. The copy.
  step = absl::Now();
  wal::CheckpointManifest manifest;
  if (absl::Status s = Copy(result.dir, manifest, result); !s.ok()) return s;
  result.copy = absl::Now() - step;

  // 3. Everything the copy may hold is durable (and above the cut no
  // recovery drops), then the publish.
  step = absl::Now();
  result.end_ts = result.start_ts;
  if (!quiescent) {
    auto end_ts = oracle_.Current(*ctx_);
    if (!end_ts.ok()) return end_ts.status();
    result.end_ts = *end_ts;
    if (absl::Status s = marks_->WaitAcknowledged(result.end_ts); !s.ok()) {
      return s;
    }
  }
  result.wait_end = absl::Now() - step;
  step = absl::Now();
  CrashPoint("checkpoint.before_manifest");
  manifest.sequence = result.sequence;
  manifest.database_id = options_.database_id;
  manifest.start_ts = result.start_ts;
  manifest.end_ts = result.end_ts;
  manifest.compute_nodes = options_.compute_nodes;
  manifest.kind = kind;
  manifest.memory_nodes = options_.memory_nodes;
  manifest.region_bytes = options_.region_bytes;
  manifest.chunk_bytes = options_.chunk_bytes;
  manifest.gcl_size = options_.gcl_size;
  if (absl::Status s = wal::PublishCheckpoint(result.dir, manifest); !s.ok()) {
    return s;
  }
  CrashPoint("checkpoint.published");
  // Nothing older goes before this one is read back whole.
  auto reread = wal::ReadManifest(result.dir);
  if (!reread.ok()) return reread.status();
  if (!(*reread == manifest)) {
    return absl::DataLossError(absl::StrFormat(
        "checkpoint %s: the manifest read back differs from the one written",
        result.dir));
  }
  if (absl::Status s = wal::VerifyCheckpoint(result.dir, manifest); !s.ok()) {
    return s;
  }
  result.publish = absl::Now() - step;
  kept_.push_back(
      {result.sequence, result.dir, result.start_ts, StartsAddressSpace(kind)});

  // 4.
  step = absl::Now();
  if (absl::Status s = TruncateAfter(result); !s.ok()) return s;
  result.truncate = absl::Now() - step;
  const rdma::FabricCounters read =
      ctx_->endpoint().Counters() - counters_before;
  result.bytes_read = read.bytes_read;
  result.round_trips = read.round_trips;
  result.total = absl::Now() - result.started;
  result.cpu_s = (ThreadCpuNanos() - cpu_before) / 1e9;
  LOG(INFO) << result.Summary();
  absl::MutexLock results(&results_mu_);
  history_.push_back(result);
  return result;
}

absl::Status Checkpointer::Copy(const std::string& dir,
                                wal::CheckpointManifest& manifest,
                                CheckpointResult& result) {
  cc::ThreadContext& ctx = *ctx_;
  Throttle throttle(options_.read_mb_per_s);
  // The catalog, in creation order (recovery recreates it so).
  auto names = catalog_.ListNames(ctx);
  if (!names.ok()) return names.status();
  std::vector<CheckpointObject> objects;
  std::vector<storage::TableDescriptor> tables;
  std::vector<storage::IndexDescriptor> indexes;
  for (const std::string& name : *names) {
    auto table = catalog_.FindTable(ctx, name);
    if (table.ok()) {
      auto heap =
          storage::HeapTable::Open(manager_, ctx, table->root, table->schema);
      if (!heap.ok()) return heap.status();
      CheckpointObject o;
      o.kind = CheckpointObject::Kind::kTable;
      o.id = table->id;
      o.name = table->name;
      o.table_options = (*heap)->options();
      o.schema = table->schema.Serialize();
      objects.push_back(std::move(o));
      tables.push_back(*std::move(table));
      continue;
    }
    if (!absl::IsFailedPrecondition(table.status())) return table.status();
    auto index = catalog_.FindIndex(ctx, name);
    if (!index.ok()) return index.status();
    CheckpointObject o;
    o.kind = CheckpointObject::Kind::kIndex;
    o.id = index->id;
    o.name = index->name;
    o.index = index->spec;
    objects.push_back(std::move(o));
    indexes.push_back(*std::move(index));
  }
  auto finish = [&](wal::SyncedFileWriter& file,
                    uint64_t count) -> absl::Status {
    if (absl::Status s = file.Append(Fixed64(count).bytes()); !s.ok()) return s;
    if (absl::Status s = file.Finish(); !s.ok()) return s;
    manifest.files.push_back(
        {std::filesystem::path(file.path()).filename().string(), file.bytes(),
         file.crc()});
    result.bytes_written += file.bytes();
    return absl::OkStatus();
  };
  {
    auto file = wal::SyncedFileWriter::Create(dir + "/catalog");
    if (!file.ok()) return file.status();
    if (absl::Status s = file->Append(EncodeCatalog(objects)); !s.ok()) {
      return s;
    }
    if (absl::Status s = file->Finish(); !s.ok()) return s;
    manifest.files.push_back({"catalog", file->bytes(), file->crc()});
    result.bytes_written += file->bytes();
  }

  // An object's copy that waited too long for a latch (a page that
  // transactions on other nodes keep latching exclusively: SELCC is not
  // fair under heavy oversubscription) starts again; a copy restarted is
  // as good as any (each tuple and key as it was at some moment).
  auto with_retries = [](const std::string& what,
                         const std::function<absl::Status()>& copy) {
    constexpr int kAttempts = 5;
    absl::Status s;
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      s = copy();
      if (!absl::IsDeadlineExceeded(s)) return s;
      LOG(WARNING) << "checkpoint: copying " << what << " again (attempt "
                   << attempt << " of " << kAttempts << "): " << s;
    }
    return s;
  };
  for (const storage::TableDescriptor& t : tables) {
    uint64_t count = 0;
    absl::Status copied =
        with_retries(absl::StrCat("table ", t.name), [&]() -> absl::Status {
          auto heap = storage::HeapTable::Open(manager_, ctx, t.root, t.schema);
          if (!heap.ok()) return heap.status();
          auto file =
              wal::SyncedFileWriter::Create(dir + "/" + TableFileName(t.id));
          if (!file.ok()) return file.status();
          const uint32_t tuple_bytes = t.schema.tuple_bytes();
          if (absl::Status s = file->Append(TableFileHeader(t.id, tuple_bytes));
              !s.ok()) {
            return s;
          }
          count = 0;
          absl::Status written;
          absl::Status scanned = (*heap)->Scan(
              ctx, [&](storage::TupleAddress address, const uint8_t* tuple) {
                const uint64_t raw = address.raw();
                written = file->Append(Fixed64(raw).bytes());
                if (written.ok()) {
                  written = file->Append(std::string_view(
                      reinterpret_cast<const char*>(tuple), tuple_bytes));
                }
                ++count;
                throttle.Add(sizeof(raw) + tuple_bytes);
                return written.ok();
              });
          if (!written.ok()) return written;
          if (!scanned.ok()) return scanned;
          return finish(*file, count);
        });
    if (!copied.ok()) return copied;
    ++result.tables;
    result.tuples += count;
    if (result.tables == 1) CrashPoint("checkpoint.copy");
  }
  for (const storage::IndexDescriptor& i : indexes) {
    uint64_t count = 0;
    absl::Status copied =
        with_retries(absl::StrCat("index ", i.name), [&]() -> absl::Status {
          auto tree = index::BLinkTree::Open(manager_, ctx, i.anchor);
          if (!tree.ok()) return tree.status();
          auto file =
              wal::SyncedFileWriter::Create(dir + "/" + IndexFileName(i.id));
          if (!file.ok()) return file.status();
          const uint16_t key_width = (*tree)->key_width();
          if (absl::Status s = file->Append(
                  IndexFileHeader(i.id, key_width, (*tree)->unique()));
              !s.ok()) {
            return s;
          }
          count = 0;
          absl::Status written;
          absl::Status scanned = (*tree)->Scan(
              ctx, std::nullopt, std::nullopt, index::BLinkTree::kNoLimit,
              [&](std::string_view key, uint64_t value) {
                written = file->Append(key);
                if (written.ok())
                  written = file->Append(Fixed64(value).bytes());
                ++count;
                throttle.Add(key.size() + sizeof(value));
                return written.ok();
              });
          if (!written.ok()) return written;
          if (!scanned.ok()) return scanned;
          return finish(*file, count);
        });
    if (!copied.ok()) return copied;
    ++result.indexes;
    result.index_entries += count;
  }
  return absl::OkStatus();
}

absl::Status Checkpointer::TruncateAfter(CheckpointResult& result) {
  const size_t keep = static_cast<size_t>(options_.keep);
  // With fewer than `keep` checkpoints of this address space, an older
  // base (an image, or a checkpoint of the logs before this engine) may
  // still be needed, unless the newest starts the address space itself.
  if (kept_.size() < keep && !kept_.back().starts_address_space) {
    return absl::OkStatus();
  }
  const size_t first_kept = kept_.size() > keep ? kept_.size() - keep : 0;
  const uint64_t ts = kept_[first_kept].start_ts;
  // Every process's compute nodes truncate to the word (engine.h).
  const rdma::GlobalAddress word =
      cc::RootWordAddress(cc::RootWord::kLogTruncateTs);
  auto current = manager_.FetchAndAdd(*ctx_, word, 0);
  if (!current.ok()) return current.status();
  while (*current < ts) {
    auto swapped = manager_.CompareAndSwap(*ctx_, word, *current, ts);
    if (!swapped.ok()) return swapped.status();
    if (*swapped == *current) break;
    current = *swapped;
  }
  result.truncated_to_ts = ts;
  if (truncate_logs_) {
    bool first_delete = true;
    auto truncated = truncate_logs_(ts, [&first_delete] {
      if (first_delete) CrashPoint("checkpoint.truncating");
      first_delete = false;
    });
    if (!truncated.ok()) return truncated.status();
    result.log_segments_deleted = truncated->segments_deleted;
    result.log_bytes_deleted = truncated->bytes_deleted;
  }
  // Then the checkpoints no recovery needs: older ones of this address
  // space, and every one of another (a resumed pool's predecessors).
  auto listed = wal::ListCheckpoints(options_.wal_dir);
  if (!listed.ok()) return listed.status();
  for (const wal::CheckpointEntry& e : *listed) {
    const bool keep_it =
        std::any_of(kept_.begin() + first_kept, kept_.end(),
                    [&e](const Kept& k) { return k.sequence == e.sequence; });
    if (keep_it) continue;
    if (absl::Status s = wal::DeleteCheckpoint(e.dir); !s.ok()) return s;
    ++result.checkpoints_deleted;
  }
  kept_.erase(kept_.begin(), kept_.begin() + first_kept);
  return absl::OkStatus();
}

}  // namespace strand::engine
