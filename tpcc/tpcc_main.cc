// tpcc: loads a TPC-C database of --warehouses on the configured fabric,
// runs the transaction mix on every compute node's threads, prints
// throughput, aborts, latency and fabric cost, and checks the consistency
// conditions of clause 3.3.2 (exit status 1 if any fails).
//
//   tpcc --warehouses=2 --compute_nodes=2 --duration_s=10
//   tpcc --cc=occ --protocol=sel --mix=50,50,0,0,0 --rtt_ns=2000 --json
//   tpcc --csv --progress_json=/tmp/per-second.jsonl   # CSV row; time series
//   tpcc --wal=on --wal_dir=/tmp/tpcc-wal --acked_log=/tmp/acked
//   tpcc --wal=on --wal_dir=/tmp/tpcc-wal --wal_pipeline=0   # no pipelining
//
// With --wal=on the load runs unlogged, every compute node writes back its
// cache, the pool is saved as an image (<wal_dir>/load.img, engine/image.h;
// by compute node 0 in a cluster) and the run goes on with every commit
// logged under <wal_dir>/node-<id>; after a crash,
//   strand_recover --image=<wal_dir>/load.img --wal_dir=<wal_dir>
//       --out_image=recovered.img   (one command)
// rebuilds the database (the image records the pool's layout and GCL
// size), and
//   tpcc --check_image=recovered.img --acked_log=... --warehouses=N
// checks it.

#include <gflags/gflags.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/progress_line.h"
#include "base/run_output.h"
#include "cc/cache_sizing.h"
#include "engine/cluster_board.h"
#include "engine/image.h"
#include "engine/session.h"
#include "index/cpu_path_flags.h"
#include "partition/partition_map.h"
#include "rdma/fabric_flags.h"
#include "rdma/verbs/cluster_config.h"
#include "tpcc/acked_check.h"
#include "tpcc/acked_log.h"
#include "tpcc/cluster_run.h"
#include "tpcc/consistency.h"
#include "tpcc/delivery_result_file.h"
#include "tpcc/driver.h"
#include "tpcc/memory_breakdown.h"
#include "tpcc/report.h"
#include "tpcc/tpcc_db.h"

DEFINE_int32(warehouses, 2, "TPC-C warehouses to load (>= 1)");
DEFINE_int32(threads, 1,
             "Worker threads per compute node (each gets a home warehouse; "
             "also the load threads)");
DEFINE_string(cc, "2pl", "Concurrency control: 2pl (no-wait), to or occ");
DEFINE_string(protocol, "selcc",
              "Coherence protocol: selcc (cached) or sel (no cache)");
// 4 KiB: a CUSTOMER row (695 bytes) fills a 1 KiB GCL alone; at 4 KiB five
// fit, for 8.5 MiB less per warehouse (README, Results: memory). Each
// thread works on its home warehouse, and the runs measured there lost no
// throughput to false page conflicts; a GCL miss moves 4x the bytes.
DEFINE_uint32(gcl_size, 4096,
              "Bytes of one global cache line (latch word included): a "
              "multiple of 64 from 128 to 65536");
DEFINE_uint64(cache_mb, 0,
              "GCL cache per compute node, in MiB (SELCC). 0 (default): "
              "sized for the warehouses the node works on (its threads' home "
              "warehouses, all of them with --home_warehouse=random) plus "
              "ITEM, with room for the rows the run inserts, at most a "
              "quarter of the memory available split among the compute "
              "nodes of this process; the report prints the size used");
DEFINE_string(mix, "standard",
              "Transaction mix: standard (45/43/4/4/4), one type (new_order, "
              "payment, order_status, delivery, stock_level) or 5 weights "
              "summing to 100 (e.g. 50,50,0,0,0)");
DEFINE_string(home_warehouse, "thread",
              "Warehouse of each transaction: thread (thread i of the "
              "deployment works on warehouse i mod W + 1, as a TPC-C "
              "terminal) or random (drawn per transaction, so every "
              "warehouse is shared by all nodes' threads: the SELCC paper's "
              "shape)");
DEFINE_double(remote_neworder, -1,
              "Share (0..1) of New-Orders with one remote supply warehouse; "
              "negative: the specification's 1% per order line");
DEFINE_string(mode, "shared",
              "shared: every compute node reaches every warehouse (SELCC "
              "keeps the caches coherent); partitioned: each node owns a "
              "contiguous range of warehouses, work on another node's "
              "warehouse is shipped to it and distributed transactions "
              "commit with two-phase commit (2PL only)");
DEFINE_double(distributed_pct, -1,
              "Percent (0..100) of New-Orders with one supply warehouse, and "
              "of Payments with a customer, at a warehouse of another "
              "compute node: the distributed transactions of the "
              "shared-vs-partitioned comparison. Terminals are homed at "
              "their node's warehouses (the ranges partitioned mode uses), "
              "in both modes. Negative: the specification's rates (1% of "
              "order lines, 15% of Payments at any other warehouse)");
DEFINE_bool(twopc_one_phase_local, true,
            "Partitioned mode: a transaction that touched only its own node "
            "commits in one phase (false: a forced prepare, then a forced "
            "decision, as the SELCC authors' 2PC)");
DEFINE_bool(twopc_read_only_vote, true,
            "Partitioned mode: a participant that wrote nothing votes "
            "read-only, logs nothing and skips the second phase");
DEFINE_bool(twopc_parallel_prepare, true,
            "Partitioned mode: PREPARE goes to all participants at once "
            "(false: one after another)");
DEFINE_double(duration_s, 10, "Seconds of measured run (unless --txns)");
DEFINE_uint64(txns, 0,
              "If > 0: run this many measured transactions instead "
              "of --duration_s");
DEFINE_double(warmup_s, 1, "Seconds run before measuring starts");
DEFINE_uint64(seed, 1, "Seed of the load and of the run's random inputs");
DEFINE_int32(items, 100000,
             "ITEM rows (and STOCK rows per warehouse); scale-down for tests");
DEFINE_int32(customers, 3000,
             "Customers (and initial orders) per district; scale-down for "
             "tests");
DEFINE_string(wal, "off",
              "Write-ahead log: off, or on (every committing transaction is "
              "acknowledged only once its redo record is durable in "
              "--wal_dir; the load is unlogged, then checkpointed into "
              "<wal_dir>/checkpoint-<n>/ by compute node 0 before the run)");
DEFINE_string(wal_dir, "",
              "Directory of the log (one node-<id>/ per compute node) and of "
              "the checkpoints; required with --wal=on. If it holds a "
              "previous run's checkpoints and logs, that run is recovered "
              "and this one carries on in the same directory instead of "
              "loading (give the same --warehouses, --items, --customers). "
              "In a cluster each process logs to its own host's directory: "
              "to recover, gather every node-<id>/ next to the checkpoints");
