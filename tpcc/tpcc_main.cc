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
//   tpcc --compute_nodes=4 --failover --fail_node=1@10 --rejoin_after_s=10
//        --duration_s=30 --progress_json=/tmp/per-second.jsonl
//
// With --wal=on the load runs unlogged, then every commit is logged under
// <wal_dir>/node-<id> and compute node 0 checkpoints the load into
// <wal_dir>/checkpoint-<n>/ (and again every --checkpoint_interval_s,
// truncating the logs; docs/design/checkpoints.md). After a crash, the
// same command carries on from the recovered run (one process), or
//   strand_recover --wal_dir=<wal_dir> --out_image=recovered.img
// rebuilds the database (the checkpoint records the pool's layout), and
//   tpcc --check_image=recovered.img --acked_log=... --warehouses=N
// checks it.

#include <gflags/gflags.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/command_line.h"
#include "base/run_output.h"
#include "index/cpu_path_flags.h"
#include "rdma/fabric_flags.h"
#include "rdma/verbs/cluster_config.h"
#include "tpcc/tpcc_options.h"
#include "tpcc/tpcc_run.h"

namespace {
// Every flag's default is the options struct's (tpcc/tpcc_options.h).
const strand::tpcc::TpccOptions kDefaults;
}  // namespace

DEFINE_int32(warehouses, kDefaults.warehouses,
             "TPC-C warehouses to load (>= 1)");
DEFINE_int32(threads, kDefaults.threads,
             "Worker threads per compute node (each gets a home warehouse; "
             "also the load threads)");
DEFINE_string(cc, kDefaults.cc.c_str(),
              "Concurrency control: 2pl (no-wait), to or occ");
DEFINE_string(protocol, kDefaults.protocol.c_str(),
              "Coherence protocol: selcc (cached) or sel (no cache)");
DEFINE_uint32(gcl_size, kDefaults.gcl_size,
              "Bytes of one global cache line (latch word included): a "
              "multiple of 64 from 704 (a CUSTOMER row fits) to 65536");
DEFINE_uint64(cache_mb, kDefaults.cache_mb,
              "GCL cache per compute node, in MiB (SELCC). 0 (default): "
              "sized for the warehouses the node works on (its threads' home "
              "warehouses, all of them with --home_warehouse=random) plus "
              "ITEM, with room for the rows the run inserts, at most a "
              "quarter of the memory available split among the compute "
              "nodes of this process; the report prints the size used");
DEFINE_string(mix, kDefaults.mix.c_str(),
              "Transaction mix: standard (45/43/4/4/4), one type (new_order, "
              "payment, order_status, delivery, stock_level) or 5 weights "
              "summing to 100 (e.g. 50,50,0,0,0)");
DEFINE_string(home_warehouse, kDefaults.home_warehouse.c_str(),
              "Warehouse of each transaction: thread (thread i of the "
              "deployment works on warehouse i mod W + 1, as a TPC-C "
              "terminal) or random (drawn per transaction, so every "
              "warehouse is shared by all nodes' threads: the SELCC paper's "
              "shape)");
DEFINE_double(remote_neworder, kDefaults.remote_neworder,
              "Share (0..1) of New-Orders with one remote supply warehouse; "
              "negative: the specification's 1% per order line");
DEFINE_string(mode, kDefaults.mode.c_str(),
              "shared: every compute node reaches every warehouse (SELCC "
              "keeps the caches coherent); partitioned: each node owns a "
              "contiguous range of warehouses, work on another node's "
              "warehouse is shipped to it and distributed transactions "
              "commit with two-phase commit (2PL only)");
DEFINE_double(distributed_pct, kDefaults.distributed_pct,
              "Percent (0..100) of New-Orders with one supply warehouse, and "
              "of Payments with a customer, at a warehouse of another "
              "compute node: the distributed transactions of the "
              "shared-vs-partitioned comparison. Terminals are homed at "
              "their node's warehouses (the ranges partitioned mode uses), "
              "in both modes. Negative: the specification's rates (1% of "
              "order lines, 15% of Payments at any other warehouse)");
DEFINE_bool(twopc_one_phase_local, kDefaults.twopc_one_phase_local,
            "Partitioned mode: a transaction that touched only its own node "
            "commits in one phase (false: a forced prepare, then a forced "
            "decision, as the SELCC authors' 2PC)");
DEFINE_bool(twopc_read_only_vote, kDefaults.twopc_read_only_vote,
            "Partitioned mode: a participant that wrote nothing votes "
            "read-only, logs nothing and skips the second phase");
