#include "tpcc/tpcc_run.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/progress_line.h"
#include "base/status_macros.h"
#include "engine/engine_internals.h"
#include "engine/image.h"
#include "partition/partition_map.h"
#include "rdma/fabric_options.h"
#include "rdma/verbs/cluster_config.h"
#include "tpcc/acked_check.h"
#include "tpcc/cluster_run.h"
#include "tpcc/driver.h"
#include "tpcc/memory_breakdown.h"

namespace strand::tpcc {
namespace {

// Deleted rows' slots the hosted nodes' epoch managers handed back so far
// (one manager may serve them all).
uint64_t SlotsReclaimed(const engine::Engine& engine) {
  uint64_t sum = 0;
  const txn::EpochManager* last = nullptr;
  for (rdma::ComputeNodeId node : engine.local_compute_nodes()) {
    const txn::EpochManager* epochs =
        engine::EngineInternals::epochs(engine, node);
    if (epochs != nullptr && epochs != last) sum += epochs->reclaimed();
    last = epochs;
  }
  return sum;
}

// Runs `fn`, showing "<what>: N s" on stderr while it takes long: every
// wait of a run is visible.
absl::Status Showing(std::string_view what,
                     absl::FunctionRef<absl::Status()> fn) {
  absl::Status status;
  ProgressLine::RunShowing(what, [&] { status = fn(); });
  return status;
}

// The acknowledged-New-Order files of a run: `path` itself and, from a
// cluster's processes, every <path>.node-<id> next to it.
std::vector<std::string> AckedLogFiles(const std::string& path) {
  std::vector<std::string> files;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec)) files.push_back(path);
  const fs::path dir = fs::path(path).parent_path().empty()
                           ? fs::path(".")
                           : fs::path(path).parent_path();
  const std::string prefix = fs::path(path).filename().string() + ".node-";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with(prefix)) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every New-Order acknowledged in `path` and its <path>.node-<id> files;
// a usage error (exit 2) if there are none or one does not read.
std::vector<AckedNewOrder> ReadAckedLogs(const std::string& path) {
  std::vector<AckedNewOrder> acked;
  const std::vector<std::string> files = AckedLogFiles(path);
  if (files.empty()) {
    ExitWithUsageError(absl::StrFormat(
        "--acked_log=%s: no such file, nor %s.node-<id>", path, path));
  }
  for (const std::string& file : files) {
    auto contents = ReadAckedLog(file);
    ExitIfUsageError(contents.status());
    acked.insert(acked.end(), contents->records.begin(),
                 contents->records.end());
  }
  return acked;
}

// Why a compute process with --failover that lost its access to memory
// node 0 stops with kExitDeclaredFailed.
std::string LeavesAsFailed(rdma::ComputeNodeId self, absl::string_view why) {
  return absl::StrFormat(
      "tpcc: %s; compute node %d cannot take part any more (it paused or was "
      "cut off past its lease: it is declared failed and fenced, or will be; "
      "nothing it did since its last acknowledgement counts): the others "
      "reclaim it; stopping with exit status %d",
      why, self, kExitDeclaredFailed);
}

}  // namespace

int ClusterMember::Fail(absl::string_view message) {
  std::cerr << "tpcc: " << message << "\n";
  if (board != nullptr) (void)board->Abort();
  return 1;
}

TpccRun::TpccRun(const TpccOptions& options, RunOutput& output)
    : options_(options), output_(output), human_(output.human()) {
  config_.options = options;
}

