// BLinkTree::LookupBatch against a model (std::map) and against one Lookup
// per key: random unsorted batches with duplicates, absent keys and keys
// beyond both ends, on trees of several levels (small GCLs) and on a lone
// leaf, through the handle that built the tree and through another node's
// handle whose root hint is stale; and the refused calls.

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/cpu_path.h"
#include "tests/testing/protocols.h"

namespace strand::index {
namespace {

struct LookupBatchConfig {
  uint16_t key_width;
  uint32_t gcl_size;
};

using Model = std::map<std::string, uint64_t>;
using Values = std::vector<std::optional<uint64_t>>;

// What LookupBatch writes for no key: a value no test stores, so a slot
// the call forgot to write shows.
constexpr uint64_t kUnwritten = 0xdeadbeefdeadbeef;

class BLinkTreeLookupBatchTest
    : public ::testing::TestWithParam<
          std::tuple<cc::Protocol, LookupBatchConfig>> {
 protected:
  void SetUp() override {
    const auto& [protocol, config] = GetParam();
    config_ = config;
    cc::CcOptions o;
    o.protocol = protocol;
    o.gcl_size = config.gcl_size;
    auto cluster = testing::CcCluster::Create(2, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx0_ = *cluster_->manager(0).NewThreadContext();
    ctx1_ = *cluster_->manager(1).NewThreadContext();
    auto anchor = BLinkTree::Create(cluster_->manager(0), *ctx0_,
                                    {.key_width = config.key_width});
    ASSERT_TRUE(anchor.ok()) << anchor.status();
    tree0_ = *BLinkTree::Open(cluster_->manager(0), *ctx0_, *anchor,
                              testing::TestTreeTuning());
    // Opened while the tree is one leaf: its root hint goes stale as the
    // tree grows through node 0's handle.
    tree1_ = *BLinkTree::Open(cluster_->manager(1), *ctx1_, *anchor,
                              testing::TestTreeTuning());
  }

  // Key k of the configured width; wide keys carry a tail after the number
  // so more than the first 8 bytes are compared.
  std::string Key(uint64_t k) const {
    KeyBuilder b;
    if (config_.key_width >= 8) {
      b.Uint64(k).String("tail", config_.key_width - 8);
    } else {
      b.Uint32(static_cast<uint32_t>(k)).String("", config_.key_width - 4);
    }
    return b.Build(config_.key_width);
  }

  static std::vector<std::string_view> Views(
      const std::vector<std::string>& keys) {
    return std::vector<std::string_view>(keys.begin(), keys.end());
  }

  // LookupBatch over `keys` through `tree`; the values, checked to be
  // written for every key.
  Values Batch(BLinkTree& tree, cc::ThreadContext& ctx,
               const std::vector<std::string>& keys) {
    Values values(keys.size(), kUnwritten);
    const std::vector<std::string_view> views = Views(keys);
    absl::Status s = tree.LookupBatch(ctx, views, absl::MakeSpan(values));
    EXPECT_TRUE(s.ok()) << s;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NE(values[i], kUnwritten) << "value " << i << " not written";
    }
    return values;
  }

  // The model's answers for `keys`.
  static Values Expected(const Model& model,
                         const std::vector<std::string>& keys) {
    Values want;
    for (const std::string& k : keys) {
      auto it = model.find(k);
      want.push_back(it == model.end() ? std::nullopt
                                       : std::optional<uint64_t>(it->second));
    }
    return want;
  }

  // One Lookup per key, in the batch's order.
  Values OneByOne(BLinkTree& tree, cc::ThreadContext& ctx,
                  const std::vector<std::string>& keys) {
    Values got;
    for (const std::string& k : keys) {
      auto v = tree.Lookup(ctx, k);
      if (v.ok()) {
        got.push_back(*v);
      } else {
        EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound) << v.status();
        got.push_back(std::nullopt);
      }
    }
    return got;
  }

  // Batch, model and one Lookup per key agree on `keys`, through both
  // nodes' handles.
  void ExpectAllAgree(const Model& model, const std::vector<std::string>& keys,
                      const std::string& what) {
    const Values want = Expected(model, keys);
    EXPECT_EQ(Batch(*tree0_, *ctx0_, keys), want) << what << " (node 0)";
    EXPECT_EQ(Batch(*tree1_, *ctx1_, keys), want) << what << " (node 1)";
    EXPECT_EQ(OneByOne(*tree0_, *ctx0_, keys), want) << what << " (Lookup)";
  }

