// GclManager::PrefetchEntry and PrefetchLines on every protocol: hints only.
// On a cached GCL, an uncached one and addresses that name no GCL (null,
// off the GCL grid, beyond the pool, on a memory node that does not exist),
// with offsets and byte counts past the payload, they must not crash, make
// no round trip or message, change no cache counter, leave no latch taken
// and change no payload byte; nor may they bring an uncached GCL into the
// cache.

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cc/gcl_manager.h"
#include "cc/selcc/selcc_manager.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/protocols.h"

namespace strand::cc {
namespace {

using rdma::GlobalAddress;

constexpr uint32_t kGclSize = 256;

class PrefetchHintTest : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override {
    CcOptions o;
    o.protocol = GetParam();
    o.gcl_size = kGclSize;
    o.cache_bytes = kGclSize * 64;
    o.lock_timeout = absl::Milliseconds(500);
    auto cluster = testing::CcCluster::Create(2, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx0_ = *m(0).NewThreadContext();
    ctx1_ = *m(1).NewThreadContext();
    // `cached_` is written (so cached, on SELCC) by node 0, `uncached_` by
    // node 1 only: node 0 has never latched it.
    cached_ = *m(0).Allocate(*ctx0_);
    uncached_ = *m(1).Allocate(*ctx1_);
    Fill(m(0), *ctx0_, cached_, 0x11);
    Fill(m(1), *ctx1_, uncached_, 0x77);
  }
  void TearDown() override {
    ctx0_.reset();
    ctx1_.reset();
    cluster_.reset();
  }

  GclManager& m(int i) { return cluster_->manager(i); }

  // The payload as `seed` fills it: byte i is seed + i.
  std::vector<uint8_t> Pattern(uint8_t seed) const {
    std::vector<uint8_t> p(cluster_->manager(0).payload_bytes());
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>(seed + i);
    return p;
  }
  void Fill(GclManager& manager, ThreadContext& ctx, GlobalAddress gcl,
            uint8_t seed) {
    auto x = manager.XLock(ctx, gcl);
    ASSERT_TRUE(x.ok()) << x.status();
    const std::vector<uint8_t> p = Pattern(seed);
    std::memcpy(x->mutable_data(), p.data(), p.size());
    ASSERT_TRUE(x->Unlock().ok());
  }

  // Whether node 0 caches `gcl` (always false for SEL, which has no cache).
  bool CachedOnNode0(GlobalAddress gcl) {
    if (GetParam() != Protocol::kSelcc) return false;
    return static_cast<SelccManager&>(m(0)).DebugState(gcl).cached;
  }

  // Every hint of node 0 on `gcl`, with offsets and sizes inside, at the
  // edge of and far beyond the payload.
  void HintAll(GlobalAddress gcl) {
    const GclManager& n0 = m(0);
    const uint32_t payload = n0.payload_bytes();
    constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
    n0.PrefetchEntry(gcl);
    const uint32_t offsets[] = {0,           1,         63,          64,
                                payload - 1, payload,   payload + 1, kGclSize,
                                1u << 20,    kMax - 64, kMax};
    const uint32_t sizes[] = {0,       1,           8,        64,
                              payload, payload + 1, kMax - 1, kMax};
    for (uint32_t offset : offsets) {
      for (uint32_t bytes : sizes) n0.PrefetchLines(gcl, offset, bytes);
    }
  }

  // Hints on every address; then the counters must not have moved.
  void HintEverywhereAndExpectNoEffect() {
    const uint64_t pool = cluster_->fabric().memory_node_bytes();
    const std::vector<GlobalAddress> addresses = {
        cached_,
        uncached_,
        GlobalAddress(),                    // null
        cached_ + 8,                        // off the grid, inside a GCL
        cached_ + kGclSize / 2 + 3,         // off the grid, odd
        GlobalAddress(0, pool),             // just past the pool
        GlobalAddress(0, pool + kGclSize),  // beyond it
        GlobalAddress(0, GlobalAddress::kMaxOffset),
        GlobalAddress(1, cached_.offset()),  // no memory node 1
        GlobalAddress::FromRaw(~uint64_t{0}),
    };
    const std::string stats0 = m(0).Stats().ToString();
    const std::string stats1 = m(1).Stats().ToString();
    const rdma::FabricCounters fabric = cluster_->fabric().Counters();
    const rdma::FabricCounters endpoint = ctx0_->endpoint().Counters();
    for (int round = 0; round < 3; ++round) {
      for (GlobalAddress a : addresses) HintAll(a);
    }
    EXPECT_EQ(m(0).Stats().ToString(), stats0);
    EXPECT_EQ(m(1).Stats().ToString(), stats1);
    EXPECT_EQ(cluster_->fabric().Counters(), fabric)
        << "before: " << fabric.ToString()
        << "\nafter: " << cluster_->fabric().Counters().ToString();
    EXPECT_EQ(ctx0_->endpoint().Counters(), endpoint);
  }