int TpccRun::Run() {
  OpenSideFiles();
  if (absl::Status s = Open(); !s.ok()) return member_.Fail(s.message());
  if (options_.rejoin) {
    absl::StatusOr<bool> runs = Rejoin();
    if (!runs.ok()) return member_.Fail(runs.status().message());
    if (!*runs) {
      (void)member_.board->Leave();
      return 0;
    }
  } else if (absl::Status s = Load(); !s.ok()) {
    return member_.Fail(s.message());
  }
  if (absl::Status s = StartLogging(); !s.ok()) {
    return member_.Fail(s.message());
  }
  if (absl::Status s = Drive(); !s.ok()) return member_.Fail(s.message());
  if (member_.board != nullptr) {
    // This node's own figures, here and on the board for node 0.
    RunConfig own = config_;
    own.scope = absl::StrCat("compute node ", member_.self);
    PrintRun(human_, own, run_);
    ReportPeersLost();
    absl::Status s =
        member_.board->Publish(EncodeNodeRun(member_.self, load_, run_));
    if (s.ok()) s = member_.board->Arrive(kRan);
    if (!s.ok() && options_.failover && !member_.leads() &&
        (absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s))) {
      // Its run ended before its board's heartbeat noticed the fence.
      std::cerr << LeavesAsFailed(member_.self, s.message()) << std::endl;
      return kExitDeclaredFailed;
    }
    if (!s.ok()) return member_.Fail(s.message());
    if (!member_.leads()) return FinishFollower();
    if (absl::Status s = Gather(); !s.ok()) return member_.Fail(s.message());
  }
  PrintRun(human_, config_, run_);
  ReportPool();
  if (absl::Status s = Check(); !s.ok()) return member_.Fail(s.message());
  PrintRecord(config_, consistency_);
  if (run_.errors() > 0) return 1;
  if (run_.failover.has_value() && !run_.failover->ok()) return 1;
  if (acked_.has_value() && !acked_->ok()) return 1;
  return consistency_.ok() ? 0 : 1;
}

void TpccRun::OpenSideFiles() {
  if (options_.logging()) {
    // Validate found it, or a parent it may be made in, writable.
    std::error_code ec;
    std::filesystem::create_directories(options_.wal_dir, ec);
    if (ec)
      ExitWithUsageError("--wal_dir=" + options_.wal_dir + ": " + ec.message());
  }
  if (!options_.acked_log.empty()) {
    // Processes of a cluster may share a file system (one host, or NFS).
    const std::string path = options_.over_verbs()
                                 ? absl::StrCat(options_.acked_log, ".node-",
                                                options_.fabric.node_id)
                                 : options_.acked_log;
    auto writer = AckedLogWriter::Open(path);
    if (!writer.ok()) {
      ExitWithUsageError("--acked_log: " +
                         std::string(writer.status().message()));
    }
    acked_log_ = *std::move(writer);
  }
  if (!options_.delivery_results.empty()) {
    auto file = DeliveryResultFile::Open(options_.delivery_results);
    if (!file.ok()) {
      ExitWithUsageError("--delivery_results: " +
                         std::string(file.status().message()));
    }
    delivery_results_ = *std::move(file);
  }
}

absl::Status TpccRun::Open() {
  const engine::EngineOptions engine_options = options_.EngineOptionsForRun();
  absl::StatusOr<std::unique_ptr<engine::Engine>> engine;
  ProgressLine::RunShowing("opening the engine (memory nodes, caches)", [&] {
    engine = engine::Engine::Open(engine_options);
  });
  if (!engine.ok()) return engine.status();
  rdma::Fabric& fabric = engine::EngineInternals::fabric(**engine);
  const std::vector<rdma::ComputeNodeId> local =
      (*engine)->local_compute_nodes();
  // The record's head: version, commit, and the deployment as served.
  deployment_ = output_.Record();
  rdma::AddFabricJson(options_.fabric, fabric, deployment_);
  config_.compute_nodes = fabric.compute_node_count();
  // What the cache layer uses (SEL has no cache).
  config_.cache_mb = options_.coherence() == cc::Protocol::kSelcc
                         ? engine_options.cc.cache_bytes >> 20
                         : 0;
  const txn::EpochManager* epochs =
      engine::EngineInternals::epochs(**engine, local.front());
  config_.epochs = epochs->pool() != nullptr ? "pool" : "process";
  const Scale scale = options_.scale();
  if (local.size() == static_cast<size_t>(fabric.compute_node_count())) {
    // A run that carries on finds the tables the recovery rebuilt.
    STRAND_ASSIGN_OR_RETURN(
        db_, TpccDatabase::Define(*std::move(engine), scale, options_.seed,
                                  options_.resumes
                                      ? TpccDatabase::TablesAt::kOpen
                                      : TpccDatabase::TablesAt::kCreate));
    if (options_.node_failure().has_value() && !options_.acked_log.empty()) {
      // Before the first session, as every procedure.
      STRAND_ASSIGN_OR_RETURN(
          acked_checker_,
          AckedNewOrderChecker::Register(db_->engine(), db_->tables()));
    }
    return absl::OkStatus();
  }
  return JoinCluster(*std::move(engine));
}

