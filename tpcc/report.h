#ifndef STRAND_TPCC_REPORT_H_
#define STRAND_TPCC_REPORT_H_

// What a tpcc run prints: a human table (load, throughput, per-type
// commits/aborts/latency, fabric cost per transaction, cache hit ratio,
// per-node throughput, consistency; a compute node's failure,
// tpcc/failover_report.h) and with --json one JSON object with the same
// figures and the whole configuration (per-type breakdown nested under
// "per_type", aborts by reason under "aborts_by_reason", the failure
// under "failover").

#include <cstdint>
#include <ostream>
#include <string>

#include "base/json_line.h"
#include "tpcc/consistency.h"
#include "tpcc/driver.h"
#include "tpcc/loader.h"
#include "tpcc/schema.h"
#include "tpcc/tpcc_options.h"

namespace strand::tpcc {

// How the run was made, echoed in both outputs: what it was told (the
// options) and what the deployment turned out to be. The JSON takes the
// deployment's fabric settings from rdma::AddFabricJson.
struct RunConfig {
  TpccOptions options;
  int compute_nodes = 0;     // of the deployment, as served
  int processes = 1;         // compute processes of the deployment
  int failed_processes = 0;  // of them, failed during the run (--failover)
  // Whose figures: the whole deployment, or (each compute process of a
  // verbs deployment prints its own) "compute node N".
  std::string scope = "deployment";
  uint64_t cache_mb = 0;  // per compute node, as used; 0: SEL
  // Where deleted slots' epochs meet: "process" (one manager for every
  // node) or "pool" (docs/design/slot_reuse.md, "Across processes"): the
  // pool with --epochs_in_pool or compute nodes in separate processes.
  std::string epochs = "process";
  std::string owners;  // who owns which warehouse: "node 0: 1-2, ..."
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