  // Node 0 takes `gcl` exclusively without waiting (so nobody, the hints
  // included, left a latch taken on it) and finds `want` in it.
  void ExpectFreeAndHolding(GlobalAddress gcl, uint8_t seed) {
    auto x = m(0).XLock(*ctx0_, gcl, {.no_wait = true});
    ASSERT_TRUE(x.ok()) << x.status();
    const std::vector<uint8_t> want = Pattern(seed);
    ASSERT_EQ(x->size(), want.size());
    EXPECT_EQ(std::memcmp(x->data(), want.data(), want.size()), 0);
    ASSERT_TRUE(x->Unlock().ok());
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<ThreadContext> ctx0_, ctx1_;
  GlobalAddress cached_, uncached_;
};

TEST_P(PrefetchHintTest, HintsChangeNoCounterAndNoCacheState) {
  const bool selcc = GetParam() == Protocol::kSelcc;
  ASSERT_EQ(CachedOnNode0(cached_), selcc);
  ASSERT_FALSE(CachedOnNode0(uncached_));
  HintEverywhereAndExpectNoEffect();
  // A hint is no fetch: the uncached GCL is still not cached here.
  EXPECT_EQ(CachedOnNode0(cached_), selcc);
  EXPECT_FALSE(CachedOnNode0(uncached_));
}

TEST_P(PrefetchHintTest, LatchesAreFreeAndPayloadsIntactAfterHints) {
  HintEverywhereAndExpectNoEffect();
  ExpectFreeAndHolding(cached_, 0x11);
  ExpectFreeAndHolding(uncached_, 0x77);
  // And from the other node, which now has to take them back.
  auto s = m(1).SLock(*ctx1_, cached_, {.no_wait = true});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(std::memcmp(s->data(), Pattern(0x11).data(), m(1).payload_bytes()),
            0);
}

TEST_P(PrefetchHintTest, HintsWhileThisThreadHoldsTheLatch) {
  // A caller may hint a GCL it holds (a batch naming one leaf twice): the
  // hint must neither wait for the latch nor disturb the holder.
  for (bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "shared");
    const CacheStats before = m(0).Stats();
    const rdma::FabricCounters fabric = cluster_->fabric().Counters();
    if (exclusive) {
      auto x = m(0).XLock(*ctx0_, cached_);
      ASSERT_TRUE(x.ok()) << x.status();
      HintAll(cached_);
      EXPECT_EQ(std::memcmp(x->data(), Pattern(0x11).data(), x->size()), 0);
      ASSERT_TRUE(x->Unlock().ok());
    } else {
      auto s = m(0).SLock(*ctx0_, cached_);
      ASSERT_TRUE(s.ok()) << s.status();
      HintAll(cached_);
      EXPECT_EQ(
          std::memcmp(s->data(), Pattern(0x11).data(), m(0).payload_bytes()),
          0);
      ASSERT_TRUE(s->Unlock().ok());
    }
    // The one lock, and nothing of the hints: on SELCC a hit (no remote
    // op at all), on SEL its round trips.
    const CacheStats delta = m(0).Stats() - before;
    EXPECT_EQ(delta.locks(), 1u) << delta.ToString();
    EXPECT_EQ(delta.lock_retries, 0u);
    if (GetParam() == Protocol::kSelcc) {
      EXPECT_EQ(delta.hits, 1u) << delta.ToString();
      EXPECT_EQ(cluster_->fabric().Counters(), fabric);
    }
  }
  ExpectFreeAndHolding(cached_, 0x11);
}

INSTANTIATE_TEST_SUITE_P(Protocols, PrefetchHintTest,
                         ::testing::ValuesIn(testing::TestProtocols()),
                         testing::ProtocolTestName);

}  // namespace
}  // namespace strand::cc
