// SEL, the no-cache baseline: its costs in round trips and its latch rules.

#include "cc/sel/sel_manager.h"

#include <thread>

#include "cc/root_words.h"
#include "cc/sel/sel_latch.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc::sel {
namespace {

class SelManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CcOptions o;
    o.protocol = Protocol::kSel;
    o.gcl_size = 512;
    // Long enough that a waiter outlasts a 20 ms holder on a loaded
    // machine under sanitizers; short enough for the timeout test.
    o.lock_timeout = absl::Seconds(1);
    auto cluster = testing::CcCluster::Create(2, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    a_ = *m(0).NewThreadContext();
    b_ = *m(1).NewThreadContext();
    gcl_ = *m(0).Allocate(*a_);
  }
  GclManager& m(int i) { return cluster_->manager(i); }
  uint64_t LatchWord() {
    uint64_t w = 0;
    EXPECT_TRUE(a_->endpoint().Read(gcl_, &w, 8).ok());
    return w;
  }
  uint64_t RoundTrips(ThreadContext& ctx) {
    return ctx.endpoint().Counters().round_trips;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<ThreadContext> a_, b_;
  rdma::GlobalAddress gcl_;
};

TEST_F(SelManagerTest, LockAndUnlockCostOneRoundTripEach) {
  uint64_t before = RoundTrips(*a_);
  SharedGuard s = *m(0).SLock(*a_, gcl_);
  EXPECT_EQ(RoundTrips(*a_) - before, 1u);
  EXPECT_EQ(LatchWord(), 1u);
  ASSERT_TRUE(s.Unlock().ok());
  EXPECT_EQ(LatchWord(), 0u);

  before = RoundTrips(*b_);
  ExclusiveGuard x = *m(1).XLock(*b_, gcl_);
  EXPECT_EQ(RoundTrips(*b_) - before, 1u);
  EXPECT_EQ(LatchWord(), SelLatch::Exclusive(1));
  x.MutableRange(0, 8)[0] = 7;
  before = RoundTrips(*b_);
  ASSERT_TRUE(x.Unlock().ok());
  EXPECT_EQ(RoundTrips(*b_) - before, 1u);  // WRITE + FAA batched
  EXPECT_EQ(LatchWord(), 0u);
  EXPECT_EQ(m(1).Stats().flushed_bytes, 8u);  // only the dirty bytes
}

TEST_F(SelManagerTest, ReadersShareWritersExclude) {
  SharedGuard r1 = *m(0).SLock(*a_, gcl_);
  SharedGuard r2 = *m(1).SLock(*b_, gcl_);
  EXPECT_EQ(LatchWord(), 2u);
  auto w = m(1).XLock(*b_, gcl_, {.no_wait = true});
  EXPECT_EQ(w.status().code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(r1.Unlock().ok());
  ASSERT_TRUE(r2.Unlock().ok());
  ExclusiveGuard x = *m(1).XLock(*b_, gcl_);
  auto r3 = m(0).SLock(*a_, gcl_, {.no_wait = true});
  EXPECT_EQ(r3.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(LatchWord(), SelLatch::Exclusive(1));  // the reader backed out
}

TEST_F(SelManagerTest, BlockedLockTimesOutWithDeadlineExceeded) {
  ExclusiveGuard x = *m(1).XLock(*b_, gcl_);
  auto r = m(0).SLock(*a_, gcl_);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(m(0).Stats().lock_timeouts, 1u);
}

TEST_F(SelManagerTest, WaitingLockGetsTheLatchWhenReleased) {
  ExclusiveGuard x = *m(1).XLock(*b_, gcl_);
  std::memcpy(x.MutableRange(0, 4), "abcd", 4);
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(20));
    ASSERT_TRUE(x.Unlock().ok());
  });
  auto r = m(0).SLock(*a_, gcl_);
  releaser.join();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->data()), 4), "abcd");
}

TEST_F(SelManagerTest, UpgradeSucceedsForALoneReader) {
  SharedGuard s = *m(0).SLock(*a_, gcl_);
  auto x = m(0).Upgrade(*a_, s);
  ASSERT_TRUE(x.ok()) << x.status();
  EXPECT_FALSE(s.owns_lock());
  EXPECT_EQ(LatchWord(), SelLatch::Exclusive(0));
  EXPECT_EQ(m(0).Stats().upgrades, 1u);
}

TEST_F(SelManagerTest, UpgradeAgainstAnotherReaderAbortsUnderNoWait) {
  SharedGuard mine = *m(0).SLock(*a_, gcl_);
  SharedGuard theirs = *m(1).SLock(*b_, gcl_);
  auto x = m(0).Upgrade(*a_, mine, {.no_wait = true});
  EXPECT_EQ(x.status().code(), absl::StatusCode::kAborted);
  EXPECT_FALSE(mine.owns_lock());  // our share was given back
  EXPECT_EQ(LatchWord(), 1u);
}

TEST_F(SelManagerTest, AllocateZeroesReusedLines) {
  {
    ExclusiveGuard x = *m(0).XLock(*a_, gcl_);
    std::memset(x.mutable_data(), 0xff, m(0).payload_bytes());
  }
  ASSERT_TRUE(m(0).Free(*a_, gcl_).ok());
  rdma::GlobalAddress again = *m(0).Allocate(*a_);
  EXPECT_EQ(again, gcl_);
  SharedGuard s = *m(0).SLock(*a_, again);
  for (uint32_t i = 0; i < m(0).payload_bytes(); ++i) {
    ASSERT_EQ(s.data()[i], 0) << "byte " << i;
  }
}

TEST_F(SelManagerTest, GlobalAtomicsOnRootWords) {
  const rdma::GlobalAddress ts = RootWordAddress(RootWord::kTimestampOracle);
  EXPECT_EQ(*m(0).FetchAndAdd(*a_, ts, 1), 0u);
  EXPECT_EQ(*m(1).FetchAndAdd(*b_, ts, 1), 1u);
  EXPECT_EQ(*m(1).CompareAndSwap(*b_, ts, 2, 10), 2u);
  EXPECT_EQ(*m(0).CompareAndSwap(*a_, ts, 2, 11), 10u);
}

}  // namespace
}  // namespace strand::cc::sel
