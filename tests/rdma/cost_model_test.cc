#include "rdma/loopback/cost_model.h"

#include "gtest/gtest.h"
#include "rdma/fabric.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

TEST(CostModelTest, RoundTripChargesLatencyPlusTransferTime) {
  CostModel free(0, 0);
  EXPECT_TRUE(free.is_free());
  EXPECT_EQ(free.RoundTripNanos(1 << 20), 0);

  CostModel model(2000, 100);  // 2 us, 100 Gbit/s
  EXPECT_FALSE(model.is_free());
  EXPECT_EQ(model.RoundTripNanos(0), 2000);
  EXPECT_EQ(model.RoundTripNanos(1000), 2000 + 80);  // 8000 bits / 100 Gb/s
  EXPECT_EQ(model.OneWayNanos(), 1000);
}

TEST(CostModelTest, SpinUntilWaitsAtLeastTheDeadline) {
  const int64_t start = CostModel::NowNanos();
  CostModel(50'000, 0).PayRoundTrip(0);
  EXPECT_GE(CostModel::NowNanos() - start, 50'000);
}

}  // namespace
}  // namespace strand::rdma
