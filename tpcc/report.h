#ifndef STRAND_TPCC_REPORT_H_
#define STRAND_TPCC_REPORT_H_

// What a tpcc run prints: a human table (load, throughput, per-type
// commits/aborts/latency, fabric cost per transaction, cache hit ratio,
// per-node throughput, consistency) and with --json one JSON object with
// the same figures and the whole configuration (per-type breakdown nested
// under "per_type", aborts by reason under "aborts_by_reason").

#include <cstdint>
#include <ostream>
#include <string>

#include "base/json_line.h"
#include "tpcc/consistency.h"
#include "tpcc/driver.h"
#include "tpcc/loader.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

// How the run was made, echoed in both outputs (the JSON takes the
// deployment's fabric settings from rdma::AddFabricJson).
struct RunConfig {
  int warehouses = 0;
  int compute_nodes = 0;
  int threads_per_node = 0;
  std::string cc, protocol, mix;
  double remote_neworder = -1;
  std::string home_warehouse = "thread";
  int64_t rtt_ns = 0;
  std::string message_delivery;
  uint32_t gcl_size = 0;
  uint64_t cache_mb = 0;               // per compute node, as used; 0: SEL
  std::string cache_sizing = "flag";   // "auto" (--cache_mb=0) or "flag"
  std::string prefetch = "narrow";     // --prefetch
  bool index_leaf_hint = true;         // --index_leaf_hint
  bool optimistic_reads = true;        // --optimistic_reads
  bool optimistic_tuple_reads = true;  // --optimistic_tuple_reads
  bool identity_frames = true;         // --identity_frames
  uint64_t seed = 0;
  Scale scale;
  bool validate_index_reads = true;  // --validate_index_reads
  bool wal = false;                  // --wal=on
  std::string wal_dir;
  bool wal_early_lock_release = false;
  int wal_pipeline = 0;  // max unacknowledged commits per thread; 0: off
  int64_t wal_group_commit_us = 0;          // the window used (-1 resolved)
  std::string acked_log, delivery_results;  // side files, or empty
  double warmup_s = 0;
  uint64_t txns = 0;  // > 0: a run of this many transactions
  bool memory_breakdown = false;
  bool epochs_in_pool = false;  // --epochs_in_pool
  // Where deleted slots' epochs meet: "process" (one manager for every
  // node) or "pool" (txn/epoch_manager.h, "Across processes"): the pool
  // with --epochs_in_pool or compute nodes in separate processes.
  std::string epochs = "process";
  double peer_timeout_s = 0;
  std::string mode = "shared";  // --mode
  double distributed_pct = -1;  // --distributed_pct; < 0: the spec's rates
  std::string owners;           // partitioned mode: "node 0: 1-2, ..."
  std::string fabric = "loopback";
  // Whose figures: the whole deployment, or (each compute process of a
  // verbs deployment prints its own) "compute node N".
  std::string scope = "deployment";
  int processes = 1;  // compute processes of the deployment
  // Partitioned mode's protocol switches (partition/options.h).
  bool twopc_one_phase_local = true, twopc_read_only_vote = true,
       twopc_parallel_prepare = true;
};

void PrintLoad(std::ostream& out, const RunConfig& config,
               const LoadResult& load);
void PrintRun(std::ostream& out, const RunConfig& config, const RunResult& run);
void PrintConsistency(std::ostream& out, const ConsistencyResult& c);
// Adds the run's --json record to `json` (which the binary started with
// its version and deployment, base/run_output.h and rdma/fabric_options.h).
void AddJsonReport(const RunConfig& config, const LoadResult& load,
                   const RunResult& run, const ConsistencyResult& c,
                   JsonLine& json);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_REPORT_H_
