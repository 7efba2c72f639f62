// The SELCC cache on a Cache alone: its replacement (CLOCK, cache.h), which
// frames TakeVictims hands out and in which order, and the lock-free hit
// path through the frame table (frame_table.h), which must never hand out a
// frame that no longer caches the GCL asked for.

#include <atomic>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cc/selcc/cache.h"
#include "gtest/gtest.h"

namespace strand::cc::selcc {
namespace {

constexpr uint32_t kFrameBytes = 64;
// The frame table covers one memory node of 1 MiB.
constexpr FrameTable::Geometry kPool{1, 1 << 20, kFrameBytes};

// With identity frames off and on (cache.h): every test holds both ways.
class SelccCacheTest : public ::testing::TestWithParam<bool> {
 protected:
  SelccCacheTest()
      : cache_(32 * kFrameBytes, kFrameBytes, kPool, /*identity_frames=*/
               GetParam()) {}

  // Publishes a free frame as `gcl`'s (unreferenced, latch free).
  Frame* Publish(rdma::GlobalAddress gcl) {
    Frame* f = cache_.TakeFree();
    EXPECT_NE(f, nullptr);
    if (f == nullptr) return nullptr;
    EXPECT_TRUE(f->latch.TryLock());
    EXPECT_EQ(cache_.Insert(gcl, f), Cache::InsertResult::kInserted);
    f->latch.Unlock();
    return f;
  }

