// The B-link tree under concurrency: several compute nodes and threads
// inserting into one tree (one key at a time and in batches) while it
// splits and grows, and scans and batched lookups running during the
// splits.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/cpu_path.h"
#include "tests/testing/protocols.h"

namespace strand::index {
namespace {

constexpr int kNodes = 4;
constexpr int kThreadsPerNode = 2;

std::string Key(uint64_t k) { return KeyBuilder().Uint64(k).Build(8); }

class BLinkTreeConcurrencyTest : public ::testing::TestWithParam<cc::Protocol> {
 protected:
  void SetUp() override {
    cc::CcOptions o;
    o.protocol = GetParam();
    o.gcl_size = 256;  // 13 keys per node: splits and root growth are common
    auto cluster = testing::CcCluster::Create(kNodes, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto ctx = *cluster_->manager(0).NewThreadContext();
    auto anchor = BLinkTree::Create(cluster_->manager(0), *ctx, {8, true});
    ASSERT_TRUE(anchor.ok()) << anchor.status();
    anchor_ = *anchor;
  }

  // Runs fn(node, thread, ctx, tree) on every thread of every node, each
  // with its own context and the node's own handle on the tree.
  // The keys k % 3 == 0 below `keys`, with value(k), inserted from node 0
  // before the splitting tests' readers and writers start.
  template <typename Value>
  void InsertOldKeys(uint64_t keys, Value value) {
    auto ctx = *cluster_->manager(0).NewThreadContext();
    auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx, anchor_,
                                 testing::TestTreeTuning());
    for (uint64_t k = 0; k < keys; k += 3) {
      ASSERT_TRUE(tree->Insert(*ctx, Key(k), value(k)).ok());
    }
  }

  // A writer halfway through its keys waits here until a reader counted a
  // read that ran while writes go on: on a busy machine the writers could
  // otherwise finish first. Bounded: a reader that failed stops counting.
  static void AwaitFirst(const std::atomic<uint64_t>& reads_during_writes) {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);
    while (reads_during_writes.load() == 0 && absl::Now() < give_up) {
      absl::SleepFor(absl::Microseconds(100));
    }
  }

  template <typename Fn>
  void RunOnAllThreads(Fn fn) {
    std::vector<std::thread> threads;
    for (int n = 0; n < kNodes; ++n) {
      for (int t = 0; t < kThreadsPerNode; ++t) {
        threads.emplace_back([&, n, t] {
          auto ctx = *cluster_->manager(n).NewThreadContext();
          auto tree = *BLinkTree::Open(cluster_->manager(n), *ctx, anchor_,
                                       testing::TestTreeTuning());
          fn(n, t, *ctx, *tree);
        });
      }
    }
    for (auto& t : threads) t.join();
  }

  std::vector<std::pair<uint64_t, uint64_t>> FullScan(cc::ThreadContext& ctx,
                                                      BLinkTree& tree,
                                                      bool backward) {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    auto visit = [&](std::string_view k, uint64_t v) {
      out.emplace_back(DecodeUint64(k.data()), v);
      return true;
    };
    absl::Status s = backward
                         ? tree.ScanBackward(ctx, std::nullopt, std::nullopt,
                                             BLinkTree::kNoLimit, visit)
                         : tree.Scan(ctx, std::nullopt, std::nullopt,
                                     BLinkTree::kNoLimit, visit);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  rdma::GlobalAddress anchor_;
};

TEST_P(BLinkTreeConcurrencyTest, OverlappingAndDisjointInsertsFromAllNodes) {
  constexpr uint64_t kDisjoint = 1200;  // per thread
  constexpr uint64_t kShared = 600;     // every thread tries each of these
  constexpr uint64_t kSharedBase = 1'000'000;
  // std::mutex, not absl::Mutex: TSan sees it (tests/cc/tsan_suppressions.txt).
  std::mutex mu;
  absl::flat_hash_map<uint64_t, uint64_t> winners;  // shared key -> value
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    const uint64_t me = n * kThreadsPerNode + t;
    for (uint64_t i = 0; i < std::max(kDisjoint, kShared); ++i) {
      // Interleave: disjoint keys strided across threads (so threads split
      // the same leaves), shared keys in an order of each thread's own.
      if (i < kDisjoint) {
        const uint64_t k = i * kNodes * kThreadsPerNode + me;
        ASSERT_TRUE(tree.Insert(ctx, Key(k), k * 10).ok());
      }
      if (i < kShared) {
        const uint64_t k = kSharedBase + (i * 7 + me * 13) % kShared;
        absl::Status s = tree.Insert(ctx, Key(k), me);
        if (s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          EXPECT_TRUE(winners.emplace(k, me).second) << "two winners for " << k;
        } else {
          ASSERT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
        }
      }
    }
  });
  EXPECT_EQ(winners.size(), kShared);

