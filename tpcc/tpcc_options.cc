#include "tpcc/tpcc_options.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/option_checks.h"
#include "base/status_macros.h"
#include "cc/cache_sizing.h"
#include "engine/session.h"

namespace strand::tpcc {
namespace {

// Every setting Validate checks, under its flag.
constexpr OptionSetting kWarehouses{"warehouses", "warehouses"};
constexpr OptionSetting kItems{"items", "items"};
constexpr OptionSetting kCustomers{"customers", "customers"};
constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kCc{"cc", "cc"};
constexpr OptionSetting kProtocol{"protocol", "protocol"};
constexpr OptionSetting kMode{"mode", "mode"};
constexpr OptionSetting kGclSize{"gcl_size", "gcl_size"};
constexpr OptionSetting kCacheMb{"cache_mb", "cache_mb"};
constexpr OptionSetting kPoolMb{"fabric.pool_bytes", "pool_mb",
                                rdma::FabricOptions::kMiB};
constexpr OptionSetting kCluster{"fabric.cluster_file", "cluster"};
constexpr OptionSetting kPeerTimeout{"peer_timeout_s", "peer_timeout_s"};
constexpr OptionSetting kMix{"mix", "mix"};
constexpr OptionSetting kHomeWarehouse{"home_warehouse", "home_warehouse"};
constexpr OptionSetting kRemoteNewOrder{"remote_neworder", "remote_neworder"};
constexpr OptionSetting kDistributedPct{"distributed_pct", "distributed_pct"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr OptionSetting kTxns{"txns", "txns"};
constexpr OptionSetting kWarmup{"warmup_s", "warmup_s"};
constexpr OptionSetting kWal{"wal", "wal"};
constexpr OptionSetting kWalDir{"wal_dir", "wal_dir"};
constexpr OptionSetting kEarlyLockRelease{"wal_early_lock_release",
                                          "wal_early_lock_release"};
constexpr OptionSetting kWalPipeline{"wal_pipeline", "wal_pipeline"};
constexpr OptionSetting kGroupCommit{"wal_group_commit_us",
                                     "wal_group_commit_us"};
constexpr OptionSetting kCheckpointInterval{"checkpoint_interval_s",
                                            "checkpoint_interval_s"};
constexpr OptionSetting kCheckpointRead{"checkpoint_read_mb_per_s",
                                        "checkpoint_read_mb_per_s"};
constexpr OptionSetting kSegmentMb{"wal_segment_mb", "wal_segment_mb"};
constexpr OptionSetting kCheckImage{"check_image", "check_image"};
constexpr OptionSetting kFailover{"failover", "failover"};
constexpr OptionSetting kNodeLease{"node_lease_ms", "node_lease_ms"};
constexpr OptionSetting kRedoRing{"redo_ring_mb", "redo_ring_mb"};
constexpr OptionSetting kFailNode{"fail_node", "fail_node"};
constexpr OptionSetting kRejoinAfter{"rejoin_after_s", "rejoin_after_s"};
constexpr OptionSetting kRejoin{"rejoin", "rejoin"};

// The driver's cap on --warehouses, below what the schema's int16
// warehouse numbers hold.
constexpr int kMaxWarehousesFlag = 10000;
static_assert(kMaxWarehousesFlag <= kMaxWarehouses);
// The engine takes GCLs up to the fabric's chunk (1 MiB), but TPC-C rows
// are at most ~700 bytes: past 64 KiB a line holds hundreds of them, a
// miss moves all of it and the cache holds few lines. At 1 MiB two threads
// committed almost no New-Order (64 cache lines: none; 128: one a second);
// 64 KiB ran 12.6k txn/s.
constexpr uint32_t kMaxGclSize = 64 * 1024;
// The smallest GCL a TPC-C row fits in: a CUSTOMER row takes 678 bytes
// with its tuple header, a heap page's header 16, the latch word 8: 702,
// rounded up to the multiple of 64 a GCL is. (The flag test runs a load at
// this size, and refuses the size below it.)
constexpr uint32_t kMinGclSize = 704;

// Pool bytes kept free for the rows a run inserts, at least.
constexpr double kRunRoomBytes = 768.0 * (1 << 20);
// What a run inserts, generously, to size a pool for a long or fast run:
// 0.51-0.57 KiB of pool per committed transaction (the standard mix;
// 50/50 New-Order/Payment, no Delivery), at up to 100k transactions per
// second per worker thread (one thread reached 92k on the 2-core VM).
constexpr double kRunBytesPerTxn = 640;
constexpr double kRunBytesPerThreadSecond = 100e3 * kRunBytesPerTxn;

// The flags a run takes and --check_image (which only opens an image and
// checks it) does not: given with --check_image, they would do nothing.
constexpr absl::string_view kRunOnlyFlags[] = {"threads",
                                               "cc",
                                               "protocol",
                                               "mode",
                                               "gcl_size",
                                               "cache_mb",
                                               "mix",
                                               "home_warehouse",
                                               "remote_neworder",
                                               "distributed_pct",
                                               "duration_s",
                                               "txns",
                                               "warmup_s",
                                               "wal",
                                               "wal_dir",
                                               "wal_early_lock_release",
                                               "wal_pipeline",
                                               "wal_group_commit_us",
                                               "checkpoint_interval_s",
                                               "checkpoint_read_mb_per_s",
                                               "wal_segment_mb",
                                               "delivery_results",
                                               "memory_breakdown",
                                               "peer_timeout_s",
                                               "optimistic_tuple_reads",
                                               "unlocked_inserts",
                                               "validate_index_reads",
                                               "epochs_in_pool",
                                               "twopc_one_phase_local",
                                               "twopc_read_only_vote",
                                               "twopc_parallel_prepare",
                                               "progress_json",
                                               "prefetch",
                                               "index_leaf_hint",
                                               "index_word_search",
                                               "index_leaf_walk",
                                               "optimistic_reads",
                                               "identity_frames",
                                               "fabric",
                                               "memory_nodes",
                                               "compute_nodes",
                                               "pool_mb",
                                               "chunk_kb",
                                               "populate_memory",
                                               "rtt_ns",
                                               "bandwidth_gbps",
                                               "nic_op_ns",
                                               "nic_gbps",
                                               "message_delivery",
                                               "cluster",
                                               "node_id",
                                               "failover",
                                               "node_lease_ms",
                                               "redo_ring_mb",
                                               "fail_node",
                                               "rejoin_after_s",
                                               "rejoin"};

// Pool bytes a load of `warehouses` takes, generously (measured: see the
// README), plus room for the rows a run inserts: `run_bytes`, at least
// kRunRoomBytes.
uint64_t PoolBytesFor(int warehouses, const Scale& scale, double run_bytes) {
  const double per_warehouse = 2.0 * RawBytes::PerWarehouse(scale);
  const double items = 2.0 * RawBytes::Items(scale);
  return static_cast<uint64_t>(warehouses * per_warehouse + items +
                               std::max(kRunRoomBytes, run_bytes));
}

// The cache an auto-sized (--cache_mb=0) compute node wants: the load of
// the warehouses its threads work on, plus ITEM, plus room for what the run
// inserts, so that a run of the usual length never evicts. A pool takes
// 1.30x the raw tuple bytes (README, Results: memory); 1.5x leaves room
// for the rows of other warehouses that remote lines and payments touch.
// The run's inserts take ~0.55 KiB of pool per transaction (50/50
// New-Order/Payment: 26 MiB/s at 48k txn/s); they get 8x the load, at
// least 64 MiB and at most this node's share of the pool's room for the
// run (PoolBytesFor): one warehouse on one thread then runs ~30 s before
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

absl::Status CheckChoices(const TpccOptions& o, const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(CheckChoice(naming, kCc, o.cc, {"2pl", "to", "occ"}));
  STRAND_RETURN_IF_ERROR(
      CheckChoice(naming, kProtocol, o.protocol, {"selcc", "sel"}));
  STRAND_RETURN_IF_ERROR(
      CheckChoice(naming, kMode, o.mode, {"shared", "partitioned"}));
  STRAND_RETURN_IF_ERROR(CheckChoice(naming, kHomeWarehouse, o.home_warehouse,
                                     {"thread", "random"}));
  STRAND_RETURN_IF_ERROR(CheckChoice(naming, kWal, o.wal, {"off", "on"}));
  return Mix::Parse(o.mix).status();
}

// The database, the threads, the GCLs and the cache: each within what the
// schema, the driver, the engine and the machine hold.
absl::Status CheckSizes(const TpccOptions& o, const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kWarehouses, o.warehouses, 1, kMaxWarehousesFlag));
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kItems, o.items, 1, 100000));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kCustomers, o.customers, 10, 3000));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kThreads, o.threads, 1, 256, "per compute node"));
  if (o.gcl_size < kMinGclSize || o.gcl_size > kMaxGclSize ||
      o.gcl_size % 64 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not valid for TPC-C: use a multiple of 64 from %d (a CUSTOMER "
        "row fits) to %d (default 4096)",
        naming.Setting(kGclSize, o.gcl_size), kMinGclSize, kMaxGclSize));
  }
  STRAND_RETURN_IF_ERROR(CheckFitsMemory(naming, kCacheMb, o.cache_mb,
                                         o.local_compute_nodes(),
                                         "one per compute node here"));
  return CheckOnlyWith(naming, kCacheMb, o.given.contains("cache_mb"),
                       o.coherence() == cc::Protocol::kSelcc,
                       "--protocol=selcc", "SEL caches nothing");
}

