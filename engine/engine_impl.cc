#include "engine/engine_impl.h"

#include <filesystem>

#include "absl/algorithm/container.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/cost_breakdown.h"
#include "cc/root_words.h"
#include "engine/crashable_log_files.h"
#include "engine/epoch_ticker.h"
#include "engine/failure_monitor.h"
#include "engine/image.h"
#include "engine/node_runtime.h"
#include "engine/session.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "partition/coordinator.h"
#include "partition/node.h"
#include "storage/heap_page.h"
#include "storage/tuple_header.h"
#include "wal/log_truncation.h"

namespace strand::engine {
namespace {

// Recovery is compute node 0's process's: one rebuilds the pool, and it
// hosts the checkpointer that a resume in place needs.
bool HostsNodeZero(const rdma::Fabric& fabric) {
  return absl::c_linear_search(fabric.local_compute_nodes(),
                               rdma::ComputeNodeId{0});
}

}  // namespace

absl::StatusOr<std::unique_ptr<EngineImpl>> EngineImpl::Open(
    const EngineOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  EngineOptions effective = options;
  if (options.failover.enabled) {
    // What surviving a failure takes below the engine
    // (docs/design/node_failure.md).
    effective.fabric.fencing = true;
    effective.cc.write_through = true;
  }
  std::unique_ptr<EngineImpl> engine(new EngineImpl(effective));
  auto fabric = rdma::CreateFabric(effective.fabric);
  if (!fabric.ok()) return fabric.status();
  engine->fabric_ = *std::move(fabric);
  std::optional<RecoveryBase> base;
  if (!options.recover_wal_dir.empty() && HostsNodeZero(*engine->fabric_)) {
    auto chosen =
        ChooseRecoveryBase(options.recover_wal_dir, options.image_path);
    if (!chosen.ok()) return chosen.status();
    base = *std::move(chosen);
    for (const std::string& passed : base->passed_over) {
      LOG(WARNING) << "recovery passes over " << passed;
    }
  }
  if (!options.image_path.empty() &&
      (!base.has_value() || base->kind == RecoveryBase::Kind::kImage)) {
    // Before any compute node touches the pool (engine/image.h).
    auto restored =
        RestoreImage(*engine->fabric_, options.image_path, options.cc.gcl_size);
    if (!restored.ok()) return restored.status();
  }
  engine->nodes_.resize(engine->fabric_->compute_node_count());
  for (rdma::ComputeNodeId id : engine->fabric_->local_compute_nodes()) {
    auto node = engine->CreateNodeRuntime(id);
    if (!node.ok()) return node.status();
    engine->nodes_[id] = *std::move(node);
    if (engine->first_node_ == nullptr) {
      engine->first_node_ = engine->nodes_[id].get();
    }
  }
  if (engine->first_node_ == nullptr) {
    return absl::FailedPreconditionError(
        "this process hosts no compute node: check "
        "EngineOptions::fabric.node_id (--node_id)");
  }
  if (absl::Status s = engine->StartEpochs(); !s.ok()) return s;
  if (absl::Status s = engine->StartRecoveryAndLogging(base); !s.ok()) {
    return s;
  }
  if (options.mode == EngineMode::kPartitioned) {
    if (absl::Status s = engine->StartPartitioned(); !s.ok()) return s;
  }
  if (options.failover.enabled) {
    if (absl::Status s = engine->StartFailover(); !s.ok()) return s;
  }
  return engine;
}

absl::Status EngineImpl::StartEpochs() {
  epochs_by_node_.assign(nodes_.size(), nullptr);
  // Every transaction that could hold a deleted row's address must
  // announce where the reclaimer sees it: in one manager when this process
  // hosts every compute node, through the pool's words otherwise
  // (docs/design/slot_reuse.md, "Across processes").
  if (!options_.epochs_in_pool &&
      fabric_->local_compute_nodes().size() ==
          static_cast<size_t>(fabric_->compute_node_count())) {
    epochs_.push_back(std::make_unique<txn::EpochManager>());
    for (auto& node : nodes_) {
      if (node == nullptr) continue;
      node->SetEpochs(epochs_.back().get());
      epochs_by_node_[node->id()] = epochs_.back().get();
    }
    return absl::OkStatus();
  }
  std::vector<EpochTicker::Node> ticked;
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    absl::StatusOr<std::unique_ptr<txn::EpochManager>> epochs;
    {
      absl::MutexLock admin(&node->admin_mu());
      epochs = txn::EpochManager::InPool(node->admin().endpoint(),
                                         fabric_->compute_node_count());
    }
    if (!epochs.ok()) return epochs.status();
    epochs_.push_back(*std::move(epochs));
    node->SetEpochs(epochs_.back().get());
    epochs_by_node_[node->id()] = epochs_.back().get();
    ticked.push_back({epochs_.back().get(), &node->manager()});
  }
  auto ticker = EpochTicker::Start(ticked);
  if (!ticker.ok()) return ticker.status();
  epoch_ticker_ = *std::move(ticker);
  return absl::OkStatus();
}

