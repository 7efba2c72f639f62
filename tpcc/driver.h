#ifndef STRAND_TPCC_DRIVER_H_
#define STRAND_TPCC_DRIVER_H_

// The TPC-C driver: --threads threads on every hosted compute node, each
// a terminal (tpcc/terminal.h: home warehouse, Stock-Level district, the
// mix dealt from a deck) with a session on its node, running the mix back
// to back (no keying or think time) for a duration or a number of
// transactions, after a warm-up that is not measured.

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/cost_breakdown.h"
#include "base/latency_histogram.h"
#include "cc/cache_stats.h"
#include "partition/options.h"
#include "rdma/counters.h"
#include "tpcc/acked_log.h"
#include "tpcc/delivery_result_file.h"
#include "tpcc/failover_report.h"
#include "tpcc/failure_injector.h"
#include "tpcc/mix.h"
#include "tpcc/new_order.h"
#include "tpcc/terminal.h"
#include "tpcc/tpcc_db.h"
#include "txn/abort_reason.h"

namespace strand::tpcc {

struct DriverOptions {
  int warehouses = 1;
  int threads_per_node = 1;
  HomeWarehouse home_warehouse = HomeWarehouse::kPerThread;
  Mix mix;
  RemotePolicy remote;
  double duration_s = 10;
  uint64_t txns = 0;  // > 0: run this many measured transactions instead
  double warmup_s = 0;
  uint64_t seed = 1;
  // Progress of the measured run on stderr, and (not null) one JSON line
  // per second into `progress_series` (base/run_progress.h). Not owned.
  bool progress = false;
  std::ostream* progress_series = nullptr;
  // 0: each thread runs Session::Call, one transaction at a time. N > 0:
  // pipelined acknowledgement (Session::CallAsync, engine/session.h): a
  // thread goes on while up to N of its commits wait for the log; a
  // transaction is counted, its latency taken and its New-Order id written
  // to acked_log only when acknowledged. Pipelines only with the WAL's
  // early lock release on.
  size_t wal_pipeline = 0;
  // Not null: every acknowledged New-Order (warm-up included) is appended
  // here when it is acknowledged (tpcc/acked_log.h). Not owned.
  AckedLogWriter* acked_log = nullptr;
  // Not null: every executed deferred Delivery (warm-up included) is
  // recorded here (tpcc/delivery_result_file.h). Not owned.
  DeliveryResultFile* delivery_results = nullptr;
  // A compute node's failure, and perhaps its rejoin, during the measured
  // window (tpcc/failure_injector.h). Its threads' calls that fail while
  // it is down are counted apart, not as errors.
  std::optional<FailurePlan> failure;
};

struct TypeResult {
  uint64_t commits = 0;
  uint64_t user_aborts = 0;  // calls rolled back on purpose (New-Order 1%)
  uint64_t errors = 0;       // calls that failed otherwise (gave up, ...)
  // Aborted attempts by reason, as the engine counts them (retried ones
  // included, engine/procedure_stats.h).
  txn::AbortCounts aborts{};
  LatencyHistogram latency;  // committed calls, retries included

  // Conflict and validation aborts: the ones the engine retries.
  uint64_t retried_aborts() const {
    return aborts[static_cast<int>(txn::AbortReason::kConflict)] +
           aborts[static_cast<int>(txn::AbortReason::kValidation)];
  }
  double abort_rate() const {
    const double attempts = commits + user_aborts + retried_aborts() + errors;
    return attempts == 0 ? 0 : retried_aborts() / attempts;
  }
  // Adds `other`'s counts and latencies (threads', or compute processes').
  void Merge(const TypeResult& other);
};

// Deferred Deliveries (tpcc/deferred_delivery.h) during the measured run.
// by_type[kDelivery] counts their executions like any call (commits,
// errors, execution latency); these add what deferring adds.
struct DeferredDeliveryStats {
  uint64_t queued = 0;             // Delivery cards dealt (queued)
  uint64_t executed = 0;           // committed deferred executions
  uint64_t orders_delivered = 0;   // districts with an order delivered
  uint64_t districts_skipped = 0;  // districts with none (clause 2.7.4.2)
  LatencyHistogram queue_to_done;  // queued -> committed, per execution

  void Merge(const DeferredDeliveryStats& other);
};

// The write-ahead log's work during the measured run, summed over the
// hosted compute nodes' logs (all zero with the WAL off).
struct WalRunStats {
  uint64_t records = 0;  // commit records appended (writing transactions)
  uint64_t flushes = 0;  // write + fdatasync rounds
  uint64_t bytes = 0;    // written, rewritten partial blocks included
  double commits_per_flush() const {
    return flushes == 0 ? 0 : static_cast<double>(records) / flushes;
  }
};

struct RunResult {
  double seconds = 0;
  // When the measured window opened (checkpoints are placed against it).
  absl::Time window_start;
  std::array<TypeResult, kTxnTypes> by_type;
  std::vector<uint64_t> commits_by_node;  // indexed by compute node id
  rdma::FabricCounters fabric;
  cc::CacheStats cache;
  WalRunStats wal;
  DeferredDeliveryStats deliveries;
  // Partitioned mode's coordinators and participants (all zero in shared
  // mode): messages by kind, forced writes, the latency split.
  partition::PartitionStats partition;
  // Every committed call, all types: from the call to its acknowledgement
  // (Session::Call returning OK, or CallAsync's callback), retries
  // included; with the WAL on this includes waiting for the commit record
  // to be durable (the engine does not time that wait alone).
  LatencyHistogram commit_latency;
  std::string first_error;
  // Each whole second of the measured window (--progress_json's samples):
  // every compute node's commits and retried aborts so far.
  std::vector<NodeSecond> per_second;
  // With DriverOptions::failure: the calls its node's threads had fail
  // while it was down, and what the failure cost (tpcc/failover_report.h).
  uint64_t calls_failed_by_node_failure = 0;
  // Partitioned mode: the survivors' calls that needed the failed node's
  // partitions (Unavailable until it rejoins).
  uint64_t calls_unavailable = 0;
  std::optional<FailoverReport> failover;
  // The worker threads' ledgers over the measured window (base/
  // thread_ledger.h) and the process CPU, for the modeled figures.
  ThreadLedger::Snapshot workers;
  double process_cpu_s = 0;
  int worker_threads = 0;

  uint64_t commits() const;
  uint64_t retried_aborts() const;
  txn::AbortCounts aborts() const;  // all types' by reason
  uint64_t errors() const;
  double abort_rate() const;
  double txn_per_sec() const { return seconds > 0 ? commits() / seconds : 0; }
  // Committed New-Orders per minute of the measured window. Not TPC-C's
  // tpmC: the driver runs without keying and think times, which cap a
  // conforming run at ~12.86 per warehouse.
  double new_orders_per_minute() const {
    return seconds > 0 ? by_type[kNewOrder].commits * 60.0 / seconds : 0;
  }
  // Per committed transaction (base/cost_breakdown.h).
  CostBreakdown cost() const {
    return CostBreakdown(
        workers, RunShape{worker_threads, seconds, process_cpu_s, commits()});
  }
};

absl::StatusOr<RunResult> RunDriver(TpccDatabase& db,
                                    const DriverOptions& options);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_DRIVER_H_