// How long the run is, and which transactions go where.
absl::Status CheckRun(const TpccOptions& o, const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kDuration, o.duration_s, 1e-3, 86400.0, "seconds"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kWarmup, o.warmup_s, 0.0, 3600.0, "seconds"));
  if (o.txns > 0 && o.given.contains("duration_s")) {
    return absl::InvalidArgumentError(
        "--duration_s and --txns both say when the run ends: give one");
  }
  // A run of --txns inserts about kRunBytesPerTxn each into the pool.
  const uint64_t max_txns = MachineMemoryBytes() / kRunBytesPerTxn;
  STRAND_RETURN_IF_ERROR(CheckInRange<uint64_t>(
      naming, kTxns, o.txns, 0, max_txns,
      "(more would insert more rows than this machine's memory holds)"));
  if (o.remote_neworder >= 0 || std::isnan(o.remote_neworder)) {
    STRAND_RETURN_IF_ERROR(
        CheckInRange(naming, kRemoteNewOrder, o.remote_neworder, 0.0, 1.0,
                     "(a share; negative: the specification's 1% per line)"));
  }
  if (o.distributed_pct >= 0 || std::isnan(o.distributed_pct)) {
    STRAND_RETURN_IF_ERROR(
        CheckInRange(naming, kDistributedPct, o.distributed_pct, 0.0, 100.0,
                     "(a percent; negative: the specification's rates)"));
  }
  if (o.distributed_pct >= 0 && o.remote_neworder >= 0) {
    return absl::InvalidArgumentError(
        "--distributed_pct and --remote_neworder both set the share of "
        "remote New-Orders: give one");
  }
  if (o.remote_neworder > 0 && o.warehouses == 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has no effect with --warehouses=1: a remote supply warehouse "
        "is another warehouse; add warehouses or drop it",
        naming.Setting(kRemoteNewOrder, o.remote_neworder)));
  }
  if (o.distributed_pct > 0 && o.deployment_compute_nodes == 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has no effect with one compute node: a distributed transaction "
        "reaches another node's warehouse; use --compute_nodes=2 or more, "
        "or drop it",
        naming.Setting(kDistributedPct, o.distributed_pct)));
  }
  const bool by_owner = o.engine_mode() == engine::EngineMode::kPartitioned ||
                        o.distributed_pct >= 0;
  if (by_owner && o.warehouses < o.deployment_compute_nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s gives each of the %d compute nodes warehouses of its own, so "
        "it needs at least as many warehouses",
        naming.Setting(kWarehouses, o.warehouses),
        o.distributed_pct >= 0 ? "--distributed_pct" : "--mode=partitioned",
        o.deployment_compute_nodes));
  }
  if (o.engine_mode() == engine::EngineMode::kShared) {
    for (const char* flag : {"twopc_one_phase_local", "twopc_read_only_vote",
                             "twopc_parallel_prepare"}) {
      if (o.given.contains(flag)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, " applies to --mode=partitioned only"));
      }
    }
  }
  return absl::OkStatus();
}