absl::Status EngineImpl::StartPartitioned() {
  auto map = partition::PartitionMap::Create(options_.partitioned.partitions,
                                             fabric_->compute_node_count());
  if (!map.ok()) return map.status();
  partition_map_ = std::make_unique<partition::PartitionMap>(*map);
  partition_nodes_.resize(nodes_.size());
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    auto started = StartPartitionNode(*node);
    if (!started.ok()) return started.status();
    partition_nodes_[node->id()] = *std::move(started);
  }
  // Every hosted node routes the protocol's messages before any greets.
  for (auto& node : partition_nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = node->Greet(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<partition::Node>> EngineImpl::StartPartitionNode(
    NodeRuntime& node) {
  partition::Node::Config config;
  config.fabric = fabric_.get();
  config.id = node.id();
  config.db = &node.db();
  config.manager = &node.manager();
  config.fragments = &fragments_;
  config.map = partition_map_.get();
  config.options = options_.partitioned;
  config.failover = options_.failover.enabled;
  return partition::Node::Start(config);
}

partition::PartitionStats EngineImpl::PartitionStats() const {
  partition::PartitionStats sum;
  for (const auto& node : partition_nodes_) {
    if (node != nullptr) sum += node->Stats();
  }
  return sum;
}

absl::Status EngineImpl::StartRecoveryAndLogging(
    const std::optional<RecoveryBase>& base) {
  NodeRuntime& first = FirstNode();
  const bool from_checkpoint =
      base.has_value() && base->kind == RecoveryBase::Kind::kCheckpoint;
  const bool recovers = !options_.recover_wal_dir.empty();
  const bool resume = recovers && options_.recover_wal_dir == options_.wal.dir;
  if (recovers && !HostsNodeZero(*fabric_)) {
    // Compute node 0's process rebuilds the pool (resuming, it also drops
    // every node's logs that its checkpoint covers): log only after it.
    if (absl::Status s = AwaitRecoveryByNodeZero(); !s.ok()) return s;
    if (options_.wal.dir.empty()) return absl::OkStatus();
    return StartLogging(options_.wal);
  }
  {
    absl::MutexLock admin(&first.admin_mu());
    const rdma::GlobalAddress id_word =
        cc::RootWordAddress(cc::RootWord::kDatabaseId);
    if (from_checkpoint) {
      // A fresh pool takes the checkpoint's database: its logs name it.
      auto old = first.manager().CompareAndSwap(first.admin(), id_word, 0,
                                                base->manifest.database_id);
      if (!old.ok()) return old.status();
      if (*old != 0 && *old != base->manifest.database_id) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "the pool already holds database %d, the checkpoint %s is of "
            "database %d: recover into fresh memory nodes",
            *old, base->path, base->manifest.database_id));
      }
    }
    auto id = first.manager().FetchAndAdd(first.admin(), id_word, 0);
    if (!id.ok()) return id.status();
    database_id_ = *id;
    if (database_id_ == 0) {
      // The first open of a pool names its database (so an image taken
      // later carries the id its logs will be checked against); a lost race
      // uses the winner's id.
      const uint64_t fresh =
          (static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) *
           0x9E3779B97F4A7C15ULL) |
          1;
      auto old =
          first.manager().CompareAndSwap(first.admin(), id_word, 0, fresh);
      if (!old.ok()) return old.status();
      database_id_ = *old == 0 ? fresh : *old;
    }
    if (base.has_value()) {
      const rdma::GlobalAddress oracle =
          cc::RootWordAddress(cc::RootWord::kTimestampOracle);
      ReplayBase replay;
      std::optional<LoadedCheckpoint> loaded;
      absl::Duration load_time;
      double load_cpu_s = 0;
      if (from_checkpoint) {
        const absl::Time start = absl::Now();
        const int64_t start_cpu = ProcessCpuNanos();
        auto done =
            LoadCheckpoint(first.manager(), first.admin(), first.catalog(),
                           base->path, base->manifest, RecoveryThreads());
        if (!done.ok()) {
          return absl::Status(
              done.status().code(),
              absl::StrFormat("loading checkpoint %s: %s", base->path,
                              done.status().message()));
        }
        loaded = *std::move(done);
        load_time = absl::Now() - start;
        load_cpu_s = (ProcessCpuNanos() - start_cpu) / 1e9;
        // New timestamps start above everything the copy may hold.
        auto now = first.manager().FetchAndAdd(first.admin(), oracle, 0);
        if (!now.ok()) return now.status();
        if (*now < base->manifest.end_ts) {
          auto moved = first.manager().FetchAndAdd(
              first.admin(), oracle, base->manifest.end_ts - *now);
          if (!moved.ok()) return moved.status();
        }
        replay.timestamp = base->manifest.start_ts;
        replay.watermark_floor = base->manifest.end_ts;
        replay.compute_nodes = base->manifest.compute_nodes;
        replay.checkpoint = &*loaded;
      } else {
        auto image_ts = first.manager().FetchAndAdd(first.admin(), oracle, 0);
        if (!image_ts.ok()) return image_ts.status();
        replay.timestamp = *image_ts;
        replay.compute_nodes = base->image.compute_nodes;
      }
      auto report = ReplayLogs(
          first.manager(), first.admin(), first.catalog(),
          options_.recover_wal_dir, database_id_, replay,
          {.allow_log_data_loss = options_.recover_allow_log_data_loss,
           .threads = RecoveryThreads(),
           .batch_bytes = options_.recovery_batch_bytes});
      if (!report.ok()) return report.status();
      report->base_kind = from_checkpoint ? "checkpoint" : "image";
      report->base_path = base->path;
      report->bases_passed_over = base->passed_over;
      report->load_time = load_time;
      report->load_cpu_s = load_cpu_s;
      if (loaded.has_value()) {
        report->checkpoint_tuples = loaded->tuples;
        report->checkpoint_entries = loaded->index_entries;
        report->checkpoint_bytes = loaded->bytes;
      }
      LOG(INFO) << report->Summary();
      recovery_report_ = *std::move(report);
    }
  }
  if (resume) {
    if (absl::Status s = ResumeInPlace(); !s.ok()) return s;
  }
  if (recovers) {
    absl::MutexLock admin(&first.admin_mu());
    auto old = first.manager().CompareAndSwap(
        first.admin(), cc::RootWordAddress(cc::RootWord::kRecoveredDatabase), 0,
        database_id_);
    if (!old.ok()) return old.status();
  }
  if (options_.wal.dir.empty()) return absl::OkStatus();
  return StartLogging(options_.wal);
}