// A compute process of a verbs deployment: one node per process, the
// tables created by node 0 and opened by the others once it has.
absl::Status TpccRun::JoinCluster(std::unique_ptr<engine::Engine> engine) {
  rdma::Fabric& fabric = engine::EngineInternals::fabric(*engine);
  member_.self = engine->local_compute_nodes().front();
  member_.processes = config_.processes = fabric.compute_node_count();
  STRAND_ASSIGN_OR_RETURN(
      const rdma::verbs::ClusterConfig cluster,
      rdma::verbs::ClusterConfig::Load(options_.fabric.cluster_file));
  engine::ClusterBoard::Options board;
  board.peer_timeout = absl::Seconds(options_.peer_timeout_s);
  board.rejoin = options_.rejoin;
  if (options_.failover) {
    // The survivors go on without a node declared failed (its lease, far
    // shorter than the board's timeout, expires first).
    board.excused = [e = engine.get()](rdma::ComputeNodeId n) {
      return e->DeclaredFailedAt(n) != absl::InfinitePast();
    };
    // Past two leases without renewing its own, the others have declared
    // this node failed (after one lease, looking every eighth of one).
    board.lease_lost = [e = engine.get(), self = member_.self,
                        lease = absl::Milliseconds(options_.node_lease_ms)] {
      return absl::Now() - e->LeaseRenewedAt(self) > 2 * lease;
    };
  }
  board.describe = [nodes = cluster.compute_nodes](rdma::ComputeNodeId n) {
    return n < nodes.size() ? nodes[n].ToString()
                            : absl::StrCat("compute node ", n);
  };
  STRAND_ASSIGN_OR_RETURN(
      member_.board, engine::ClusterBoard::Open(fabric, member_.self, board));
  // The board uses the engine's fabric: on an error it goes first, while
  // the engine is still open.
  auto give_up = [this](const absl::Status& s) {
    (void)member_.board->Abort();
    member_.board.reset();
    return s;
  };
  // Without failover a run cannot go on without any of its compute nodes
  // (they hold latches and cached lines of the shared data): stop, naming
  // it. With failover, only a node not declared failed is missed so, and
  // a process that cannot reach the board any more (it paused past its
  // lease and was fenced, or lost memory node 0) leaves as a failed node,
  // which the others reclaim: kExitDeclaredFailed tells the launcher so.
  member_.board->OnFailure(
      [board = member_.board.get(), self = member_.self,
       failover = options_.failover](const absl::Status& s) {
        if (failover && board->unreachable()) {
          std::cerr << LeavesAsFailed(self, s.message()) << std::endl;
          std::_Exit(kExitDeclaredFailed);
        }
        std::cerr << "tpcc: " << s.message()
                  << "; stopping this compute process" << std::endl;
        std::_Exit(1);
      });
  const uint64_t served =
      fabric.memory_node_bytes() * fabric.memory_node_count();
  const uint64_t need = options_.PoolBytesNeeded();
  if (served < need) {
    return give_up(absl::FailedPreconditionError(absl::StrFormat(
        "the memory nodes serve %d MiB in all, %d warehouses need about %d "
        "MiB (load plus room for the run): start strand_memnode with a "
        "larger --pool_mb",
        served >> 20, options_.warehouses, need >> 20)));
  }
  // Node 0 creates the tables, or, resuming, recovered them in Open.
  const bool leads = member_.self == 0;
  if (!leads) {
    if (absl::Status s =
            Showing("waiting for compute node 0 to create the tables",
                    [&] { return member_.board->WaitFor(0, kSchemaCreated); });
        !s.ok()) {
      return give_up(s);
    }
  }
  auto db = TpccDatabase::Define(
      std::move(engine), options_.scale(), options_.seed,
      leads && !options_.resumes ? TpccDatabase::TablesAt::kCreate
                                 : TpccDatabase::TablesAt::kOpen);
  if (!db.ok()) return give_up(db.status());
  db_ = *std::move(db);
  if (leads) {
    if (absl::Status s = member_.board->Arrive(kSchemaCreated); !s.ok()) {
      return give_up(s);
    }
  }
  return absl::OkStatus();
}

absl::Status TpccRun::Load() {
  if (options_.resumes) return Resume();
  STRAND_ASSIGN_OR_RETURN(
      load_, db_->loader().Load(options_.warehouses, options_.threads,
                                options_.seed, /*show_progress=*/true));
  if (member_.board != nullptr) {
    // Every process loaded its share; measure together.
    STRAND_RETURN_IF_ERROR(member_.board->Arrive(kLoaded));
    STRAND_RETURN_IF_ERROR(
        Showing("waiting for the other compute processes to load",
                [&] { return member_.board->WaitForAll(kLoaded); }));
    if (auto used = PoolBytesTaken(db_->engine()); used.ok()) {
      load_.pool_bytes_used = *used;
    }
  }
  PrintLoad(human_, config_, load_);
  if (!options_.validate_index_reads) {
    human_ << "index reads: NOT validated (--novalidate_index_reads): scans "
              "and absent-key lookups are not serializable in this run\n";
  }
  return PrintMemory(load_.pool_bytes_used, /*after_run=*/false);
}

