#ifndef STRAND_TPCC_REPORT_H_
#define STRAND_TPCC_REPORT_H_

// What a tpcc run prints: a human table (load, throughput, per-type
// commits/aborts/latency, fabric cost per transaction, cache hit ratio,
// per-node throughput, consistency) and with --json one JSON object with
// the same figures (per-type breakdown nested under "per_type").

#include <cstdint>
#include <ostream>
#include <string>

#include "tpcc/consistency.h"
#include "tpcc/driver.h"
#include "tpcc/loader.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

// How the run was made, echoed in both outputs.
struct RunConfig {
  int warehouses = 0;
  int compute_nodes = 0;
  int memory_nodes = 0;
  int threads_per_node = 0;
  std::string cc, protocol, mix;
  double remote_neworder = -1;
  std::string home_warehouse = "thread";
  int64_t rtt_ns = 0;
  std::string message_delivery;
  uint32_t gcl_size = 0;
  uint64_t cache_mb = 0;
  uint64_t pool_mb = 0;
  uint64_t seed = 0;
  Scale scale;
  bool validate_index_reads = true;  // --validate_index_reads
  bool wal = false;                  // --wal=on
  std::string wal_dir;
  bool wal_early_lock_release = false;
  int wal_pipeline = 0;         // max unacknowledged commits per thread; 0: off
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
std::string JsonReport(const RunConfig& config, const LoadResult& load,
                       const RunResult& run, const ConsistencyResult& c);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_REPORT_H_
