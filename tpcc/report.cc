#include "tpcc/report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "txn/abort_reason.h"

namespace strand::tpcc {
namespace {

double PerTxn(uint64_t v, uint64_t txns) {
  return txns == 0 ? 0 : static_cast<double>(v) / txns;
}

double BytesPerWarehouse(const RunConfig& c, const LoadResult& l) {
  const int warehouses = c.options.warehouses;
  return warehouses == 0 ? 0
                         : static_cast<double>(l.pool_bytes_used) / warehouses;
}

// Raw bytes of the loaded rows (ITEM included), per warehouse.
double RawPerWarehouse(const RunConfig& c) {
  const Scale scale = c.options.scale();
  return RawBytes::PerWarehouse(scale) +
         static_cast<double>(RawBytes::Items(scale)) / c.options.warehouses;
}

}  // namespace

void PrintLoad(std::ostream& out, const RunConfig& c, const LoadResult& l) {
  out << absl::StrFormat(
      "load: %d warehouses, %llu rows in %llu transactions, %.2f s "
      "(%.0f rows/s)\n"
      "memory: %.1f MiB of the pool (%.1f MiB per warehouse, ITEM shared); "
      "raw TPC-C tuple bytes %.1f MiB per warehouse: %.2fx\n",
      c.options.warehouses, static_cast<unsigned long long>(l.rows),
      static_cast<unsigned long long>(l.transactions), l.seconds,
      l.rows / std::max(l.seconds, 1e-9), l.pool_bytes_used / 1048576.0,
      BytesPerWarehouse(c, l) / 1048576.0, RawPerWarehouse(c) / 1048576.0,
      BytesPerWarehouse(c, l) / RawPerWarehouse(c));
}

namespace {

// Partitioned mode's lines: who owns what, how distributed the committed
// transactions were, and what two-phase commit cost them.
void PrintPartitioned(std::ostream& out, const RunConfig& c,
                      const RunResult& r) {
  const partition::PartitionStats& p = r.partition;
  const uint64_t txns = p.transactions;
  out << absl::StrFormat(
      "partitioned: %s; switches one_phase_local=%d read_only_vote=%d "
      "parallel_prepare=%d; distributed_pct=%s\n",
      c.owners, c.options.twopc_one_phase_local, c.options.twopc_read_only_vote,
      c.options.twopc_parallel_prepare,
      c.options.distributed_pct < 0
          ? std::string("spec rates")
          : absl::StrFormat("%g", c.options.distributed_pct));
  out << absl::StrFormat(
      "2pc: %.1f%% of committed txns distributed, %.2f participants per "
      "distributed txn, %.2f attempts aborted per commit\n",
      100 * PerTxn(p.distributed, txns), PerTxn(p.participants, p.distributed),
      PerTxn(p.aborted, txns));
  out << absl::StrFormat(
      "2pc messages per committed txn: %.2f requests, %.2f replies, %.2f "
      "prepares, %.2f votes (%.2f read-only), %.2f commits, %.2f aborts, "
      "%.2f acks; %.2f forced log writes\n",
      PerTxn(p.requests, txns), PerTxn(p.replies, txns),
      PerTxn(p.prepares, txns), PerTxn(p.votes, txns),
      PerTxn(p.read_only_votes, txns), PerTxn(p.commits, txns),
      PerTxn(p.aborts, txns), PerTxn(p.acks, txns),
      PerTxn(p.forced_writes, txns));
  out << absl::StrFormat(
      "2pc latency of a distributed commit: execute %.1f us, prepare %.1f us, "
      "commit %.1f us (means); latches held %.1f us by its coordinator, "
      "%.1f us by a participant branch\n",
      PerTxn(p.execute_ns, p.distributed) / 1e3,
      PerTxn(p.prepare_ns, p.distributed) / 1e3,
      PerTxn(p.commit_ns, p.distributed) / 1e3,
      PerTxn(p.coordinator_hold_ns, p.distributed) / 1e3,
      PerTxn(p.branch_hold_ns, p.branches_ended) / 1e3);
}

// What the run was: its settings, the log's and the CPU path's.
void PrintSettings(std::ostream& out, const RunConfig& c, double seconds) {
  const TpccOptions& o = c.options;
  if (c.processes > 1) {
    out << absl::StrFormat("%s (%d compute processes over %s):\n", c.scope,
                           c.processes, rdma::FabricKindName(o.fabric.kind));
  }
  out << absl::StrFormat(
      "run: cc=%s protocol=%s warehouses=%d compute_nodes=%d threads=%d/node "
      "mix=%s home_warehouse=%s rtt_ns=%d message_delivery=%s gcl_size=%d "
      "cache_mb=%d%s: %.2f s\n",
      o.cc, o.protocol, o.warehouses, c.compute_nodes, o.threads,
      o.transaction_mix().ToString(), o.home_warehouse, o.fabric.rtt_ns,
      rdma::MessageDeliveryName(o.fabric.message_delivery), o.gcl_size,
      c.cache_mb, o.cache_mb == 0 ? " (auto)" : "", seconds);
  const TpccOptions::WalPlan log = o.ResolvedWal();
  if (!o.logging()) {
    out << "wal: off\n";
  } else {
    out << absl::StrFormat(
        "wal: on, dir %s, early lock release %s, %s%s, group-commit window "
        "%d us\n",
        o.wal_dir, log.early_lock_release ? "on" : "off",
        log.pipeline > 0
            ? absl::StrFormat("pipelined acknowledgement (up to %d "
                              "unacknowledged commits per thread)",
                              log.pipeline)
            : std::string("every commit waits to be durable"),
        log.early_lock_release
            ? ", acknowledged by the cluster's durable watermark"
            : "",
        log.group_commit_us);
  }
  out << absl::StrFormat(
      "cpu path switches: prefetch=%s index_leaf_hint=%s "
      "index_word_search=%s index_leaf_walk=%s optimistic_reads=%s "
      "optimistic_tuple_reads=%s "
      "unlocked_inserts=%s identity_frames=%s\n",
      cc::PrefetchScopeName(o.cpu_path.prefetch),
      o.cpu_path.tuning.leaf_hint ? "true" : "false",
      o.cpu_path.tuning.word_search ? "true" : "false",
      o.cpu_path.tuning.leaf_walk ? "true" : "false",
      o.cpu_path.tuning.optimistic_reads ? "true" : "false",
      o.optimistic_tuple_reads ? "true" : "false",
      o.unlocked_inserts ? "true" : "false",
      o.cpu_path.identity_frames ? "true" : "false");
}

// Throughput, then commits, rollbacks, aborts and latency per type.
void PrintThroughput(std::ostream& out, const RunResult& r) {
  out << absl::StrFormat(
      "throughput: %.0f txn/s committed, %.0f New-Orders per minute (not a "
      "TPC-C tpmC: no keying or think time), abort rate %.2f%% (retried "
      "conflict/validation aborts / attempts)\n",
      r.txn_per_sec(), r.new_orders_per_minute(), 100 * r.abort_rate());
  out << absl::StrFormat("%-13s %10s %10s %9s %9s %8s %10s %10s\n", "type",
                         "commits", "txn/s", "rollbacks", "aborts", "abort%",
                         "p50_us", "p99_us");
  for (int t = 0; t < kTxnTypes; ++t) {
    const TypeResult& x = r.by_type[t];
    out << absl::StrFormat(
        "%-13s %10llu %10.0f %9llu %9llu %7.2f%% %10.1f %10.1f\n",
        TxnTypeName(t), static_cast<unsigned long long>(x.commits),
        x.commits / std::max(r.seconds, 1e-9),
        static_cast<unsigned long long>(x.user_aborts),
        static_cast<unsigned long long>(x.retried_aborts()),
        100 * x.abort_rate(), x.latency.Percentile(0.5) / 1e3,
        x.latency.Percentile(0.99) / 1e3);
  }
  const DeferredDeliveryStats& dd = r.deliveries;
  out << absl::StrFormat(
      "delivery (deferred, clause 2.7.2): %llu queued, %llu executed, %llu "
      "orders delivered, %llu districts skipped (%.2f%%); queued to done p50 "
      "%.1f us, p99 %.1f us\n",
      static_cast<unsigned long long>(dd.queued),
      static_cast<unsigned long long>(dd.executed),
      static_cast<unsigned long long>(dd.orders_delivered),
      static_cast<unsigned long long>(dd.districts_skipped),
      100.0 * PerTxn(dd.districts_skipped,
                     dd.orders_delivered + dd.districts_skipped),
      dd.queue_to_done.Percentile(0.5) / 1e3,
      dd.queue_to_done.Percentile(0.99) / 1e3);
}

// What a committed transaction cost: the fabric, the cache, the log.
void PrintCosts(std::ostream& out, const RunConfig& c, const RunResult& r) {
  const uint64_t txns = r.commits();
  out << absl::StrFormat(
      "fabric per committed txn: %.2f round trips, %.2f remote ops, %.2f "
      "messages, %.0f bytes\n",
      PerTxn(r.fabric.round_trips, txns), PerTxn(r.fabric.ops(), txns),
      PerTxn(r.fabric.messages_sent, txns),
      PerTxn(r.fabric.bytes_read + r.fabric.bytes_written, txns));
  out << absl::StrFormat(
      "cache: hit ratio %.3f; per txn %.1f latch acquisitions, %.1f "
      "unlatched reads, %.2f invalidations sent and %.2f evictions\n",
      r.cache.hit_ratio(), PerTxn(r.cache.locks(), txns),
      PerTxn(r.cache.optimistic_reads, txns),
      PerTxn(r.cache.invalidations_sent, txns),
      PerTxn(r.cache.evictions, txns));
  out << absl::StrFormat(
      "commit latency (call to acknowledged commit, all types, retries "
      "included): p50 %.1f us, p99 %.1f us\n",
      r.commit_latency.Percentile(0.5) / 1e3,
      r.commit_latency.Percentile(0.99) / 1e3);
  if (c.options.logging()) {
    out << absl::StrFormat(
        "wal: %llu commit records in %llu flushes (write + fdatasync): %.2f "
        "commits per flush, %.0f flushes/s, %.1f MiB written\n",
        static_cast<unsigned long long>(r.wal.records),
        static_cast<unsigned long long>(r.wal.flushes),
        r.wal.commits_per_flush(), r.wal.flushes / std::max(r.seconds, 1e-9),
        r.wal.bytes / 1048576.0);
  }
}

}  // namespace

void PrintRun(std::ostream& out, const RunConfig& c, const RunResult& r) {
  PrintSettings(out, c, r.seconds);
  PrintThroughput(out, r);
  PrintCosts(out, c, r);
  if (c.options.engine_mode() == engine::EngineMode::kPartitioned) {
    PrintPartitioned(out, c, r);
  }
  for (size_t n = 0; n < r.commits_by_node.size(); ++n) {
    out << absl::StrFormat("compute node %d: %.0f txn/s\n", n,
                           r.commits_by_node[n] / std::max(r.seconds, 1e-9));
  }
  r.cost().Print(out, "txn");
  if (r.failover.has_value()) PrintFailover(out, *r.failover);
  if (r.errors() > 0) {
    out << absl::StrFormat("errors: %llu calls failed; first: %s\n",
                           static_cast<unsigned long long>(r.errors()),
                           r.first_error);
  }
}

void PrintConsistency(std::ostream& out, const ConsistencyResult& c) {
  out << absl::StrFormat(
             "consistency (clause 3.3.2, conditions 1-12): %s "
             "(checked in %.2f s)\n",
             c.ok() ? "ok" : "FAILED", c.seconds)
      << c.ToString();
}

namespace {

// Per transaction type: commits, rollbacks, aborts, latency.
JsonLine PerTypeJson(const RunResult& r) {
  JsonLine per_type;
  for (int t = 0; t < kTxnTypes; ++t) {
    const TypeResult& x = r.by_type[t];
    JsonLine type;
    type.Add("commits", x.commits)
        .Add("txn_per_sec", x.commits / std::max(r.seconds, 1e-9))
        .Add("rollbacks", x.user_aborts)
        .Add("aborts", x.retried_aborts())
        .Add("abort_rate", x.abort_rate())
        .Add("errors", x.errors)
        .AddObject("aborts_by_reason", txn::AbortCountsJson(x.aborts));
    x.latency.AddTo(type, "", LatencyHistogram::Unit::kMicros);
    per_type.AddObject(TxnTypeName(t), type);
  }
  return per_type;
}

// Each condition of clause 3.3.2: rows (or warehouses, districts, ...)
// checked and found violating it, "condition_1" to "condition_12".
void AddConsistencyJson(const ConsistencyResult& c, JsonLine& j) {
  JsonLine checked, violations;
  for (int i = 0; i < ConsistencyResult::kConditions; ++i) {
    const std::string name = absl::StrCat("condition_", i + 1);
    checked.Add(name, c.checked[i]);
    violations.Add(name, c.violations[i]);
  }
  j.Add("consistency_ok", c.ok())
      .Add("consistency_seconds", c.seconds)
      .AddObject("consistency_checked", checked)
      .AddObject("consistency_violations", violations);
}

void AddPartitionedJson(const RunConfig& c, const RunResult& r, JsonLine& j) {
  const partition::PartitionStats& p = r.partition;
  const uint64_t txns = r.commits();
  j.Add("owners", c.owners)
      .Add("distributed_share", PerTxn(p.distributed, p.transactions))
      .Add("participants_per_distributed",
           PerTxn(p.participants, p.distributed))
      .Add("twopc_requests_per_txn", PerTxn(p.requests, txns))
      .Add("twopc_prepares_per_txn", PerTxn(p.prepares, txns))
      .Add("twopc_votes_per_txn", PerTxn(p.votes, txns))
      .Add("twopc_read_only_votes_per_txn", PerTxn(p.read_only_votes, txns))
      .Add("twopc_commits_per_txn", PerTxn(p.commits, txns))
      .Add("twopc_aborts_per_txn", PerTxn(p.aborts, txns))
      .Add("twopc_acks_per_txn", PerTxn(p.acks, txns))
      .Add("twopc_forced_writes_per_txn", PerTxn(p.forced_writes, txns))
      .Add("twopc_execute_us", PerTxn(p.execute_ns, p.distributed) / 1e3)
      .Add("twopc_prepare_us", PerTxn(p.prepare_ns, p.distributed) / 1e3)
      .Add("twopc_commit_us", PerTxn(p.commit_ns, p.distributed) / 1e3)
      .Add("twopc_coordinator_latch_hold_us",
           PerTxn(p.coordinator_hold_ns, p.distributed) / 1e3)
      .Add("twopc_branch_latch_hold_us",
           PerTxn(p.branch_hold_ns, p.branches_ended) / 1e3);
}

// The fabric, cache and log work per committed transaction.
void AddCostJson(const RunResult& r, JsonLine& j) {
  const uint64_t txns = r.commits();
  j.Add("round_trips_per_txn", PerTxn(r.fabric.round_trips, txns))
      .Add("remote_ops_per_txn", PerTxn(r.fabric.ops(), txns))
      .Add("messages_per_txn", PerTxn(r.fabric.messages_sent, txns))
      .Add("bytes_per_txn",
           PerTxn(r.fabric.bytes_read + r.fabric.bytes_written, txns))
      .Add("cache_hit_ratio", r.cache.hit_ratio())
      .Add("latches_per_txn", PerTxn(r.cache.locks(), txns))
      .Add("unlatched_reads_per_txn", PerTxn(r.cache.optimistic_reads, txns))
      .Add("invalidations_per_txn", PerTxn(r.cache.invalidations_sent, txns))
      .Add("evictions_per_txn", PerTxn(r.cache.evictions, txns))
      .Add("wal_records", r.wal.records)
      .Add("wal_flushes", r.wal.flushes)
      .Add("wal_commits_per_flush", r.wal.commits_per_flush())
      .Add("wal_bytes", r.wal.bytes);
}

}  // namespace

void AddJsonReport(const RunConfig& c, const LoadResult& l, const RunResult& r,
                   const ConsistencyResult& cons, JsonLine& j) {
  std::string nodes = "[";
  for (size_t n = 0; n < r.commits_by_node.size(); ++n) {
    nodes += absl::StrFormat("%s%.1f", n ? "," : "",
                             r.commits_by_node[n] / std::max(r.seconds, 1e-9));
  }
  nodes += "]";
  j.Add("bench", "tpcc");
  c.options.AddJson(j);
  j.Add("scope", c.scope)
      .Add("processes", c.processes)
      .Add("failed_processes", c.failed_processes)
      .Add("cache_mb", c.cache_mb)
      .Add("epochs", c.epochs)
      .Add("load_seconds", l.seconds)
      .Add("load_rows", l.rows)
      .Add("pool_bytes_used", l.pool_bytes_used)
      .Add("bytes_per_warehouse", BytesPerWarehouse(c, l))
      .Add("raw_bytes_per_warehouse", RawPerWarehouse(c))
      .Add("duration_s", r.seconds)
      .Add("commits", r.commits())
      .Add("txn_per_sec", r.txn_per_sec())
      .Add("new_orders_per_minute", r.new_orders_per_minute())
      .Add("abort_rate", r.abort_rate())
      .AddObject("aborts_by_reason", txn::AbortCountsJson(r.aborts()))
      .Add("errors", r.errors())
      .Add("calls_failed_by_node_failure", r.calls_failed_by_node_failure);
  AddCostJson(r, j);
  r.commit_latency.AddTo(j, "commit", LatencyHistogram::Unit::kMicros);
  j.Add("delivery_queued", r.deliveries.queued)
      .Add("delivery_executed", r.deliveries.executed)
      .Add("delivery_orders", r.deliveries.orders_delivered)
      .Add("delivery_skipped_districts", r.deliveries.districts_skipped);
  r.deliveries.queue_to_done.AddTo(j, "delivery_queue",
                                   LatencyHistogram::Unit::kMicros);
  j.AddRaw("txn_per_sec_by_node", nodes).AddObject("per_type", PerTypeJson(r));
  AddConsistencyJson(cons, j);
  AddPartitionedJson(c, r, j);
  r.cost().AddTo(j);
  if (r.failover.has_value()) AddFailoverJson(*r.failover, j);
}

}  // namespace strand::tpcc