absl::Status EngineImpl::AwaitRecoveryByNodeZero() {
  // Loading a checkpoint and replaying one interval of logs; a process
  // that dies meanwhile is the launcher's to notice, this is a backstop.
  constexpr absl::Duration kMostRecoveryTakes = absl::Minutes(30);
  const absl::Time deadline = absl::Now() + kMostRecoveryTakes;
  NodeRuntime& first = FirstNode();
  for (;;) {
    {
      absl::MutexLock admin(&first.admin_mu());
      auto id = first.manager().FetchAndAdd(
          first.admin(), cc::RootWordAddress(cc::RootWord::kRecoveredDatabase),
          0);
      if (!id.ok()) return id.status();
      if (*id != 0) {
        database_id_ = *id;
        return absl::OkStatus();
      }
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "compute node 0's process did not recover the database in %s "
          "within %s: is it running, with the same recovery directory?",
          options_.recover_wal_dir, absl::FormatDuration(kMostRecoveryTakes)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

int EngineImpl::RecoveryThreads() const {
  return options_.recovery_threads > 0
             ? options_.recovery_threads
             : static_cast<int>(
                   std::max(1u, std::thread::hardware_concurrency()));
}

absl::Status EngineImpl::StartCheckpointer(const std::string& log_dir,
                                           txn::CommitWatermark* marks) {
  if (checkpointer_ == nullptr) {
    log_dir_ = log_dir;
    NodeRuntime* zero = nodes_.empty() ? nullptr : nodes_[0].get();
    if (zero == nullptr) {
      return absl::FailedPreconditionError(
          "checkpoints are taken by the process hosting compute node 0");
    }
    CheckpointerOptions o;
    o.wal_dir = log_dir;
    o.database_id = database_id_;
    o.compute_nodes = static_cast<uint32_t>(fabric_->compute_node_count());
    o.memory_nodes = static_cast<uint32_t>(fabric_->memory_node_count());
    o.region_bytes = fabric_->memory_node_bytes();
    o.chunk_bytes = fabric_->chunk_bytes();
    o.gcl_size = options_.cc.gcl_size;
    o.interval = options_.checkpoint_interval;
    o.read_mb_per_s = options_.checkpoint_read_mb_per_s;
    o.keep = options_.checkpoints_kept;
    auto created = Checkpointer::Create(
        zero->manager(), zero->catalog(), *zero->db().oracle,
        [this](uint64_t ts, const std::function<void()>& after_each_delete) {
          return TruncateLogs(ts, after_each_delete);
        },
        o);
    if (!created.ok()) return created.status();
    checkpointer_ = *std::move(created);
  }
  if (marks != nullptr) {
    checkpointer_->AttachMarks(marks);
    checkpointer_->StartPeriodic();
  }
  return absl::OkStatus();
}

absl::Status EngineImpl::ResumeInPlace() {
  if (absl::Status s = StartCheckpointer(options_.wal.dir, nullptr); !s.ok()) {
    return s;
  }
  // No session exists yet: the checkpoint is exact, above every record.
  auto taken = checkpointer_->Take("resume", /*quiescent=*/true);
  if (!taken.ok()) {
    return absl::Status(
        taken.status().code(),
        absl::StrFormat("resuming in place: checkpoint of the recovered pool: "
                        "%s",
                        taken.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<wal::LogTruncationStats> EngineImpl::TruncateLogs(
    uint64_t ts, const std::function<void()>& after_each_delete) {
  absl::ReaderMutexLock runtimes(&runtimes_mu_);  // a rejoin may swap one
  wal::LogTruncationStats sum;
  bool any_writer = false;
  for (auto& node : nodes_) {
    if (node == nullptr || node->log() == nullptr) continue;
    any_writer = true;
    auto done = node->log()->Truncate(ts, after_each_delete);
    if (!done.ok()) return done.status();
    sum.segments_deleted += done->segments_deleted;
    sum.bytes_deleted += done->bytes_deleted;
  }
  if (any_writer) return sum;
  // Resuming in place: no log is open yet, and the checkpoint is above
  // every record of every node's log here.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(log_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !name.starts_with("node-")) continue;
    auto done = wal::DiscardLog(entry.path().string(), database_id_, ts,
                                after_each_delete);
    if (!done.ok()) return done.status();
    sum.segments_deleted += done->segments_deleted;
    sum.bytes_deleted += done->bytes_deleted;
  }
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("list %s: %s", log_dir_, ec.message()));
  }
  return sum;
}

void EngineImpl::PollLogTruncation() {
  NodeRuntime* node = &FirstNode();
  auto ctx = node->manager().NewThreadContext();
  if (!ctx.ok()) {
    LOG(WARNING) << "log truncation poller: " << ctx.status();
    return;
  }
  uint64_t done = 0;
  for (;;) {
    {
      absl::MutexLock lock(&truncation_mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(truncation_mu_) {
        return stopping_;
      };
      if (truncation_mu_.AwaitWithTimeout(absl::Condition(&stop),
                                          absl::Milliseconds(500))) {
        return;
      }
    }
    auto ts = node->manager().FetchAndAdd(
        **ctx, cc::RootWordAddress(cc::RootWord::kLogTruncateTs), 0);
    if (!ts.ok() || *ts <= done) continue;
    auto truncated = TruncateLogs(*ts, [] {});
    if (truncated.ok()) {
      done = *ts;
    } else {
      LOG_EVERY_T(WARNING, 10) << "log truncation: " << truncated.status();
    }
  }
}

absl::StatusOr<CheckpointResult> EngineImpl::Checkpoint(std::string_view kind) {
  if (kind != "on_demand" && kind != "initial") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "checkpoint kind %s: use on_demand or initial", std::string(kind)));
  }
  if (closed_) {
    return absl::FailedPreconditionError("the engine is closed (SaveImage)");
  }
  if (checkpointer_ == nullptr) {
    return absl::FailedPreconditionError(
        nodes_.empty() || nodes_[0] == nullptr
            ? "checkpoints are taken by the process hosting compute node 0"
            : "checkpoints need a log (EngineOptions::wal.dir)");
  }
  return checkpointer_->Take(std::string(kind));
}

std::vector<CheckpointResult> EngineImpl::CheckpointHistory() const {
  return checkpointer_ == nullptr ? std::vector<CheckpointResult>()
                                  : checkpointer_->history();
}

bool EngineImpl::checkpoint_running() const {
  return checkpointer_ != nullptr && checkpointer_->running();
}

absl::Status EngineImpl::StartLogging(const WalOptions& wal) {
  if (closed_) {
    return absl::FailedPreconditionError("the engine is closed (SaveImage)");
  }
  if (wal.dir.empty()) {
    return absl::InvalidArgumentError("StartLogging needs WalOptions::dir");
  }
  for (auto& node : nodes_) {
    if (node != nullptr && node->log() != nullptr) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "compute node %d logs already (to %s)", node->id(), wal.dir));
    }
  }
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = StartNodeLogging(*node, wal); !s.ok()) return s;
  }
  wal_started_ = wal;
  if (!nodes_.empty() && nodes_[0] != nullptr) {
    return StartCheckpointer(wal.dir, nodes_[0]->marks());
  }
  truncation_poller_ = std::thread([this] { PollLogTruncation(); });
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<NodeRuntime>> EngineImpl::CreateNodeRuntime(
    rdma::ComputeNodeId id) const {
  auto node = NodeRuntime::Create(*fabric_, id, options_.cc, options_.algorithm,
                                  options_.index);
  if (!node.ok()) return node.status();
  (*node)->SetValidateIndexReads(options_.validate_index_reads);
  (*node)->SetOptimisticTupleReads(options_.optimistic_tuple_reads);
  (*node)->SetHeapTuning(options_.heap);
  return node;
}

