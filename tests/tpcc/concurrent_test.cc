// Short concurrent runs of the standard mix on two compute nodes with a
// small cache, under every algorithm x protocol: no call fails other than
// the deliberate rollbacks, and every consistency condition holds after.

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/testing/protocols.h"
#include "tests/tpcc/tpcc_test_db.h"
#include "tpcc/consistency.h"
#include "tpcc/delivery_result_file.h"
#include "tpcc/driver.h"

namespace strand::tpcc {
namespace {

struct Config {
  txn::CcAlgorithm algorithm;
  cc::Protocol protocol;
};

std::string ConfigName(const ::testing::TestParamInfo<Config>& info) {
  return std::string(txn::CcAlgorithmName(info.param.algorithm)) + "_" +
         cc::ProtocolName(info.param.protocol);
}

std::vector<Config> Configs() {
  std::vector<Config> configs;
  for (auto a :
       {txn::CcAlgorithm::kTwoPhaseLocking,
        txn::CcAlgorithm::kTimestampOrdering, txn::CcAlgorithm::kOptimistic}) {
    for (cc::Protocol p : strand::testing::TestProtocols()) {
      configs.push_back({a, p});
    }
  }
  return configs;
}

class ConcurrentTest : public ::testing::TestWithParam<Config> {};

TEST_P(ConcurrentTest, StandardMixKeepsEveryConsistencyCondition) {
  constexpr int kWarehouses = 2;
  auto db = testing::LoadTestDb(
      testing::TestOptions(GetParam().algorithm, GetParam().protocol, 2),
      kWarehouses);
  ASSERT_NE(db, nullptr);
  DriverOptions d;
  d.warehouses = kWarehouses;
  d.threads_per_node = 2;  // two threads share each home warehouse
  d.txns = 3000;
  d.remote.remote_order_ratio = 0.3;  // plenty of cross-warehouse lines
  auto run = RunDriver(*db, d);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->errors(), 0u) << run->first_error;
  EXPECT_GE(run->commits(), 2900u);
  EXPECT_GT(run->by_type[kNewOrder].commits, 0u);
  EXPECT_GT(run->by_type[kDelivery].commits, 0u);
  for (uint64_t c : run->commits_by_node) EXPECT_GT(c, 0u);
  auto c = CheckConsistency(db->engine(), kWarehouses, db->scale());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->ok()) << c->ToString();
}

INSTANTIATE_TEST_SUITE_P(Algorithms, ConcurrentTest,
                         ::testing::ValuesIn(Configs()), ConfigName);

// Partitioned mode (2PL, two-phase commit) on 2 and 4 compute nodes with
// 0, 10 and 100% of New-Orders and Payments distributed: no call fails,
// every consistency condition holds (they span warehouses through remote
// stock and customers), and the share of distributed commits follows the
// knob: none at 0%, all New-Orders and Payments at 100%.
struct PartitionedConfig {
  int nodes;
  int distributed_pct;
};

class PartitionedTest : public ::testing::TestWithParam<PartitionedConfig> {};

TEST_P(PartitionedTest, StandardMixKeepsEveryConsistencyCondition) {
  const PartitionedConfig& p = GetParam();
  const int warehouses = p.nodes;
  engine::EngineOptions o = testing::TestOptions(
      txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, p.nodes);
  o.mode = engine::EngineMode::kPartitioned;
  o.partitioned.partitions = warehouses;
  auto db = testing::LoadTestDb(o, warehouses);
  ASSERT_NE(db, nullptr);
  ASSERT_NE(db->engine().partition_map(), nullptr);
  DriverOptions d;
  d.warehouses = warehouses;
  d.threads_per_node = 1;
  d.txns = 1500;
  d.remote.owners = db->engine().partition_map();
  d.remote.remote_order_ratio = p.distributed_pct / 100.0;
  d.remote.remote_payment_ratio = p.distributed_pct / 100.0;
  auto run = RunDriver(*db, d);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->errors(), 0u) << run->first_error;
  EXPECT_GE(run->commits(), 1400u);
  for (uint64_t c : run->commits_by_node) EXPECT_GT(c, 0u);
  const partition::PartitionStats& stats = run->partition;
  const uint64_t new_order_and_payment =
      run->by_type[kNewOrder].commits + run->by_type[kPayment].commits;
  if (p.distributed_pct == 0) {
    EXPECT_EQ(stats.distributed, 0u);
    EXPECT_EQ(stats.prepares, 0u);
  } else if (p.distributed_pct == 100) {
    // The measured window's edges blur the counts a little.
    EXPECT_GE(stats.distributed, new_order_and_payment * 9 / 10);
    EXPECT_GT(stats.prepares, 0u);
  } else {
    EXPECT_GT(stats.distributed, 0u);
    EXPECT_LT(stats.distributed, new_order_and_payment / 3);
  }
  auto c = CheckConsistency(db->engine(), warehouses, db->scale());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->ok()) << c->ToString();
}