DEFINE_double(checkpoint_interval_s, 0,
              "With --wal=on: also take a fuzzy checkpoint every N seconds "
              "while the run goes on, then truncate the logs before the "
              "older of the two kept (docs/design/checkpoints.md); 0: only "
              "the one after the load");
DEFINE_double(checkpoint_read_mb_per_s, 0,
              "With --wal=on: rate limit of a checkpoint's copy, in MiB/s of "
              "tuples and index entries (0: none)");
DEFINE_int32(wal_segment_mb, 64,
             "With --wal=on: size of a log segment file in MiB, the unit in "
             "which logs are truncated after a checkpoint");
DEFINE_bool(wal_early_lock_release, false,
            "With --wal=on: release a committing transaction's latches when "
            "its log record is appended instead of when it is durable (the "
            "call still returns only once it, and every commit it may depend "
            "on, is durable: acknowledgement by the cluster's durable "
            "watermark, docs/design/durable_acks.md). Shortens lock hold "
            "times by the fdatasync. Implied by --wal_pipeline > 0");
DEFINE_int32(wal_pipeline, -1,
             "With --wal=on: pipelined commit acknowledgement. N > 0: a "
             "worker thread commits in memory, releases its latches and "
             "goes on with its next transaction while up to N of its "
             "commits wait to be acknowledged (durable, with every commit "
             "they may depend on, on any node); each is counted, timed "
             "(commit latency) and written to --acked_log only then, never "
             "before. Lets one fdatasync serve many commits. 0: every "
             "transaction holds its latches until its own commit is durable "
             "and the thread waits for it (synchronous). -1 (default): "
             "1024");
DEFINE_int32(wal_group_commit_us, -1,
             "With --wal=on: group-commit window in microseconds; the log "
             "flusher starts a flush no sooner than this after the previous "
             "one, so one fdatasync serves every commit of the window. "
             "-1 (default): 1000 when commits are pipelined (nobody waits "
             "for a flush, fewer flushes cost less CPU), else 0 (flush at "
             "once: a waiting commit's latency)");
DEFINE_string(acked_log, "",
              "Append (warehouse, district, order id) of every New-Order to "
              "this file when it is acknowledged (its call returned OK, or "
              "with --wal_pipeline its commit became durable), one 16-byte "
              "record per write(2) (tpcc/acked_log.h); for crash tests. "
              "Over verbs each compute process writes <file>.node-<id>");
DEFINE_string(delivery_results, "",
              "Append one line per executed deferred Delivery to this file: "
              "when it was queued and completed, warehouse, carrier, and per "
              "district the order delivered or '-' if skipped (clause "
              "2.7.2.2, tpcc/delivery_result_file.h)");
DEFINE_bool(memory_breakdown, false,
            "After the load and again after the run, print the GCLs of "
            "every table and index and the indexes' leaf fill (walks every "
            "index node)");
DEFINE_double(peer_timeout_s, 10,
              "Verbs: a compute process whose heartbeat on the cluster board "
              "stops for this long is reported (by node id and address) and "
              "every other compute process stops with exit status 1");
DEFINE_bool(optimistic_tuple_reads, true,
            "Transactions (2PL, OCC) read tuples they do not write with no "
            "latch where the page is cached, and check them at commit "
            "instead of holding a shared latch (2PL) or taking a short one "
            "(OCC); serializable either way. false: latch every read (the "
            "ablation)");
DEFINE_bool(validate_index_reads, true,
            "Validate at commit the index leaves every lookup and scan read, "
            "which makes scans and absent-key lookups serializable. "
            "--novalidate_index_reads only measures what that costs: "
            "phantoms become possible, and Delivery and Order-Status may "
            "read a range another transaction changes");
DEFINE_bool(epochs_in_pool, false,
            "Deleted rows' slots (Delivery's NEW-ORDER rows) wait for "
            "readers through the memory pool's epoch words, as they do "
            "anyway when compute nodes run in separate processes, even when "
            "this process hosts every node (EngineOptions::epochs_in_pool): "
            "to measure what that protocol costs");
DEFINE_string(check_image, "",
              "Instead of loading and running: open this pool image (a "
              "recovered one: strand_recover --out_image), check the "
              "consistency conditions 1-12 and, with --acked_log=FILE, that "
              "every New-Order acknowledged in FILE and FILE.node-<id> is "
              "there whole. --warehouses, --items and --customers must be the "
              "run's. Exit status 0 when everything holds, 1 when not");

namespace strand::tpcc {
namespace {

// Pool bytes kept free for the rows a run inserts, at least.
constexpr double kRunRoomBytes = 768.0 * (1 << 20);
// What a run inserts, generously, to size a pool for a long or fast run:
// 0.51-0.57 KiB of pool per committed transaction (the standard mix;
// 50/50 New-Order/Payment, no Delivery), at up to 100k transactions per
// second per worker thread (one thread reached 92k on the 2-core VM).
constexpr double kRunBytesPerTxn = 640;
constexpr double kRunBytesPerThreadSecond = 100e3 * kRunBytesPerTxn;

// Deleted rows' slots the hosted nodes' epoch managers handed back so far
// (one manager may serve them all).
uint64_t SlotsReclaimed(const engine::Engine& engine) {
  uint64_t sum = 0;
  const txn::EpochManager* last = nullptr;
  for (rdma::ComputeNodeId node : engine.local_compute_nodes()) {
    const txn::EpochManager* epochs = engine.epochs(node);
    if (epochs != nullptr && epochs != last) sum += epochs->reclaimed();
    last = epochs;
  }
  return sum;
}

// Pool bytes a load of `warehouses` takes, generously (measured: see the
// README), plus room for the rows a run inserts: `run_bytes`, at least
// kRunRoomBytes.
uint64_t PoolBytesNeeded(int warehouses, const Scale& scale,
                         double run_bytes = 0) {
  const double per_warehouse = 2.0 * RawBytes::PerWarehouse(scale);
  const double items = 2.0 * RawBytes::Items(scale);
  return static_cast<uint64_t>(warehouses * per_warehouse + items +
                               std::max(kRunRoomBytes, run_bytes));
}

// What the run asked for on the command line inserts into the pool, at
// most (kRunBytesPerTxn, kRunBytesPerThreadSecond): --txns transactions,
// or --duration_s seconds, plus the warm-up, on every worker thread.
// The value of integer flag `name`, defined in another library (the
// fabric's), at least 1.
int64_t CountFlag(const char* name) {
  const std::string value =
      gflags::GetCommandLineFlagInfoOrDie(name).current_value;
  return value.empty() ? 1 : std::max<int64_t>(1, std::stoll(value));
}

double RunBytesBound() {
  const double threads =
      static_cast<double>(FLAGS_threads) * CountFlag("compute_nodes");
  const double warmup = FLAGS_warmup_s * threads * kRunBytesPerThreadSecond;
  if (FLAGS_txns > 0) return warmup + FLAGS_txns * kRunBytesPerTxn;
  return warmup + FLAGS_duration_s * threads * kRunBytesPerThreadSecond;
}

// The cache an auto-sized (--cache_mb=0) compute node wants: the load of
// the warehouses its threads work on, plus ITEM, plus room for what the run
// inserts, so that a run of the usual length never evicts. A pool takes
// 1.30x the raw tuple bytes (README, Results: memory); 1.5x leaves room
// for the rows of other warehouses that remote lines and payments touch.
// The run's inserts take ~0.55 KiB of pool per transaction (50/50
// New-Order/Payment: 26 MiB/s at 48k txn/s); they get 8x the load, at
// least 64 MiB and at most this node's share of the pool's room for the
// run (PoolBytesNeeded): one warehouse on one thread then runs ~30 s before
// the evictor starts writing back the oldest inserted lines.
uint64_t CacheBytesWanted(int warehouses, int threads, int compute_nodes,
                          bool random_home, const Scale& scale) {
  const int per_node = (warehouses + compute_nodes - 1) / compute_nodes;
  const int touched = random_home
                          ? warehouses
                          : std::min(warehouses, std::max(threads, per_node));
  const double load =
      1.5 * (touched * static_cast<double>(RawBytes::PerWarehouse(scale)) +
             RawBytes::Items(scale));
  const double room =
      std::clamp(8 * load, 64.0 * (1 << 20), kRunRoomBytes / compute_nodes);
  return static_cast<uint64_t>(load + room);
}

// The driver's cap on --warehouses, below what the schema's int16
// warehouse numbers hold.
constexpr int kMaxWarehousesFlag = 10000;
constexpr uint32_t kMaxGclSize = 64 * 1024;  // --gcl_size, see Main()
static_assert(kMaxWarehousesFlag <= kMaxWarehouses);

// This process's part in a deployment whose compute nodes are separate
// processes (verbs): its node and the cluster board it meets the others on
// (tpcc/cluster_run.h has the steps). No board when one process hosts every
// compute node (loopback).
struct ClusterMember {
  rdma::ComputeNodeId self = 0;
  int processes = 1;
  std::unique_ptr<engine::ClusterBoard> board;