  auto ctx = *cluster_->manager(3).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(3), *ctx, anchor_,
                               testing::TestTreeTuning());
  auto stats = tree->Verify(*ctx);  // order, fences, right links, parents
  ASSERT_TRUE(stats.ok()) << stats.status();
  const uint64_t total = kDisjoint * kNodes * kThreadsPerNode + kShared;
  EXPECT_EQ(stats->entries, total);
  EXPECT_GE(stats->height, 3);

  const auto forward = FullScan(*ctx, *tree, false);
  ASSERT_EQ(forward.size(), total);
  for (size_t i = 0; i < forward.size(); ++i) {
    const auto [k, v] = forward[i];
    if (i > 0) {
      ASSERT_LT(forward[i - 1].first, k);  // sorted, each once
    }
    if (k >= kSharedBase) {
      EXPECT_EQ(v, winners[k]);
    } else {
      EXPECT_EQ(v, k * 10);
    }
  }
  auto backward = FullScan(*ctx, *tree, true);
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(backward, forward);
  for (const auto& [k, v] : winners) {
    auto found = tree->Lookup(*ctx, Key(k));
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, v);
  }
}

TEST_P(BLinkTreeConcurrencyTest, BatchesAndPointInsertsFromAllNodes) {
  constexpr uint64_t kWorkers = kNodes * kThreadsPerNode;
  constexpr uint64_t kOwn = 1200;    // per thread, in batches
  constexpr uint64_t kShared = 600;  // every thread batch-inserts each
  constexpr uint64_t kSharedBase = 1'000'000;
  constexpr uint64_t kPointBase = 2'000'000;  // per thread, one at a time
  std::mutex mu;
  absl::flat_hash_map<uint64_t, uint64_t> winners;  // shared key -> value
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    const uint64_t me = n * kThreadsPerNode + t;
    std::mt19937_64 rng(me);
    std::vector<std::string> keys;
    std::vector<BLinkTree::Entry> batch;
    // Batch-inserts keys[i] -> value(keys' numbers) for the given numbers.
    auto insert = [&](const std::vector<uint64_t>& numbers, uint64_t value,
                      size_t* inserted) {
      keys.clear();
      batch.clear();
      for (uint64_t k : numbers) keys.push_back(Key(k));
      for (size_t i = 0; i < keys.size(); ++i) {
        batch.push_back({keys[i], value == 0 ? numbers[i] * 10 : value});
      }
      return tree.InsertBatch(ctx, batch, inserted);
    };
    // Own keys are strided across threads, so every batch shares its
    // leaves (and their splits) with the other threads' batches; shared
    // keys start at a different place per thread and wrap.
    uint64_t own = 0, shared = 0, point = 0;
    const uint64_t shared_start = me * 75;
    while (own < kOwn || point < kOwn || shared < kShared) {
      std::vector<uint64_t> numbers;
      const uint64_t length = 1 + rng() % 20;
      for (; own < kOwn && numbers.size() < length; ++own) {
        numbers.push_back(own * kWorkers + me);
      }
      size_t inserted = 0;
      ASSERT_TRUE(insert(numbers, 0, &inserted).ok());
      ASSERT_EQ(inserted, numbers.size());
      for (uint64_t j = 0; j < length && point < kOwn; ++j) {
        const uint64_t k = kPointBase + point++ * kWorkers + me;
        ASSERT_TRUE(tree.Insert(ctx, Key(k), k * 10).ok());
      }
      // A shared batch stops at the first key another thread won; the
      // count says which keys this thread won, and the next batch starts
      // after the lost one.
      numbers.clear();
      const uint64_t first = shared;
      for (; shared < kShared && numbers.size() < length; ++shared) {
        const uint64_t k = kSharedBase + (shared_start + shared) % kShared;
        if (!numbers.empty() && k < numbers.back()) break;  // wrapped
        numbers.push_back(k);
      }
      if (numbers.empty()) continue;
      absl::Status s = insert(numbers, 1000 + me, &inserted);
      if (!s.ok()) {
        ASSERT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
        ASSERT_LT(inserted, numbers.size());
        shared = first + inserted + 1;
      } else {
        ASSERT_EQ(inserted, numbers.size());
      }
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = 0; i < inserted; ++i) {
        EXPECT_TRUE(winners.emplace(numbers[i], 1000 + me).second)
            << "two winners for " << numbers[i];
      }
    }
  });
  EXPECT_EQ(winners.size(), kShared);

  auto ctx = *cluster_->manager(2).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(2), *ctx, anchor_,
                               testing::TestTreeTuning());
  auto stats = tree->Verify(*ctx);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const uint64_t total = 2 * kOwn * kWorkers + kShared;
  EXPECT_EQ(stats->entries, total);
  EXPECT_GE(stats->height, 3);
  const auto forward = FullScan(*ctx, *tree, false);
  ASSERT_EQ(forward.size(), total);
  for (size_t i = 0; i < forward.size(); ++i) {
    const auto [k, v] = forward[i];
    if (i > 0) {
      ASSERT_LT(forward[i - 1].first, k);  // sorted, each once
    }
    if (k >= kSharedBase && k < kPointBase) {
      EXPECT_EQ(v, winners[k]) << k;
    } else {
      EXPECT_EQ(v, k * 10) << k;
    }
  }
  auto backward = FullScan(*ctx, *tree, true);
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(backward, forward);
}

