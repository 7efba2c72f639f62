// Guards: movable, release once, track dirty bounds; options validation.

#include "cc/gcl_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/test_fabric.h"

namespace strand::cc {
namespace {

using ::testing::HasSubstr;

CcOptions SelOptions() {
  CcOptions o;
  o.protocol = Protocol::kSel;
  o.gcl_size = 256;
  return o;
}

class GclGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::CcCluster::Create(1, SelOptions());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx_ = *m().NewThreadContext();
    gcl_ = *m().Allocate(*ctx_);
  }
  GclManager& m() { return cluster_->manager(0); }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<ThreadContext> ctx_;
  rdma::GlobalAddress gcl_;
};

TEST_F(GclGuardTest, MovedGuardReleasesOnce) {
  auto g = m().XLock(*ctx_, gcl_);
  ASSERT_TRUE(g.ok());
  ExclusiveGuard moved = *std::move(g);
  EXPECT_FALSE(g->owns_lock());
  EXPECT_TRUE(moved.owns_lock());
  EXPECT_TRUE(moved.Unlock().ok());
  EXPECT_FALSE(moved.owns_lock());
  EXPECT_TRUE(moved.Unlock().ok());  // a second unlock is a no-op
  // Released exactly once: the latch is free for a no-wait exclusive lock.
  auto again = m().XLock(*ctx_, gcl_, {.no_wait = true});
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST_F(GclGuardTest, MoveAssignmentReleasesTheOldLatch) {
  rdma::GlobalAddress other = *m().Allocate(*ctx_);
  ExclusiveGuard a = *m().XLock(*ctx_, gcl_);
  a = *m().XLock(*ctx_, other);  // releases gcl_
  EXPECT_EQ(a.gcl(), other);
  EXPECT_TRUE(m().XLock(*ctx_, gcl_, {.no_wait = true}).ok());
}

TEST_F(GclGuardTest, DirtyBoundsCoverEveryWrite) {
  ExclusiveGuard g = *m().XLock(*ctx_, gcl_);
  EXPECT_EQ(g.dirty_begin(), g.dirty_end());
  g.MutableRange(40, 8)[0] = 1;
  EXPECT_EQ(g.dirty_begin(), 40u);
  EXPECT_EQ(g.dirty_end(), 48u);
  g.MutableRange(16, 4)[0] = 2;
  g.MutableRange(100, 10)[0] = 3;
  EXPECT_EQ(g.dirty_begin(), 16u);
  EXPECT_EQ(g.dirty_end(), 110u);
  g.mutable_data();
  EXPECT_EQ(g.dirty_begin(), 0u);
  EXPECT_EQ(g.dirty_end(), m().payload_bytes());
}

// A write outside the payload, or through a guard that holds nothing, is
// a bug of the caller: it stops the process, saying which.
TEST_F(GclGuardTest, WritesOutsideTheLatchDie) {
  ExclusiveGuard g = *m().XLock(*ctx_, gcl_);
  const uint32_t size = g.size();
  EXPECT_DEATH(g.MutableRange(size - 4, 8), "past the end of GCL");
  EXPECT_DEATH(g.MutableRange(UINT32_MAX, 2), "past the end of GCL");
  ASSERT_TRUE(g.Unlock().ok());
  EXPECT_DEATH(g.MutableRange(0, 8), "holds no latch");
}

TEST_F(GclGuardTest, WritesAreSeenByTheNextHolder) {
  {
    ExclusiveGuard g = *m().XLock(*ctx_, gcl_);
    std::memcpy(g.MutableRange(8, 5), "hello", 5);
  }
  SharedGuard s = *m().SLock(*ctx_, gcl_);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.data()) + 8, 5),
            "hello");
  EXPECT_EQ(s.data()[0], 0);  // untouched bytes stay zero
}

TEST(CcOptionsTest, BadOptionsAreRejected) {
  CcOptions o = SelOptions();
  o.gcl_size = 100;
  EXPECT_THAT(std::string(o.Validate(1 << 20).message()),
              HasSubstr("CcOptions::gcl_size=100"));
  EXPECT_THAT(
      std::string(
          o.Validate(1 << 20, OptionNaming::Flags("CcOptions::")).message()),
      HasSubstr("--gcl_size=100"));
  o.gcl_size = 2 << 20;  // beyond the chunk
  EXPECT_FALSE(o.Validate(1 << 20).ok());
  o = CcOptions();
  o.cache_bytes = 1024;
  EXPECT_THAT(std::string(o.Validate(1 << 20).message()),
              HasSubstr("CcOptions::cache_bytes=1024"));
  o.cache_bytes = 8 << 20;
  o.gcl_size = 1 << 20;  // 8 lines of 1 MiB: fewer than 16
  EXPECT_THAT(
      std::string(
          o.Validate(1 << 20, OptionNaming::Flags("CcOptions::")).message()),
      HasSubstr("--cache_mb=8"));
  o.cache_bytes = CcOptions::kAutoCacheBytes;  // sized by GclManager::Create
  EXPECT_TRUE(o.Validate(1 << 20).ok());
  EXPECT_FALSE(ParseProtocol("mesi").ok());
  EXPECT_EQ(*ParseProtocol("sel"), Protocol::kSel);
}

// SEL's holder field would take 63 nodes, SELCC's reader bitmap 58: the
// fabric refuses a deployment past 58 before either protocol sees it.
TEST(CcOptionsTest, NodeIdsBeyondTheLatchWordAreRejected) {
  auto fabric_options = testing::TestFabricOptions(1, 59);
  auto cluster = testing::CcCluster::Create(59, SelOptions(), fabric_options);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(cluster.status().message()),
              HasSubstr("compute_nodes=59 is out of range: use 1 to 58"));
}

}  // namespace
}  // namespace strand::cc