// A verbs deployment's processes watch each other; a loopback one has no
// peers to time out.
absl::Status CheckPeers(const TpccOptions& o, const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kPeerTimeout, o.peer_timeout_s,
                                      1e-3, 3600.0, "seconds"));
  return CheckOnlyWith(naming, kPeerTimeout, o.given.contains("peer_timeout_s"),
                       o.over_verbs(), "--fabric=verbs",
                       "compute processes watching each other");
}

absl::Status CheckWal(const TpccOptions& o, const OptionNaming& naming) {
  if (!o.logging()) {
    if (!o.wal_dir.empty()) {
      return absl::InvalidArgumentError(
          "--wal_dir is given but --wal=off: add --wal=on");
    }
    for (const OptionSetting& s :
         {kEarlyLockRelease, kWalPipeline, kGroupCommit, kCheckpointInterval,
          kCheckpointRead, kSegmentMb}) {
      if (o.given.contains(std::string(s.flag))) {
        return absl::InvalidArgumentError(
            absl::StrCat(naming.Name(s), " needs --wal=on"));
      }
    }
    return absl::OkStatus();
  }
  if (o.wal_dir.empty()) {
    return absl::InvalidArgumentError(
        "--wal=on needs --wal_dir=DIR (where the log goes)");
  }
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kWalPipeline, o.wal_pipeline, -1, 100000));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kGroupCommit, o.wal_group_commit_us, -1, 1000000));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kSegmentMb, o.wal_segment_mb, 1, 4096, "MiB"));
  if (o.checkpoint_interval_s != 0) {
    STRAND_RETURN_IF_ERROR(CheckInRange(naming, kCheckpointInterval,
                                        o.checkpoint_interval_s, 0.1, 86400.0,
                                        "seconds (or 0: none)"));
  }
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kCheckpointRead,
                                      o.checkpoint_read_mb_per_s, 0.0, 1e6,
                                      "MiB/s (0: no limit)"));
  STRAND_RETURN_IF_ERROR(CheckWritableDirectory(naming, kWalDir, o.wal_dir,
                                                /*may_create=*/true));
  return absl::OkStatus();
}

