// BLinkTree::InsertBatch against a model (std::set of (key, value)): runs
// inside one leaf and across leaves with splits, duplicates that stop a
// batch part way, non-unique trees, empty and malformed batches, and the
// same tree as one Insert per entry would build. Small GCLs so a batch
// crosses several leaves.

#include <algorithm>
#include <random>
#include <set>
#include <string>
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

struct BatchConfig {
  uint16_t key_width;
  uint32_t gcl_size;
  bool unique;
};

using Entry = std::pair<std::string, uint64_t>;
using Model = std::set<Entry>;  // a unique tree's: one value per key

class BLinkTreeBatchTest
    : public ::testing::TestWithParam<std::tuple<cc::Protocol, BatchConfig>> {
 protected:
  void SetUp() override {
    const auto& [protocol, config] = GetParam();
    config_ = config;
    cc::CcOptions o;
    o.protocol = protocol;
    o.gcl_size = config.gcl_size;
    auto cluster = testing::CcCluster::Create(1, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx_ = *cluster_->manager(0).NewThreadContext();
    tree_ = NewTree();
  }

  std::unique_ptr<BLinkTree> NewTree() {
    auto anchor = BLinkTree::Create(
        cluster_->manager(0), *ctx_,
        {.key_width = config_.key_width, .unique = config_.unique});
    EXPECT_TRUE(anchor.ok()) << anchor.status();
    return *BLinkTree::Open(cluster_->manager(0), *ctx_, *anchor,
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

  // Batch entries: keys[i] with values[i] (views of `keys`).
  static std::vector<BLinkTree::Entry> Entries(
      const std::vector<std::string>& keys,
      const std::vector<uint64_t>& values) {
    std::vector<BLinkTree::Entry> out;
    for (size_t i = 0; i < keys.size(); ++i)
      out.push_back({keys[i], values[i]});
    return out;
  }

  // Whether the tree holds exactly `model`, with its invariants intact.
  void ExpectTreeIs(BLinkTree& tree, const Model& model) {
    auto stats = tree.Verify(*ctx_);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->entries, model.size());
    std::vector<Entry> seen;
    ASSERT_TRUE(tree.Scan(*ctx_, std::nullopt, std::nullopt,
                          BLinkTree::kNoLimit,
                          [&](std::string_view k, uint64_t v) {
                            seen.emplace_back(std::string(k), v);
                            return true;
                          })
                    .ok());
    EXPECT_EQ(seen, std::vector<Entry>(model.begin(), model.end()));
  }

  // Whether `key` (with `value`, for a non-unique tree) would collide.
  bool Present(const Model& model, const std::string& key,
               uint64_t value) const {
    if (!config_.unique) return model.count({key, value}) > 0;
    auto it = model.lower_bound({key, 0});
    return it != model.end() && it->first == key;
  }

  BatchConfig config_;
  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<cc::ThreadContext> ctx_;
  std::unique_ptr<BLinkTree> tree_;
};

TEST_P(BLinkTreeBatchTest, EmptyBatchIsOk) {
  size_t inserted = 99;
  EXPECT_TRUE(tree_->InsertBatch(*ctx_, {}, &inserted).ok());
  EXPECT_EQ(inserted, 0u);
  ExpectTreeIs(*tree_, {});
}

TEST_P(BLinkTreeBatchTest, RunInsideOneLeaf) {
  Model model;
  std::vector<std::string> keys;
  std::vector<uint64_t> values;
  for (uint64_t k = 10; k < 13; ++k) {
    keys.push_back(Key(k));
    values.push_back(k * 3);
    model.emplace(Key(k), k * 3);
  }
  size_t inserted = 0;
  ASSERT_TRUE(tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted).ok());
  EXPECT_EQ(inserted, 3u);
  ExpectTreeIs(*tree_, model);
  auto stats = tree_->Verify(*ctx_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->leaves, 1u);
  // A second batch around the first one's keys, into the same leaf.
  keys = {Key(1), Key(20)};
  values = {1, 2};
  for (size_t i = 0; i < keys.size(); ++i) model.emplace(keys[i], values[i]);
  ASSERT_TRUE(tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted).ok());
  EXPECT_EQ(inserted, 2u);
  ExpectTreeIs(*tree_, model);
}

TEST_P(BLinkTreeBatchTest, RunsAcrossLeavesSplitAndMatchOneByOne) {
  // The same ascending batches into two trees: one InsertBatch per batch,
  // one Insert per entry. Same contents and same shape (splits happen at
  // the same entries).
  auto one_by_one = NewTree();
  Model model;
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    const uint64_t start = rng() % 5000;
    const uint64_t length = rng() % 40;
    const uint64_t stride = 1 + rng() % 3;
    std::vector<std::string> keys;
    std::vector<uint64_t> values;
    for (uint64_t i = 0; i < length; ++i) {
      const uint64_t k = start + i * stride;
      const uint64_t v = rng() % 4;
      if (Present(model, Key(k), v)) continue;  // this test: no duplicates
      keys.push_back(Key(k));
      values.push_back(v);
      model.emplace(Key(k), v);
    }
    size_t inserted = 0;
    absl::Status s =
        tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s;
    ASSERT_EQ(inserted, keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(one_by_one->Insert(*ctx_, keys[i], values[i]).ok());
    }
  }
  ExpectTreeIs(*tree_, model);
  ExpectTreeIs(*one_by_one, model);
  auto batched = tree_->Verify(*ctx_);
  auto single = one_by_one->Verify(*ctx_);
  ASSERT_TRUE(batched.ok()) << batched.status();
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_GE(batched->height, 3) << "GCLs too big: few splits happened";
  EXPECT_EQ(batched->leaves, single->leaves);
  EXPECT_EQ(batched->inner_nodes, single->inner_nodes);
  EXPECT_EQ(batched->height, single->height);
}