  bool leads() const { return board == nullptr || self == 0; }
  // Prints `message`, tells the others this process gives up, and returns
  // the exit status.
  int Fail(absl::string_view message) {
    std::cerr << "tpcc: " << message << "\n";
    if (board != nullptr) (void)board->Abort();
    return 1;
  }
};

// Opens the engine and the TPC-C tables: created here, or (another compute
// process of the deployment) opened once compute node 0 has created them.
absl::StatusOr<std::unique_ptr<TpccDatabase>> OpenDatabase(
    const engine::EngineOptions& options, const Scale& scale,
    uint64_t pool_bytes_needed, ClusterMember& member,
    TpccDatabase::TablesAt tables = TpccDatabase::TablesAt::kCreate) {
  auto engine = engine::Engine::Open(options);
  if (!engine.ok()) return engine.status();
  rdma::Fabric& fabric = (*engine)->fabric();
  const std::vector<rdma::ComputeNodeId> local =
      (*engine)->local_compute_nodes();
  if (local.size() == static_cast<size_t>(fabric.compute_node_count())) {
    return TpccDatabase::Define(*std::move(engine), scale, FLAGS_seed, tables);
  }
  member.self = local.front();
  member.processes = fabric.compute_node_count();  // one node per process
  auto cluster = rdma::verbs::ClusterConfig::Load(options.fabric.cluster_file);
  if (!cluster.ok()) return cluster.status();
  engine::ClusterBoard::Options board;
  board.peer_timeout = absl::Seconds(FLAGS_peer_timeout_s);
  board.describe = [nodes = cluster->compute_nodes](rdma::ComputeNodeId n) {
    return n < nodes.size() ? nodes[n].ToString()
                            : absl::StrCat("compute node ", n);
  };
  auto opened = engine::ClusterBoard::Open(fabric, member.self, board);
  if (!opened.ok()) return opened.status();
  member.board = *std::move(opened);
  // The board uses the engine's fabric: it goes first, whatever happens.
  auto give_up = [&member](const absl::Status& s) {
    (void)member.board->Abort();
    member.board.reset();
    return s;
  };
  // A run cannot go on without any of its compute nodes (they hold
  // latches and cached lines of the shared data): stop, naming it.
  member.board->OnFailure([](const absl::Status& s) {
    std::cerr << "tpcc: " << s.message() << "; stopping this compute process"
              << std::endl;
    std::_Exit(1);
  });
  const uint64_t served =
      fabric.memory_node_bytes() * fabric.memory_node_count();
  if (served < pool_bytes_needed) {
    return give_up(absl::FailedPreconditionError(absl::StrFormat(
        "the memory nodes serve %d MiB in all, %d warehouses need about %d "
        "MiB (load plus room for the run): start strand_memnode with a "
        "larger --pool_mb",
        served >> 20, FLAGS_warehouses, pool_bytes_needed >> 20)));
  }
  if (member.self == 0) {
    auto db = TpccDatabase::Define(*std::move(engine), scale, FLAGS_seed,
                                   TpccDatabase::TablesAt::kCreate);
    if (!db.ok()) return give_up(db.status());
    if (absl::Status s = member.board->Arrive(kSchemaCreated); !s.ok()) {
      return give_up(s);
    }
    return db;
  }
  if (absl::Status s = member.board->WaitFor(0, kSchemaCreated); !s.ok()) {
    return give_up(s);
  }
  auto db = TpccDatabase::Define(*std::move(engine), scale, FLAGS_seed,
                                 TpccDatabase::TablesAt::kOpen);
  if (!db.ok()) return give_up(db.status());
  return db;
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

// tpcc --check_image: opens the image on the loopback fabric with the
// layout its header records, and checks it. Returns the exit status.
int CheckImage(const Scale& scale, RunOutput& output) {
  if (gflags::GetCommandLineFlagInfoOrDie("fabric").current_value == "verbs" ||
      FLAGS_wal != "off") {
    ExitWithUsageError(
        "--check_image opens the image in this process: drop --fabric and "
        "--wal");
  }
  auto header = engine::ReadImageHeader(FLAGS_check_image);
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
  if (!FLAGS_acked_log.empty()) {
    const std::vector<std::string> files = AckedLogFiles(FLAGS_acked_log);
    if (files.empty()) {
      ExitWithUsageError(
          absl::StrFormat("--acked_log=%s: no such file, nor %s.node-<id>",
                          FLAGS_acked_log, FLAGS_acked_log));
    }
    for (const std::string& file : files) {
      auto contents = ReadAckedLog(file);
      if (!contents.ok()) {
        ExitWithUsageError(std::string(contents.status().message()));
      }
      acked.insert(acked.end(), contents->records.begin(),
                   contents->records.end());
    }
  }
  engine::EngineOptions options;
  options.fabric.memory_nodes = static_cast<int>(header->memory_nodes);
  options.fabric.compute_nodes = 1;
  options.fabric.pool_bytes = header->region_bytes;
  options.fabric.chunk_bytes = header->chunk_bytes;
  options.fabric.populate_memory = rdma::PopulateMode::kOnFirstTouch;
  options.cc.gcl_size = header->gcl_size;
  options.image_path = FLAGS_check_image;
  auto db = TpccDatabase::Open(options, scale, FLAGS_seed,
                               TpccDatabase::TablesAt::kOpen);
  if (!db.ok()) {
    std::cerr << "tpcc: " << db.status().message() << "\n";
    return 1;
  }
  engine::Engine& engine = (*db)->engine();
  auto checker = AckedNewOrderChecker::Register(engine, (*db)->tables());
  if (!checker.ok()) {
    std::cerr << "tpcc: " << checker.status().message() << "\n";
    return 1;
  }
  auto consistency = CheckConsistency(engine, FLAGS_warehouses, scale);
  if (!consistency.ok()) {
    std::cerr << "tpcc: " << consistency.status().message() << "\n";
    return 1;
  }
  auto found = checker->Check(engine, acked);
  if (!found.ok()) {
    std::cerr << "tpcc: " << found.status().message() << "\n";
    return 1;
  }
  std::ostream& human = output.human();
  human << "consistency (clause 3.3.2, conditions 1-12) of "
        << FLAGS_check_image << ": "
        << (consistency->ok() ? "ok" : consistency->ToString()) << "\n";
  if (!FLAGS_acked_log.empty()) {
    human << absl::StrFormat(
        "acknowledged New-Orders: %d checked, %d missing or incomplete\n",
        found->checked, found->lost);
    for (const std::string& example : found->examples) {
      human << "  lost: " << example << "\n";
    }
  }
  JsonLine j = output.Record();
  j.Add("bench", "tpcc_check")
      .Add("image", FLAGS_check_image)
      .Add("warehouses", FLAGS_warehouses)
      .Add("items", scale.items)
      .Add("customers_per_district", scale.customers)
      .Add("acked_log", FLAGS_acked_log)
      .Add("consistency_ok", consistency->ok())
      .Add("acked_checked", found->checked)
      .Add("acked_lost", found->lost);
  output.Print(j);
  return consistency->ok() && found->ok() ? 0 : 1;
}

// A compute process other than node 0, once it ran and published its
// figures: stays up (node 0's consistency check reads the lines this node
// caches) until node 0 has checked, then leaves. Returns the exit status.
int FinishFollower(ClusterMember& member, const RunConfig& own,
                   const LoadResult& load, const RunResult& run,
                   RunOutput& output, const JsonLine& deployment) {
  std::ostream& human = output.human();
  if (absl::Status s = member.board->WaitFor(0, kChecked); !s.ok()) {
    return member.Fail(s.message());
  }
  auto verdict = member.board->Read(0);
  (void)member.board->Leave();
  const bool consistent = verdict.ok() && *verdict == "ok";
  human << "consistency: checked by compute node 0 over the whole database: "
        << (consistent ? "ok" : "FAILED") << "\n";
  ConsistencyResult c;
  if (!consistent) {
    c.violations[0] = 1;
    c.messages.push_back("compute node 0 found violations (its report)");
  }
  JsonLine record = deployment;
  AddJsonReport(own, load, run, c, record);
  output.Print(record);
  if (run.errors() > 0) return 1;
  return consistent ? 0 : 1;
}

int Main() {
  RunOutput output = RunOutput::FromFlags({.per_second_series = true});
  if (FLAGS_warehouses < 1 || FLAGS_warehouses > kMaxWarehousesFlag) {
    ExitWithUsageError("--warehouses must be from 1 to 10000");
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 256) {
    ExitWithUsageError("--threads must be from 1 to 256");
  }
  auto algorithm = txn::ParseCcAlgorithm(FLAGS_cc);
  if (!algorithm.ok()) {
    ExitWithUsageError("--cc=" + FLAGS_cc + ": expected 2pl, to or occ");
  }
  auto protocol = cc::ParseProtocol(FLAGS_protocol);
  if (!protocol.ok()) {
    ExitWithUsageError("--protocol=" + FLAGS_protocol +
                       ": expected selcc or sel");
  }
  if (FLAGS_home_warehouse != "thread" && FLAGS_home_warehouse != "random") {
    ExitWithUsageError("--home_warehouse=" + FLAGS_home_warehouse +
                       ": expected thread or random");
  }
  const HomeWarehouse home_warehouse = FLAGS_home_warehouse == "thread"
                                           ? HomeWarehouse::kPerThread
                                           : HomeWarehouse::kRandom;
  auto cpu_path = index::CpuPathSwitchesFromFlags();
  if (!cpu_path.ok()) {
    ExitWithUsageError(std::string(cpu_path.status().message()));
  }
  auto mix = Mix::Parse(FLAGS_mix);
  if (!mix.ok()) ExitWithUsageError(std::string(mix.status().message()));
  if (FLAGS_remote_neworder > 1) {
    ExitWithUsageError("--remote_neworder must be at most 1 (a share)");
  }
  auto mode = engine::ParseEngineMode(FLAGS_mode);
  if (!mode.ok()) ExitWithUsageError(std::string(mode.status().message()));
  if (FLAGS_distributed_pct > 100) {
    ExitWithUsageError("--distributed_pct must be at most 100 (a percent)");
  }
  if (FLAGS_distributed_pct >= 0 && FLAGS_remote_neworder >= 0) {
    ExitWithUsageError(
        "--distributed_pct and --remote_neworder both set the share of "
        "remote New-Orders: give one");
  }
  if (*mode == engine::EngineMode::kShared) {
    for (const char* flag : {"twopc_one_phase_local", "twopc_read_only_vote",
                             "twopc_parallel_prepare"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        ExitWithUsageError(
            absl::StrCat("--", flag, " applies to --mode=partitioned only"));
      }
    }
  }
  if (!(FLAGS_duration_s > 0) || FLAGS_duration_s > 86400) {
    ExitWithUsageError("--duration_s must be > 0 and <= 86400");
  }
  if (!(FLAGS_peer_timeout_s > 0) || FLAGS_peer_timeout_s > 3600) {
    ExitWithUsageError("--peer_timeout_s must be > 0 and <= 3600");
  }
  // Compute processes of a cluster (the fabric flags are parsed below,
  // once --pool_mb is sized).
  const bool verbs =
      gflags::GetCommandLineFlagInfoOrDie("fabric").current_value == "verbs";
  if (!verbs &&
      !gflags::GetCommandLineFlagInfoOrDie("peer_timeout_s").is_default) {
    ExitWithUsageError(
        "--peer_timeout_s applies to --fabric=verbs only (compute processes "
        "watching each other)");
  }
  if (!(FLAGS_warmup_s >= 0) || FLAGS_warmup_s > 3600) {
    ExitWithUsageError("--warmup_s must be from 0 to 3600");
  }
  if (FLAGS_items < 1 || FLAGS_items > 100000) {
    ExitWithUsageError("--items must be from 1 to 100000");
  }
  if (FLAGS_customers < 10 || FLAGS_customers > 3000) {
    ExitWithUsageError("--customers must be from 10 to 3000");
  }
  // The engine takes GCLs up to the fabric's chunk (1 MiB), but TPC-C rows
  // are at most ~700 bytes: past 64 KiB a line holds hundreds of them, a
  // miss moves all of it and the cache holds few lines. At 1 MiB two
  // threads committed almost no New-Order (64 cache lines: none; 128: one
  // a second); 64 KiB ran 12.6k txn/s.
  if (FLAGS_gcl_size > kMaxGclSize) {
    ExitWithUsageError(absl::StrFormat(
        "--gcl_size=%d is too large for TPC-C: use at most %d (default 4096)",
        FLAGS_gcl_size, kMaxGclSize));
  }
  Scale scale;
  scale.items = FLAGS_items;
  scale.customers = FLAGS_customers;
  if (!FLAGS_check_image.empty()) return CheckImage(scale, output);

  // Size the pool: by default large enough for the chosen warehouses plus
  // room for the run (committed in full by the default
  // --populate_memory=background; with =touch an untouched part costs no
  // memory); a given --pool_mb must fit.
  // The default size has room for the whole run at a generous rate, up
  // to half the memory available (the caches take up to a quarter); a
  // given size need only hold the load and the minimum room.
  const uint64_t need = PoolBytesNeeded(FLAGS_warehouses, scale);
  const uint64_t want = std::max(
      need, std::min(PoolBytesNeeded(FLAGS_warehouses, scale, RunBytesBound()),
                     cc::AvailableMemoryBytes() / 2));
  // Over verbs the memory nodes' --pool_mb decides (checked once joined).
  const uint64_t memory_nodes = CountFlag("memory_nodes");
  const uint64_t need_mb = (need / memory_nodes >> 20) + 1;
  if (!verbs && gflags::GetCommandLineFlagInfoOrDie("pool_mb").is_default) {
    const uint64_t pool_mb =
        std::max<uint64_t>(256, (want / memory_nodes >> 20) + 1);
    gflags::SetCommandLineOption("pool_mb", std::to_string(pool_mb).c_str());
  } else if (!verbs) {
    const uint64_t pool_mb = std::stoull(
        gflags::GetCommandLineFlagInfoOrDie("pool_mb").current_value);
    if (pool_mb < need_mb) {
      ExitWithUsageError(absl::StrFormat(
          "--pool_mb=%d is too small for %d warehouses: they need about %d "
          "MiB per memory node (load plus room for the run); raise --pool_mb "
          "or leave it unset",
          pool_mb, FLAGS_warehouses, need_mb));
    }
  }
  auto fabric = rdma::FabricOptionsFromFlags();
  if (!fabric.ok()) ExitWithUsageError(std::string(fabric.status().message()));
  if (FLAGS_wal != "off" && FLAGS_wal != "on") {
    ExitWithUsageError("--wal=" + FLAGS_wal + ": expected off or on");
  }
  const bool wal = FLAGS_wal == "on";
  // A run that logged with the image of its load (before checkpoints):
  // recovery starts from it if no checkpoint is usable.
  const std::string image_path = FLAGS_wal_dir + "/load.img";
  bool resume = false;
  if (verbs) {
    auto cluster = rdma::verbs::ClusterConfig::Load(fabric->cluster_file);
    if (!cluster.ok()) {
      ExitWithUsageError(std::string(cluster.status().message()));
    }
  }
  if (wal) {
    if (FLAGS_wal_dir.empty()) {
      ExitWithUsageError("--wal=on needs --wal_dir=DIR (where the log goes)");
    }
    if (FLAGS_wal_pipeline < -1 || FLAGS_wal_pipeline > 100000) {
      ExitWithUsageError("--wal_pipeline must be from -1 to 100000");
    }
    if (FLAGS_wal_group_commit_us < -1 || FLAGS_wal_group_commit_us > 1000000) {
      ExitWithUsageError("--wal_group_commit_us must be from -1 to 1000000");
    }
    std::error_code ec;
    std::filesystem::create_directories(FLAGS_wal_dir, ec);
    if (ec) {
      ExitWithUsageError("--wal_dir=" + FLAGS_wal_dir + ": " + ec.message());
    }
    for (const auto& entry :
         std::filesystem::directory_iterator(FLAGS_wal_dir, ec)) {
      const std::string name = entry.path().filename().string();
      resume |= name.starts_with("node-") || name.starts_with("checkpoint-");
    }
    if (resume && verbs) {
      ExitWithUsageError(
          "--wal_dir=" + FLAGS_wal_dir +
          " holds an earlier run: carrying on from it needs every compute "
          "node in one process; over verbs, gather the logs and recover with "
          "strand_recover, or give a fresh directory");
    }
    if (FLAGS_wal_segment_mb < 1 || FLAGS_wal_segment_mb > 4096) {
      ExitWithUsageError("--wal_segment_mb must be from 1 to 4096");
    }
    if (FLAGS_checkpoint_interval_s != 0 &&
        !(FLAGS_checkpoint_interval_s >= 0.1 &&
          FLAGS_checkpoint_interval_s <= 86400)) {
      ExitWithUsageError(
          "--checkpoint_interval_s must be 0 (none) or from 0.1 to 86400");
    }
    if (!(FLAGS_checkpoint_read_mb_per_s >= 0)) {
      ExitWithUsageError("--checkpoint_read_mb_per_s must be >= 0");
    }
  } else {
    for (const char* flag : {"checkpoint_interval_s",
                             "checkpoint_read_mb_per_s", "wal_segment_mb"}) {
      if (!gflags::GetCommandLineFlagInfoOrDie(flag).is_default) {
        ExitWithUsageError(absl::StrCat("--", flag, " needs --wal=on"));
      }
    }
    if (!FLAGS_wal_dir.empty()) {
      ExitWithUsageError("--wal_dir is given but --wal=off: add --wal=on");
    }
    if (FLAGS_wal_early_lock_release) {
      ExitWithUsageError("--wal_early_lock_release needs --wal=on");
    }
    if (FLAGS_wal_pipeline != -1) {
      ExitWithUsageError("--wal_pipeline needs --wal=on");
    }
    if (FLAGS_wal_group_commit_us != -1) {
      ExitWithUsageError("--wal_group_commit_us needs --wal=on");
    }
  }
  const int wal_pipeline =
      !wal ? 0
      : FLAGS_wal_pipeline >= 0
          ? FLAGS_wal_pipeline
          : static_cast<int>(engine::Session::kDefaultMaxUnacknowledged);
  const bool early_lock_release =
      FLAGS_wal_early_lock_release || wal_pipeline > 0;
  const int wal_group_commit_us = !wal ? 0
                                  : FLAGS_wal_group_commit_us >= 0
                                      ? FLAGS_wal_group_commit_us
                                  : wal_pipeline > 0 ? 1000
                                                     : 0;
  std::unique_ptr<AckedLogWriter> acked_log;
  if (!FLAGS_acked_log.empty()) {
    // Processes of a cluster may share a file system (one host, or NFS).
    const std::string path =
        verbs ? absl::StrCat(FLAGS_acked_log, ".node-", fabric->node_id)
              : FLAGS_acked_log;
    auto writer = AckedLogWriter::Open(path);
    if (!writer.ok()) {
      ExitWithUsageError("--acked_log: " +
                         std::string(writer.status().message()));
    }
    acked_log = *std::move(writer);
  }

  std::unique_ptr<DeliveryResultFile> delivery_results;
  if (!FLAGS_delivery_results.empty()) {
    auto file = DeliveryResultFile::Open(FLAGS_delivery_results);
    if (!file.ok()) {
      ExitWithUsageError("--delivery_results: " +
                         std::string(file.status().message()));
    }
    delivery_results = *std::move(file);
  }

  engine::EngineOptions options;
  options.fabric = *fabric;
  options.cc.protocol = *protocol;
  options.cc.gcl_size = FLAGS_gcl_size;
  options.cc.prefetch = cpu_path->prefetch;
  // Compute nodes in this process: all of them on loopback, one per
  // process over verbs.
  const int local_nodes = verbs ? 1 : fabric->compute_nodes;
  const bool auto_cache = FLAGS_cache_mb == 0;
  options.cc.cache_bytes =
      auto_cache
          ? cc::AutoCacheBytes(
                CacheBytesWanted(
                    FLAGS_warehouses, FLAGS_threads, fabric->compute_nodes,
                    home_warehouse == HomeWarehouse::kRandom, scale),
                FLAGS_gcl_size,
                cc::AutoCacheCapBytes(cc::AvailableMemoryBytes(), local_nodes))
          : FLAGS_cache_mb << 20;
  options.algorithm = *algorithm;
  options.index = cpu_path->tuning;
  options.validate_index_reads = FLAGS_validate_index_reads;
  options.optimistic_tuple_reads = FLAGS_optimistic_tuple_reads;
  options.epochs_in_pool = FLAGS_epochs_in_pool;
  options.retry.max_retries = 100000;
  options.mode = *mode;
  options.partitioned.partitions = FLAGS_warehouses;
  options.partitioned.one_phase_local = FLAGS_twopc_one_phase_local;
  options.partitioned.read_only_vote = FLAGS_twopc_read_only_vote;
  options.partitioned.parallel_prepare = FLAGS_twopc_parallel_prepare;
  options.checkpoint_interval = absl::Seconds(FLAGS_checkpoint_interval_s);
  options.checkpoint_read_mb_per_s = FLAGS_checkpoint_read_mb_per_s;
  engine::WalOptions log;
  if (wal) {
    log.dir = FLAGS_wal_dir;
    log.early_lock_release = early_lock_release;
    log.group_commit_window = absl::Microseconds(wal_group_commit_us);
    log.segment_bytes = uint64_t{static_cast<uint32_t>(FLAGS_wal_segment_mb)}
                        << 20;
  }
  if (resume) {
    // Recover the earlier run and carry on logging in the same directory
    // (engine/recovery.h): the engine opens with the log running.
    options.recover_wal_dir = FLAGS_wal_dir;
    options.wal = log;
    std::error_code image_ec;
    if (std::filesystem::exists(image_path, image_ec)) {
      options.image_path = image_path;
    }
  }
  if (absl::Status s = options.Validate(OptionNaming::Flags("EngineOptions::"));
      !s.ok()) {
    ExitWithUsageError(std::string(s.message()));
  }

  std::ostream& human = output.human();
  // Declared before the member, so that the board (which uses the
  // engine's fabric) is destroyed first.
  absl::StatusOr<std::unique_ptr<TpccDatabase>> db;
  ClusterMember member;
  ProgressLine::RunShowing("opening the engine (memory nodes, caches)", [&] {
    db = OpenDatabase(options, scale, need, member,
                      resume ? TpccDatabase::TablesAt::kOpen
                             : TpccDatabase::TablesAt::kCreate);
  });
  if (!db.ok()) return member.Fail(db.status().message());
  const rdma::Fabric& deployed = (*db)->engine().fabric();
  // The record's head: version, commit, and the deployment as served.
  JsonLine deployment = output.Record();
  rdma::AddFabricJson(*fabric, deployed, deployment);
  RunConfig config;
  config.warehouses = FLAGS_warehouses;
  config.compute_nodes = deployed.compute_node_count();
  config.fabric = rdma::FabricKindName(fabric->kind);
  config.processes = member.processes;
  config.threads_per_node = FLAGS_threads;
  config.cc = txn::CcAlgorithmName(*algorithm);
  config.protocol = cc::ProtocolName(*protocol);
  config.mix =
      FLAGS_mix == "standard" ? "standard:" + mix->ToString() : mix->ToString();
  config.remote_neworder = FLAGS_remote_neworder;
  config.mode = engine::EngineModeName(*mode);
  config.distributed_pct = FLAGS_distributed_pct;
  config.twopc_one_phase_local = FLAGS_twopc_one_phase_local;
  config.twopc_read_only_vote = FLAGS_twopc_read_only_vote;
  config.twopc_parallel_prepare = FLAGS_twopc_parallel_prepare;
  config.home_warehouse = FLAGS_home_warehouse;
  config.rtt_ns = fabric->rtt_ns;
  config.message_delivery = rdma::MessageDeliveryName(fabric->message_delivery);
  config.gcl_size = FLAGS_gcl_size;
  // What the cache layer uses (SEL has no cache).
  config.cache_mb =
      *protocol == cc::Protocol::kSelcc ? options.cc.cache_bytes >> 20 : 0;
  config.cache_sizing = auto_cache ? "auto" : "flag";
  config.prefetch = cc::PrefetchScopeName(cpu_path->prefetch);
  config.index_leaf_hint = cpu_path->tuning.leaf_hint;
  config.optimistic_reads = cpu_path->tuning.optimistic_reads;
  config.optimistic_tuple_reads = FLAGS_optimistic_tuple_reads;
  config.validate_index_reads = FLAGS_validate_index_reads;
  config.epochs_in_pool = FLAGS_epochs_in_pool;
  {
    const auto hosted = (*db)->engine().local_compute_nodes();
    const txn::EpochManager* epochs = (*db)->engine().epochs(hosted.front());
    config.epochs = epochs->pool() != nullptr ? "pool" : "process";
  }
  config.seed = FLAGS_seed;
  config.warmup_s = FLAGS_warmup_s;
  config.txns = FLAGS_txns;
  config.scale = scale;
  config.wal = wal;
  config.wal_dir = FLAGS_wal_dir;
  config.wal_early_lock_release = early_lock_release;
  config.wal_pipeline = wal_pipeline;
  config.wal_group_commit_us = wal_group_commit_us;
  config.acked_log = FLAGS_acked_log;
  config.delivery_results = FLAGS_delivery_results;
  config.memory_breakdown = FLAGS_memory_breakdown;
  config.peer_timeout_s = FLAGS_peer_timeout_s;

  absl::StatusOr<LoadResult> load = LoadResult();
  if (resume) {
    const engine::RecoveryReport& recovered =
        *(*db)->engine().recovery_report();
    human << "wal: carrying on from the run in " << FLAGS_wal_dir << "\n"
          << recovered.Summary() << "\n";
    for (const engine::CheckpointResult& c :
         (*db)->engine().CheckpointHistory()) {
      human << "wal: " << c.Summary() << "\n";
    }
    human << std::flush;  // crash tests wait for these lines
    if (auto used = PoolBytesTaken((*db)->engine()); used.ok()) {
      load->pool_bytes_used = *used;
    }
  } else {
    load = (*db)->loader().Load(FLAGS_warehouses, FLAGS_threads, FLAGS_seed,
                                /*progress=*/true);
  }
  if (!load.ok()) return member.Fail(load.status().message());
  if (member.board != nullptr) {
    // Every process loaded its share; measure together.
    if (absl::Status s = member.board->Arrive(kLoaded); !s.ok()) {
      return member.Fail(s.message());
    }
    if (absl::Status s = member.board->WaitForAll(kLoaded); !s.ok()) {
      return member.Fail(s.message());
    }
    if (auto used = PoolBytesTaken((*db)->engine()); used.ok()) {
      load->pool_bytes_used = *used;
    }
  }
  PrintLoad(human, config, *load);
  if (!FLAGS_validate_index_reads) {
    human << "index reads: NOT validated (--novalidate_index_reads): scans "
             "and absent-key lookups are not serializable in this run\n";
  }
  if (FLAGS_memory_breakdown && member.leads()) {
    auto breakdown = MeasureMemory((*db)->engine(), FLAGS_warehouses, scale);
    if (!breakdown.ok()) {
      std::cerr << "tpcc: " << breakdown.status().message() << "\n";
      return 1;
    }
    PrintMemoryBreakdown(human, *breakdown, FLAGS_warehouses,
                         load->pool_bytes_used);
  }
  if (wal && !resume) {
    // Log from now on, then checkpoint the loaded pool: recovery starts
    // from the newest checkpoint and replays the logs after it. In a
    // cluster every process logs before node 0 takes the checkpoint.
    engine::Engine& engine = (*db)->engine();
    if (absl::Status s = engine.StartLogging(log); !s.ok()) {
      return member.Fail(s.message());
    }
    if (member.board != nullptr) {
      if (absl::Status s = member.board->Arrive(kWrittenBack); !s.ok()) {
        return member.Fail(s.message());
      }
    }
    if (member.leads()) {
      if (member.board != nullptr) {
        if (absl::Status s = member.board->WaitForAll(kWrittenBack); !s.ok()) {
          return member.Fail(s.message());
        }
      }
      auto initial = engine.Checkpoint("initial");
      if (!initial.ok()) return member.Fail(initial.status().message());
      human << "wal: " << initial->Summary() << "\n";
      if (member.board != nullptr) {
        if (absl::Status s = member.board->Arrive(kImaged); !s.ok()) {
          return member.Fail(s.message());
        }
      }
    } else if (absl::Status s = member.board->WaitFor(0, kImaged); !s.ok()) {
      return member.Fail(s.message());
    }
  }
  if (wal) {
    human << absl::StrFormat(
        "wal: on, dir %s, io direct (buffered, with a warning, where the "
        "file system refuses O_DIRECT), early_lock_release %s, pipeline %d, "
        "segments of %d MiB, checkpoints %s; after a crash: run again with "
        "the same --wal_dir to carry on, or strand_recover --wal_dir=%s%s\n",
        FLAGS_wal_dir, early_lock_release ? "on" : "off", wal_pipeline,
        FLAGS_wal_segment_mb,
        FLAGS_checkpoint_interval_s > 0
            ? absl::StrFormat("every %.1f s", FLAGS_checkpoint_interval_s)
            : std::string("after the load only"),
        FLAGS_wal_dir,
        member.board != nullptr
            ? " (with every compute node's node-<id>/ gathered there)"
            : "");
  }

  if (member.board != nullptr) {
    human << absl::StrFormat(
        "cluster: compute node %d loaded its share of the warehouses; all %d "
        "compute processes are loaded%s, measuring starts at unix time %.3f "
        "(after %.1f s of warm-up)\n",
        member.self, member.processes, wal ? " and logging" : "",
        absl::ToUnixMillis(absl::Now()) / 1e3 + FLAGS_warmup_s, FLAGS_warmup_s);
    human << std::flush;  // the launcher watches for this line
  }

  // The loopback fabric commits its memory on a thread of its own while the
  // loader runs (--populate_memory=background); the measured run starts
  // when it is done, not beside it.
  const absl::Time populate_start = absl::Now();
  ProgressLine::RunShowing(
      "memory: committing the fabric's memory before the run",
      [&] { (*db)->engine().fabric().WaitUntilPopulated(); });
  const absl::Duration populate_wait = absl::Now() - populate_start;
  if (populate_wait > absl::Milliseconds(100)) {
    human << absl::StrFormat(
        "memory: waited %.2f s for the fabric to commit its memory "
        "(--populate_memory=touch skips it)\n",
        absl::ToDoubleSeconds(populate_wait));
  }

  DriverOptions d;
  d.warehouses = FLAGS_warehouses;
  d.threads_per_node = FLAGS_threads;
  d.home_warehouse = home_warehouse;
  d.mix = *mix;
  d.remote.remote_order_ratio = FLAGS_remote_neworder;
  // Who owns which warehouse: partitioned mode's map, or the same split
  // for a shared run with --distributed_pct (tpcc/remote_policy.h).
  std::optional<partition::PartitionMap> owners;
  if ((*db)->engine().partition_map() != nullptr) {
    owners = *(*db)->engine().partition_map();
  } else if (FLAGS_distributed_pct >= 0) {
    auto map = partition::PartitionMap::Create(FLAGS_warehouses,
                                               fabric->compute_nodes);
    if (!map.ok()) ExitWithUsageError(std::string(map.status().message()));
    owners = *map;
  }
  if (owners.has_value()) {
    d.remote.owners = &*owners;
    config.owners = owners->ToString();
  }
  if (FLAGS_distributed_pct >= 0) {
    d.remote.remote_order_ratio = FLAGS_distributed_pct / 100;
    d.remote.remote_payment_ratio = FLAGS_distributed_pct / 100;
  }
  d.duration_s = FLAGS_duration_s;
  d.txns = FLAGS_txns;
  d.warmup_s = FLAGS_warmup_s;
  d.seed = FLAGS_seed;
  d.progress = true;
  d.progress_series = output.progress_series();
  d.acked_log = acked_log.get();
  d.delivery_results = delivery_results.get();
  d.wal_pipeline = static_cast<size_t>(wal_pipeline);
  auto run = RunDriver(**db, d);
  if (!run.ok()) return member.Fail(run.status().message());
  if (member.board != nullptr) {
    // This node's own figures, here and on the board for node 0.
    RunConfig own = config;
    own.scope = absl::StrCat("compute node ", member.self);
    PrintRun(human, own, *run);
    if (absl::Status s =
            member.board->Publish(EncodeNodeRun(member.self, *load, *run));
        !s.ok()) {
      return member.Fail(s.message());
    }
    if (absl::Status s = member.board->Arrive(kRan); !s.ok()) {
      return member.Fail(s.message());
    }
    if (!member.leads()) {
      return FinishFollower(member, own, *load, *run, output, deployment);
    }
    // Node 0: the deployment's figures, every node's summed.
    if (absl::Status s = member.board->WaitForAll(kRan); !s.ok()) {
      return member.Fail(s.message());
    }
    LoadResult all_load;
    RunResult all_run;
    for (int n = 0; n < member.processes; ++n) {
      auto bytes = member.board->Read(n);
      if (!bytes.ok()) return member.Fail(bytes.status().message());
      if (absl::Status s = MergeNodeRun(*bytes, all_load, all_run); !s.ok()) {
        return member.Fail(s.message());
      }
    }
    all_load.pool_bytes_used = load->pool_bytes_used;
    *load = all_load;
    *run = std::move(all_run);
    config.scope = "deployment";
  }
  PrintRun(human, config, *run);
  // What the run added to the pool: inserted rows, less the slots of
  // deleted rows (NEW-ORDER, by Delivery) that inserts reused
  // (txn/epoch_manager.h).
  uint64_t pool_after_run = 0;
  double growth_mb_per_million = 0;
  if (auto used = PoolBytesTaken((*db)->engine()); used.ok()) {
    pool_after_run = *used;
    // Warm-up commits grow the pool too; over a run of minutes they are
    // noise.
    growth_mb_per_million = (static_cast<double>(*used) -
                             static_cast<double>(load->pool_bytes_used)) /
                            1048576.0 / std::max<double>(1.0, run->commits()) *
                            1e6;
    human << absl::StrFormat(
        "pool: %.1f MiB after the run, %.1f MiB after the load: %+.1f MiB "
        "per million committed transactions\n",
        *used / 1048576.0, load->pool_bytes_used / 1048576.0,
        growth_mb_per_million);
  }
  human << absl::StrFormat(
      "deleted rows' slots handed back for reuse: %llu by this process "
      "(epochs shared %s)\n",
      static_cast<unsigned long long>(SlotsReclaimed((*db)->engine())),
      config.epochs == "pool" ? "through the pool" : "in this process");
  if (FLAGS_memory_breakdown && member.leads()) {
    // Table by table: which tables the run grew (TPC-C inserts ORDER,
    // ORDER-LINE and HISTORY rows for good), and that NEW-ORDER, whose
    // deleted rows' slots are reused, did not.
    auto breakdown = MeasureMemory((*db)->engine(), FLAGS_warehouses, scale);
    if (!breakdown.ok()) return member.Fail(breakdown.status().message());
    human << "after the run:\n";
    PrintMemoryBreakdown(human, *breakdown, FLAGS_warehouses, pool_after_run,
                         /*loaded_rows=*/false);
  }

  auto consistency = CheckConsistency((*db)->engine(), FLAGS_warehouses, scale);
  if (!consistency.ok()) {
    return member.Fail(absl::StrCat("consistency check could not run: ",
                                    consistency.status().message()));
  }
  PrintConsistency(human, *consistency);
  if (member.board != nullptr) {
    // The others kept serving their cached lines to the check; now they
    // may stop. They print the verdict too.
    (void)member.board->Publish(consistency->ok() ? "ok" : "FAILED");
    (void)member.board->Arrive(kChecked);
    (void)member.board->Leave();
  }
  // The checkpoints and what they cost, placed in the measured window
  // (--progress_json's seconds).
  std::vector<std::string> checkpoints_json;
  for (const engine::CheckpointResult& c :
       (*db)->engine().CheckpointHistory()) {
    if (c.kind != "initial" && !resume) human << "wal: " << c.Summary() << "\n";
    JsonLine j;
    j.Add("sequence", c.sequence)
        .Add("kind", c.kind)
        .Add("start_s", absl::ToDoubleSeconds(c.started - run->window_start))
        .Add("duration_s", absl::ToDoubleSeconds(c.total))
        .Add("cpu_s", c.cpu_s)
        .Add("copy_s", absl::ToDoubleSeconds(c.copy))
        .Add("wait_s", absl::ToDoubleSeconds(c.wait_start + c.wait_end))
        .Add("publish_s", absl::ToDoubleSeconds(c.publish))
        .Add("tuples", c.tuples)
        .Add("index_entries", c.index_entries)
        .Add("bytes_written", c.bytes_written)
        .Add("bytes_read", c.bytes_read)
        .Add("truncated_to_ts", c.truncated_to_ts)
        .Add("log_segments_deleted", c.log_segments_deleted)
        .Add("log_bytes_deleted", c.log_bytes_deleted);
    checkpoints_json.push_back(j.str());
  }
  JsonLine record = deployment;
  AddJsonReport(config, *load, *run, *consistency, record);
  record.AddRaw("checkpoints", "[" + absl::StrJoin(checkpoints_json, ",") + "]")
      .Add("resumed", resume);
  record.Add("pool_bytes_after_run", pool_after_run)
      .Add("pool_growth_mb_per_million_txns", growth_mb_per_million);
  output.Print(record);
  if (run->errors() > 0) return 1;
  return consistency->ok() ? 0 : 1;
}

}  // namespace
}  // namespace strand::tpcc

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Runs TPC-C on strand and checks its consistency conditions.\n"
      "Usage: tpcc [--warehouses=2] [--compute_nodes=1] [--threads=1] "
      "[--cc=2pl|to|occ] [--protocol=selcc|sel] [--mix=standard] "
      "[--duration_s=10] [--mode=shared|partitioned [--distributed_pct=P]] "
      "[--wal=off|on --wal_dir=DIR "
      "[--wal_pipeline=N] [--wal_early_lock_release]] [--acked_log=FILE] "
      "[--json|--csv] [--progress_json=FILE]");
  // Debian builds abseil without NDEBUG, which leaves absl::Mutex's
  // deadlock detector on: a graph update on every lock, ~200 instructions
  // per heap insert in the CPU-path profile. It is a debugging aid; the
  // tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return strand::tpcc::Main();
}