DEFINE_bool(twopc_parallel_prepare, kDefaults.twopc_parallel_prepare,
            "Partitioned mode: PREPARE goes to all participants at once "
            "(false: one after another)");
DEFINE_double(duration_s, kDefaults.duration_s,
              "Seconds of measured run (not with --txns)");
DEFINE_uint64(txns, kDefaults.txns,
              "If > 0: run this many measured transactions instead "
              "of --duration_s");
DEFINE_double(warmup_s, kDefaults.warmup_s,
              "Seconds run before measuring starts");
DEFINE_uint64(seed, kDefaults.seed,
              "Seed of the load and of the run's random inputs");
DEFINE_int32(items, kDefaults.items,
             "ITEM rows (and STOCK rows per warehouse); scale-down for tests");
DEFINE_int32(customers, kDefaults.customers,
             "Customers (and initial orders) per district; scale-down for "
             "tests");
DEFINE_string(wal, kDefaults.wal.c_str(),
              "Write-ahead log: off, or on (every committing transaction is "
              "acknowledged only once its redo record is durable in "
              "--wal_dir; the load is unlogged, then checkpointed into "
              "<wal_dir>/checkpoint-<n>/ by compute node 0 before the run)");
DEFINE_string(wal_dir, kDefaults.wal_dir.c_str(),
              "Directory of the log (one node-<id>/ per compute node) and of "
              "the checkpoints; required with --wal=on. If it holds a "
              "previous run's checkpoints and logs, that run is recovered "
              "and this one carries on in the same directory instead of "
              "loading (give the same --warehouses, --items, --customers; "
              "one process only). In a cluster each process logs to its own "
              "host's directory: to recover, gather every node-<id>/ next "
              "to the checkpoints");
DEFINE_double(checkpoint_interval_s, kDefaults.checkpoint_interval_s,
              "With --wal=on: also take a fuzzy checkpoint every N seconds "
              "while the run goes on, then truncate the logs before the "
              "older of the two kept (docs/design/checkpoints.md); 0: only "
              "the one after the load");
DEFINE_double(checkpoint_read_mb_per_s, kDefaults.checkpoint_read_mb_per_s,
              "With --wal=on: rate limit of a checkpoint's copy, in MiB/s of "
              "tuples and index entries (0: none)");
DEFINE_int32(wal_segment_mb, kDefaults.wal_segment_mb,
             "With --wal=on: size of a log segment file in MiB, the unit in "
             "which logs are truncated after a checkpoint");
DEFINE_bool(wal_early_lock_release, kDefaults.wal_early_lock_release,
            "With --wal=on: release a committing transaction's latches when "
            "its log record is appended instead of when it is durable (the "
            "call still returns only once it, and every commit it may depend "
            "on, is durable: acknowledgement by the cluster's durable "
            "watermark, docs/design/durable_acks.md). Shortens lock hold "
            "times by the fdatasync. Implied by --wal_pipeline > 0");
