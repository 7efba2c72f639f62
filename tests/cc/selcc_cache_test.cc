// The SELCC cache's replacement (CLOCK, cache.h) on a Cache alone: which
// frames TakeVictims hands out, and in which order.

#include <set>
#include <vector>

#include "cc/selcc/cache.h"
#include "gtest/gtest.h"

namespace strand::cc::selcc {
namespace {

constexpr uint32_t kFrameBytes = 64;

class SelccCacheTest : public ::testing::Test {
 protected:
  SelccCacheTest() : cache_(32 * kFrameBytes, kFrameBytes) {}

  // Caches `n` distinct GCLs, unreferenced, and returns them.
  std::vector<rdma::GlobalAddress> Fill(int n) {
    std::vector<rdma::GlobalAddress> gcls;
    for (int i = 0; i < n; ++i) {
      const rdma::GlobalAddress gcl(0, 65536 + uint64_t{kFrameBytes} * i);
      Frame* f = cache_.TakeFree();
      EXPECT_NE(f, nullptr);
      if (f == nullptr) break;
      EXPECT_TRUE(f->latch.TryLock());
      EXPECT_EQ(cache_.Insert(gcl, f), Cache::InsertResult::kInserted);
      f->latch.Unlock();
      gcls.push_back(gcl);
    }
    return gcls;
  }
  // A hit on `gcl` (marks it referenced).
  void Touch(rdma::GlobalAddress gcl) {
    bool latched = false;
    Frame* f = cache_.Lookup(gcl, Cache::Mode::kShared, &latched);
    ASSERT_NE(f, nullptr);
    ASSERT_TRUE(latched);
    f->latch.UnlockShared();
  }
  // Takes up to `n` victims, frees them, and returns their GCLs.
  std::set<rdma::GlobalAddress> Evict(size_t n) {
    std::vector<Frame*> victims;
    cache_.TakeVictims(n, &victims);
    std::set<rdma::GlobalAddress> gcls;
    for (Frame* f : victims) {
      gcls.insert(f->gcl);
      cache_.EndInFlight(f->gcl);
      f->latch.Unlock();
      cache_.PutFree(f);
    }
    return gcls;
  }

  Cache cache_;
};

TEST_F(SelccCacheTest, ReferencedFramesSurviveOnePassUnreferencedGoFirst) {
  const std::vector<rdma::GlobalAddress> gcls = Fill(16);
  std::set<rdma::GlobalAddress> touched, untouched;
  for (size_t i = 0; i < gcls.size(); ++i) {
    if (i % 2 == 0) {
      Touch(gcls[i]);
      touched.insert(gcls[i]);
    } else {
      untouched.insert(gcls[i]);
    }
  }
  EXPECT_EQ(Evict(8), untouched);
  // The first pass took their second chance: now they go.
  EXPECT_EQ(Evict(8), touched);
  EXPECT_EQ(cache_.free_frames(), cache_.capacity());
}

TEST_F(SelccCacheTest, EveryFrameReferencedStillYieldsVictims) {
  const std::vector<rdma::GlobalAddress> gcls = Fill(24);
  for (rdma::GlobalAddress gcl : gcls) Touch(gcl);
  EXPECT_EQ(Evict(24).size(), 24u);
}

TEST_F(SelccCacheTest, LatchedOrPinnedFramesAreNeverVictims) {
  const std::vector<rdma::GlobalAddress> gcls = Fill(8);
  bool latched = false;
  Frame* held = cache_.Lookup(gcls[0], Cache::Mode::kShared, &latched);
  ASSERT_TRUE(latched);
  Frame* pinned = cache_.Lookup(gcls[1], Cache::Mode::kShared, &latched);
  ASSERT_TRUE(latched);
  pinned->latch.UnlockShared();
  pinned->pins.fetch_add(1);  // as a waiter's Lookup leaves it

  const std::set<rdma::GlobalAddress> evicted = Evict(8);
  EXPECT_EQ(evicted.size(), 6u);
  EXPECT_EQ(evicted.count(gcls[0]), 0u);
  EXPECT_EQ(evicted.count(gcls[1]), 0u);

  held->latch.UnlockShared();
  Cache::Unpin(pinned);
  EXPECT_EQ(Evict(8), std::set<rdma::GlobalAddress>({gcls[0], gcls[1]}));
}

}  // namespace
}  // namespace strand::cc::selcc
