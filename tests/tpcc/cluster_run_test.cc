// Each compute process's figures, encoded for the cluster board and summed
// by node 0 (tpcc/cluster_run.h).

#include "tpcc/cluster_run.h"

#include "gtest/gtest.h"

namespace strand::tpcc {
namespace {

RunResult NodeRun(rdma::ComputeNodeId node, uint64_t commits, double seconds) {
  RunResult r;
  r.seconds = seconds;
  r.worker_threads = 1;
  r.process_cpu_s = seconds;
  r.by_type[kNewOrder].commits = commits;
  r.by_type[kNewOrder].aborts[static_cast<int>(txn::AbortReason::kConflict)] =
      2;
  r.by_type[kNewOrder].aborts[static_cast<int>(txn::AbortReason::kValidation)] =
      1;
  for (uint64_t i = 0; i < commits; ++i) {
    r.by_type[kNewOrder].latency.Record(1000 * (node + 1));
    r.commit_latency.Record(1000 * (node + 1));
  }
  r.commits_by_node.assign(node + 1, 0);
  r.commits_by_node[node] = commits;
  r.fabric.round_trips = 10 * commits;
  r.cache.hits = 7;
  r.wal.records = commits;
  return r;
}

TEST(ClusterRunTest, NodeZeroSumsEveryNodesFigures) {
  LoadResult load0{
      .seconds = 2, .rows = 100, .transactions = 4, .pool_bytes_used = 1000};
  LoadResult load1{
      .seconds = 3, .rows = 50, .transactions = 2, .pool_bytes_used = 1200};
  RunResult run0 = NodeRun(0, 40, 10.0);
  RunResult run1 = NodeRun(1, 60, 10.5);
  run1.first_error = "boom";
  LoadResult load;
  RunResult run;
  ASSERT_TRUE(MergeNodeRun(EncodeNodeRun(0, load0, run0), load, run).ok());
  ASSERT_TRUE(MergeNodeRun(EncodeNodeRun(1, load1, run1), load, run).ok());
  EXPECT_EQ(load.rows, 150u);
  EXPECT_EQ(load.transactions, 6u);
  EXPECT_EQ(load.seconds, 3);
  EXPECT_EQ(load.pool_bytes_used, 1200u);  // a global figure: the largest
  EXPECT_EQ(run.commits(), 100u);
  EXPECT_EQ(run.seconds, 10.5);  // the longest window
  EXPECT_EQ(run.worker_threads, 2);
  ASSERT_EQ(run.commits_by_node.size(), 2u);
  EXPECT_EQ(run.commits_by_node[0], 40u);
  EXPECT_EQ(run.commits_by_node[1], 60u);
  EXPECT_EQ(run.by_type[kNewOrder].retried_aborts(), 6u);
  EXPECT_EQ(run.aborts()[static_cast<int>(txn::AbortReason::kConflict)], 4u);
  EXPECT_EQ(run.by_type[kNewOrder].latency.count(), 100u);
  EXPECT_EQ(run.commit_latency.count(), 100u);
  EXPECT_EQ(run.commit_latency.max_nanos(), 2000u);
  EXPECT_EQ(run.fabric.round_trips, 1000u);
  EXPECT_EQ(run.cache.hits, 14u);
  EXPECT_EQ(run.wal.records, 100u);
  EXPECT_EQ(run.first_error, "compute node 1: boom");
}

TEST(ClusterRunTest, BytesOfAnotherLayoutAreRefused) {
  LoadResult load;
  RunResult run;
  EXPECT_TRUE(absl::IsDataLoss(MergeNodeRun("short", load, run)));
  std::string bytes = EncodeNodeRun(0, LoadResult{}, NodeRun(0, 1, 1));
  bytes[0] ^= 1;  // not the magic
  EXPECT_TRUE(absl::IsDataLoss(MergeNodeRun(bytes, load, run)));
  EXPECT_EQ(run.commits(), 0u);
}

}  // namespace
}  // namespace strand::tpcc