// The pool holds the load and the run's inserts: a given --pool_mb must,
// and an automatic one must fit the machine. Over verbs the memory nodes'
// own --pool_mb decides, checked once joined.
absl::Status CheckPool(const TpccOptions& o, const OptionNaming& naming) {
  if (o.over_verbs()) return absl::OkStatus();
  const uint64_t need = o.PoolBytesNeeded();
  const uint64_t memory_nodes = o.fabric.memory_nodes;
  if (o.given.contains("pool_mb")) {
    const uint64_t need_mb = (need / memory_nodes >> 20) + 1;
    if (o.fabric.pool_bytes < (need_mb << 20)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is too small for %d warehouses: they need about %d MiB per "
          "memory node (load plus room for the run); raise --pool_mb or "
          "leave it unset",
          naming.Setting(kPoolMb, o.fabric.pool_bytes), o.warehouses, need_mb));
    }
    return absl::OkStatus();
  }
  if (need > MachineMemoryBytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s (of --items=%d, --customers=%d) need about %d MiB of pool, more "
        "than this machine's %d MiB: lower --warehouses",
        naming.Setting(kWarehouses, o.warehouses), o.items, o.customers,
        need >> 20, MachineMemoryBytes() >> 20));
  }
  return absl::OkStatus();
}

// --fail_node's NODE@SECONDS.
absl::StatusOr<TpccOptions::NodeFailure> ParseNodeFailure(
    const std::string& text, const OptionNaming& naming) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '@');
  TpccOptions::NodeFailure f;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &f.node) ||
      !absl::SimpleAtod(parts[1], &f.at_s) || f.node < 0 ||
      !std::isfinite(f.at_s) || f.at_s <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Setting(kFailNode, text),
        " is not NODE@SECONDS: give the compute node that fails and the "
        "seconds (above 0) into the measured run when it does, e.g. "
        "--fail_node=1@10"));
  }
  return f;
}