TEST_P(BLinkTreeConcurrencyTest, ScansDuringSplitsSeeEveryOlderKeyOnce) {
  // Even keys exist before the scans start; odd keys are inserted while
  // they run, splitting the leaves the scans walk.
  constexpr uint64_t kKeys = 4000;
  {
    auto ctx = *cluster_->manager(0).NewThreadContext();
    auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx, anchor_,
                                 testing::TestTreeTuning());
    for (uint64_t k = 0; k < kKeys; k += 2) {
      ASSERT_TRUE(tree->Insert(*ctx, Key(k), k).ok());
    }
  }
  std::atomic<int> writers_left{kNodes};
  std::atomic<int> scans{0};
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    if (t == 0) {  // one writer per node, each its own share of odd keys
      for (uint64_t k = 1 + 2 * n; k < kKeys; k += 2 * kNodes) {
        ASSERT_TRUE(tree.Insert(ctx, Key(k), k).ok());
      }
      writers_left--;
      return;
    }
    // Scanners: full scans both ways until the writers are done.
    for (int round = 0; writers_left > 0 || round < 2; ++round) {
      const bool backward = (round + n) % 2 == 1;
      auto got = FullScan(ctx, tree, backward);
      if (backward) std::reverse(got.begin(), got.end());
      uint64_t evens = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (i > 0) {
          ASSERT_LT(got[i - 1].first, got[i].first)
              << (backward ? "backward" : "forward") << " scan out of order";
        }
        ASSERT_EQ(got[i].second, got[i].first);
        if (got[i].first % 2 == 0) ++evens;
      }
      ASSERT_EQ(evens, kKeys / 2) << "a scan missed a key older than it";
      scans++;
    }
  });
  EXPECT_GE(scans.load(), 2 * kNodes);
  auto ctx = *cluster_->manager(1).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(1), *ctx, anchor_,
                               testing::TestTreeTuning());
  auto stats = tree->Verify(*ctx);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, kKeys);
}