absl::StatusOr<bool> TpccRun::Rejoin() {
  // Engine::Open joined once the others reclaimed this node's earlier
  // incarnation, and returned once every member saw it live: from then on
  // compute node 0 waits for its figures, unless it gathered before.
  STRAND_ASSIGN_OR_RETURN(const uint64_t lead, member_.board->Step(0));
  if (lead >= kRan && lead != engine::ClusterBoard::kAborted) {
    human_ << "cluster: compute node " << member_.self
           << " rejoined after the deployment finished measuring: nothing to "
              "run\n";
    return false;
  }
  if (auto used = PoolBytesTaken(db_->engine()); used.ok()) {
    load_.pool_bytes_used = *used;
  }
  human_ << absl::StrFormat(
      "cluster: compute node %d rejoined the running deployment with an "
      "empty cache (its earlier incarnation was reclaimed by the others); "
      "measuring for %.1f s\n",
      member_.self, options_.duration_s);
  human_ << std::flush;
  return true;
}

absl::Status TpccRun::Resume() {
  engine::Engine& engine = db_->engine();
  human_ << "wal: carrying on from the run in " << options_.wal_dir << "\n";
  if (const engine::RecoveryReport* report = engine.recovery_report()) {
    human_ << report->Summary() << "\n";
  } else {
    human_ << "wal: compute node 0's process recovered the pool\n";
  }
  for (const engine::CheckpointResult& c : engine.CheckpointHistory()) {
    human_ << "wal: " << c.Summary() << "\n";
  }
  human_ << std::flush;  // crash tests wait for these lines
  if (member_.board != nullptr) {
    STRAND_RETURN_IF_ERROR(member_.board->Arrive(kLoaded));
    STRAND_RETURN_IF_ERROR(
        Showing("waiting for the other compute processes to open",
                [&] { return member_.board->WaitForAll(kLoaded); }));
  }
  if (auto used = PoolBytesTaken(engine); used.ok()) {
    load_.pool_bytes_used = *used;
  }
  return absl::OkStatus();
}

absl::Status TpccRun::PrintMemory(uint64_t pool_bytes, bool after_run) {
  if (!options_.memory_breakdown || !member_.leads()) return absl::OkStatus();
  absl::StatusOr<MemoryBreakdown> breakdown;
  ProgressLine::RunShowing("memory: walking every table and index", [&] {
    breakdown = MeasureMemory(db_->engine(), options_.warehouses,
                              options_.scale(), ReaderNode());
  });
  if (!breakdown.ok()) return breakdown.status();
  if (after_run) human_ << "after the run:\n";
  PrintMemoryBreakdown(human_, *breakdown, options_.warehouses, pool_bytes,
                       /*loaded_rows=*/!after_run);
  return absl::OkStatus();
}