absl::Status EngineImpl::StartNodeLogging(NodeRuntime& node,
                                          const WalOptions& wal) {
  if (options_.failover.enabled && !wal.early_lock_release) {
    return absl::InvalidArgumentError(
        "EngineOptions::failover needs the log to acknowledge by the durable "
        "watermark (WalOptions::early_lock_release)");
  }
  wal::LogWriterOptions log;
  log.wal_dir = wal.dir;
  log.database_id = database_id_;
  log.compute_node_id = node.id();
  log.io_mode = wal.io_mode;
  log.segment_bytes = wal.segment_bytes;
  log.group_commit_window = wal.group_commit_window;
  // The durable marks in both commit modes: checkpoints wait for them
  // (docs/design/checkpoints.md). Only early lock release acknowledges
  // by them, and only then may recovery cut at them.
  auto marks = txn::CommitWatermark::Open(
      node.manager(), *node.db().oracle, node.id(),
      fabric_->compute_node_count(), {.ack_timeout = wal.ack_timeout});
  if (!marks.ok()) return marks.status();
  log.observer = marks->get();
  log.observer_acknowledges = wal.early_lock_release;
  log.observer_interval = wal.watermark_interval;
  wal::LogFileFactory* files = wal.file_factory != nullptr
                                   ? wal.file_factory
                                   : &wal::UringLogFileFactory();
  if (options_.failover.enabled) {
    // EngineImpl::FailNode stops them as a crash would.
    if (log_files_.size() <= node.id()) log_files_.resize(node.id() + 1);
    if (log_files_[node.id()] == nullptr) {
      log_files_[node.id()] = std::make_unique<CrashableLogFiles>(files);
    }
    files = log_files_[node.id()].get();
  }
  auto writer = wal::LogWriter::Open(log, files);
  if (!writer.ok()) return writer.status();
  node.SetLog(*std::move(writer), *std::move(marks), wal.early_lock_release);
  return absl::OkStatus();
}

