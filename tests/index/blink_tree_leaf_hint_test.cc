// The rightmost-leaf shortcut (BLinkTreeTuning::leaf_hint) under concurrent
// splits: threads of two compute nodes insert ascending runs into shared
// key prefixes, interleaved so that each one's remembered leaf keeps
// splitting under it, plus descending runs in the same prefixes so that a
// remembered leaf is often above the next key (its low fence must say no).
// Half of the inserts take Insert's path, half the commit-time path
// (PrepareChanges / SplitLeafOf / ApplyChanges, as txn/index_writes.cc
// drives it, several keys per commit). Afterwards every key is found with
// its value, the tree verifies (keys in order and inside their leaves'
// fences, links, parents), and the shortcut was both taken and refused.
// With the switch off it is never consulted.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/cpu_path.h"

namespace strand::index {
namespace {

constexpr int kNodes = 2;
constexpr int kThreadsPerNode = 2;
constexpr int kThreads = kNodes * kThreadsPerNode;
constexpr uint32_t kPrefixes = 5;
constexpr uint32_t kRounds = 300;         // per thread and prefix
constexpr uint32_t kTop = 1'000'000'000;  // descending runs start here

// 8-byte keys: a 4-byte prefix (the part a hint is kept for) and a
// sequence number.
std::string Key(uint32_t prefix, uint32_t seq) {
  return KeyBuilder().Uint32(prefix).Uint32(seq).Build(8);
}

using Param = std::tuple<cc::Protocol, bool /*unique*/, bool /*leaf_hint*/>;

class LeafHintTest : public ::testing::TestWithParam<Param> {
 protected:
  cc::Protocol protocol() const { return std::get<0>(GetParam()); }
  bool unique() const { return std::get<1>(GetParam()); }
  bool leaf_hint() const { return std::get<2>(GetParam()); }

  void SetUp() override {
    cc::CcOptions o;
    o.protocol = protocol();
    o.gcl_size = 256;  // ~11 keys per leaf: splits all the time
    auto cluster = testing::CcCluster::Create(kNodes, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto ctx = *cluster_->manager(0).NewThreadContext();
    auto anchor = BLinkTree::Create(cluster_->manager(0), *ctx, {8, unique()});
    ASSERT_TRUE(anchor.ok()) << anchor.status();
    anchor_ = *anchor;
  }

  // The commit-time path of txn/index_writes.cc for `keys` (with values):
  // prepare under no-wait latches, split and retry, or back off and retry.
  static absl::Status Commit(BLinkTree& tree, cc::ThreadContext& ctx,
                             const std::vector<std::string>& keys,
                             const std::vector<uint64_t>& values) {
    std::vector<BLinkTree::Change> changes;
    for (size_t i = 0; i < keys.size(); ++i) {
      changes.push_back({keys[i], values[i], false, {}});
    }
    for (int attempt = 0; attempt < 100000; ++attempt) {
      LeafGuards held;
      size_t split_at = 0;
      auto prepared = tree.PrepareChanges(ctx, absl::MakeSpan(changes), held,
                                          std::nullopt, &split_at);
      if (!prepared.ok()) return prepared.status();
      if (*prepared == BLinkTree::Prepared::kReady) {
        tree.ApplyChanges(changes, held, std::nullopt);
        return absl::OkStatus();
      }
      held.clear();
      if (*prepared == BLinkTree::Prepared::kNeedSplit) {
        const BLinkTree::Change& full = changes[split_at];
        if (absl::Status s = tree.SplitLeafOf(ctx, full.key, full.value);
            !s.ok()) {
          return s;
        }
      } else {
        std::this_thread::yield();
      }
    }
    return absl::AbortedError("leaves stayed busy");
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  rdma::GlobalAddress anchor_;
};

TEST_P(LeafHintTest, NeverInsertsOutsideTheFencesUnderConcurrentSplits) {
  std::atomic<uint64_t> hits{0}, misses{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < kNodes; ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        const uint32_t me = n * kThreadsPerNode + t;
        auto ctx = *cluster_->manager(n).NewThreadContext();
        const LeafHintStats before = BLinkTree::ThreadLeafHintStats(*ctx);
        auto tree = *BLinkTree::Open(cluster_->manager(n), *ctx, anchor_,
                                     {.leaf_hint = leaf_hint()});
        for (uint32_t i = 0; i < kRounds; ++i) {
          for (uint32_t p = 0; p < kPrefixes; ++p) {
            // Three runs, each under a prefix of its own (so each keeps
            // its hint): two ascending, strided across threads (each
            // thread's next key lands in a leaf the others keep
            // splitting), and one descending (the next key is often below
            // the remembered leaf's low fence).
            const uint32_t up = i * kThreads + me;
            const uint32_t down = kTop - up;
            std::vector<std::string> keys = {Key(3 * p, up),
                                             Key(3 * p + 1, up + kTop / 2),
                                             Key(3 * p + 2, down)};
            std::vector<uint64_t> values = {up, up + kTop / 2, down};
            if ((i + p) % 2 == 0) {
              for (size_t k = 0; k < keys.size(); ++k) {
                absl::Status s = tree->Insert(*ctx, keys[k], values[k]);
                ASSERT_TRUE(s.ok()) << s;
              }
            } else {
              absl::Status s = Commit(*tree, *ctx, keys, values);
              ASSERT_TRUE(s.ok()) << s;
            }
          }
        }
        const LeafHintStats after = BLinkTree::ThreadLeafHintStats(*ctx);
        hits += after.hits - before.hits;
        misses += after.misses - before.misses;
      });
    }
  }
  for (auto& t : threads) t.join();