absl::Status TpccRun::StartLogging() {
  if (options_.logging()) {
    engine::Engine& engine = db_->engine();
    ClusterMember& m = member_;
    if (!options_.resumes) {
      // Log from now on, then checkpoint the loaded pool: recovery starts
      // from the newest checkpoint and replays the logs after it. In a
      // cluster every process logs before node 0 takes the checkpoint,
      // which reads through node 0's cache (coherent with the others').
      if (m.board != nullptr) {
        // Every process hands its cached lines back first: node 0's copy
        // then reads the pool without invalidating lines of processes that
        // wait on the board below, which answer no message meanwhile.
        STRAND_RETURN_IF_ERROR(Showing("wal: writing back the caches", [&] {
          return engine.WriteBackCaches();
        }));
      }
      STRAND_RETURN_IF_ERROR(engine.StartLogging(options_.WalOptionsForRun()));
      if (m.board != nullptr) {
        STRAND_RETURN_IF_ERROR(m.board->Arrive(kLogging));
      }
      if (m.leads()) {
        if (m.board != nullptr) {
          STRAND_RETURN_IF_ERROR(
              Showing("wal: waiting for every compute process to log",
                      [&] { return m.board->WaitForAll(kLogging); }));
        }
        absl::StatusOr<engine::CheckpointResult> initial;
        ProgressLine::RunShowing("wal: checkpointing the load", [&] {
          initial = engine.Checkpoint("initial");
        });
        if (!initial.ok()) return initial.status();
        human_ << "wal: " << initial->Summary() << "\n";
        if (m.board != nullptr) {
          STRAND_RETURN_IF_ERROR(m.board->Arrive(kCheckpointed));
        }
      } else {
        STRAND_RETURN_IF_ERROR(
            Showing("wal: waiting for compute node 0's checkpoint",
                    [&] { return m.board->WaitFor(0, kCheckpointed); }));
      }
    }
    const TpccOptions::WalPlan plan = options_.ResolvedWal();
    human_ << absl::StrFormat(
        "wal: on, dir %s, io direct (buffered, with a warning, where the "
        "file system refuses O_DIRECT), early_lock_release %s, pipeline %d, "
        "segments of %d MiB, checkpoints %s; after a crash: run again with "
        "the same --wal_dir to carry on, or strand_recover --wal_dir=%s%s\n",
        options_.wal_dir, plan.early_lock_release ? "on" : "off", plan.pipeline,
        options_.wal_segment_mb,
        options_.checkpoint_interval_s > 0
            ? absl::StrFormat("every %.1f s", options_.checkpoint_interval_s)
            : std::string("after the load only"),
        options_.wal_dir,
        m.board != nullptr
            ? " (with every compute node's node-<id>/ gathered there)"
            : "");
  }
  if (member_.board != nullptr && !options_.rejoin) {
    human_ << absl::StrFormat(
        "cluster: compute node %d loaded its share of the warehouses; all %d "
        "compute processes are loaded%s, measuring starts at unix time %.3f "
        "(after %.1f s of warm-up)\n",
        member_.self, member_.processes,
        options_.logging() ? " and logging" : "",
        absl::ToUnixMillis(absl::Now()) / 1e3 + options_.warmup_s,
        options_.warmup_s);
    human_ << std::flush;  // the launcher watches for this line
  }
  return absl::OkStatus();
}

absl::Status TpccRun::Drive() {
  // The loopback fabric commits its memory on a thread of its own while the
  // loader runs (--populate_memory=background); the measured run starts
  // when it is done, not beside it.
  const absl::Time populate_start = absl::Now();
  ProgressLine::RunShowing(
      "memory: committing the fabric's memory before the run", [&] {
        engine::EngineInternals::fabric(db_->engine()).WaitUntilPopulated();
      });
  const absl::Duration populate_wait = absl::Now() - populate_start;
  if (populate_wait > absl::Milliseconds(100)) {
    human_ << absl::StrFormat(
        "memory: waited %.2f s for the fabric to commit its memory "
        "(--populate_memory=touch skips it)\n",
        absl::ToDoubleSeconds(populate_wait));
  }
  DriverOptions d;
  d.warehouses = options_.warehouses;
  d.threads_per_node = options_.threads;
  d.home_warehouse = options_.home();
  d.mix = options_.transaction_mix();
  d.remote.remote_order_ratio = options_.remote_neworder;
  // Who owns which warehouse: partitioned mode's map, or the same split
  // for a shared run with --distributed_pct (tpcc/remote_policy.h).
  std::optional<partition::PartitionMap> owners;
  if (db_->engine().partition_map() != nullptr) {
    owners = *db_->engine().partition_map();
  } else if (options_.distributed_pct >= 0) {
    STRAND_ASSIGN_OR_RETURN(
        owners, partition::PartitionMap::Create(
                    options_.warehouses, options_.deployment_compute_nodes));
  }
  if (owners.has_value()) {
    d.remote.owners = &*owners;
    config_.owners = owners->ToString();
  }
  if (options_.distributed_pct >= 0) {
    d.remote.remote_order_ratio = options_.distributed_pct / 100;
    d.remote.remote_payment_ratio = options_.distributed_pct / 100;
  }
  d.duration_s = options_.duration_s;
  d.txns = options_.txns;
  d.warmup_s = options_.warmup_s;
  d.seed = options_.seed;
  d.progress = true;
  d.progress_series = output_.progress_series();
  d.acked_log = acked_log_.get();
  d.delivery_results = delivery_results_.get();
  d.wal_pipeline = static_cast<size_t>(options_.ResolvedWal().pipeline);
  if (const auto failure = options_.node_failure()) {
    d.failure =
        FailurePlan{.node = static_cast<rdma::ComputeNodeId>(failure->node),
                    .at = absl::Seconds(failure->at_s),
                    .rejoin_after = absl::Seconds(options_.rejoin_after_s)};
  }
  STRAND_ASSIGN_OR_RETURN(run_, RunDriver(*db_, d));
  return absl::OkStatus();
}