// --failover, and the failure a run injects: only what the engine builds
// (docs/design/node_failure.md, "Status"), placed inside the run.
absl::Status CheckFailover(const TpccOptions& o, const OptionNaming& naming) {
  if (o.given.contains("rejoin_after_s") && o.fail_node.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(naming.Name(kRejoinAfter), " needs ",
                     naming.Name(kFailNode), "=N@T (the failure it ends)"));
  }
  for (const OptionSetting& s : {kNodeLease, kRedoRing, kFailNode, kRejoin}) {
    if (!o.failover && o.given.contains(std::string(s.flag))) {
      return absl::InvalidArgumentError(absl::StrCat(
          naming.Name(s), " needs ", naming.Name(kFailover),
          " (a compute node's failure is survived only with failover on)"));
    }
  }
  if (!o.failover) return absl::OkStatus();
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kNodeLease, o.node_lease_ms, 8, 60000, "ms"));
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kRedoRing, o.redo_ring_mb, 1,
                                      1024, "MiB per compute node"));
  if (o.over_verbs() && o.mode == "partitioned") {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Name(kFailover),
        " across processes runs in shared mode only: partitioned mode's "
        "reclaim of a failed process is not built yet; drop --mode=partitioned "
        "or ",
        naming.Name(kFailover)));
  }
  if (o.over_verbs() && !o.fail_node.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Name(kFailNode),
        " injects a failure into a node of this process; across processes, "
        "kill a compute process instead (scripts/launch.sh keeps the others "
        "running with ",
        naming.Name(kFailover), ")"));
  }
  if (o.rejoin) {
    if (!o.over_verbs()) {
      return absl::InvalidArgumentError(absl::StrCat(
          naming.Name(kRejoin),
          " restarts a compute process of a verbs deployment (--fabric=verbs "
          "--cluster); in one process, --fail_node with --rejoin_after_s"));
    }
    if (o.fabric.node_id == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          naming.Name(kRejoin),
          " with --node_id=0: compute node 0 creates, combines and checks "
          "the run, and its process must survive"));
    }
    if (o.logging()) {
      return absl::InvalidArgumentError(absl::StrCat(
          naming.Name(kRejoin),
          " with --wal=on: a rejoined node's log would go on after the "
          "records its reclaimer excluded, which recovery does not read yet; "
          "rejoin without a log"));
    }
  }
  if (o.logging() && !o.ResolvedWal().early_lock_release) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Name(kFailover),
        " with --wal=on needs early lock release (the durable watermark's "
        "node marks tell a survivor which of a failed node's commits to log "
        "again): drop --wal_pipeline=0 or add --wal_early_lock_release"));
  }
  if (o.fail_node.empty()) return absl::OkStatus();
  STRAND_ASSIGN_OR_RETURN(const TpccOptions::NodeFailure failure,
                          ParseNodeFailure(o.fail_node, naming));
  const std::string setting = naming.Setting(kFailNode, o.fail_node);
  if (o.fabric.compute_nodes < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(setting,
                     " needs at least 2 compute nodes (one survives to reclaim "
                     "the failed one): raise --compute_nodes"));
  }
  if (failure.node >= o.fabric.compute_nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: there is no compute node %d: use 0 to %d (--compute_nodes=%d)",
        setting, failure.node, o.fabric.compute_nodes - 1,
        o.fabric.compute_nodes));
  }
  if (o.txns > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        setting,
        " places the failure in time: it needs a run of --duration_s, "
        "not --txns"));
  }
  if (failure.at_s >= o.duration_s) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the failure at %g s falls after the measured run's end "
        "(--duration_s=%g): fail it earlier or run longer",
        setting, failure.at_s, o.duration_s));
  }
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kRejoinAfter, o.rejoin_after_s,
                                      0.0, 86400.0, "seconds (0: never)"));
  if (o.rejoin_after_s == 0) return absl::OkStatus();
  if (failure.at_s + o.rejoin_after_s >= o.duration_s) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the rejoin at %g s (%s) falls after the measured run's end "
        "(--duration_s=%g): rejoin sooner or run longer",
        naming.Setting(kRejoinAfter, o.rejoin_after_s),
        failure.at_s + o.rejoin_after_s, setting, o.duration_s));
  }
  if (o.epochs_in_pool) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Name(kRejoinAfter),
        ": a compute node's rejoin with --epochs_in_pool is not built yet "
        "(the pool's epoch ticker keeps a thread context of every node): "
        "drop one of them"));
  }
  return absl::OkStatus();
}