TEST_P(BLinkTreeBatchTest, AscendingBatchesFillLeaves) {
  // A load in batches keeps the ascending-split rule: full leaves.
  for (uint64_t first = 0; first < 3000; first += 15) {
    std::vector<std::string> keys;
    std::vector<uint64_t> values;
    for (uint64_t k = first; k < first + 15; ++k) {
      keys.push_back(Key(k));
      values.push_back(k);
    }
    size_t inserted = 0;
    ASSERT_TRUE(
        tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted).ok());
  }
  auto stats = tree_->Verify(*ctx_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, 3000u);
  EXPECT_GE(static_cast<double>(stats->entries) /
                (static_cast<double>(stats->leaves) * stats->node_capacity),
            0.9);
}

TEST_P(BLinkTreeBatchTest, DuplicateStopsTheBatchAndCountsTheInserted) {
  Model model;
  ASSERT_TRUE(tree_->Insert(*ctx_, Key(50), 7).ok());
  model.emplace(Key(50), 7);
  // 30 keys from 40 (across leaves): 40..49 go in, 50 collides, 51.. not.
  std::vector<std::string> keys;
  std::vector<uint64_t> values;
  for (uint64_t k = 40; k < 70; ++k) {
    keys.push_back(Key(k));
    values.push_back(7);
  }
  size_t inserted = 99;
  absl::Status s = tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(inserted, 10u);
  for (uint64_t k = 40; k < 50; ++k) model.emplace(Key(k), 7);
  ExpectTreeIs(*tree_, model);

  // A duplicate of the batch's first entry: nothing goes in.
  s = tree_->InsertBatch(*ctx_, Entries({Key(40), Key(100)}, {7, 7}),
                         &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(inserted, 0u);
  // A duplicate after a split inside the batch: fill the leaves first.
  std::vector<std::string> more;
  std::vector<uint64_t> more_values;
  for (uint64_t k = 200; k < 260; ++k) {
    more.push_back(Key(k));
    more_values.push_back(7);
  }
  more.push_back(Key(300));
  more_values.push_back(7);
  ASSERT_TRUE(tree_->Insert(*ctx_, Key(300), 7).ok());
  model.emplace(Key(300), 7);
  s = tree_->InsertBatch(*ctx_, Entries(more, more_values), &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(inserted, 60u);
  for (uint64_t k = 200; k < 260; ++k) model.emplace(Key(k), 7);
  ExpectTreeIs(*tree_, model);
}

// Non-unique trees only: equal keys, ordered by value.
class BLinkTreeBatchMultiTest : public BLinkTreeBatchTest {};

TEST_P(BLinkTreeBatchMultiTest, EqualKeysBatchByValue) {
  Model model;
  ASSERT_TRUE(tree_->Insert(*ctx_, Key(5), 30).ok());
  model.emplace(Key(5), 30);
  // One key, ascending values, across leaves; (5, 30) is present.
  std::vector<std::string> keys(40, Key(5));
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 40; ++v) values.push_back(v);
  size_t inserted = 0;
  absl::Status s = tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
  EXPECT_EQ(inserted, 30u);
  for (uint64_t v = 0; v < 30; ++v) model.emplace(Key(5), v);
  ExpectTreeIs(*tree_, model);
  // The same key with other values is no duplicate.
  keys.assign(3, Key(5));
  ASSERT_TRUE(
      tree_->InsertBatch(*ctx_, Entries(keys, {100, 200, 300}), &inserted)
          .ok());
  EXPECT_EQ(inserted, 3u);
  for (uint64_t v : {100, 200, 300}) model.emplace(Key(5), v);
  ExpectTreeIs(*tree_, model);
  // Equal keys with descending values are out of the tree's order.
  s = tree_->InsertBatch(*ctx_, Entries(keys, {500, 400, 600}), &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(inserted, 0u);
  ExpectTreeIs(*tree_, model);
}

TEST_P(BLinkTreeBatchTest, MalformedBatchesInsertNothing) {
  size_t inserted = 99;
  // Descending keys.
  absl::Status s =
      tree_->InsertBatch(*ctx_, Entries({Key(2), Key(1)}, {1, 1}), &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(inserted, 0u);
  // A repeated entry: not strictly ascending.
  s = tree_->InsertBatch(*ctx_, Entries({Key(1), Key(3), Key(3)}, {1, 1, 1}),
                         &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(inserted, 0u);
  // A key of the wrong width after good ones.
  s = tree_->InsertBatch(
      *ctx_, Entries({Key(1), std::string(config_.key_width + 1, 'z')}, {1, 1}),
      &inserted);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(inserted, 0u);
  ExpectTreeIs(*tree_, {});
}

TEST_P(BLinkTreeBatchTest, RandomBatchesAndPointInsertsMatchTheModel) {
  // Batches that may hold duplicates, between point inserts and deletes.
  Model model;
  std::mt19937_64 rng(5 + config_.key_width);
  constexpr uint64_t kDomain = 4000;
  for (int op = 0; op < 3000; ++op) {
    const uint64_t k = rng() % kDomain;
    const uint64_t v = rng() % 3;
    const int dice = rng() % 10;
    if (dice < 2) {
      absl::Status s = tree_->Insert(*ctx_, Key(k), v);
      ASSERT_EQ(s.ok(), !Present(model, Key(k), v)) << s;
      if (s.ok()) model.emplace(Key(k), v);
    } else if (dice < 3) {
      auto it = model.lower_bound({Key(k), 0});
      if (it == model.end()) continue;
      const Entry e = *it;
      ASSERT_TRUE((config_.unique
                       ? tree_->Delete(*ctx_, e.first)
                       : tree_->DeleteEntry(*ctx_, e.first, e.second))
                      .ok());
      model.erase(e);
    } else {
      const uint64_t length = rng() % 30;
      const uint64_t stride = 1 + rng() % 4;
      std::vector<std::string> keys;
      std::vector<uint64_t> values;
      for (uint64_t i = 0; i < length; ++i) {
        keys.push_back(Key(k + i * stride));
        values.push_back(v);
      }
      // The model's answer: every entry up to the first present one.
      size_t want = 0;
      while (want < keys.size() && !Present(model, keys[want], v)) ++want;
      size_t inserted = 99;
      absl::Status s =
          tree_->InsertBatch(*ctx_, Entries(keys, values), &inserted);
      ASSERT_EQ(inserted, want) << "op " << op << ": " << s;
      if (want == keys.size()) {
        ASSERT_TRUE(s.ok()) << "op " << op << ": " << s;
      } else {
        ASSERT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
      }
      for (size_t i = 0; i < want; ++i) model.emplace(keys[i], v);
    }
  }
  ExpectTreeIs(*tree_, model);
}

// A committer asks to split the leaf of a key after other committers
// emptied it (txn/index_writes.cc releases every leaf before it calls
// SplitLeafOf). Where the key is the leaf's low fence there is nothing to
// split: no middle, and a split at the fence would leave an empty range.
// The call leaves such a leaf alone, and the tree still takes every key.
TEST_P(BLinkTreeBatchTest, SplitOfAnEmptiedLeafAtItsLowFence) {
  constexpr uint64_t kKeys = 200;
  for (uint64_t k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(tree_->Insert(*ctx_, Key(k), k).ok());
  }
  auto before = tree_->Verify(*ctx_);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_GT(before->leaves, 2u) << "no leaf with a key as its low fence";
  for (uint64_t k = 0; k < kKeys; ++k) {
    absl::Status s = config_.unique ? tree_->Delete(*ctx_, Key(k))
                                    : tree_->DeleteEntry(*ctx_, Key(k), k);
    ASSERT_TRUE(s.ok()) << s;
  }
  for (uint64_t k = 0; k < kKeys; ++k) {
    absl::Status s = tree_->SplitLeafOf(*ctx_, Key(k), k);
    ASSERT_TRUE(s.ok()) << "key " << k << ": " << s;
  }
  auto after = tree_->Verify(*ctx_);
  ASSERT_TRUE(after.ok()) << after.status();
  Model model;
  for (uint64_t k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(tree_->Insert(*ctx_, Key(k), k + 1).ok());
    model.emplace(Key(k), k + 1);
  }
  ExpectTreeIs(*tree_, model);
}

const BatchConfig kConfigs[] = {
    {8, 256, true},
    {16, 512, true},
    {12, 256, false},
};
const BatchConfig kMultiConfigs[] = {
    {12, 256, false},
    {4, 256, false},
};

std::string BatchTestName(
    const ::testing::TestParamInfo<std::tuple<cc::Protocol, BatchConfig>>&
        info) {
  const BatchConfig& c = std::get<1>(info.param);
  return absl::StrFormat("%s_w%d_gcl%d_%s",
                         cc::ProtocolName(std::get<0>(info.param)), c.key_width,
                         c.gcl_size, c.unique ? "unique" : "multi");
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, BLinkTreeBatchTest,
    ::testing::Combine(::testing::ValuesIn(testing::TestProtocols()),
                       ::testing::ValuesIn(kConfigs)),
    BatchTestName);
INSTANTIATE_TEST_SUITE_P(
    Protocols, BLinkTreeBatchMultiTest,
    ::testing::Combine(::testing::ValuesIn(testing::TestProtocols()),
                       ::testing::ValuesIn(kMultiConfigs)),
    BatchTestName);

}  // namespace
}  // namespace strand::index