void TpccRun::ReportPeersLost() {
  if (!options_.failover || run_.per_second.empty()) return;
  auto commits_at = [](const NodeSecond& second) {
    uint64_t n = 0;
    for (uint64_t c : second.commits) n += c;
    return n;
  };
  const uint64_t total = commits_at(run_.per_second.back());
  for (int n = 0; n < member_.processes; ++n) {
    const auto id = static_cast<rdma::ComputeNodeId>(n);
    const absl::Time declared = db_->engine().LastDeclaredFailedAt(id);
    if (id == member_.self || declared == absl::InfinitePast()) continue;
    const double at_s = absl::ToDoubleSeconds(declared - run_.window_start);
    uint64_t before = 0;
    for (const NodeSecond& second : run_.per_second) {
      if (second.at_s <= at_s) before = commits_at(second);
    }
    const double left_s = run_.per_second.back().at_s - at_s;
    // This node's commits in each second from 3 before to 10 after.
    std::vector<std::string> around;
    uint64_t last = 0;
    for (const NodeSecond& second : run_.per_second) {
      const uint64_t now = commits_at(second);
      if (second.at_s >= at_s - 3 && second.at_s <= at_s + 10) {
        around.push_back(absl::StrCat(now - last));
      }
      last = now;
    }
    human_ << absl::StrFormat(
        "failover: compute node %d was declared failed %.1f s into the "
        "measured run; compute node %d committed %d transactions after "
        "that (%.0f/s over %.1f s; per second from 3 s before to 10 s "
        "after: %s)\n",
        n, at_s, member_.self, total - before,
        left_s > 0 ? (total - before) / left_s : 0.0, left_s,
        absl::StrJoin(around, " "));
  }
}

absl::Status TpccRun::Gather() {
  STRAND_RETURN_IF_ERROR(
      Showing("waiting for the other compute processes to finish",
              [&] { return member_.board->WaitForAll(kRan); }));
  LoadResult all_load;
  RunResult all_run;
  for (int n = 0; n < member_.processes; ++n) {
    const auto id = static_cast<rdma::ComputeNodeId>(n);
    if (member_.board->Excused(id)) {
      // Its figures died with it; the survivors' go on.
      human_ << "compute node " << n
             << " failed during the run (declared failed, reclaimed by the "
                "survivors): its figures are not in the deployment's\n";
      ++config_.failed_processes;
      continue;
    }
    STRAND_ASSIGN_OR_RETURN(const std::string bytes, member_.board->Read(id));
    STRAND_RETURN_IF_ERROR(MergeNodeRun(bytes, all_load, all_run));
  }
  all_load.pool_bytes_used = load_.pool_bytes_used;
  load_ = all_load;
  run_ = std::move(all_run);
  config_.scope = "deployment";
  return absl::OkStatus();
}

void TpccRun::ReportPool() {
  // What the run added to the pool: inserted rows, less the slots of
  // deleted rows (NEW-ORDER, by Delivery) that inserts reused
  // (txn/epoch_manager.h).
  if (auto used = PoolBytesTaken(db_->engine()); used.ok()) {
    pool_after_run_ = *used;
    // Warm-up commits grow the pool too; over a run of minutes they are
    // noise.
    growth_mb_per_million_ = (static_cast<double>(*used) -
                              static_cast<double>(load_.pool_bytes_used)) /
                             1048576.0 / std::max<double>(1.0, run_.commits()) *
                             1e6;
    human_ << absl::StrFormat(
        "pool: %.1f MiB after the run, %.1f MiB after the load: %+.1f MiB "
        "per million committed transactions\n",
        *used / 1048576.0, load_.pool_bytes_used / 1048576.0,
        growth_mb_per_million_);
  }
  human_ << absl::StrFormat(
      "deleted rows' slots handed back for reuse: %llu by this process "
      "(epochs shared %s)\n",
      static_cast<unsigned long long>(SlotsReclaimed(db_->engine())),
      config_.epochs == "pool" ? "through the pool" : "in this process");
}