absl::Status EngineImpl::WriteBackCaches() {
  if (closed_) {
    return absl::FailedPreconditionError("the engine is closed (SaveImage)");
  }
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = node->manager().WriteBackAll(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

wal::LogWriter* EngineImpl::log(rdma::ComputeNodeId node) {
  auto r = runtime(node);
  return r.ok() ? (*r)->log() : nullptr;
}

absl::StatusOr<ImageInfo> EngineImpl::SaveImage(const std::string& path) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      return absl::FailedPreconditionError("the engine is closed already");
    }
    closed_ = true;
    frozen_ = true;
  }
  StopBackground();
  absl::Status log_status;
  for (auto& node : nodes_) {
    if (node == nullptr || node->log() == nullptr) continue;
    if (absl::Status s = node->log()->Close(); !s.ok() && log_status.ok()) {
      log_status = s;
    }
  }
  // Its thread contexts, and the monitor's, belong to the managers
  // destroyed next.
  epoch_ticker_.reset();
  StopFailover();
  // Destroying the managers writes back and releases every cached line.
  partition_nodes_.clear();
  nodes_.clear();
  first_node_ = nullptr;
  if (!log_status.ok()) return log_status;
  return WriteImage(*fabric_, path, options_.cc.gcl_size);
}

EngineImpl::EngineImpl(const EngineOptions& options) : options_(options) {}

void EngineImpl::StopBackground() {
  checkpointer_.reset();
  {
    absl::MutexLock lock(&truncation_mu_);
    stopping_ = true;
  }
  if (truncation_poller_.joinable()) truncation_poller_.join();
}

EngineImpl::~EngineImpl() {
  // Checkpoints and truncation first: they use the logs and the nodes.
  StopBackground();
  // Logs first: their durability callbacks (partitioned mode's votes) run
  // while every node is still there.
  for (auto& node : nodes_) {
    if (node != nullptr && node->log() != nullptr) (void)node->log()->Close();
  }
  // Partitioned mode's nodes before the runtimes they run branches on.
  partition_nodes_.clear();
  // The ticker's and the monitor's contexts belong to the runtimes'
  // managers.
  epoch_ticker_.reset();
  StopFailover();
  // Runtimes (managers and their handler threads) before the fabric.
  nodes_.clear();
  fabric_.reset();
}

