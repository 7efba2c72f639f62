#ifndef STRAND_TPCC_TPCC_RUN_H_
#define STRAND_TPCC_TPCC_RUN_H_

// One run of the tpcc binary in this process, from validated options:
//
//   Open      the engine and the tables (in a verbs deployment, this
//             process's compute node meets the others on the cluster
//             board, tpcc/cluster_run.h has the steps)
//   Load      this process's share of the warehouses
//   Log       with --wal=on: every commit logged, then a checkpoint of
//             the load (or, when --wal_dir holds an earlier run, that run
//             recovered instead of the load, and the log carried on)
//   Drive     warm-up and the measured run (tpcc/driver.h), with
//             --fail_node a compute node's failure in it
//   Report    this node's figures, the deployment's on compute node 0
//   Check     the consistency conditions of clause 3.3.2 and, after a
//             failure with --acked_log, every acknowledged New-Order
//
// and --check_image, which opens a recovered image and checks it instead.

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/json_line.h"
#include "base/run_output.h"
#include "engine/cluster_board.h"
#include "tpcc/acked_check.h"
#include "tpcc/acked_log.h"
#include "tpcc/consistency.h"
#include "tpcc/delivery_result_file.h"
#include "tpcc/report.h"
#include "tpcc/tpcc_db.h"
#include "tpcc/tpcc_options.h"

namespace strand::tpcc {

// A compute process of a deployment with --failover that lost its access
// to the cluster board (paused or cut off past its lease, so fenced)
// stops with this status: it counts as a failed node, which the others
// reclaim (scripts/launch.sh treats it as a killed one), not as a run that
// failed (1) or a misuse (2).
inline constexpr int kExitDeclaredFailed = 3;

// This process's part in a deployment whose compute nodes are separate
// processes (verbs): its node and the cluster board it meets the others on.
// No board when one process hosts every compute node (loopback).
struct ClusterMember {
  rdma::ComputeNodeId self = 0;
  int processes = 1;
  std::unique_ptr<engine::ClusterBoard> board;

  bool leads() const { return board == nullptr || self == 0; }
  // Prints `message`, tells the others this process gives up, and returns
  // the exit status.
  int Fail(absl::string_view message);
};

class TpccRun {
 public:
  TpccRun(const TpccOptions& options, RunOutput& output);

  // The whole run; returns the exit status: 0, or 1 if it failed or a
  // consistency condition does not hold. The log directory is created and
  // the side files (--acked_log, --delivery_results) open first: a usage
  // error (exit 2) if they cannot.
  int Run();

 private:
  void OpenSideFiles();
  absl::Status Open();
  absl::Status JoinCluster(std::unique_ptr<engine::Engine> engine);
  absl::Status Load();
  // Instead of the load: reports the earlier run the engine recovered.
  absl::Status Resume();
  // Instead of the load, in a restarted process (--rejoin): false if the
  // deployment finished measuring before this node rejoined (it then
  // leaves without running).
  absl::StatusOr<bool> Rejoin();
  absl::Status StartLogging();
  absl::Status Drive();
  // Node 0 of a verbs deployment: every node's figures, summed.
  absl::Status Gather();
  // With failover across processes: what this node committed after each
  // peer was declared failed during the run.
  void ReportPeersLost();
  void ReportPool();
  // --memory_breakdown, on the node that leads: every table's and index's
  // GCLs, against `pool_bytes` of the pool in use.
  absl::Status PrintMemory(uint64_t pool_bytes, bool after_run);
  absl::Status Check();
  // After a failure: every New-Order the run acknowledged is there whole.
  absl::Status CheckAcked();
  // The compute node the checks read through: the first hosted one, or
  // one that survived a failure its node did not rejoin from.
  rdma::ComputeNodeId ReaderNode() const;
  // A compute process other than node 0, once it ran and published its
  // figures: stays up (node 0's consistency check reads the lines this
  // node caches) until node 0 has checked, then leaves.
  int FinishFollower();

  // Prints the run's --json record.
  void PrintRecord(const RunConfig& config, const ConsistencyResult& c);

  const TpccOptions& options_;
  RunOutput& output_;
  std::ostream& human_;
  std::unique_ptr<AckedLogWriter> acked_log_;
  std::unique_ptr<DeliveryResultFile> delivery_results_;
  std::unique_ptr<TpccDatabase> db_;
  // Declared after the database, so that the board (which uses the
  // engine's fabric) is destroyed first.
  ClusterMember member_;
  RunConfig config_;
  JsonLine deployment_;  // version, commit, the fabric as served
  LoadResult load_;
  RunResult run_;
  uint64_t pool_after_run_ = 0;
  double growth_mb_per_million_ = 0;
  ConsistencyResult consistency_;
  // With --fail_node and --acked_log: registered at Open.
  std::optional<AckedNewOrderChecker> acked_checker_;
  std::optional<AckedCheck> acked_;
};

// tpcc --check_image: opens the image on the loopback fabric with the
// layout its header records and checks conditions 1-12 and, with
// --acked_log, every acknowledged New-Order. Returns the exit status.
int CheckImage(const TpccOptions& options, RunOutput& output);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_TPCC_RUN_H_
