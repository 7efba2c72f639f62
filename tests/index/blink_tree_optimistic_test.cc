// The B-link tree's optimistic descents (BLinkTreeTuning::optimistic_reads)
// against a coherence layer that lies: every other optimistic read hands
// the tree a token over a copy of the real node whose child pointers and
// right link are all wrong, and which never validates. A descent that
// acted on anything it read before validating would follow one of them (to
// the tree's anchor, which is no node) and fail; one that validates
// retries, and gets the real node on the next read; a lookup that
// returned a leaf's value or version before validating would return the
// bogus one. Also: what the switch and the protocol decide about whether
// optimistic reads happen at all.
// The concurrent cases are in blink_tree_concurrency_test.cc; the
// coherence layer's own tokens in tests/cc.

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cc/gcl_manager.h"
#include "cc/optimistic_read.h"
#include "gtest/gtest.h"
#include "index/blink_node.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/cpu_path.h"

namespace strand::index {
namespace {

std::string Key(uint64_t k) { return KeyBuilder().Uint64(k).Build(8); }

// A GclManager that forwards everything to `inner`, except that every
// other OptimisticRead returns a poisoned token: a copy of the node with
// every value (an inner node's child pointers, a leaf's values), the
// right link and the version set to `bogus`, and a validation word that
// never matches.
class LyingManager final : public cc::GclManager {
 public:
  LyingManager(cc::GclManager* inner, rdma::GlobalAddress bogus)
      : inner_(inner), bogus_(bogus) {}

  const cc::CcOptions& options() const override { return inner_->options(); }
  rdma::ComputeNodeId node_id() const override { return inner_->node_id(); }
  absl::StatusOr<std::unique_ptr<cc::ThreadContext>> NewThreadContext()
      override {
    return inner_->NewThreadContext();
  }
  absl::StatusOr<rdma::GlobalAddress> Allocate(
      cc::ThreadContext& ctx) override {
    return inner_->Allocate(ctx);
  }
  absl::Status Free(cc::ThreadContext& ctx, rdma::GlobalAddress gcl) override {
    return inner_->Free(ctx, gcl);
  }
  absl::StatusOr<cc::SharedGuard> SLock(cc::ThreadContext& ctx,
                                        rdma::GlobalAddress gcl,
                                        cc::LockOptions lock) override {
    return inner_->SLock(ctx, gcl, lock);
  }
  absl::StatusOr<cc::ExclusiveGuard> XLock(cc::ThreadContext& ctx,
                                           rdma::GlobalAddress gcl,
                                           cc::LockOptions lock) override {
    return inner_->XLock(ctx, gcl, lock);
  }
  absl::StatusOr<cc::ExclusiveGuard> Upgrade(cc::ThreadContext& ctx,
                                             cc::SharedGuard& guard,
                                             cc::LockOptions lock) override {
    return inner_->Upgrade(ctx, guard, lock);
  }
  cc::OptimisticToken OptimisticRead(cc::ThreadContext& ctx,
                                     rdma::GlobalAddress gcl) override {
    const cc::OptimisticToken real = inner_->OptimisticRead(ctx, gcl);
    if (!real.ok() || (calls_++ % 2) == 1) return real;
    const uint32_t bytes = payload_bytes();
    poisoned_.resize(bytes / 8);
    auto* copy = reinterpret_cast<uint8_t*>(poisoned_.data());
    for (uint32_t i = 0; i < bytes; i += 8) {
      const uint64_t w = cc::LoadRelaxed<uint64_t>(real.data() + i);
      std::memcpy(copy + i, &w, 8);
    }
    const BLinkNode n(copy, width_);
    const uint64_t bogus = bogus_.raw();
    if (n.valid() && n.count() <= BLinkNode::Capacity(bytes, width_)) {
      for (uint32_t i = 0; i < n.count(); ++i) {
        std::memcpy(copy + n.EntryOffset(i) + width_, &bogus, 8);
      }
      std::memcpy(copy + 16, &bogus, 8);  // the right link
      std::memcpy(copy + BLinkNode::kVersionOffset, &bogus, 8);
      ++poisoned_count_;
    }
    // seen 1 under a full mask against a word that stays 0: never valid.
    return cc::OptimisticToken(copy, &never_, 1, ~uint64_t{0});
  }
  absl::StatusOr<uint64_t> FetchAndAdd(cc::ThreadContext& ctx,
                                       rdma::GlobalAddress word,
                                       uint64_t delta) override {
    return inner_->FetchAndAdd(ctx, word, delta);
  }
  absl::StatusOr<uint64_t> CompareAndSwap(cc::ThreadContext& ctx,
                                          rdma::GlobalAddress word,
                                          uint64_t expected,
                                          uint64_t desired) override {
    return inner_->CompareAndSwap(ctx, word, expected, desired);
  }
  void PrefetchEntry(rdma::GlobalAddress gcl) const override {
    inner_->PrefetchEntry(gcl);
  }
  void PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                     uint32_t bytes) const override {
    inner_->PrefetchLines(gcl, offset, bytes);
  }
  cc::CacheStats Stats() const override { return inner_->Stats(); }