  int Height() {
    auto stats = tree0_->Verify(*ctx0_);
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? stats->height : 0;
  }

  LookupBatchConfig config_;
  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<cc::ThreadContext> ctx0_, ctx1_;
  std::unique_ptr<BLinkTree> tree0_, tree1_;
};

TEST_P(BLinkTreeLookupBatchTest, EmptyBatchAndEmptyTree) {
  Values none;
  EXPECT_TRUE(tree0_->LookupBatch(*ctx0_, {}, absl::MakeSpan(none)).ok());
  const std::vector<std::string> keys = {Key(3), Key(0), Key(3), Key(~0u)};
  EXPECT_EQ(Batch(*tree0_, *ctx0_, keys), Values(keys.size(), std::nullopt));
  EXPECT_EQ(Batch(*tree1_, *ctx1_, keys), Values(keys.size(), std::nullopt));
}

TEST_P(BLinkTreeLookupBatchTest, LoneLeaf) {
  Model model;
  for (uint64_t k : {20, 30, 40}) {
    ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(k), k * 11).ok());
    model.emplace(Key(k), k * 11);
  }
  ASSERT_EQ(Height(), 1);
  // Unsorted, duplicated, below the first, between, equal to the last and
  // above it.
  const std::vector<std::string> keys = {Key(40), Key(5),  Key(30), Key(30),
                                         Key(50), Key(20), Key(25), Key(0),
                                         Key(40), Key(41)};
  ExpectAllAgree(model, keys, "lone leaf");
  ExpectAllAgree(model, {Key(30)}, "one key");
  ExpectAllAgree(model, {Key(31)}, "one absent key");
}

TEST_P(BLinkTreeLookupBatchTest, StaleHandleAfterTheLoneLeafSplits) {
  // Node 1 answers while the tree is one leaf, then after node 0 grew it:
  // its cached root is now a bounded leaf, no longer the root.
  Model model;
  ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(7), 70).ok());
  model.emplace(Key(7), 70);
  ExpectAllAgree(model, {Key(7), Key(8)}, "before growth");
  for (uint64_t k = 100; Height() < 2; ++k) {
    ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(k), k).ok());
    model.emplace(Key(k), k);
  }
  std::vector<std::string> keys;
  for (uint64_t k = 0; k < 100 + model.size() + 5; k += 3)
    keys.push_back(Key(k));
  std::reverse(keys.begin(), keys.end());
  keys.push_back(Key(7));
  ExpectAllAgree(model, keys, "after growth");
}

TEST_P(BLinkTreeLookupBatchTest, RandomBatchesMatchTheModelAndLookup) {
  // Numbers below kLow and at or above kHigh are never in the tree; about
  // two in three between are.
  constexpr uint64_t kLow = 10;
  constexpr uint64_t kHigh = 3000;
  std::mt19937_64 rng(config_.key_width * 1000 + config_.gcl_size);
  Model model;
  for (uint64_t k = kLow; k < kHigh; ++k) {
    if (rng() % 3 == 0) continue;
    const uint64_t v = k * 1000 + rng() % 1000;
    ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(k), v).ok());
    model.emplace(Key(k), v);
  }
  if (config_.gcl_size <= 256) {
    ASSERT_GE(Height(), 3);
  } else {
    ASSERT_GE(Height(), 2);
  }
  auto draw = [&](const std::vector<std::string>& batch) -> std::string {
    const int dice = rng() % 8;
    if (dice == 0 && !batch.empty()) return batch[rng() % batch.size()];
    if (dice == 1) return Key(rng() % kLow);         // below the first key
    if (dice == 2) return Key(kHigh + rng() % 100);  // above the last
    if (dice == 3) return Key(~uint32_t{0});  // the largest 4-byte number
    return Key(kLow + rng() % (kHigh - kLow));
  };
  for (int round = 0; round < 400; ++round) {
    const size_t size = rng() % 41;
    std::vector<std::string> keys;
    while (keys.size() < size) keys.push_back(draw(keys));
    ExpectAllAgree(model, keys, absl::StrFormat("round %d", round));
    if (HasFailure()) return;
    // Between batches, change the tree a little (inserts split leaves,
    // deletes leave holes, updates change values).
    for (int op = 0; op < 5; ++op) {
      const uint64_t k = kLow + rng() % (kHigh - kLow);
      auto it = model.find(Key(k));
      if (it == model.end()) {
        ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(k), k + round).ok());
        model.emplace(Key(k), k + round);
      } else if (rng() % 2 == 0) {
        ASSERT_TRUE(tree0_->Delete(*ctx0_, Key(k)).ok());
        model.erase(it);
      } else {
        ASSERT_TRUE(tree0_->Update(*ctx0_, Key(k), it->second + 1).ok());
        ++it->second;
      }
    }
  }
  // Every key of the domain in one batch, descending: many parents, and
  // far beyond the inline size of the batch's scratch vectors.
  std::vector<std::string> all;
  for (uint64_t k = kHigh + 5; k-- > 0;) all.push_back(Key(k));
  ExpectAllAgree(model, all, "whole domain");
  ASSERT_TRUE(tree0_->Verify(*ctx0_).ok());
}