TEST_P(BLinkTreeConcurrencyTest, LookupBatchesDuringSplitsFindEveryOlderKey) {
  // Keys k % 3 == 0 exist before the readers start, with value Value(k);
  // the others are inserted while they run, splitting the leaves between a
  // batch's descent and its leaf searches (which must then move right).
  // Numbers from kKeys up are never inserted.
  constexpr uint64_t kKeys = 6000;
  auto value = [](uint64_t k) { return k * 7 + 1; };
  ASSERT_NO_FATAL_FAILURE(InsertOldKeys(kKeys, value));
  std::atomic<int> writers_left{kNodes};
  std::atomic<uint64_t> batches{0}, batches_during_writes{0};
  std::atomic<uint64_t> new_keys_seen{0};
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    if (t == 0) {  // one writer per node, its own share of the new keys
      std::mt19937_64 rng(n);
      std::vector<std::string> keys;
      std::vector<BLinkTree::Entry> batch;
      uint64_t k = 1 + n;
      bool waited = false;
      while (k < kKeys) {
        if (!waited && k >= kKeys / 2) {
          waited = true;
          AwaitFirst(batches_during_writes);
        }
        // Single inserts and short ascending batches, strided across the
        // writers so they split the same leaves.
        keys.clear();
        batch.clear();
        const uint64_t length = 1 + rng() % 6;
        for (; k < kKeys && keys.size() < length; k += kNodes) {
          if (k % 3 != 0) keys.push_back(Key(k));
        }
        for (const std::string& key : keys) {
          batch.push_back({key, value(DecodeUint64(key.data()))});
        }
        size_t inserted = 0;
        ASSERT_TRUE(tree.InsertBatch(ctx, batch, &inserted).ok());
        ASSERT_EQ(inserted, batch.size());
      }
      writers_left--;
      return;
    }
    // Readers: random batches of old, new and never-inserted keys, until
    // the writers are done (and a few more).
    std::mt19937_64 rng(100 + n);
    std::vector<uint64_t> numbers;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    std::vector<std::optional<uint64_t>> values;
    for (int round = 0; writers_left > 0 || round < 20; ++round) {
      const bool during_writes = writers_left > 0;
      numbers.clear();
      const size_t size = rng() % 41;
      // Mostly keys near one another, so a batch shares leaves (and the
      // leaves' splits) with itself and with the writers.
      const uint64_t base = rng() % kKeys;
      while (numbers.size() < size) {
        const int dice = rng() % 8;
        if (dice == 0 && !numbers.empty()) {
          numbers.push_back(numbers[rng() % numbers.size()]);  // duplicate
        } else if (dice == 1) {
          numbers.push_back(kKeys + rng() % 100);  // never inserted
        } else {
          numbers.push_back((base + rng() % 200) % kKeys);
        }
      }
      keys.clear();
      for (uint64_t k : numbers) keys.push_back(Key(k));
      views.assign(keys.begin(), keys.end());
      values.assign(size, std::nullopt);
      absl::Status s = tree.LookupBatch(ctx, views, absl::MakeSpan(values));
      ASSERT_TRUE(s.ok()) << s;
      for (size_t i = 0; i < size; ++i) {
        const uint64_t k = numbers[i];
        if (k >= kKeys) {
          ASSERT_EQ(values[i], std::nullopt) << "never inserted: " << k;
        } else if (k % 3 == 0) {
          ASSERT_EQ(values[i], value(k))
              << "key " << k << ", older than the batch, missed";
        } else if (values[i].has_value()) {
          ASSERT_EQ(*values[i], value(k)) << "new key " << k;
          new_keys_seen++;
        }
      }
      batches++;
      if (during_writes) batches_during_writes++;
    }
  });
  EXPECT_GE(batches.load(), 20u * kNodes);
  // Some batches ran while the tree was splitting, and saw new keys.
  EXPECT_GT(batches_during_writes.load(), 0u);
  EXPECT_GT(new_keys_seen.load(), 0u);

  // Afterwards, every key, through a batch of all of them on another node.
  auto ctx = *cluster_->manager(3).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(3), *ctx, anchor_,
                               testing::TestTreeTuning());
  auto stats = tree->Verify(*ctx);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, kKeys);
  EXPECT_GE(stats->height, 3);
  std::vector<std::string> keys;
  for (uint64_t k = 0; k < kKeys; ++k) keys.push_back(Key(k));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::optional<uint64_t>> values(kKeys);
  ASSERT_TRUE(tree->LookupBatch(*ctx, views, absl::MakeSpan(values)).ok());
  for (uint64_t k = 0; k < kKeys; ++k) {
    ASSERT_EQ(values[k], value(k)) << k;
  }
}