DEFINE_int32(wal_pipeline, kDefaults.wal_pipeline,
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
DEFINE_int32(wal_group_commit_us, kDefaults.wal_group_commit_us,
             "With --wal=on: group-commit window in microseconds; the log "
             "flusher starts a flush no sooner than this after the previous "
             "one, so one fdatasync serves every commit of the window. "
             "-1 (default): 1000 when commits are pipelined (nobody waits "
             "for a flush, fewer flushes cost less CPU), else 0 (flush at "
             "once: a waiting commit's latency)");
DEFINE_string(acked_log, kDefaults.acked_log.c_str(),
              "Append (warehouse, district, order id) of every New-Order to "
              "this file when it is acknowledged (its call returned OK, or "
              "with --wal_pipeline its commit became durable), one 16-byte "
              "record per write(2) (tpcc/acked_log.h); for crash tests. "
              "Over verbs each compute process writes <file>.node-<id>");
DEFINE_string(delivery_results, kDefaults.delivery_results.c_str(),
              "Append one line per executed deferred Delivery to this file: "
              "when it was queued and completed, warehouse, carrier, and per "
              "district the order delivered or '-' if skipped (clause "
              "2.7.2.2, tpcc/delivery_result_file.h)");
DEFINE_bool(memory_breakdown, kDefaults.memory_breakdown,
            "After the load and again after the run, print the GCLs of "
            "every table and index and the indexes' leaf fill (walks every "
            "index node)");
DEFINE_double(peer_timeout_s, kDefaults.peer_timeout_s,
              "Verbs: a compute process whose heartbeat on the cluster board "
              "stops for this long is reported (by node id and address) and "
              "every other compute process stops with exit status 1");
DEFINE_bool(optimistic_tuple_reads, kDefaults.optimistic_tuple_reads,
            "Transactions (2PL, OCC) read tuples they do not write with no "
            "latch where the page is cached, and check them at commit "
            "instead of holding a shared latch (2PL) or taking a short one "
            "(OCC); serializable either way. false: latch every read (the "
            "ablation)");
DEFINE_bool(unlocked_inserts, kDefaults.unlocked_inserts,
            "An insert into the thread's own page of a table, with no "
            "released slot waiting, takes no table-wide lock; false: every "
            "insert takes the table's mutex (the ablation)");
DEFINE_bool(validate_index_reads, kDefaults.validate_index_reads,
            "Validate at commit the index leaves every lookup and scan read, "
            "which makes scans and absent-key lookups serializable. "
            "--novalidate_index_reads only measures what that costs: "
            "phantoms become possible, and Delivery and Order-Status may "
            "read a range another transaction changes");
DEFINE_bool(epochs_in_pool, kDefaults.epochs_in_pool,
            "Deleted rows' slots (Delivery's NEW-ORDER rows) wait for "
            "readers through the memory pool's epoch words, as they do "
            "anyway when compute nodes run in separate processes, even when "
            "this process hosts every node (EngineOptions::epochs_in_pool): "
            "to measure what that protocol costs");
DEFINE_bool(failover, kDefaults.failover,
            "Survive a compute node's failure (docs/design/node_failure.md; "
            "SELCC): every commit writes its lines through to memory behind "
            "a record in its node's redo ring, the nodes renew leases, and a "
            "survivor fences and reclaims a node whose lease expired while "
            "the others go on. In one process (--fail_node injects the "
            "failure), or over verbs across processes in shared mode (kill "
            "one; compute node 0 must survive; scripts/launch.sh keeps the "
            "others, and with --restart_after_s restarts it: --rejoin; a "
            "process that paused past its lease finds itself fenced and "
            "stops with exit status 3, which the launcher treats alike). "
            "With --wal=on it needs early lock release (the "
            "default pipelining has it)");
DEFINE_int32(node_lease_ms, kDefaults.node_lease_ms,
             "With --failover: a compute node that has not renewed its lease "
             "for this many ms is declared failed (8 to 60000)");
DEFINE_int32(redo_ring_mb, kDefaults.redo_ring_mb,
             "With --failover: MiB of each compute node's redo ring in the "
             "memory pool, holding its commits' records until its log made "
             "them durable (1 to 1024)");
DEFINE_string(fail_node, kDefaults.fail_node.c_str(),
              "With --failover: N@T fails compute node N (as a kill -9 of it "
              "alone) T seconds into the measured run; its threads' calls "
              "fail and are counted apart from the run's errors, the "
              "survivors go on (partitioned mode: their calls that need its "
              "warehouses fail too, counted apart). --duration_s, 2 compute "
              "nodes or more. The report gives detection, reclaim and "
              "recovery times");
DEFINE_double(rejoin_after_s, kDefaults.rejoin_after_s,
              "With --fail_node: the failed node rejoins (empty cache, its "
              "threads open new sessions) this many seconds after its "
              "failure; 0: never");
DEFINE_bool(rejoin, kDefaults.rejoin,
            "With --failover over verbs: this process restarts compute node "
            "--node_id (not 0) of a deployment that is running, after its "
            "process was killed: it waits until the others reclaimed the "
            "node, joins without a start-up barrier or a load, runs "
            "--duration_s and reports to compute node 0 "
            "(scripts/launch.sh --restart_after_s does it). Without a log");
DEFINE_string(check_image, kDefaults.check_image.c_str(),
              "Instead of loading and running: open this pool image (a "
              "recovered one: strand_recover --out_image), check the "
              "consistency conditions 1-12 and, with --acked_log=FILE, that "
              "every New-Order acknowledged in FILE and FILE.node-<id> is "
              "there whole. --warehouses, --items and --customers must be the "
              "run's. Exit status 0 when everything holds, 1 when not");

namespace strand::tpcc {
namespace {

// Compute nodes of the whole deployment: over verbs, the cluster file's.
int DeploymentComputeNodes(const rdma::FabricOptions& fabric) {
  if (fabric.kind != rdma::FabricKind::kVerbs) return fabric.compute_nodes;
  auto cluster = rdma::verbs::ClusterConfig::Load(fabric.cluster_file);
  if (!cluster.ok()) {
    // Its messages name the file; a missing one, by the flag already.
    const absl::string_view message = cluster.status().message();
    ExitWithUsageError(
        absl::StrContains(message, "--cluster")
            ? std::string(message)
            : absl::StrCat("--cluster=", fabric.cluster_file, ": ", message));
  }
  return static_cast<int>(cluster->compute_nodes.size());
}

// The options from the flags, sized and validated: exits with status 2
// naming the flag on any misuse, before anything is opened or loaded.
TpccOptions OptionsFromFlags() {
  TpccOptions o;
  o.warehouses = FLAGS_warehouses;
  o.items = FLAGS_items;
  o.customers = FLAGS_customers;
  o.seed = FLAGS_seed;
  o.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  o.threads = FLAGS_threads;
  o.cc = FLAGS_cc;
  o.protocol = FLAGS_protocol;
  o.mode = FLAGS_mode;
  o.gcl_size = FLAGS_gcl_size;
  o.cache_mb = FLAGS_cache_mb;
  o.cpu_path = ValueOrExitIfUsageError(index::CpuPathSwitchesFromFlags());
  o.optimistic_tuple_reads = FLAGS_optimistic_tuple_reads;
  o.unlocked_inserts = FLAGS_unlocked_inserts;
  o.validate_index_reads = FLAGS_validate_index_reads;
  o.epochs_in_pool = FLAGS_epochs_in_pool;
  o.twopc_one_phase_local = FLAGS_twopc_one_phase_local;
  o.twopc_read_only_vote = FLAGS_twopc_read_only_vote;
  o.twopc_parallel_prepare = FLAGS_twopc_parallel_prepare;
  o.peer_timeout_s = FLAGS_peer_timeout_s;
  o.mix = FLAGS_mix;
  o.home_warehouse = FLAGS_home_warehouse;
  o.remote_neworder = FLAGS_remote_neworder;
  o.distributed_pct = FLAGS_distributed_pct;
  o.duration_s = FLAGS_duration_s;
  o.txns = FLAGS_txns;
  o.warmup_s = FLAGS_warmup_s;
  o.wal = FLAGS_wal;
  o.wal_dir = FLAGS_wal_dir;
  o.wal_early_lock_release = FLAGS_wal_early_lock_release;
  o.wal_pipeline = FLAGS_wal_pipeline;
  o.wal_group_commit_us = FLAGS_wal_group_commit_us;
  o.checkpoint_interval_s = FLAGS_checkpoint_interval_s;
  o.checkpoint_read_mb_per_s = FLAGS_checkpoint_read_mb_per_s;
  o.wal_segment_mb = FLAGS_wal_segment_mb;
  o.acked_log = FLAGS_acked_log;
  o.delivery_results = FLAGS_delivery_results;
  o.memory_breakdown = FLAGS_memory_breakdown;
  o.check_image = FLAGS_check_image;
  o.failover = FLAGS_failover;
  o.rejoin = FLAGS_rejoin;
  o.node_lease_ms = FLAGS_node_lease_ms;
  o.redo_ring_mb = FLAGS_redo_ring_mb;
  o.fail_node = FLAGS_fail_node;
  o.rejoin_after_s = FLAGS_rejoin_after_s;
  o.given = FlagsGiven();
  o.deployment_compute_nodes = DeploymentComputeNodes(o.fabric);
  o.resumes = o.logging() && HoldsEarlierRun(o.wal_dir);
  o.SizePool();
  ExitIfUsageError(o.Validate(OptionNaming::Flags("TpccOptions::")));
  return o;
}

int Main() {
  RunOutput output = RunOutput::FromFlags({.per_second_series = true});
  const TpccOptions options = OptionsFromFlags();
  if (!options.check_image.empty()) return CheckImage(options, output);
  return TpccRun(options, output).Run();
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
      "[--wal_pipeline=N] [--wal_early_lock_release] "
      "[--checkpoint_interval_s=S]] [--acked_log=FILE] "
      "[--failover --fail_node=N@T [--rejoin_after_s=S]] "
      "[--json|--csv] [--progress_json=FILE]");
  // Debian builds abseil without NDEBUG, which leaves absl::Mutex's
  // deadlock detector on: a graph update on every lock, ~200 instructions
  // per heap insert in the CPU-path profile. It is a debugging aid; the
  // tests keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return strand::tpcc::Main();
}