// --check_image opens an image and checks it: no run, no fabric of its own.
absl::Status CheckImageMode(const TpccOptions& o, const OptionNaming& naming) {
  for (absl::string_view flag : kRunOnlyFlags) {
    if (o.given.contains(std::string(flag))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " has no effect with ", naming.Name(kCheckImage),
          ", which only opens the image and checks it (it takes "
          "--warehouses, --items, --customers, --seed and --acked_log): "
          "drop it"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TpccOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(CheckChoices(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckSizes(*this, naming));
  if (!check_image.empty()) return CheckImageMode(*this, naming);
  STRAND_RETURN_IF_ERROR(CheckRun(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckPeers(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckWal(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckFailover(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckPool(*this, naming));
  // Last, what the engine checks of its own options (the fabric's, the
  // cache's, partitioned mode's), as the binary's flags.
  return EngineOptionsForRun().Validate(
      naming.uses_flags() ? OptionNaming::Flags("EngineOptions::")
                          : naming.Member("engine"));
}

txn::CcAlgorithm TpccOptions::algorithm() const {
  return *txn::ParseCcAlgorithm(cc);
}
cc::Protocol TpccOptions::coherence() const {
  return *cc::ParseProtocol(protocol);
}
engine::EngineMode TpccOptions::engine_mode() const {
  return *engine::ParseEngineMode(mode);
}
Mix TpccOptions::transaction_mix() const { return *Mix::Parse(mix); }
std::optional<TpccOptions::NodeFailure> TpccOptions::node_failure() const {
  if (fail_node.empty()) return std::nullopt;
  return *ParseNodeFailure(fail_node, OptionNaming::Flags("TpccOptions::"));
}
HomeWarehouse TpccOptions::home() const {
  return home_warehouse == "random" ? HomeWarehouse::kRandom
                                    : HomeWarehouse::kPerThread;
}
Scale TpccOptions::scale() const {
  Scale s;
  s.items = items;
  s.customers = customers;
  return s;
}

TpccOptions::WalPlan TpccOptions::ResolvedWal() const {
  WalPlan plan;
  if (!logging()) return plan;
  // Pipelined by default on any deployment: early lock release is safe on
  // any number of compute nodes (docs/design/durable_acks.md).
  plan.pipeline =
      wal_pipeline >= 0
          ? wal_pipeline
          : static_cast<int>(engine::Session::kDefaultMaxUnacknowledged);
  plan.early_lock_release = wal_early_lock_release || plan.pipeline > 0;
  // Pipelined commits wait for nobody's flush: a window of fewer, larger
  // flushes costs less CPU. A waiting commit's latency is the flush's.
  plan.group_commit_us = wal_group_commit_us >= 0 ? wal_group_commit_us
                         : plan.pipeline > 0      ? 1000
                                                  : 0;
  return plan;
}

bool HoldsEarlierRun(const std::string& wal_dir) {
  if (wal_dir.empty()) return false;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(wal_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("node-") || name.starts_with("checkpoint-")) {
      return true;
    }
  }
  return false;
}

engine::WalOptions TpccOptions::WalOptionsForRun() const {
  engine::WalOptions log;
  if (!logging()) return log;
  const WalPlan plan = ResolvedWal();
  log.dir = wal_dir;
  log.early_lock_release = plan.early_lock_release;
  log.group_commit_window = absl::Microseconds(plan.group_commit_us);
  log.segment_bytes = static_cast<uint64_t>(wal_segment_mb) << 20;
  return log;
}

uint64_t TpccOptions::PoolBytesNeeded() const {
  return PoolBytesFor(warehouses, scale(), /*run_bytes=*/0);
}

void TpccOptions::SizePool() {
  if (over_verbs() || given.contains("pool_mb")) return;
  // What the run asked for inserts at most: --txns transactions, or
  // --duration_s seconds, plus the warm-up, on every worker thread.
  const double threads_all =
      static_cast<double>(threads) * std::max(1, fabric.compute_nodes);
  double run_bytes = warmup_s * threads_all * kRunBytesPerThreadSecond;
  run_bytes += txns > 0 ? txns * kRunBytesPerTxn
                        : duration_s * threads_all * kRunBytesPerThreadSecond;
  const uint64_t need = PoolBytesNeeded();
  const uint64_t want =
      std::max(need, std::min(PoolBytesFor(warehouses, scale(), run_bytes),
                              cc::AvailableMemoryBytes() / 2));
  const uint64_t memory_nodes = std::max(1, fabric.memory_nodes);
  const uint64_t pool_mb =
      std::max<uint64_t>(256, (want / memory_nodes >> 20) + 1);
  fabric.pool_bytes = pool_mb * rdma::FabricOptions::kMiB;
}

engine::EngineOptions TpccOptions::EngineOptionsForRun() const {
  engine::EngineOptions options;
  options.fabric = fabric;
  options.fabric.join_running = rejoin;
  options.cc.protocol = coherence();
  options.cc.gcl_size = gcl_size;
  options.cc.prefetch = cpu_path.prefetch;
  options.cc.identity_frames = cpu_path.identity_frames;
  options.cc.cache_bytes =
      cache_mb != 0
          ? cache_mb << 20
          : cc::AutoCacheBytes(
                CacheBytesWanted(warehouses, threads, fabric.compute_nodes,
                                 home() == HomeWarehouse::kRandom, scale()),
                gcl_size,
                cc::AutoCacheCapBytes(cc::AvailableMemoryBytes(),
                                      local_compute_nodes()));
  options.algorithm = algorithm();
  options.index = cpu_path.tuning;
  options.validate_index_reads = validate_index_reads;
  options.optimistic_tuple_reads = optimistic_tuple_reads;
  options.heap.unlocked_inserts = unlocked_inserts;
  options.epochs_in_pool = epochs_in_pool;
  options.retry.max_retries = 100000;
  options.mode = engine_mode();
  options.partitioned.partitions = warehouses;
  options.partitioned.one_phase_local = twopc_one_phase_local;
  options.partitioned.read_only_vote = twopc_read_only_vote;
  options.partitioned.parallel_prepare = twopc_parallel_prepare;
  options.checkpoint_interval = absl::Seconds(checkpoint_interval_s);
  options.checkpoint_read_mb_per_s = checkpoint_read_mb_per_s;
  options.failover.enabled = failover;
  options.failover.node_lease = absl::Milliseconds(node_lease_ms);
  options.failover.redo_ring_bytes = static_cast<uint64_t>(redo_ring_mb) << 20;
  if (resumes) {
    // Recover the earlier run and carry on logging in the same directory
    // (engine/recovery.h): the engine opens with the log running. A run
    // logged before checkpoints existed starts from its load image.
    options.recover_wal_dir = wal_dir;
    options.wal = WalOptionsForRun();
    const std::string image = wal_dir + "/load.img";
    std::error_code ec;
    if (std::filesystem::exists(image, ec)) options.image_path = image;
  }
  return options;
}

void TpccOptions::AddJson(JsonLine& json) const {
  const Mix m = transaction_mix();
  const WalPlan log = ResolvedWal();
  json.Add("cc", cc)
      .Add("protocol", protocol)
      .Add("warehouses", warehouses)
      .Add("threads", threads)
      .Add("mix", mix == "standard" ? "standard:" + m.ToString() : m.ToString())
      .Add("remote_neworder", remote_neworder)
      .Add("home_warehouse", home_warehouse)
      .Add("gcl_size", static_cast<uint64_t>(gcl_size))
      .Add("cache_sizing", cache_mb == 0 ? "auto" : "flag")
      .Add("prefetch", cc::PrefetchScopeName(cpu_path.prefetch))
      .Add("index_leaf_hint", cpu_path.tuning.leaf_hint)
      .Add("index_word_search", cpu_path.tuning.word_search)
      .Add("index_leaf_walk", cpu_path.tuning.leaf_walk)
      .Add("optimistic_reads", cpu_path.tuning.optimistic_reads)
      .Add("optimistic_tuple_reads", optimistic_tuple_reads)
      .Add("unlocked_inserts", unlocked_inserts)
      .Add("identity_frames", cpu_path.identity_frames)
      .Add("seed", seed)
      .Add("validate_index_reads", validate_index_reads)
      .Add("epochs_in_pool", epochs_in_pool)
      .Add("warmup_s", warmup_s)
      .Add("txns", txns)
      .Add("wal", wal)
      .Add("wal_dir", wal_dir)
      .Add("wal_early_lock_release", log.early_lock_release)
      .Add("wal_pipeline", static_cast<int64_t>(log.pipeline))
      .Add("wal_group_commit_us", static_cast<int64_t>(log.group_commit_us))
      .Add("wal_segment_mb", static_cast<int64_t>(wal_segment_mb))
      .Add("checkpoint_interval_s", checkpoint_interval_s)
      .Add("checkpoint_read_mb_per_s", checkpoint_read_mb_per_s)
      .Add("acked_log", acked_log)
      .Add("delivery_results", delivery_results)
      .Add("memory_breakdown", memory_breakdown)
      .Add("peer_timeout_s", peer_timeout_s)
      .Add("items", items)
      .Add("customers_per_district", customers)
      .Add("mode", mode)
      .Add("distributed_pct", distributed_pct)
      .Add("twopc_one_phase_local", twopc_one_phase_local)
      .Add("twopc_read_only_vote", twopc_read_only_vote)
      .Add("twopc_parallel_prepare", twopc_parallel_prepare)
      .Add("failover", failover)
      .Add("node_lease_ms", node_lease_ms)
      .Add("redo_ring_mb", redo_ring_mb)
      .Add("fail_node", fail_node)
      .Add("rejoin_after_s", rejoin_after_s)
      .Add("rejoin", rejoin);
}

}  // namespace strand::tpcc