TEST_P(BLinkTreeConcurrencyTest, PointLookupsDuringSplitsFindEveryOlderKey) {
  // As above, with single lookups and commit-style leaf latches: keys
  // k % 3 == 0 exist first; writers on every node insert the others in a
  // scattered order, so inner nodes all over the tree split (and peers'
  // copies of them are invalidated) while readers descend through them.
  // With optimistic reads on, the descents read the inner nodes with no
  // latch: a torn or stale child pointer that validated would send a
  // lookup to the wrong leaf and miss an old key.
  constexpr uint64_t kKeys = 6000;
  auto value = [](uint64_t k) { return k * 5 + 3; };
  ASSERT_NO_FATAL_FAILURE(InsertOldKeys(kKeys, value));
  std::atomic<int> writers_left{kNodes};
  std::atomic<uint64_t> lookups_during_writes{0};
  std::atomic<uint64_t> validated{0}, invalidated{0}, unavailable{0};
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    const OptimisticReadStats before =
        BLinkTree::ThreadOptimisticReadStats(ctx);
    if (t == 0) {
      // This node's share of the new keys, in a scattered order.
      std::vector<uint64_t> mine;
      for (uint64_t k = 1 + n; k < kKeys; k += kNodes) {
        if (k % 3 != 0) mine.push_back(k);
      }
      std::shuffle(mine.begin(), mine.end(), std::mt19937_64(n));
      for (size_t i = 0; i < mine.size(); ++i) {
        if (i == mine.size() / 2) AwaitFirst(lookups_during_writes);
        ASSERT_TRUE(tree.Insert(ctx, Key(mine[i]), value(mine[i])).ok());
      }
      writers_left--;
    } else {
      std::mt19937_64 rng(200 + n);
      for (int round = 0; writers_left > 0 || round < 2000; ++round) {
        const bool during_writes = writers_left > 0;
        const uint64_t k = rng() % kKeys;
        auto v = tree.Lookup(ctx, Key(k));
        if (k % 3 == 0) {
          ASSERT_TRUE(v.ok()) << "key " << k << ": " << v.status();
          ASSERT_EQ(*v, value(k));
        } else if (v.ok()) {
          ASSERT_EQ(*v, value(k)) << "new key " << k;
        } else {
          ASSERT_TRUE(absl::IsNotFound(v.status())) << v.status();
        }
        if (during_writes) lookups_during_writes++;
      }
    }
    const OptimisticReadStats after = BLinkTree::ThreadOptimisticReadStats(ctx);
    validated += after.validated - before.validated;
    invalidated += after.invalidated - before.invalidated;
    unavailable += after.unavailable - before.unavailable;
  });
  EXPECT_GT(lookups_during_writes.load(), 0u);
  RecordProperty("validated", std::to_string(validated.load()));
  RecordProperty("invalidated", std::to_string(invalidated.load()));
  RecordProperty("unavailable", std::to_string(unavailable.load()));
  if (!testing::TestTreeTuning().optimistic_reads) {
    // The switch is off: not one optimistic read.
    EXPECT_EQ(validated + invalidated + unavailable, 0u);
  } else if (GetParam() == cc::Protocol::kSel) {
    // No cache, so no token: every descent latches.
    EXPECT_EQ(validated + invalidated, 0u);
    EXPECT_GT(unavailable.load(), 0u);
  } else {
    EXPECT_GT(validated.load(), 0u);  // the path under test ran
  }
  auto ctx = *cluster_->manager(1).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(1), *ctx, anchor_,
                               testing::TestTreeTuning());
  for (uint64_t k = 0; k < kKeys; ++k) {
    auto v = tree->Lookup(*ctx, Key(k));
    ASSERT_TRUE(v.ok()) << k << ": " << v.status();
    ASSERT_EQ(*v, value(k));
  }
}

// Optimistic descents where frames are evicted and reused all the time: a
// cache of 48 small frames under a tree of hundreds of nodes, with writers
// splitting nodes on the same compute node (and on a second one). A token
// whose frame was reloaded, reused for another node or written meanwhile
// must not validate: followed, its child pointer would be another node's
// entry, and a lookup would miss a key or land on an inner node.
class BLinkTreeOptimisticEvictionTest : public ::testing::TestWithParam<int> {};

