// Optimistic reads (GclManager::OptimisticRead / Validate) step by step:
// when a token is handed out, and which events spend it. Each event that
// changes a frame (a local write, a remote writer's invalidation, an
// eviction and the frame's reuse, a Free) must fail a token taken before
// it; shared latches must not. The seqlock itself (the version in the
// local latch word) is checked first, on its own. Concurrency is the
// stress test's (coherence_stress_test.cc, OptimisticReadsSeeWhole...).

#include "cc/optimistic_read.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "cc/gcl_manager.h"
#include "cc/selcc/local_latch.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc {
namespace {

using selcc::LocalLatch;

TEST(LocalLatchVersionTest, ExclusiveReleasesMoveTheVersionSharedOnesDoNot) {
  LocalLatch l;
  const auto begin = l.OptimisticBegin();
  ASSERT_TRUE(begin.has_value());
  EXPECT_TRUE(l.OptimisticValid(*begin));

  ASSERT_TRUE(l.TryLockShared());
  ASSERT_TRUE(l.TryLockShared());
  EXPECT_TRUE(l.OptimisticBegin().has_value());  // readers do not block it
  l.UnlockShared();
  l.UnlockShared();
  EXPECT_TRUE(l.OptimisticValid(*begin));
  EXPECT_EQ(l.version(), 0u);

  ASSERT_TRUE(l.TryLock());
  EXPECT_FALSE(l.OptimisticBegin().has_value());  // a writer is in
  EXPECT_FALSE(l.OptimisticValid(*begin));        // even before it leaves
  l.Unlock();
  EXPECT_EQ(l.version(), 1u);
  EXPECT_FALSE(l.OptimisticValid(*begin));
  EXPECT_TRUE(l.IsFree());

  // Downgrade is a release of the exclusive latch too.
  const auto second = l.OptimisticBegin();
  ASSERT_TRUE(second.has_value());
  ASSERT_TRUE(l.TryLockIdle());
  l.Downgrade();
  EXPECT_EQ(l.version(), 2u);
  EXPECT_FALSE(l.OptimisticValid(*second));
  EXPECT_TRUE(l.TryLockShared());  // Downgrade left one shared holder
  EXPECT_FALSE(l.TryUpgrade());    // ... so two now
  l.UnlockShared();
  ASSERT_TRUE(l.TryUpgrade());
  l.Unlock();
  EXPECT_EQ(l.version(), 3u);

  // Failed attempts change nothing.
  ASSERT_TRUE(l.TryLockShared());
  const auto third = l.OptimisticBegin();
  EXPECT_FALSE(l.TryLock());
  EXPECT_FALSE(l.TryLockIdle());
  l.UnlockShared();
  EXPECT_TRUE(l.OptimisticValid(*third));
  EXPECT_EQ(l.version(), 3u);
}

TEST(LocalLatchVersionTest, WaiterBitsLeaveTheVersionAlone) {
  LocalLatch l;
  ASSERT_TRUE(l.TryLock());
  // A writer that waits announces itself, gives up at its deadline and
  // withdraws; the version is the holder's alone.
  std::thread waiter(
      [&] { EXPECT_FALSE(l.LockUntil(absl::Now() + absl::Milliseconds(20))); });
  waiter.join();
  l.Unlock();
  EXPECT_EQ(l.version(), 1u);
  EXPECT_TRUE(l.IsFree());
}

TEST(LoadRelaxedTest, ReadsUnalignedValuesAcrossWords) {
  alignas(8) uint8_t bytes[32];
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  for (int at = 0; at + 8 <= 32; ++at) {
    uint64_t want8;
    uint32_t want4;
    uint16_t want2;
    std::memcpy(&want8, bytes + at, 8);
    std::memcpy(&want4, bytes + at, 4);
    std::memcpy(&want2, bytes + at, 2);
    EXPECT_EQ(LoadRelaxed<uint64_t>(bytes + at), want8) << "at " << at;
    EXPECT_EQ(LoadRelaxed<uint32_t>(bytes + at), want4) << "at " << at;
    EXPECT_EQ(LoadRelaxed<uint16_t>(bytes + at), want2) << "at " << at;
  }
}

CcOptions Options(Protocol protocol) {
  CcOptions o;
  o.protocol = protocol;
  o.gcl_size = 256;
  o.cache_bytes = 64 * 256;
  o.lock_timeout = absl::Milliseconds(500);
  return o;
}

class OptimisticReadTest : public ::testing::Test {
 protected:
  void Build(const CcOptions& o, int nodes = 2) {
    auto cluster = testing::CcCluster::Create(nodes, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    for (int i = 0; i < nodes; ++i) ctx_.push_back(*m(i).NewThreadContext());
    gcl_ = *m(0).Allocate(c(0));
  }
  void TearDown() override {
    ctx_.clear();
    cluster_.reset();
  }
  GclManager& m(int i) { return cluster_->manager(i); }
  ThreadContext& c(int i) { return *ctx_[i]; }
  void Write(int node, uint64_t value, rdma::GlobalAddress gcl) {
    auto x = m(node).XLock(c(node), gcl);
    ASSERT_TRUE(x.ok()) << x.status();
    std::memcpy(x->MutableRange(0, 8), &value, 8);
  }
  void Touch(int node, rdma::GlobalAddress gcl) {
    auto s = m(node).SLock(c(node), gcl);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  // The first word through a token, or nullopt when none is handed out
  // or it does not validate.
  std::optional<uint64_t> ReadOptimistic(int node, rdma::GlobalAddress gcl) {
    const OptimisticToken t = m(node).OptimisticRead(c(node), gcl);
    if (!t.ok()) return std::nullopt;
    const uint64_t v = LoadRelaxed<uint64_t>(t.data());
    if (!GclManager::Validate(t)) return std::nullopt;
    return v;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::vector<std::unique_ptr<ThreadContext>> ctx_;
  rdma::GlobalAddress gcl_;
};

TEST_F(OptimisticReadTest, SelHasNoCacheAndNeverHandsOutAToken) {
  Build(Options(Protocol::kSel));
  Write(0, 5, gcl_);
  Touch(0, gcl_);
  EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_).ok());
  EXPECT_FALSE(GclManager::Validate(OptimisticToken()));
}

TEST_F(OptimisticReadTest, OnlyCachedValidCopiesAreRead) {
  Build(Options(Protocol::kSelcc));
  // Allocated by node 0 but never latched: not cached anywhere.
  EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_).ok());
  Write(0, 41, gcl_);  // node 0: M
  EXPECT_EQ(ReadOptimistic(0, gcl_), 41u);
  // An address off the GCL grid shares gcl_'s frame-table slot, so the
  // table names gcl_'s frame for it (frame_table.h): that frame caches
  // another GCL, and no token may read it as this one's.
  EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_ + 8).ok());
  EXPECT_FALSE(m(1).OptimisticRead(c(1), gcl_).ok());  // node 1: no copy
  Touch(1, gcl_);                                      // both S
  EXPECT_EQ(ReadOptimistic(1, gcl_), 41u);
  EXPECT_EQ(ReadOptimistic(0, gcl_), 41u);
  const CacheStats s = m(1).Stats();
  EXPECT_EQ(s.optimistic_reads, 1u);
  EXPECT_EQ(s.optimistic_refusals, 1u);
  EXPECT_EQ(m(0).Stats().optimistic_refusals, 2u);
}