std::vector<rdma::ComputeNodeId> EngineImpl::local_compute_nodes() const {
  return fabric_->local_compute_nodes();
}

absl::Status EngineImpl::CheckNotFrozen(std::string_view what) const {
  if (frozen_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s after the first session: create tables and indexes and register "
        "procedures before opening sessions",
        std::string(what)));
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeRuntime*> EngineImpl::runtime(
    rdma::ComputeNodeId node) const {
  if (closed_) {
    return absl::FailedPreconditionError(
        "the engine was closed by SaveImage: open a new one from the image");
  }
  if (node >= nodes_.size() || nodes_[node] == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("compute node %d is not hosted by this process", node));
  }
  return nodes_[node].get();
}

absl::StatusOr<cc::GclManager*> EngineImpl::manager(rdma::ComputeNodeId node) {
  auto r = runtime(node);
  if (!r.ok()) return r.status();
  return &(*r)->manager();
}

absl::StatusOr<txn::TableId> EngineImpl::AddTable(
    const storage::TableDescriptor& table) {
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = node->AddTable(table); !s.ok()) return s;
  }
  const auto id = static_cast<txn::TableId>(schemas_.size());
  table_descriptors_.push_back(table);
  schemas_.push_back(std::make_unique<storage::Schema>(table.schema));
  tables_by_name_[table.name] = id;
  table_catalog_ids_.push_back(table.id);
  return id;
}

absl::StatusOr<txn::IndexId> EngineImpl::AddIndex(
    const storage::IndexDescriptor& index) {
  txn::TableId table = txn::kNoTable;
  for (size_t t = 0; t < table_catalog_ids_.size(); ++t) {
    if (table_catalog_ids_[t] == index.spec.table_id) {
      table = static_cast<txn::TableId>(t);
    }
  }
  std::unique_ptr<txn::IndexKey> key;
  if (!index.spec.key_columns.empty()) {
    if (table == txn::kNoTable) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "index %s has key columns: open its table before it (OpenTable)",
          index.name));
    }
    auto made = txn::IndexKey::Create(*schemas_[table], index.spec.key_columns);
    if (!made.ok()) return made.status();
    if (made->width() != index.spec.key_width) {
      return absl::DataLossError(absl::StrFormat(
          "index %s: its key columns make %d-byte keys, the catalog says %d",
          index.name, made->width(), index.spec.key_width));
    }
    key = std::make_unique<txn::IndexKey>(*std::move(made));
  }
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = node->AddIndex(index, table, key.get()); !s.ok()) {
      return s;
    }
  }
  const auto id = static_cast<txn::IndexId>(indexes_by_name_.size());
  indexes_by_name_[index.name] = id;
  index_descriptors_.push_back({index, table, key.get()});
  index_keys_.push_back(std::move(key));
  return id;
}

const txn::IndexKey* EngineImpl::index_key(txn::IndexId index) const {
  absl::MutexLock lock(&mu_);
  return index < index_keys_.size() ? index_keys_[index].get() : nullptr;
}

absl::StatusOr<txn::TableId> EngineImpl::CreateTable(
    std::string_view name, const storage::Schema& schema,
    const storage::TableOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNotFrozen("CreateTable"); !s.ok()) return s;
  if (schema.data_bytes() > max_row_bytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "table %s: a row of %d bytes of columns does not fit one GCL, which "
        "holds up to %d (EngineImpl::max_row_bytes() for "
        "EngineOptions::cc.gcl_size=%d, --gcl_size): use fewer or narrower "
        "columns, or a larger gcl_size",
        std::string(name), schema.data_bytes(), max_row_bytes(),
        options_.cc.gcl_size));
  }
  storage::TableDescriptor table;
  {
    NodeRuntime& first = FirstNode();
    absl::MutexLock admin(&first.admin_mu());
    auto created =
        first.catalog().CreateTable(first.admin(), name, schema, options);
    if (!created.ok()) return created.status();
    table = *std::move(created);
  }
  return AddTable(table);
}

absl::StatusOr<txn::TableId> EngineImpl::OpenTable(std::string_view name) {
  absl::MutexLock lock(&mu_);
  if (auto it = tables_by_name_.find(std::string(name));
      it != tables_by_name_.end()) {
    return it->second;
  }
  if (absl::Status s = CheckNotFrozen("OpenTable"); !s.ok()) return s;
  storage::TableDescriptor table;
  {
    NodeRuntime& first = FirstNode();
    absl::MutexLock admin(&first.admin_mu());
    auto found = first.catalog().FindTable(first.admin(), name);
    if (!found.ok()) return found.status();
    table = *std::move(found);
  }
  return AddTable(table);
}