  uint64_t poisoned() const { return poisoned_count_; }

 protected:
  // Guards come from `inner_` and unlock through it; never called.
  absl::Status UnlockShared(cc::ThreadContext&,
                            const cc::LatchHandle&) override {
    return absl::InternalError("LyingManager handed out a guard");
  }
  absl::Status UnlockExclusive(cc::ThreadContext&, const cc::LatchHandle&,
                               uint32_t, uint32_t) override {
    return absl::InternalError("LyingManager handed out a guard");
  }

 private:
  static constexpr uint32_t width_ = 8;  // the tree's keys (unique)
  cc::GclManager* const inner_;
  const rdma::GlobalAddress bogus_;
  // One thread uses the manager at a time (the test's).
  uint64_t calls_ = 0;
  uint64_t poisoned_count_ = 0;
  std::vector<uint64_t> poisoned_;
  std::atomic<uint64_t> never_{0};
};

class BLinkTreeOptimisticTest : public ::testing::Test {
 protected:
  void SetUp() override { Build(cc::Protocol::kSelcc); }
  void Build(cc::Protocol protocol) {
    cc::CcOptions o;
    o.protocol = protocol;
    o.gcl_size = 256;  // 13 keys per node: a tree of several levels
    ctx_.reset();      // before the cluster it belongs to
    cluster_.reset();
    auto cluster = testing::CcCluster::Create(1, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx_ = *cluster_->manager(0).NewThreadContext();
    auto anchor = BLinkTree::Create(cluster_->manager(0), *ctx_, {8, true});
    ASSERT_TRUE(anchor.ok()) << anchor.status();
    anchor_ = *anchor;
    auto tree = BLinkTree::Open(cluster_->manager(0), *ctx_, anchor_);
    ASSERT_TRUE(tree.ok()) << tree.status();
    for (uint64_t k = 0; k < kKeys; ++k) {
      ASSERT_TRUE((*tree)->Insert(*ctx_, Key(k), k + 100).ok()) << k;
    }
    auto stats = (*tree)->Verify(*ctx_);
    ASSERT_TRUE(stats.ok()) << stats.status();
    ASSERT_GE(stats->height, 3);
  }

  static constexpr uint64_t kKeys = 2000;
  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<cc::ThreadContext> ctx_;
  rdma::GlobalAddress anchor_;
};

TEST_F(BLinkTreeOptimisticTest, DescentsNeverFollowWhatDidNotValidate) {
  LyingManager liar(&cluster_->manager(0), anchor_);
  auto opened =
      BLinkTree::Open(liar, *ctx_, anchor_, {.optimistic_reads = true});
  ASSERT_TRUE(opened.ok()) << opened.status();
  BLinkTree& tree = **opened;
  const OptimisticReadStats before =
      BLinkTree::ThreadOptimisticReadStats(*ctx_);
  // Point lookups, batches, scans (forward and backward: kBefore
  // descents), inserts and updates (exclusive leaves, splits).
  // The leaves read, with their versions: nothing changes them, so each
  // must pass the commit-time check (a bogus version would not).
  std::vector<LeafRead> reads;
  for (uint64_t k = 0; k < kKeys; k += 7) {
    auto v = tree.Lookup(*ctx_, Key(k), &reads);
    ASSERT_TRUE(v.ok()) << k << ": " << v.status();
    EXPECT_EQ(*v, k + 100);
  }
  std::vector<std::string> keys;
  for (uint64_t k = 3; k < kKeys; k += 97) keys.push_back(Key(k));
  const std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::optional<uint64_t>> values(views.size());
  ASSERT_TRUE(
      tree.LookupBatch(*ctx_, views, absl::MakeSpan(values), &reads).ok());
  for (size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(values[i], DecodeUint64(keys[i].data()) + 100);
  }
  LeafGuards none;
  for (const LeafRead& read : reads) {
    EXPECT_NE(read.version, anchor_.raw());
    EXPECT_TRUE(tree.ValidateRead(*ctx_, read, none, std::nullopt).ok())
        << read.leaf.ToString();
  }
  uint64_t seen = 0;
  ASSERT_TRUE(tree.Scan(*ctx_, Key(500), Key(599), BLinkTree::kNoLimit,
                        [&](std::string_view, uint64_t) {
                          ++seen;
                          return true;
                        })
                  .ok());
  EXPECT_EQ(seen, 100u);
  seen = 0;
  ASSERT_TRUE(tree.ScanBackward(*ctx_, Key(1599), Key(1500),
                                BLinkTree::kNoLimit,
                                [&](std::string_view, uint64_t) {
                                  ++seen;
                                  return true;
                                })
                  .ok());
  EXPECT_EQ(seen, 100u);
  for (uint64_t k = kKeys; k < kKeys + 300; ++k) {
    ASSERT_TRUE(tree.Insert(*ctx_, Key(k), k + 100).ok()) << k;
  }
  for (uint64_t k = 0; k < kKeys; k += 11) {
    ASSERT_TRUE(tree.Update(*ctx_, Key(k), k + 100).ok()) << k;
  }
  auto stats = tree.Verify(*ctx_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, kKeys + 300);

  const OptimisticReadStats after = BLinkTree::ThreadOptimisticReadStats(*ctx_);
  // Both kinds of token were handed out and seen for what they were.
  EXPECT_GT(liar.poisoned(), 100u);
  EXPECT_GE(after.invalidated - before.invalidated, liar.poisoned());
  EXPECT_GT(after.validated - before.validated, 100u);
}

TEST_F(BLinkTreeOptimisticTest, TheSwitchDecidesWhetherNodesAreReadUnlatched) {
  for (bool on : {true, false}) {
    auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx_, anchor_,
                                 {.optimistic_reads = on});
    const OptimisticReadStats before =
        BLinkTree::ThreadOptimisticReadStats(*ctx_);
    const cc::CacheStats cache_before = cluster_->manager(0).Stats();
    for (uint64_t k = 0; k < kKeys; k += 13) {
      ASSERT_TRUE(tree->Lookup(*ctx_, Key(k)).ok());
    }
    const OptimisticReadStats after =
        BLinkTree::ThreadOptimisticReadStats(*ctx_);
    const cc::CacheStats cache = cluster_->manager(0).Stats() - cache_before;
    const uint64_t lookups = (kKeys + 12) / 13;
    if (on) {
      // Everything is cached and nobody writes: every node of every
      // descent validates, the leaves too, and nothing is latched.
      EXPECT_GE(after.validated - before.validated, 3 * lookups);
      EXPECT_EQ(after.invalidated, before.invalidated);
      EXPECT_EQ(after.unavailable, before.unavailable);
      EXPECT_EQ(cache.shared_locks, 0u);
      EXPECT_EQ(cache.optimistic_reads, after.validated - before.validated);
    } else {
      EXPECT_EQ(after.validated, before.validated);
      EXPECT_EQ(cache.optimistic_reads, 0u);
      EXPECT_GE(cache.shared_locks, 3 * lookups);
    }
  }
}

TEST_F(BLinkTreeOptimisticTest, LookupBatchesLatchNothing) {
  auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx_, anchor_,
                               {.optimistic_reads = true});
  std::mt19937_64 rng(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> keys;
    const size_t size = 1 + rng() % 15;
    for (size_t i = 0; i < size; ++i) keys.push_back(Key(rng() % kKeys));
    const std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::optional<uint64_t>> values(views.size());
    const cc::CacheStats before = cluster_->manager(0).Stats();
    ASSERT_TRUE(tree->LookupBatch(*ctx_, views, absl::MakeSpan(values)).ok());
    const cc::CacheStats used = cluster_->manager(0).Stats() - before;
    for (size_t i = 0; i < views.size(); ++i) {
      ASSERT_EQ(values[i], DecodeUint64(keys[i].data()) + 100);
    }
    // The parents and the leaves were all read unlatched.
    EXPECT_EQ(used.shared_locks, 0u) << "round " << round;
    EXPECT_GE(used.optimistic_reads, size) << "round " << round;
  }
}

TEST_F(BLinkTreeOptimisticTest, SelLatchesEveryNode) {
  Build(cc::Protocol::kSel);
  auto tree = *BLinkTree::Open(cluster_->manager(0), *ctx_, anchor_,
                               {.optimistic_reads = true});
  const OptimisticReadStats before =
      BLinkTree::ThreadOptimisticReadStats(*ctx_);
  for (uint64_t k = 0; k < kKeys; k += 13) {
    ASSERT_TRUE(tree->Lookup(*ctx_, Key(k)).ok());
  }
  const OptimisticReadStats after = BLinkTree::ThreadOptimisticReadStats(*ctx_);
  EXPECT_EQ(after.validated, before.validated);
  EXPECT_GT(after.unavailable, before.unavailable);
}

}  // namespace
}  // namespace strand::index