TEST_F(OptimisticReadTest, LocalWriterSpendsTheTokenSharedReadersDoNot) {
  Build(Options(Protocol::kSelcc));
  Write(0, 1, gcl_);
  const OptimisticToken t = m(0).OptimisticRead(c(0), gcl_);
  ASSERT_TRUE(t.ok());
  // Shared latches by other threads leave it valid.
  std::thread reader([&] {
    auto ctx = *m(0).NewThreadContext();
    auto s = m(0).SLock(*ctx, gcl_);
    ASSERT_TRUE(s.ok()) << s.status();
  });
  reader.join();
  EXPECT_TRUE(GclManager::Validate(t));
  {
    auto x = m(0).XLock(c(0), gcl_);
    ASSERT_TRUE(x.ok()) << x.status();
    // Held exclusive: spent at once, and no new token while it is held.
    EXPECT_FALSE(GclManager::Validate(t));
    EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_).ok());
  }
  // Released without a write: still spent (the version moved).
  EXPECT_FALSE(GclManager::Validate(t));
  EXPECT_EQ(ReadOptimistic(0, gcl_), 1u);
}

TEST_F(OptimisticReadTest, RemoteWriterInvalidatesTheCopyAndTheToken) {
  Build(Options(Protocol::kSelcc));
  Write(0, 1, gcl_);
  Touch(1, gcl_);  // both S
  const OptimisticToken t = m(1).OptimisticRead(c(1), gcl_);
  ASSERT_TRUE(t.ok());
  Write(0, 2, gcl_);  // node 0 takes M: node 1's copy is invalidated
  EXPECT_FALSE(GclManager::Validate(t));
  EXPECT_FALSE(m(1).OptimisticRead(c(1), gcl_).ok());  // memo I now
  Touch(1, gcl_);
  EXPECT_EQ(ReadOptimistic(1, gcl_), 2u);
}