  auto ctx = *cluster_->manager(1).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(1), *ctx, anchor_);
  auto stats = tree->Verify(*ctx);  // keys inside their leaves' fences
  ASSERT_TRUE(stats.ok()) << stats.status();
  const uint64_t total = uint64_t{3} * kRounds * kPrefixes * kThreads;
  EXPECT_EQ(stats->entries, total);
  for (uint32_t p = 0; p < kPrefixes; ++p) {
    for (uint32_t i = 0; i < kRounds * kThreads; ++i) {
      for (uint32_t run : {0u, 1u, 2u}) {
        const uint32_t seq =
            run == 0 ? i : (run == 1 ? i + kTop / 2 : kTop - i);
        const std::string key = Key(3 * p + run, seq);
        if (unique()) {
          auto found = tree->Lookup(*ctx, key);
          ASSERT_TRUE(found.ok())
              << found.status() << " prefix " << p << " seq " << seq;
          EXPECT_EQ(*found, seq);
        } else {
          std::vector<uint64_t> found;
          ASSERT_TRUE(tree->Scan(*ctx, key, key, BLinkTree::kNoLimit,
                                 [&](std::string_view, uint64_t v) {
                                   found.push_back(v);
                                   return true;
                                 })
                          .ok());
          EXPECT_EQ(found, std::vector<uint64_t>{seq})
              << "prefix " << p << " seq " << seq;
        }
      }
    }
  }
  if (leaf_hint()) {
    // Both ways through the shortcut were exercised.
    EXPECT_GT(hits.load(), total / 10);
    EXPECT_GT(misses.load(), total / 10);
  } else {
    EXPECT_EQ(hits.load(), 0u);
    EXPECT_EQ(misses.load(), 0u);
  }
}

// A hint that names a leaf which later split: the next key, now in the
// right half, goes there (the stale leaf's high fence refuses it), and the
// hint moves on to the right half.
TEST_P(LeafHintTest, StaleHintAfterASplitDescends) {
  auto ctx = *cluster_->manager(0).NewThreadContext();
  auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx, anchor_,
                               {.leaf_hint = true});
  auto other_ctx = *cluster_->manager(1).NewThreadContext();
  auto other = *BLinkTree::Open(cluster_->manager(1), *other_ctx, anchor_,
                                {.leaf_hint = false});
  ASSERT_TRUE(tree->Insert(*ctx, Key(1, 100), 100).ok());
  // Another node fills the same leaf past the next key until it splits.
  for (uint32_t seq = 200; seq < 400; seq += 10) {
    ASSERT_TRUE(other->Insert(*other_ctx, Key(1, seq), seq).ok());
  }
  const LeafHintStats before = BLinkTree::ThreadLeafHintStats(*ctx);
  ASSERT_TRUE(tree->Insert(*ctx, Key(1, 390 + 5), 395).ok());
  const LeafHintStats after = BLinkTree::ThreadLeafHintStats(*ctx);
  EXPECT_EQ(after.misses - before.misses, 1u);  // the stale hint refused
  ASSERT_TRUE(tree->Insert(*ctx, Key(1, 396), 396).ok());
  EXPECT_EQ(BLinkTree::ThreadLeafHintStats(*ctx).hits - after.hits, 1u);
  auto stats = tree->Verify(*ctx);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_GT(stats->leaves, 1u);
  for (uint32_t seq : {100u, 395u, 396u}) {
    if (unique()) {
      EXPECT_EQ(*tree->Lookup(*ctx, Key(1, seq)), seq);
    }
  }
}

// The test runs' switch (STRAND_TEST_CPU_PATH, tests/testing/cpu_path.h)
// reaches the clusters and trees the suites build: the ablation runs
// registered with strand_test_cpu_path_ablation do run the old paths.
TEST(CpuPathTest, SwitchesFollowTheTestRun) {
  const char* env = std::getenv("STRAND_TEST_CPU_PATH");
  const bool ablation = env != nullptr && std::string(env) == "ablation";
  cc::CcOptions o;
  o.gcl_size = 256;
  auto cluster = testing::CcCluster::Create(1, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ((*cluster)->manager(0).options().prefetch,
            ablation ? cc::PrefetchScope::kFull : cc::PrefetchScope::kNarrow);
  EXPECT_EQ(testing::TestTreeTuning().leaf_hint, !ablation);
  EXPECT_EQ(testing::TestTreeTuning().optimistic_reads, !ablation);
  EXPECT_EQ(testing::TestTreeTuning().word_search, !ablation);
  EXPECT_EQ(testing::TestTreeTuning().leaf_walk, !ablation);
  EXPECT_EQ(testing::TestHeapTuning().unlocked_inserts, !ablation);
}

INSTANTIATE_TEST_SUITE_P(
    ProtocolsKeysSwitch, LeafHintTest,
    ::testing::Combine(::testing::Values(cc::Protocol::kSel,
                                         cc::Protocol::kSelcc),
                       ::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<Param>& info) {
      return absl::StrFormat("%s_%s_hint_%s",
                             cc::ProtocolName(std::get<0>(info.param)),
                             std::get<1>(info.param) ? "unique" : "nonunique",
                             std::get<2>(info.param) ? "on" : "off");
    });

}  // namespace
}  // namespace strand::index