INSTANTIATE_TEST_SUITE_P(
    NodesAndShares, PartitionedTest,
    ::testing::Values(PartitionedConfig{2, 0}, PartitionedConfig{2, 10},
                      PartitionedConfig{2, 100}, PartitionedConfig{4, 0},
                      PartitionedConfig{4, 10}, PartitionedConfig{4, 100}),
    [](const auto& info) {
      return absl::StrFormat("nodes%d_distributed%d", info.param.nodes,
                             info.param.distributed_pct);
    });

// Clause 2.7.2: a Delivery card only queues the Delivery; the node's
// deferred-execution path runs every queued one before the run ends and
// records its result, skipped districts included, in the result file and
// the run's counters.
TEST(DeferredDeliveryTest, EveryQueuedDeliveryIsExecutedAndRecorded) {
  auto db = testing::LoadTestDb(
      testing::TestOptions(txn::CcAlgorithm::kTwoPhaseLocking,
                           cc::Protocol::kSelcc, 1),
      1);
  ASSERT_NE(db, nullptr);
  const std::string path =
      ::testing::TempDir() + "/delivery-results-" + std::to_string(getpid());
  std::remove(path.c_str());
  auto file = DeliveryResultFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  DriverOptions d;
  d.warehouses = 1;
  d.mix = *Mix::Parse("delivery");
  d.txns = 30;  // 18 undelivered orders per district at the load
  d.delivery_results = file->get();
  auto run = RunDriver(*db, d);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->errors(), 0u) << run->first_error;
  const DeferredDeliveryStats& stats = run->deliveries;
  EXPECT_GE(stats.queued, 30u);
  EXPECT_EQ(stats.executed, run->by_type[kDelivery].commits);
  EXPECT_EQ(stats.orders_delivered + stats.districts_skipped,
            10 * stats.executed);
  EXPECT_GT(stats.districts_skipped, 0u);
  EXPECT_GT(stats.queue_to_done.count(), 0u);

  // Every card's Delivery was executed (warm-up ones too) and recorded.
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::remove(path.c_str());
  ASSERT_GE(lines.size(), 30u);
  const int first_new_order = db->scale().customers - db->scale().new_orders();
  EXPECT_NE(lines[0].find("w=1 "), std::string::npos) << lines[0];
  EXPECT_NE(
      lines[0].find(absl::StrFormat("skipped=0 districts=1:%d,2:%d,",
                                    first_new_order + 1, first_new_order + 1)),
      std::string::npos)
      << lines[0];
  int skipped = 0;
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("queued="), std::string::npos) << line;
    EXPECT_NE(line.find(" completed="), std::string::npos) << line;
    skipped +=
        std::count(line.begin(), line.end(), '-') - 4;  // the dates' four '-'
  }
  EXPECT_EQ(skipped,
            10 * (static_cast<int>(lines.size()) - db->scale().new_orders()));
  EXPECT_NE(lines.back().find("skipped=10 districts=1:-,2:-"),
            std::string::npos)
      << lines.back();
  EXPECT_EQ(testing::CountRows(db->engine(), "new_order"), 0);
  auto c = CheckConsistency(db->engine(), 1, db->scale());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->ok()) << c->ToString();
}

TEST(MixTest, ParsesStandardNamesAndWeights) {
  EXPECT_EQ(Mix::Parse("standard")->weights,
            (std::array<int, kTxnTypes>{45, 43, 4, 4, 4}));
  EXPECT_EQ(Mix::Parse("payment")->weights,
            (std::array<int, kTxnTypes>{0, 100, 0, 0, 0}));
  EXPECT_EQ(Mix::Parse("50,50,0,0,0")->weights,
            (std::array<int, kTxnTypes>{50, 50, 0, 0, 0}));
  EXPECT_FALSE(Mix::Parse("50,40,0,0,0").ok());
  EXPECT_FALSE(Mix::Parse("50,50").ok());
  EXPECT_FALSE(Mix::Parse("bogus").ok());
}

}  // namespace
}  // namespace strand::tpcc