TEST_F(OptimisticReadTest, EvictionAndFrameReuseSpendTheToken) {
  CcOptions o = Options(Protocol::kSelcc);
  o.cache_bytes = 16 * o.gcl_size;  // 16 frames
  // Foreground eviction: the frame a miss evicts goes straight to that
  // miss's GCL, so once the free frames are used up no frame sits free
  // and the first GCL's frame ends up holding another GCL.
  o.batched_eviction = false;
  Build(o, 1);
  Write(0, 7, gcl_);
  const OptimisticToken t = m(0).OptimisticRead(c(0), gcl_);
  ASSERT_TRUE(t.ok());
  const uint8_t* frame = t.data();
  // Which GCL the CLOCK hand reaches first depends on the shard each
  // address hashes to, and absl's hash is seeded per process: write new
  // GCLs until ours is evicted and its frame holds one of them, rather
  // than after a fixed number. A full turn of the hand over 16 frames
  // takes far fewer than kMaxWrites misses.
  constexpr int kMaxWrites = 1024;
  std::vector<rdma::GlobalAddress> others;
  std::optional<size_t> reuser;  // the index in `others` now in `frame`
  while (!reuser.has_value() && others.size() < kMaxWrites) {
    others.push_back(*m(0).Allocate(c(0)));
    const size_t i = others.size() - 1;
    Write(0, 1000 + i, others[i]);
    const OptimisticToken u = m(0).OptimisticRead(c(0), others[i]);
    if (u.ok() && u.data() == frame) reuser = i;
  }
  ASSERT_TRUE(reuser.has_value())
      << "the frame of the first GCL was never reused in " << kMaxWrites
      << " misses";
  EXPECT_GE(m(0).Stats().evictions, 1u);
  EXPECT_FALSE(GclManager::Validate(t));
  // The frame now holds another GCL: no token for ours, and the one for
  // the GCL the frame holds reads that GCL's value.
  EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_).ok());
  const OptimisticToken u = m(0).OptimisticRead(c(0), others[*reuser]);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u.data(), frame);
  EXPECT_EQ(LoadRelaxed<uint64_t>(u.data()), 1000u + *reuser);
  Touch(0, gcl_);
  EXPECT_EQ(ReadOptimistic(0, gcl_), 7u);
}

TEST_F(OptimisticReadTest, FreeSpendsTheToken) {
  Build(Options(Protocol::kSelcc));
  Write(0, 9, gcl_);
  const OptimisticToken t = m(0).OptimisticRead(c(0), gcl_);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(m(0).Free(c(0), gcl_).ok());
  EXPECT_FALSE(GclManager::Validate(t));
  EXPECT_FALSE(m(0).OptimisticRead(c(0), gcl_).ok());
}

}  // namespace
}  // namespace strand::cc