TEST_P(BLinkTreeOptimisticEvictionTest, LookupsFindEveryOlderKey) {
  const int nodes = GetParam();
  constexpr int kThreads = 4;  // per node: 1 writer, 3 readers
  constexpr uint64_t kKeys = 4000;
  auto value = [](uint64_t k) { return k * 3 + 11; };
  cc::CcOptions o;
  o.gcl_size = 256;
  o.cache_bytes = 48 * o.gcl_size;
  auto cluster = testing::CcCluster::Create(nodes, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  rdma::GlobalAddress anchor;
  {
    auto ctx = *(*cluster)->manager(0).NewThreadContext();
    anchor = *BLinkTree::Create((*cluster)->manager(0), *ctx, {8, true});
    auto tree = *BLinkTree::Open((*cluster)->manager(0), *ctx, anchor,
                                 testing::TestTreeTuning());
    for (uint64_t k = 0; k < kKeys; k += 2) {
      ASSERT_TRUE(tree->Insert(*ctx, Key(k), value(k)).ok());
    }
  }
  std::atomic<int> writers_left{nodes};
  std::atomic<uint64_t> validated{0}, lookups{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < nodes; ++n) {
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, n, t] {
        cc::GclManager& m = (*cluster)->manager(n);
        auto ctx = *m.NewThreadContext();
        auto tree =
            *BLinkTree::Open(m, *ctx, anchor, testing::TestTreeTuning());
        const uint64_t before =
            BLinkTree::ThreadOptimisticReadStats(*ctx).validated;
        if (t == 0) {
          std::vector<uint64_t> mine;
          for (uint64_t k = 1 + 2 * n; k < kKeys; k += 2 * nodes) {
            mine.push_back(k);
          }
          std::shuffle(mine.begin(), mine.end(), std::mt19937_64(n));
          for (uint64_t k : mine) {
            ASSERT_TRUE(tree->Insert(*ctx, Key(k), value(k)).ok());
          }
          writers_left--;
        } else {
          std::mt19937_64 rng(10 * n + t);
          for (int round = 0; writers_left > 0 || round < 1000; ++round) {
            const uint64_t k = 2 * (rng() % (kKeys / 2));  // an old key
            auto v = tree->Lookup(*ctx, Key(k));
            ASSERT_TRUE(v.ok()) << "key " << k << ": " << v.status();
            ASSERT_EQ(*v, value(k)) << "key " << k;
            lookups++;
          }
        }
        validated +=
            BLinkTree::ThreadOptimisticReadStats(*ctx).validated - before;
      });
    }
  }
  for (auto& th : threads) th.join();
  EXPECT_GT(lookups.load(), 0u);
  RecordProperty("validated", std::to_string(validated.load()));
  RecordProperty("evictions",
                 std::to_string((*cluster)->manager(0).Stats().evictions));
  if (testing::TestTreeTuning().optimistic_reads) {
    EXPECT_GT(validated.load(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoNodes, BLinkTreeOptimisticEvictionTest,
                         ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "_nodes";
                         });

TEST_P(BLinkTreeConcurrencyTest,
       ConcurrentDeletesAndUpdatesLeaveExactlyTheSurvivors) {
  constexpr uint64_t kKeys = 3000;
  {
    auto ctx = *cluster_->manager(0).NewThreadContext();
    auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx, anchor_,
                                 testing::TestTreeTuning());
    for (uint64_t k = 0; k < kKeys; ++k) {
      ASSERT_TRUE(tree->Insert(*ctx, Key(k), 0).ok());
    }
  }
  constexpr int kWorkers = kNodes * kThreadsPerNode;
  // Worker w owns keys k with k % kWorkers == w: deletes a third of them,
  // updates the rest, while others do the same in the same leaves.
  RunOnAllThreads([&](int n, int t, cc::ThreadContext& ctx, BLinkTree& tree) {
    const uint64_t me = n * kThreadsPerNode + t;
    for (uint64_t k = me; k < kKeys; k += kWorkers) {
      if (k % 3 == 0) {
        ASSERT_TRUE(tree.Delete(ctx, Key(k)).ok());
      } else {
        ASSERT_TRUE(tree.Update(ctx, Key(k), k + 1).ok());
      }
    }
  });
  auto ctx = *cluster_->manager(2).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(2), *ctx, anchor_,
                               testing::TestTreeTuning());
  const auto all = FullScan(*ctx, *tree, false);
  ASSERT_EQ(all.size(), kKeys - (kKeys + 2) / 3);
  for (const auto& [k, v] : all) {
    EXPECT_NE(k % 3, 0u);
    EXPECT_EQ(v, k + 1);
  }
  ASSERT_TRUE(tree->Verify(*ctx).ok());
}

INSTANTIATE_TEST_SUITE_P(Protocols, BLinkTreeConcurrencyTest,
                         ::testing::ValuesIn(testing::TestProtocols()),
                         testing::ProtocolTestName);

}  // namespace
}  // namespace strand::index