absl::Status TpccRun::Check() {
  // Table by table: which tables the run grew (TPC-C inserts ORDER,
  // ORDER-LINE and HISTORY rows for good), and that NEW-ORDER, whose
  // deleted rows' slots are reused, did not.
  STRAND_RETURN_IF_ERROR(PrintMemory(pool_after_run_, /*after_run=*/true));
  absl::StatusOr<ConsistencyResult> consistency;
  ProgressLine::RunShowing(
      "consistency check (clause 3.3.2, conditions 1-12)", [&] {
        consistency = CheckConsistency(db_->engine(), options_.warehouses,
                                       options_.scale(), ReaderNode());
      });
  if (!consistency.ok()) {
    return absl::Status(consistency.status().code(),
                        absl::StrCat("consistency check could not run: ",
                                     consistency.status().message()));
  }
  consistency_ = *std::move(consistency);
  PrintConsistency(human_, consistency_);
  STRAND_RETURN_IF_ERROR(CheckAcked());
  if (member_.board != nullptr) {
    // The others kept serving their cached lines to the check; now they
    // may stop. They print the verdict too.
    (void)member_.board->Publish(consistency_.ok() ? "ok" : "FAILED");
    (void)member_.board->Arrive(kChecked);
    (void)member_.board->Leave();
  }
  return absl::OkStatus();
}

absl::Status TpccRun::CheckAcked() {
  if (!acked_checker_.has_value()) return absl::OkStatus();
  // A run that carries on from an earlier one appends to its file: those
  // New-Orders were acknowledged too.
  STRAND_ASSIGN_OR_RETURN(const AckedLogContents contents,
                          ReadAckedLog(options_.acked_log));
  absl::StatusOr<AckedCheck> found;
  ProgressLine::RunShowing("checking every acknowledged New-Order", [&] {
    found =
        acked_checker_->Check(db_->engine(), contents.records, ReaderNode());
  });
  if (!found.ok()) return found.status();
  acked_ = *std::move(found);
  human_ << absl::StrFormat(
      "acknowledged New-Orders (--acked_log, the failed node's included): "
      "%d checked, %d missing or incomplete\n",
      acked_->checked, acked_->lost);
  for (const std::string& example : acked_->examples) {
    human_ << "  lost: " << example << "\n";
  }
  return absl::OkStatus();
}

rdma::ComputeNodeId TpccRun::ReaderNode() const {
  const std::vector<rdma::ComputeNodeId> local =
      db_->engine().local_compute_nodes();
  const std::optional<FailoverReport>& f = run_.failover;
  const bool out = f.has_value() && f->failed_at_s.has_value() &&
                   !f->rejoined_at_s.has_value();
  for (rdma::ComputeNodeId node : local) {
    if (!out || node != f->node) return node;
  }
  return local.front();
}

int TpccRun::FinishFollower() {
  RunConfig own = config_;
  own.scope = absl::StrCat("compute node ", member_.self);
  if (absl::Status s =
          Showing("waiting for compute node 0's consistency check",
                  [&] { return member_.board->WaitFor(0, kChecked); });
      !s.ok()) {
    return member_.Fail(s.message());
  }
  if (member_.board->Excused(0)) {
    (void)member_.board->Leave();
    human_ << "consistency: not checked: compute node 0, which checks it, "
              "failed during the run\n";
    return 1;
  }
  auto verdict = member_.board->Read(0);
  (void)member_.board->Leave();
  const bool consistent = verdict.ok() && *verdict == "ok";
  human_ << "consistency: checked by compute node 0 over the whole database: "
         << (consistent ? "ok" : "FAILED") << "\n";
  ConsistencyResult c;
  if (!consistent) {
    c.violations[0] = 1;
    c.messages.push_back("compute node 0 found violations (its report)");
  }
  PrintRecord(own, c);
  if (run_.errors() > 0) return 1;
  return consistent ? 0 : 1;
}

