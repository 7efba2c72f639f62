#ifndef STRAND_TPCC_FAILOVER_REPORT_H_
#define STRAND_TPCC_FAILOVER_REPORT_H_

// What a tpcc run with an injected compute-node failure (--fail_node=N@T,
// tpcc/failure_injector.h) measured of it, from the failure's events, the
// survivor's ReclaimReport (engine/node_reclaim.h) and the per-second
// samples of the measured window:
//
//   detection  declared failed by a survivor - failed (about the lease)
//   reclaim    the reclaimer's stages and what it redid, relogged, cleared
//   recovery   failure -> end of the first second after it in which the
//              survivors committed >= 90% of their rate before it (a
//              second within 20 ms of the failure counts wholly on one side)
//   cost       the failed node's failed calls (not errors), the survivors'
//              retried aborts until recovery; partitioned mode: their calls
//              that needed its partitions, and its 2PC branches decided
//   rejoin     when RejoinNode ran, how long it took, what the node and the
//              survivors committed meanwhile and after
//
// Printed after the run's figures and, with --json, as "failover".

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/json_line.h"
#include "engine/node_reclaim.h"
#include "tpcc/failure_injector.h"

namespace strand::tpcc {

// One sample of the measured window: each hosted compute node's measured
// commits and retried aborts since the window opened, by node id.
struct NodeSecond {
  int64_t elapsed_s = 0;  // the sample covers (elapsed_s - span_s, elapsed_s]
  double span_s = 1;
  double at_s = 0;  // when it was taken, in seconds into the window
  std::vector<uint64_t> commits;
  std::vector<uint64_t> aborts;
};

struct FailoverReport {
  rdma::ComputeNodeId node = 0;
  // Seconds into the measured window; nullopt: it did not happen.
  std::optional<double> failed_at_s;
  std::optional<double> detection_s;
  std::optional<engine::ReclaimReport> reclaim;  // found in the engine's
  std::optional<double> recovered_after_s;
  std::optional<double> rejoined_at_s;  // RejoinNode called
  std::optional<double> rejoin_s;       // RejoinNode's duration
  double survivors_txn_per_sec_before = 0;
  double survivor_aborts_per_sec_before = 0;
  uint64_t survivor_aborts_until_recovered = 0;
  uint64_t calls_failed = 0;
  uint64_t survivor_calls_unavailable = 0;      // partitioned mode
  uint64_t survivor_commits_during_outage = 0;  // until the rejoin or end
  uint64_t node_commits_after_rejoin = 0;
  std::string error;  // a step that failed or did not happen in time

  bool ok() const { return error.empty(); }
};

// `final_commits`: each node's measured commits over the whole window.
FailoverReport MakeFailoverReport(
    const FailureEvents& events,
    const std::vector<engine::ReclaimReport>& reclaims,
    absl::Span<const NodeSecond> seconds,
    const std::vector<uint64_t>& final_commits, uint64_t calls_failed,
    absl::Time window_start);

void PrintFailover(std::ostream& out, const FailoverReport& f);
// Adds "failover": {...} to the run's record.
void AddFailoverJson(const FailoverReport& f, JsonLine& json);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_FAILOVER_REPORT_H_
