#include "tpcc/report.h"

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
  return c.warehouses == 0
             ? 0
             : static_cast<double>(l.pool_bytes_used) / c.warehouses;
}

// Raw bytes of the loaded rows (ITEM included), per warehouse.
double RawPerWarehouse(const RunConfig& c) {
  return RawBytes::PerWarehouse(c.scale) +
         static_cast<double>(RawBytes::Items(c.scale)) / c.warehouses;
}

}  // namespace

void PrintLoad(std::ostream& out, const RunConfig& c, const LoadResult& l) {
  out << absl::StrFormat(
      "load: %d warehouses, %llu rows in %llu transactions, %.2f s "
      "(%.0f rows/s)\n"
      "memory: %.1f MiB of the pool (%.1f MiB per warehouse, ITEM shared); "
      "raw TPC-C tuple bytes %.1f MiB per warehouse: %.2fx\n",
      c.warehouses, static_cast<unsigned long long>(l.rows),
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
      c.owners, c.twopc_one_phase_local, c.twopc_read_only_vote,
      c.twopc_parallel_prepare,
      c.distributed_pct < 0 ? std::string("spec rates")
                            : absl::StrFormat("%g", c.distributed_pct));
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

}  // namespace

void PrintRun(std::ostream& out, const RunConfig& c, const RunResult& r) {
  const uint64_t txns = r.commits();
  if (c.processes > 1) {
    out << absl::StrFormat("%s (%d compute processes over %s):\n", c.scope,
                           c.processes, c.fabric);
  }
  out << absl::StrFormat(
      "run: cc=%s protocol=%s warehouses=%d compute_nodes=%d threads=%d/node "
      "mix=%s home_warehouse=%s rtt_ns=%d message_delivery=%s gcl_size=%d "
      "cache_mb=%d%s: %.2f s\n",
      c.cc, c.protocol, c.warehouses, c.compute_nodes, c.threads_per_node,
      c.mix, c.home_warehouse, c.rtt_ns, c.message_delivery, c.gcl_size,
      c.cache_mb, c.cache_sizing == "auto" ? " (auto)" : "", r.seconds);
  out << absl::StrFormat(
      "wal: %s%s%s%s\n", c.wal ? "on, dir " : "off", c.wal ? c.wal_dir : "",
      c.wal ? (c.wal_early_lock_release ? ", early lock release on"
                                        : ", early lock release off")
            : "",
      c.wal ? (c.wal_pipeline > 0
                   ? absl::StrFormat(", pipelined acknowledgement (up to %d "
                                     "unacknowledged commits per thread)",
                                     c.wal_pipeline)
                   : std::string(", every commit waits to be durable"))
            : std::string());
  out << absl::StrFormat(
      "cpu path switches: prefetch=%s index_leaf_hint=%s "
      "optimistic_reads=%s optimistic_tuple_reads=%s identity_frames=%s\n",
      c.prefetch, c.index_leaf_hint ? "true" : "false",
      c.optimistic_reads ? "true" : "false",
      c.optimistic_tuple_reads ? "true" : "false",
      c.identity_frames ? "true" : "false");
  out << absl::StrFormat(
      "throughput: %.0f txn/s committed, tpmC %.0f (New-Orders per minute), "
      "abort rate %.2f%% (retried conflict/validation aborts / attempts)\n",
      r.txn_per_sec(), r.tpmC(), 100 * r.abort_rate());
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
  if (c.wal) {
    out << absl::StrFormat(
        "wal: %llu commit records in %llu flushes (write + fdatasync): %.2f "
        "commits per flush, %.0f flushes/s, %.1f MiB written\n",
        static_cast<unsigned long long>(r.wal.records),
        static_cast<unsigned long long>(r.wal.flushes),
        r.wal.commits_per_flush(), r.wal.flushes / std::max(r.seconds, 1e-9),
        r.wal.bytes / 1048576.0);
  }
  if (c.mode == "partitioned") PrintPartitioned(out, c, r);
  for (size_t n = 0; n < r.commits_by_node.size(); ++n) {
    out << absl::StrFormat("compute node %d: %.0f txn/s\n", n,
                           r.commits_by_node[n] / std::max(r.seconds, 1e-9));
  }
  r.cost().Print(out, "txn");
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

void AddJsonReport(const RunConfig& c, const LoadResult& l, const RunResult& r,
                   const ConsistencyResult& cons, JsonLine& j) {
  const uint64_t txns = r.commits();
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
  std::string nodes = "[";
  for (size_t n = 0; n < r.commits_by_node.size(); ++n) {
    nodes += absl::StrFormat("%s%.1f", n ? "," : "",
                             r.commits_by_node[n] / std::max(r.seconds, 1e-9));
  }
  nodes += "]";
  j.Add("bench", "tpcc")
      .Add("cc", c.cc)
      .Add("protocol", c.protocol)
      .Add("warehouses", c.warehouses)
      .Add("scope", c.scope)
      .Add("processes", c.processes)
      .Add("threads", c.threads_per_node)
      .Add("mix", c.mix)
      .Add("remote_neworder", c.remote_neworder)
      .Add("home_warehouse", c.home_warehouse)
      .Add("gcl_size", static_cast<uint64_t>(c.gcl_size))
      .Add("cache_mb", c.cache_mb)
      .Add("cache_sizing", c.cache_sizing)
      .Add("prefetch", c.prefetch)
      .Add("index_leaf_hint", c.index_leaf_hint)
      .Add("optimistic_reads", c.optimistic_reads)
      .Add("optimistic_tuple_reads", c.optimistic_tuple_reads)
      .Add("identity_frames", c.identity_frames)
      .Add("seed", c.seed)
      .Add("validate_index_reads", c.validate_index_reads)
      .Add("epochs_in_pool", c.epochs_in_pool)
      .Add("epochs", c.epochs)
      .Add("warmup_s", c.warmup_s)
      .Add("txns", c.txns)
      .Add("wal", c.wal ? "on" : "off")
      .Add("wal_dir", c.wal_dir)
      .Add("wal_early_lock_release", c.wal_early_lock_release)
      .Add("wal_pipeline", static_cast<int64_t>(c.wal_pipeline))
      .Add("wal_group_commit_us", c.wal_group_commit_us)
      .Add("acked_log", c.acked_log)
      .Add("delivery_results", c.delivery_results)
      .Add("memory_breakdown", c.memory_breakdown)
      .Add("peer_timeout_s", c.peer_timeout_s)
      .Add("items", c.scale.items)
      .Add("customers_per_district", c.scale.customers)
      .Add("load_seconds", l.seconds)
      .Add("load_rows", l.rows)
      .Add("pool_bytes_used", l.pool_bytes_used)
      .Add("bytes_per_warehouse", BytesPerWarehouse(c, l))
      .Add("raw_bytes_per_warehouse", RawPerWarehouse(c))
      .Add("duration_s", r.seconds)
      .Add("commits", txns)
      .Add("txn_per_sec", r.txn_per_sec())
      .Add("tpmC", r.tpmC())
      .Add("abort_rate", r.abort_rate())
      .AddObject("aborts_by_reason", txn::AbortCountsJson(r.aborts()))
      .Add("errors", r.errors())
      .Add("round_trips_per_txn", PerTxn(r.fabric.round_trips, txns))
      .Add("remote_ops_per_txn", PerTxn(r.fabric.ops(), txns))
      .Add("messages_per_txn", PerTxn(r.fabric.messages_sent, txns))
      .Add("bytes_per_txn",
           PerTxn(r.fabric.bytes_read + r.fabric.bytes_written, txns))
      .Add("cache_hit_ratio", r.cache.hit_ratio())
      .Add("latches_per_txn", PerTxn(r.cache.locks(), txns))
      .Add("unlatched_reads_per_txn", PerTxn(r.cache.optimistic_reads, txns))
      .Add("invalidations_per_txn", PerTxn(r.cache.invalidations_sent, txns))
      .Add("evictions_per_txn", PerTxn(r.cache.evictions, txns));
  r.commit_latency.AddTo(j, "commit", LatencyHistogram::Unit::kMicros);
  j.Add("wal_records", r.wal.records)
      .Add("wal_flushes", r.wal.flushes)
      .Add("wal_commits_per_flush", r.wal.commits_per_flush())
      .Add("wal_bytes", r.wal.bytes)
      .Add("delivery_queued", r.deliveries.queued)
      .Add("delivery_executed", r.deliveries.executed)
      .Add("delivery_orders", r.deliveries.orders_delivered)
      .Add("delivery_skipped_districts", r.deliveries.districts_skipped);
  r.deliveries.queue_to_done.AddTo(j, "delivery_queue",
                                   LatencyHistogram::Unit::kMicros);
  j.AddRaw("txn_per_sec_by_node", nodes)
      .AddObject("per_type", per_type)
      .Add("consistency_ok", cons.ok())
      .Add("consistency_seconds", cons.seconds);
  const partition::PartitionStats& p = r.partition;
  j.Add("mode", c.mode)
      .Add("distributed_pct", c.distributed_pct)
      .Add("owners", c.owners)
      .Add("twopc_one_phase_local", c.twopc_one_phase_local)
      .Add("twopc_read_only_vote", c.twopc_read_only_vote)
      .Add("twopc_parallel_prepare", c.twopc_parallel_prepare)
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
  r.cost().AddTo(j);
}

}  // namespace strand::tpcc