absl::StatusOr<txn::IndexId> EngineImpl::CreateIndex(
    std::string_view name, txn::TableId table,
    const std::vector<std::string>& key_columns, bool unique) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNotFrozen("CreateIndex"); !s.ok()) return s;
  if (table >= schemas_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CreateIndex %s: no table with id %d", std::string(name), table));
  }
  const storage::Schema& schema = *schemas_[table];
  storage::IndexSpec spec;
  spec.table_id = table_catalog_ids_[table];
  spec.unique = unique;
  for (const std::string& column : key_columns) {
    absl::StatusOr<size_t> c = schema.ColumnIndex(column);
    if (!c.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("CreateIndex %s: the table has no column %s",
                          std::string(name), column));
    }
    spec.key_columns.push_back(static_cast<uint16_t>(*c));
  }
  auto key = txn::IndexKey::Create(schema, spec.key_columns);
  if (!key.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CreateIndex %s: %s", std::string(name), key.status().message()));
  }
  spec.key_width = key->width();
  return CreateIndexWithSpec(name, std::move(spec));
}

absl::StatusOr<txn::IndexId> EngineImpl::CreateIndex(std::string_view name,
                                                     txn::TableId table,
                                                     uint16_t key_width,
                                                     bool unique) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNotFrozen("CreateIndex"); !s.ok()) return s;
  if (table >= schemas_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CreateIndex %s: no table with id %d", std::string(name), table));
  }
  storage::IndexSpec spec;
  spec.table_id = table_catalog_ids_[table];
  spec.key_width = key_width;
  spec.unique = unique;
  return CreateIndexWithSpec(name, std::move(spec));
}

absl::StatusOr<txn::IndexId> EngineImpl::CreateIndexWithSpec(
    std::string_view name, storage::IndexSpec spec) {
  const uint16_t key_width = spec.key_width;
  const bool unique = spec.unique;
  storage::IndexDescriptor index;
  {
    NodeRuntime& first = FirstNode();
    absl::MutexLock admin(&first.admin_mu());
    cc::GclManager& manager = first.manager();
    cc::ThreadContext& ctx = first.admin();
    auto created = first.catalog().CreateIndex(ctx, name, spec, [&](uint32_t) {
      return index::BLinkTree::Create(
          manager, ctx, {.key_width = key_width, .unique = unique});
    });
    if (!created.ok()) {
      return absl::Status(
          created.status().code(),
          absl::StrFormat("CreateIndex %s: %s", std::string(name),
                          created.status().message()));
    }
    index = *std::move(created);
  }
  return AddIndex(index);
}

absl::StatusOr<txn::IndexId> EngineImpl::OpenIndex(std::string_view name) {
  absl::MutexLock lock(&mu_);
  if (auto it = indexes_by_name_.find(std::string(name));
      it != indexes_by_name_.end()) {
    return it->second;
  }
  if (absl::Status s = CheckNotFrozen("OpenIndex"); !s.ok()) return s;
  storage::IndexDescriptor index;
  {
    NodeRuntime& first = FirstNode();
    absl::MutexLock admin(&first.admin_mu());
    auto found = first.catalog().FindIndex(first.admin(), name);
    if (!found.ok()) return found.status();
    index = *std::move(found);
  }
  return AddIndex(index);
}

absl::StatusOr<const storage::Schema*> EngineImpl::schema(
    txn::TableId table) const {
  absl::MutexLock lock(&mu_);
  if (table >= schemas_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "no table with id %d (this engine has %d)", table, schemas_.size()));
  }
  return schemas_[table].get();
}

uint32_t EngineImpl::max_row_bytes() const {
  const uint32_t payload = FirstNode().manager().payload_bytes();
  const uint32_t page_header = storage::heap_page::kPageHeaderBytes;
  const uint32_t row_header = storage::kTupleHeaderBytes;
  return payload > page_header + row_header ? payload - page_header - row_header
                                            : 0;
}

absl::StatusOr<ProcedureId> EngineImpl::Register(ErasedProcedure procedure) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNotFrozen("RegisterProcedure"); !s.ok()) return s;
  if (procedure.name.empty()) {
    return absl::InvalidArgumentError("a procedure needs a name");
  }
  if (procedures_by_name_.contains(procedure.name)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "a procedure named %s is already registered", procedure.name));
  }
  const auto id = static_cast<ProcedureId>(procedures_.size());
  procedures_by_name_[procedure.name] = id;
  procedures_.push_back(std::move(procedure));
  return id;
}