  // Caches `n` distinct GCLs, unreferenced, and returns them.
  std::vector<rdma::GlobalAddress> Fill(int n) {
    std::vector<rdma::GlobalAddress> gcls;
    for (int i = 0; i < n; ++i) {
      const rdma::GlobalAddress gcl(0, 65536 + uint64_t{kFrameBytes} * i);
      if (Publish(gcl) == nullptr) break;
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

TEST_P(SelccCacheTest, ReferencedFramesSurviveOnePassUnreferencedGoFirst) {
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

TEST_P(SelccCacheTest, EveryFrameReferencedStillYieldsVictims) {
  const std::vector<rdma::GlobalAddress> gcls = Fill(24);
  for (rdma::GlobalAddress gcl : gcls) Touch(gcl);
  EXPECT_EQ(Evict(24).size(), 24u);
}

TEST_P(SelccCacheTest, LatchedOrPinnedFramesAreNeverVictims) {
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

TEST_P(SelccCacheTest, TableHitLatchesTheFrameWithoutTheMap) {
  const std::vector<rdma::GlobalAddress> gcls = Fill(4);
  for (rdma::GlobalAddress gcl : gcls) {
    Frame* f = cache_.LatchDirect(gcl, Cache::Mode::kShared);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->gcl, gcl);
    EXPECT_TRUE(f->referenced.load());
    f->latch.UnlockShared();
  }
  // A busy latch is no hit: the caller falls back to Lookup and waits.
  Frame* x = cache_.LatchDirect(gcls[0], Cache::Mode::kExclusive);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(cache_.LatchDirect(gcls[0], Cache::Mode::kShared), nullptr);
  EXPECT_EQ(cache_.LatchDirect(gcls[0], Cache::Mode::kExclusive), nullptr);
  x->latch.Unlock();
  // Not cached, or outside the pool the table covers: no slot names it.
  EXPECT_EQ(cache_.LatchDirect(rdma::GlobalAddress(0, 65536 + 64 * kFrameBytes),
                               Cache::Mode::kShared),
            nullptr);
  const rdma::GlobalAddress beyond(0, uint64_t{4} << 20);
  const rdma::GlobalAddress other_node(3, 65536);
  Publish(beyond);
  Publish(other_node);
  for (rdma::GlobalAddress gcl : {beyond, other_node}) {
    EXPECT_EQ(cache_.LatchDirect(gcl, Cache::Mode::kShared), nullptr);
    bool latched = false;
    Frame* f = cache_.Lookup(gcl, Cache::Mode::kShared, &latched);
    ASSERT_NE(f, nullptr) << gcl;
    ASSERT_TRUE(latched);
    f->latch.UnlockShared();
  }
}

TEST_P(SelccCacheTest, EvictedOrReusedFrameIsNotTakenForItsOldLine) {
  const rdma::GlobalAddress old_line = Fill(1)[0];
  Frame* f = cache_.LatchDirect(old_line, Cache::Mode::kShared);
  ASSERT_NE(f, nullptr);
  f->latch.UnlockShared();
  ASSERT_EQ(Evict(1), std::set<rdma::GlobalAddress>({old_line}));
  EXPECT_EQ(cache_.LatchDirect(old_line, Cache::Mode::kShared), nullptr);
  // A reader that read the slot before the eviction latches a free frame.
  EXPECT_FALSE(Cache::LatchIfCaching(f, old_line, Cache::Mode::kShared));
  EXPECT_TRUE(f->latch.IsFree());
  // The frame is reused for another line (the free list is LIFO).
  const rdma::GlobalAddress new_line(0, 65536 + 5 * kFrameBytes);
  ASSERT_EQ(Publish(new_line), f);
  EXPECT_EQ(cache_.LatchDirect(old_line, Cache::Mode::kExclusive), nullptr);
  EXPECT_FALSE(Cache::LatchIfCaching(f, old_line, Cache::Mode::kExclusive));
  EXPECT_TRUE(f->latch.IsFree());
  EXPECT_EQ(cache_.LatchDirect(new_line, Cache::Mode::kExclusive), f);
  // Taken out of the map by Remove (Free()): no longer named either.
  cache_.Remove(f);
  f->latch.Unlock();
  cache_.PutFree(f);
  EXPECT_EQ(cache_.LatchDirect(new_line, Cache::Mode::kShared), nullptr);
}

TEST_P(SelccCacheTest, LinesOffTheGridSharingASlotFallBackToTheMap) {
  // 8 bytes apart: both map to slot 65536 / 64.
  const rdma::GlobalAddress a(0, 65536), b(0, 65536 + 8);
  Frame* fa = Publish(a);
  Frame* fb = Publish(b);
  ASSERT_NE(fa, nullptr);
  ASSERT_NE(fb, nullptr);
  // The slot names b's frame: a's hit is refused under the latch.
  EXPECT_EQ(cache_.LatchDirect(a, Cache::Mode::kShared), nullptr);
  EXPECT_TRUE(fb->latch.IsFree());
  Frame* f = cache_.LatchDirect(b, Cache::Mode::kShared);
  EXPECT_EQ(f, fb);
  if (f != nullptr) f->latch.UnlockShared();
  // A lookup of a re-publishes its frame.
  bool latched = false;
  ASSERT_EQ(cache_.Lookup(a, Cache::Mode::kShared, &latched), fa);
  ASSERT_TRUE(latched);
  fa->latch.UnlockShared();
  f = cache_.LatchDirect(a, Cache::Mode::kShared);
  EXPECT_EQ(f, fa);
  if (f != nullptr) f->latch.UnlockShared();
  // Removing b leaves a's slot alone.
  ASSERT_TRUE(fb->latch.TryLock());
  cache_.Remove(fb);
  fb->latch.Unlock();
  cache_.PutFree(fb);
  f = cache_.LatchDirect(a, Cache::Mode::kShared);
  EXPECT_EQ(f, fa);
  if (f != nullptr) f->latch.UnlockShared();
}

TEST_P(SelccCacheTest, ConcurrentHitsNeverFindAnotherLinesFrame) {
  // Threads latch random lines of a pool 8x the cache, shared or
  // exclusive, evicting as they go, the way SelccManager::LatchFrame does;
  // every frame's payload is stamped with its line's address when loaded,
  // so a frame handed out for the wrong line shows at once. Besides the
  // table, each thread first tries the frame it last saw for the line: a
  // stale slot read just before an eviction is a narrow race, while these
  // remembered frames are mostly stale (evicted, reused, being loaded by
  // another thread), so LatchIfCaching's check is exercised on every op.
  constexpr int kLines = 256;
  constexpr int kThreads = 4;
  constexpr int kOps = 20000;
  std::atomic<uint64_t> direct_hits{0}, wrong{0};
  auto worker = [&](int seed) {
    std::mt19937 rng(seed);
    std::vector<Frame*> last_seen(kLines, nullptr);
    for (int op = 0; op < kOps; ++op) {
      const int line = static_cast<int>(rng() % kLines);
      // From the pool's start: with identity frames, the first 32 lines
      // have one (and lend it out when it is free), the rest never do.
      const rdma::GlobalAddress gcl(0, uint64_t{kFrameBytes} * line);
      const Cache::Mode mode =
          rng() % 4 == 0 ? Cache::Mode::kExclusive : Cache::Mode::kShared;
      const auto unlock = [mode](Frame* f) {
        mode == Cache::Mode::kShared ? f->latch.UnlockShared()
                                     : f->latch.Unlock();
      };
      Frame* f = last_seen[line];
      if (f != nullptr && !Cache::LatchIfCaching(f, gcl, mode)) f = nullptr;
      if (f == nullptr) {
        f = cache_.LatchDirect(gcl, mode);
        if (f != nullptr) direct_hits.fetch_add(1, std::memory_order_relaxed);
      }
      while (f == nullptr) {
        bool latched = false;
        f = cache_.Lookup(gcl, mode, &latched);
        if (f != nullptr) {
          if (!latched) {
            const absl::Time deadline = absl::Now() + absl::Seconds(30);
            const bool ok = mode == Cache::Mode::kShared
                                ? f->latch.LockSharedUntil(deadline)
                                : f->latch.LockUntil(deadline);
            Cache::Unpin(f);
            ASSERT_TRUE(ok);
            if (f->gcl != gcl || !f->in_map) {
              unlock(f);
              f = nullptr;
            }
          }
          continue;
        }
        Frame* fresh = cache_.TakeFree(gcl);
        if (fresh == nullptr) {
          std::vector<Frame*> victims;
          cache_.TakeVictims(1, &victims);
          for (Frame* v : victims) {
            std::memset(v->data, 0, kFrameBytes);
            cache_.EndInFlight(v->gcl);
            v->latch.Unlock();
            cache_.PutFree(v);
          }
          if (victims.empty()) std::this_thread::yield();
          continue;
        }
        ASSERT_TRUE(fresh->latch.LockUntil(absl::Now() + absl::Seconds(30)));
        const uint64_t stamp = gcl.raw();
        std::memcpy(fresh->data, &stamp, 8);
        if (cache_.Insert(gcl, fresh) == Cache::InsertResult::kInserted) {
          if (mode == Cache::Mode::kShared) fresh->latch.Downgrade();
          f = fresh;
        } else {
          fresh->latch.Unlock();
          cache_.PutFree(fresh);
        }
      }
      uint64_t stamp = 0;
      std::memcpy(&stamp, f->data, 8);
      if (stamp != gcl.raw() || f->gcl != gcl || !f->in_map) {
        wrong.fetch_add(1, std::memory_order_relaxed);
      }
      last_seen[line] = f;
      unlock(f);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i + 1);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0u);
  // The table served hits, and lines came and went meanwhile.
  EXPECT_GT(direct_hits.load(), 0u);
  EXPECT_LT(direct_hits.load(), uint64_t{kThreads} * kOps);
}

// A miss takes its GCL's identity frame when free, and a hit finds it from
// the address; a GCL whose identity frame another one holds goes through
// the frame table, and one past the last frame has none.
TEST_P(SelccCacheTest, IdentityFramesAreTakenAndFoundFromTheAddress) {
  const rdma::GlobalAddress a(0, 3 * kFrameBytes), b(0, 7 * kFrameBytes);
  Frame* const identity_a = cache_.IdentityFrame(a);
  if (!GetParam()) {
    EXPECT_EQ(identity_a, nullptr);
    return;
  }
  ASSERT_NE(identity_a, nullptr);
  EXPECT_EQ(cache_.IdentityFrame(rdma::GlobalAddress(0, 32 * kFrameBytes)),
            nullptr);  // past the 32 frames
  EXPECT_EQ(cache_.IdentityFrame(rdma::GlobalAddress(1, 0)), nullptr);
  // a's miss takes its identity frame; the hit finds it.
  Frame* fa = cache_.TakeFree(a);
  ASSERT_EQ(fa, identity_a);
  ASSERT_TRUE(fa->latch.TryLock());
  ASSERT_EQ(cache_.Insert(a, fa), Cache::InsertResult::kInserted);
  fa->latch.Unlock();
  EXPECT_EQ(cache_.FrameHint(a), fa);
  Frame* f = cache_.LatchDirect(a, Cache::Mode::kShared);
  EXPECT_EQ(f, fa);
  if (f != nullptr) f->latch.UnlockShared();
  // c, with no identity frame, gets b's (the free list's next).
  Frame* const identity_b = cache_.IdentityFrame(b);
  const rdma::GlobalAddress c(0, 40 * kFrameBytes);
  Frame* fc = nullptr;
  std::vector<Frame*> others;
  while ((fc = cache_.TakeFree(c)) != identity_b) {
    ASSERT_NE(fc, nullptr);
    ASSERT_NE(fc, identity_a);  // taken: never handed out twice
    others.push_back(fc);
  }
  for (Frame* o : others) cache_.PutFree(o);
  ASSERT_TRUE(fc->latch.TryLock());
  ASSERT_EQ(cache_.Insert(c, fc), Cache::InsertResult::kInserted);
  fc->latch.Unlock();
  // b's miss then takes another frame, and its hits go through the table:
  // its identity frame names c, never b.
  Frame* fb = cache_.TakeFree(b);
  ASSERT_NE(fb, nullptr);
  ASSERT_NE(fb, identity_b);
  ASSERT_TRUE(fb->latch.TryLock());
  ASSERT_EQ(cache_.Insert(b, fb), Cache::InsertResult::kInserted);
  fb->latch.Unlock();
  EXPECT_EQ(cache_.FrameHint(b), fb);
  EXPECT_EQ(cache_.FrameHint(c), fc);
  for (rdma::GlobalAddress gcl : {b, c}) {
    f = cache_.LatchDirect(gcl, Cache::Mode::kExclusive);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->gcl, gcl);
    f->latch.Unlock();
  }
  // Once c's frame is free again, b's next miss (after b is gone) finds
  // its identity frame.
  ASSERT_TRUE(fb->latch.TryLock());
  cache_.Remove(fb);
  fb->latch.Unlock();
  cache_.PutFree(fb);
  ASSERT_TRUE(fc->latch.TryLock());
  cache_.Remove(fc);
  fc->latch.Unlock();
  cache_.PutFree(fc);
  EXPECT_EQ(cache_.TakeFree(b), identity_b);
}

INSTANTIATE_TEST_SUITE_P(FrameLookup, SelccCacheTest, ::testing::Bool(),
                         [](const auto& info) {
                           return std::string(info.param ? "identity"
                                                         : "table");
                         });

}  // namespace
}  // namespace strand::cc::selcc