void TpccRun::PrintRecord(const RunConfig& config, const ConsistencyResult& c) {
  JsonLine record = deployment_;
  AddJsonReport(config, load_, run_, c, record);
  // The checkpoints and what they cost, placed in the measured window
  // (--progress_json's seconds).
  std::vector<std::string> checkpoints;
  for (const engine::CheckpointResult& ck : db_->engine().CheckpointHistory()) {
    JsonLine j;
    j.Add("sequence", ck.sequence)
        .Add("kind", ck.kind)
        .Add("start_s", absl::ToDoubleSeconds(ck.started - run_.window_start))
        .Add("duration_s", absl::ToDoubleSeconds(ck.total))
        .Add("cpu_s", ck.cpu_s)
        .Add("copy_s", absl::ToDoubleSeconds(ck.copy))
        .Add("wait_s", absl::ToDoubleSeconds(ck.wait_start + ck.wait_end))
        .Add("publish_s", absl::ToDoubleSeconds(ck.publish))
        .Add("tuples", ck.tuples)
        .Add("index_entries", ck.index_entries)
        .Add("bytes_written", ck.bytes_written)
        .Add("bytes_read", ck.bytes_read)
        .Add("truncated_to_ts", ck.truncated_to_ts)
        .Add("log_segments_deleted", ck.log_segments_deleted)
        .Add("log_bytes_deleted", ck.log_bytes_deleted);
    checkpoints.push_back(j.str());
  }
  record.AddRaw("checkpoints", "[" + absl::StrJoin(checkpoints, ",") + "]")
      .Add("resumed", options_.resumes);
  if (acked_.has_value()) {
    record.Add("acked_checked", acked_->checked)
        .Add("acked_lost", acked_->lost);
  }
  if (config.scope == "deployment") {
    record.Add("pool_bytes_after_run", pool_after_run_)
        .Add("pool_growth_mb_per_million_txns", growth_mb_per_million_);
  }
  output_.Print(record);
}

int CheckImage(const TpccOptions& options, RunOutput& output) {
  auto header = engine::ReadImageHeader(options.check_image);
  if (!header.ok()) {
    ExitWithUsageError("--check_image: " +
                       std::string(header.status().message()));
  }
  if (header->gcl_size == 0) {
    ExitWithUsageError(
        "--check_image: a format 1 image, without its GCL "
        "size: recover it again with this strand_recover");
  }
  std::vector<AckedNewOrder> acked;
  if (!options.acked_log.empty()) acked = ReadAckedLogs(options.acked_log);
  engine::EngineOptions engine_options;
  engine_options.fabric.memory_nodes = static_cast<int>(header->memory_nodes);
  engine_options.fabric.compute_nodes = 1;
  engine_options.fabric.pool_bytes = header->region_bytes;
  engine_options.fabric.chunk_bytes = header->chunk_bytes;
  engine_options.fabric.populate_memory = rdma::PopulateMode::kOnFirstTouch;
  engine_options.cc.gcl_size = header->gcl_size;
  engine_options.image_path = options.check_image;
  auto fail = [](const absl::Status& s) {
    std::cerr << "tpcc: " << s.message() << "\n";
    return 1;
  };
  auto db = TpccDatabase::Open(engine_options, options.scale(), options.seed,
                               TpccDatabase::TablesAt::kOpen);
  if (!db.ok()) return fail(db.status());
  engine::Engine& engine = (*db)->engine();
  auto checker = AckedNewOrderChecker::Register(engine, (*db)->tables());
  if (!checker.ok()) return fail(checker.status());
  absl::StatusOr<ConsistencyResult> consistency;
  ProgressLine::RunShowing(
      "consistency check (clause 3.3.2, conditions 1-12)", [&] {
        consistency =
            CheckConsistency(engine, options.warehouses, options.scale());
      });
  if (!consistency.ok()) return fail(consistency.status());
  auto found = checker->Check(engine, acked);
  if (!found.ok()) return fail(found.status());
  std::ostream& human = output.human();
  human << "consistency (clause 3.3.2, conditions 1-12) of "
        << options.check_image << ": "
        << (consistency->ok() ? "ok" : consistency->ToString()) << "\n";
  if (!options.acked_log.empty()) {
    human << absl::StrFormat(
        "acknowledged New-Orders: %d checked, %d missing or incomplete\n",
        found->checked, found->lost);
    for (const std::string& example : found->examples) {
      human << "  lost: " << example << "\n";
    }
  }
  JsonLine j = output.Record();
  j.Add("bench", "tpcc_check")
      .Add("image", options.check_image)
      .Add("warehouses", options.warehouses)
      .Add("items", options.items)
      .Add("customers_per_district", options.customers)
      .Add("acked_log", options.acked_log)
      .Add("consistency_ok", consistency->ok())
      .Add("acked_checked", found->checked)
      .Add("acked_lost", found->lost);
  output.Print(j);
  return consistency->ok() && found->ok() ? 0 : 1;
}

}  // namespace strand::tpcc