absl::StatusOr<
    std::pair<partition::FragmentId, const partition::ErasedFragment*>>
EngineImpl::RegisterFragment(std::string name, partition::ErasedFragment fn) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = CheckNotFrozen("RegisterFragment"); !s.ok()) return s;
  const partition::FragmentId id =
      fragments_.Add(std::move(name), std::move(fn));
  return std::make_pair(id, fragments_.Find(id));
}

absl::StatusOr<ProcedureId> EngineImpl::FindProcedure(
    std::string_view name) const {
  return FindProcedureOfTypes(name, std::nullopt);
}

absl::StatusOr<ProcedureId> EngineImpl::FindProcedureOfTypes(
    std::string_view name, const std::optional<ProcedureTypes>& types) const {
  absl::MutexLock lock(&mu_);
  auto it = procedures_by_name_.find(std::string(name));
  if (it == procedures_by_name_.end()) {
    // Not NotFound: a procedure's own NotFound ("no such key") must not
    // read as "no such procedure".
    return absl::UnimplementedError(absl::StrFormat(
        "no procedure named %s is registered", std::string(name)));
  }
  const ErasedProcedure& procedure = procedures_[it->second];
  if (types.has_value() && !(procedure.types == *types)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("procedure %s is %s, not %s", procedure.name,
                        procedure.types.describe(), types->describe()));
  }
  return it->second;
}

absl::StatusOr<std::string> EngineImpl::procedure_name(ProcedureId id) const {
  absl::MutexLock lock(&mu_);
  if (id >= procedures_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "no procedure with id %d (%d are registered)", id, procedures_.size()));
  }
  return procedures_[id].name;
}

size_t EngineImpl::procedure_count() const {
  absl::MutexLock lock(&mu_);
  return procedures_.size();
}

absl::StatusOr<std::unique_ptr<Session>> EngineImpl::NewSession(
    rdma::ComputeNodeId node) {
  {
    absl::MutexLock lock(&mu_);
    if ((failed_nodes_ >> node) & 1) {
      return absl::UnavailableError(absl::StrFormat(
          "compute node %d failed: no sessions until it rejoins", node));
    }
  }
  auto r = runtime(node);
  if (!r.ok()) return r.status();
  auto ctx = (*r)->manager().NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  txn::CommitWatermark::Slot* slot = nullptr;
  if (txn::CommitWatermark* marks = (*r)->marks(); marks) {
    auto taken = marks->NewSlot();
    if (!taken.ok()) return taken.status();
    slot = *taken;
  }
  auto stats = std::make_shared<SessionStats>();
  stats->node = node;
  absl::MutexLock lock(&mu_);
  frozen_ = true;
  {
    absl::MutexLock stats_lock(&stats->mu);
    stats->by_procedure.resize(procedures_.size());
  }
  session_stats_.push_back(stats);
  std::unique_ptr<partition::Coordinator> coordinator;
  if (options_.mode == EngineMode::kPartitioned) {
    auto c = partition::Coordinator::Create(*partition_nodes_[node]);
    if (!c.ok()) {
      if (slot != nullptr) (*r)->marks()->FreeSlot(slot);
      return c.status();
    }
    coordinator = *std::move(c);
  }
  return std::unique_ptr<Session>(
      new Session(*this, node, (*r)->db(), *std::move(ctx), slot,
                  std::move(stats), std::move(coordinator)));
}

std::vector<ProcedureStats> EngineImpl::Stats() const {
  absl::MutexLock lock(&mu_);
  std::vector<ProcedureStats> sum(procedures_.size());
  for (const auto& s : session_stats_) {
    absl::MutexLock stats_lock(&s->mu);
    for (size_t i = 0; i < s->by_procedure.size(); ++i) {
      sum[i].Merge(s->by_procedure[i]);
    }
  }
  return sum;
}

std::vector<ProcedureStats> EngineImpl::Stats(rdma::ComputeNodeId node) const {
  absl::MutexLock lock(&mu_);
  std::vector<ProcedureStats> sum(procedures_.size());
  for (const auto& s : session_stats_) {
    if (s->node != node) continue;
    absl::MutexLock stats_lock(&s->mu);
    for (size_t i = 0; i < s->by_procedure.size(); ++i) {
      sum[i].Merge(s->by_procedure[i]);
    }
  }
  return sum;
}

cc::CacheStats EngineImpl::CacheStats() const {
  cc::CacheStats sum = retired_cache_stats_;
  for (const auto& node : nodes_) {
    if (node != nullptr) sum += node->manager().Stats();
  }
  return sum;
}

rdma::FabricCounters EngineImpl::FabricCounters() const {
  return fabric_->Counters();
}

}  // namespace strand::engine
