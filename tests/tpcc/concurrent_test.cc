// Short concurrent runs of the standard mix on two compute nodes with a
// small cache, under every algorithm x protocol: no call fails other than
// the deliberate rollbacks, and every consistency condition holds after.

#include "gtest/gtest.h"
#include "tests/testing/protocols.h"
#include "tests/tpcc/tpcc_test_db.h"
#include "tpcc/consistency.h"
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
