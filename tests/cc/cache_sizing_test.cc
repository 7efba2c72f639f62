// The auto-sized SELCC cache (cc/cache_sizing.h): its bounds, and that
// GclManager::Create resolves CcOptions::cache_bytes == 0 to the size the
// manager then reports and uses.

#include "cc/cache_sizing.h"

#include "cc/gcl_manager.h"
#include "cc/selcc/selcc_manager.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/test_fabric.h"

namespace strand::cc {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(CacheSizingTest, WantedSizeWithinTheBounds) {
  EXPECT_EQ(AutoCacheBytes(100 * kMiB, 4096, 1024 * kMiB), 100 * kMiB);
}

TEST(CacheSizingTest, CappedByTheMemoryCap) {
  EXPECT_EQ(AutoCacheBytes(100 * kMiB, 4096, 10 * kMiB), 10 * kMiB);
}

TEST(CacheSizingTest, AtLeastSixteenLines) {
  EXPECT_EQ(AutoCacheBytes(0, 4096, 1024 * kMiB), 16 * 4096);
  EXPECT_EQ(AutoCacheBytes(100 * kMiB, 4096, 0), 16 * 4096);
}

TEST(CacheSizingTest, WholeLines) {
  EXPECT_EQ(AutoCacheBytes(20 * 1000 + 7, 1000, 1024 * kMiB), 20 * 1000);
  EXPECT_EQ(AutoCacheBytes(100 * kMiB, 1000, 50 * 1000 + 999), 50 * 1000);
}

TEST(CacheSizingTest, CapIsAQuarterOfTheMemorySplitAmongNodes) {
  EXPECT_EQ(AutoCacheCapBytes(8000 * kMiB, 1), 2000 * kMiB);
  EXPECT_EQ(AutoCacheCapBytes(8000 * kMiB, 4), 500 * kMiB);
  EXPECT_EQ(AutoCacheCapBytes(8000 * kMiB, 0), 2000 * kMiB);
}

TEST(CacheSizingTest, SomeMemoryIsAvailable) {
  EXPECT_GT(AvailableMemoryBytes(), 16 * kMiB);
}

// The default options size the cache as the pool (here far below the
// memory cap), and the manager's options say so: what binaries report.
TEST(CacheSizingTest, ManagerResolvesTheAutoSizeToThePool) {
  rdma::FabricOptions fabric = testing::TestFabricOptions(2, 2);
  fabric.pool_bytes = 8 * kMiB;
  CcOptions o;
  o.gcl_size = 1024;
  ASSERT_EQ(o.cache_bytes, CcOptions::kAutoCacheBytes);
  auto cluster = testing::CcCluster::Create(2, o, fabric);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const uint64_t pool = 2 * (*cluster)->fabric().memory_node_bytes();
  ASSERT_LT(pool, AutoCacheCapBytes(AvailableMemoryBytes(), 2));
  for (int n = 0; n < 2; ++n) {
    GclManager& m = (*cluster)->manager(n);
    EXPECT_EQ(m.options().cache_bytes, pool / 1024 * 1024);
    EXPECT_EQ(static_cast<SelccManager&>(m).cache_frames(), pool / 1024);
  }
}

// An explicit size is kept as given.
TEST(CacheSizingTest, ExplicitSizeIsKept) {
  CcOptions o;
  o.gcl_size = 1024;
  o.cache_bytes = 64 * 1024;
  auto cluster = testing::CcCluster::Create(1, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ((*cluster)->manager(0).options().cache_bytes, 64 * 1024u);
}

}  // namespace
}  // namespace strand::cc