TEST_P(BLinkTreeLookupBatchTest, RefusedCalls) {
  for (uint64_t k = 0; k < 50; ++k) {
    ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(k), k).ok());
  }
  const std::vector<std::string> keys = {Key(1), Key(2), Key(3)};
  const std::vector<std::string_view> views = Views(keys);
  // Sizes that differ, both ways.
  for (size_t n : {size_t{0}, size_t{2}, size_t{4}}) {
    Values values(n);
    absl::Status s = tree0_->LookupBatch(*ctx0_, views, absl::MakeSpan(values));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << n << ": " << s;
  }
  {
    Values values(1);
    absl::Status s = tree0_->LookupBatch(*ctx0_, {}, absl::MakeSpan(values));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
  // A key one byte short or long, first, in the middle or last.
  const std::string shorter = Key(2).substr(1);
  const std::string longer = Key(2) + "x";
  for (const std::string& bad : {shorter, longer}) {
    for (size_t at = 0; at < 3; ++at) {
      std::vector<std::string_view> v = views;
      v[at] = bad;
      Values values(3);
      absl::Status s = tree0_->LookupBatch(*ctx0_, v, absl::MakeSpan(values));
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << bad.size() << " bytes at " << at << ": " << s;
    }
  }
  // A non-unique tree: FailedPrecondition, as Lookup.
  auto anchor =
      BLinkTree::Create(cluster_->manager(0), *ctx0_,
                        {.key_width = config_.key_width, .unique = false});
  ASSERT_TRUE(anchor.ok()) << anchor.status();
  auto multi = *BLinkTree::Open(cluster_->manager(0), *ctx0_, *anchor,
                                testing::TestTreeTuning());
  ASSERT_TRUE(multi->Insert(*ctx0_, Key(2), 5).ok());
  ASSERT_TRUE(multi->Insert(*ctx0_, Key(2), 6).ok());
  for (size_t n : {size_t{0}, size_t{3}}) {
    Values values(n);
    absl::Status s =
        multi->LookupBatch(*ctx0_, absl::MakeConstSpan(views).subspan(0, n),
                           absl::MakeSpan(values));
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << n << s;
  }
  // Nothing was left latched: writes and batches go on, on both trees.
  ASSERT_TRUE(tree0_->Insert(*ctx0_, Key(100), 100).ok());
  ASSERT_TRUE(tree0_->Update(*ctx0_, Key(2), 22).ok());
  ASSERT_TRUE(multi->Insert(*ctx0_, Key(2), 7).ok());
  EXPECT_EQ(Batch(*tree0_, *ctx0_, {Key(100), Key(2), Key(101)}),
            (Values{100, 22, std::nullopt}));
  EXPECT_EQ(Batch(*tree1_, *ctx1_, {Key(100), Key(2), Key(101)}),
            (Values{100, 22, std::nullopt}));
}

const LookupBatchConfig kConfigs[] = {
    {4, 256}, {8, 256}, {20, 256}, {8, 4096}, {20, 4096},
};

std::string LookupBatchTestName(
    const ::testing::TestParamInfo<std::tuple<cc::Protocol, LookupBatchConfig>>&
        info) {
  const LookupBatchConfig& c = std::get<1>(info.param);
  return absl::StrFormat("%s_w%d_gcl%d",
                         cc::ProtocolName(std::get<0>(info.param)), c.key_width,
                         c.gcl_size);
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, BLinkTreeLookupBatchTest,
    ::testing::Combine(::testing::ValuesIn(testing::TestProtocols()),
                       ::testing::ValuesIn(kConfigs)),
    LookupBatchTestName);

}  // namespace
}  // namespace strand::index
