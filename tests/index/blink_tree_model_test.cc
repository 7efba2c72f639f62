// The B-link tree against a model (std::map / std::set): random inserts,
// deletes, updates, lookups and scans in both directions with limits and
// early stops, over several key widths and small GCLs so nodes split often.

#include <algorithm>
#include <map>
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

struct ModelConfig {
  uint16_t key_width;
  uint32_t gcl_size;
  bool unique;
  int ops;
};

std::string ConfigName(const ModelConfig& c) {
  return absl::StrFormat("w%d_gcl%d_%s", c.key_width, c.gcl_size,
                         c.unique ? "unique" : "multi");
}

class BLinkTreeModelTest
    : public ::testing::TestWithParam<std::tuple<cc::Protocol, ModelConfig>> {
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
    ctx_ = *cluster_->manager(0).NewThreadContext();
    auto anchor = BLinkTree::Create(
        cluster_->manager(0), *ctx_,
        {.key_width = config.key_width, .unique = config.unique});
    ASSERT_TRUE(anchor.ok()) << anchor.status();
    tree_ = *BLinkTree::Open(cluster_->manager(0), *ctx_, *anchor,
                             testing::TestTreeTuning());
  }

  // Keys of a small domain so operations collide; wide keys carry a text
  // part so more than the first 8 bytes matter for the order.
  std::string Key(uint64_t k) const {
    KeyBuilder b;
    if (config_.key_width >= 8) {
      b.Uint64(k / 7);
      b.String(absl::StrFormat("%03d", k % 7), config_.key_width - 8);
    } else {
      b.Uint32(static_cast<uint32_t>(k)).String("", config_.key_width - 4);
    }
    return b.Build(config_.key_width);
  }

  // Distinct keys 0..n-1 in increasing order, for the load-order tests.
  std::vector<std::string> AscendingKeys(uint64_t n) const {
    std::vector<std::string> keys;
    for (uint64_t k = 0; k < n; ++k) {
      KeyBuilder b;
      if (config_.key_width >= 8) {
        b.Uint64(k).String("", config_.key_width - 8);
      } else {
        b.Uint32(static_cast<uint32_t>(k)).String("", config_.key_width - 4);
      }
      keys.push_back(b.Build(config_.key_width));
    }
    return keys;
  }

  ModelConfig config_;
  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<cc::ThreadContext> ctx_;
  std::unique_ptr<BLinkTree> tree_;
};

using Entry = std::pair<std::string, uint64_t>;

// First entry with key >= k, and first entry with key > k.
auto KeyLowerBound(const std::set<Entry>& m, const std::string& k) {
  return m.lower_bound({k, 0});
}
auto KeyLowerBound(const std::map<std::string, uint64_t>& m,
                   const std::string& k) {
  return m.lower_bound(k);
}
auto KeyUpperBound(const std::set<Entry>& m, const std::string& k) {
  return m.upper_bound({k, UINT64_MAX});
}
auto KeyUpperBound(const std::map<std::string, uint64_t>& m,
                   const std::string& k) {
  return m.upper_bound(k);
}

// What a scan must return, from a model ordered by (key, value).
template <typename Model>
std::vector<Entry> Expected(const Model& model, bool backward,
                            const std::string* lo, const std::string* hi,
                            size_t max) {
  std::vector<Entry> out;
  if (!backward) {
    auto it = lo ? KeyLowerBound(model, *lo) : model.begin();
    for (; it != model.end() && out.size() < max; ++it) {
      if (hi && it->first > *hi) break;
      out.emplace_back(it->first, it->second);
    }
  } else {
    auto it = hi ? KeyUpperBound(model, *hi) : model.end();
    while (it != model.begin() && out.size() < max) {
      --it;
      if (lo && it->first < *lo) break;
      out.emplace_back(it->first, it->second);
    }
  }
  return out;
}

TEST_P(BLinkTreeModelTest, RandomOperationsMatchTheModel) {
  std::mt19937_64 rng(42 + config_.key_width);
  constexpr uint64_t kDomain = 3000;
  // The model: (key, value) pairs; a unique tree has one value per key.
  std::set<Entry> model;
  std::map<std::string, uint64_t> unique_model;
  auto pick = [&] { return Key(rng() % kDomain); };
  auto model_entries = [&]() -> std::vector<Entry> {
    if (!config_.unique) return {model.begin(), model.end()};
    return {unique_model.begin(), unique_model.end()};
  };

  for (int op = 0; op < config_.ops; ++op) {
    const int dice = rng() % 100;
    const std::string key = pick();
    const uint64_t value = rng() % 4;  // few values: pairs collide too
    if (dice < 40) {
      absl::Status s = tree_->Insert(*ctx_, key, value);
      const bool fresh = config_.unique
                             ? unique_model.emplace(key, value).second
                             : model.emplace(key, value).second;
      ASSERT_EQ(s.ok(), fresh) << "op " << op << ": " << s;
      if (!fresh) {
        ASSERT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
      }
    } else if (dice < 60) {
      absl::Status s;
      bool present;
      if (config_.unique) {
        s = tree_->Delete(*ctx_, key);
        present = unique_model.erase(key) == 1;
      } else {
        s = tree_->DeleteEntry(*ctx_, key, value);
        present = model.erase({key, value}) == 1;
      }
      ASSERT_EQ(s.ok(), present) << "op " << op << ": " << s;
      if (!present) {
        ASSERT_EQ(s.code(), absl::StatusCode::kNotFound);
      }
    } else if (dice < 70 && config_.unique) {
      absl::Status s = tree_->Update(*ctx_, key, value + 100);
      auto it = unique_model.find(key);
      ASSERT_EQ(s.ok(), it != unique_model.end()) << s;
      if (it != unique_model.end()) it->second = value + 100;
    } else if (dice < 80 && config_.unique) {
      auto v = tree_->Lookup(*ctx_, key);
      auto it = unique_model.find(key);
      ASSERT_EQ(v.ok(), it != unique_model.end()) << v.status();
      if (v.ok()) {
        ASSERT_EQ(*v, it->second);
      }
    } else {
      // A scan: random direction, bounds, limit and early stop.
      const bool backward = rng() % 2;
      const std::string other = pick();
      const std::string lo = std::min(key, other), hi = std::max(key, other);
      const bool bounded_lo = rng() % 4 != 0, bounded_hi = rng() % 4 != 0;
      const uint64_t limit = rng() % 3 == 0 ? BLinkTree::kNoLimit : rng() % 40;
      const size_t stop_after = rng() % 5 == 0 ? rng() % 10 + 1 : SIZE_MAX;
      std::vector<Entry> got;
      auto visit = [&](std::string_view k, uint64_t v) {
        got.emplace_back(std::string(k), v);
        return got.size() < stop_after;
      };
      std::optional<std::string_view> lo_bound, hi_bound;
      if (bounded_lo) lo_bound = lo;
      if (bounded_hi) hi_bound = hi;
      absl::Status s =
          backward
              ? tree_->ScanBackward(*ctx_, hi_bound, lo_bound, limit, visit)
              : tree_->Scan(*ctx_, lo_bound, hi_bound, limit, visit);
      ASSERT_TRUE(s.ok()) << s;
      const size_t want_max = std::min<uint64_t>(limit, stop_after);
      const std::vector<Entry> want =
          config_.unique
              ? Expected(unique_model, backward, bounded_lo ? &lo : nullptr,
                         bounded_hi ? &hi : nullptr, want_max)
              : Expected(model, backward, bounded_lo ? &lo : nullptr,
                         bounded_hi ? &hi : nullptr, want_max);
      ASSERT_EQ(got, want) << "op " << op << (backward ? " backward" : "")
                           << " limit " << limit << " stop " << stop_after;
    }
  }
  auto stats = tree_->Verify(*ctx_);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, model_entries().size());
  EXPECT_GE(stats->height, 3) << "GCLs too big: few splits happened";

  // A second compute node opens the same tree and sees the same content.
  auto ctx1 = *cluster_->manager(1).NewThreadContext();
  auto other = *BLinkTree::Open(cluster_->manager(1), *ctx1, tree_->anchor(),
                                testing::TestTreeTuning());
  std::vector<Entry> seen;
  ASSERT_TRUE(other
                  ->Scan(*ctx1, std::nullopt, std::nullopt, BLinkTree::kNoLimit,
                         [&](std::string_view k, uint64_t v) {
                           seen.emplace_back(std::string(k), v);
                           return true;
                         })
                  .ok());
  EXPECT_EQ(seen, model_entries());
}

// Inserts keys 0..n-1 in `order` and checks the tree holds exactly them.
void InsertAllAndCheck(BLinkTree& tree, cc::ThreadContext& ctx,
                       const std::vector<std::string>& order,
                       BLinkTreeStats* stats) {
  for (size_t i = 0; i < order.size(); ++i) {
    ASSERT_TRUE(tree.Insert(ctx, order[i], i).ok()) << "insert " << i;
  }
  auto verified = tree.Verify(ctx);
  ASSERT_TRUE(verified.ok()) << verified.status();
  *stats = *verified;
  EXPECT_EQ(stats->entries, order.size());
  std::vector<std::string> sorted = order, seen;
  std::sort(sorted.begin(), sorted.end());
  ASSERT_TRUE(tree.Scan(ctx, std::nullopt, std::nullopt, BLinkTree::kNoLimit,
                        [&](std::string_view k, uint64_t) {
                          seen.emplace_back(k);
                          return true;
                        })
                  .ok());
  EXPECT_EQ(seen, sorted);
}

double LeafFill(const BLinkTreeStats& s) {
  return static_cast<double>(s.entries) /
         (static_cast<double>(s.leaves) * s.node_capacity);
}

// A loader inserts in key order: the leaves must come out (nearly) full,
// not half full as middle splits leave them.
TEST_P(BLinkTreeModelTest, AscendingInsertsFillLeaves) {
  std::vector<std::string> keys = AscendingKeys(3000);
  BLinkTreeStats stats;
  InsertAllAndCheck(*tree_, *ctx_, keys, &stats);
  EXPECT_GE(stats.height, 2);
  EXPECT_GE(LeafFill(stats), 0.9) << stats.leaves << " leaves";
}

// Two ascending runs into neighbouring key ranges, interleaved (two
// loaders, each filling its own district): each split of a leaf holding
// both runs' keys keeps the lower run's entries full instead of splitting
// in the middle over and over.
TEST_P(BLinkTreeModelTest, InterleavedAscendingRunsFillLeaves) {
  const std::vector<std::string> keys = AscendingKeys(4000);
  std::vector<std::string> order;
  for (size_t i = 0; i < 2000; ++i) {
    order.push_back(keys[i]);
    order.push_back(keys[2000 + i]);
  }
  BLinkTreeStats stats;
  InsertAllAndCheck(*tree_, *ctx_, order, &stats);
  EXPECT_GE(stats.height, 2);
  EXPECT_GE(LeafFill(stats), 0.9) << stats.leaves << " leaves";
}

// A run that goes on into a range loaded before (the new orders of a run
// after a load of the later districts) keeps filling its leaves too.
TEST_P(BLinkTreeModelTest, AscendingRunBeforeLoadedKeysFillsLeaves) {
  const std::vector<std::string> keys = AscendingKeys(4000);
  std::vector<std::string> order(keys.begin() + 2000, keys.end());
  order.insert(order.end(), keys.begin(), keys.begin() + 2000);
  BLinkTreeStats stats;
  InsertAllAndCheck(*tree_, *ctx_, order, &stats);
  EXPECT_GE(LeafFill(stats), 0.9) << stats.leaves << " leaves";
}

// Shuffled and descending orders still build a correct tree, with the
// usual fill of middle splits.
TEST_P(BLinkTreeModelTest, ShuffledAndDescendingInsertsStillWork) {
  std::vector<std::string> keys = AscendingKeys(3000);
  std::mt19937_64 rng(7);
  std::shuffle(keys.begin(), keys.end(), rng);
  BLinkTreeStats stats;
  InsertAllAndCheck(*tree_, *ctx_, keys, &stats);
  EXPECT_GE(LeafFill(stats), 0.5);

  auto anchor = BLinkTree::Create(
      cluster_->manager(0), *ctx_,
      {.key_width = config_.key_width, .unique = config_.unique});
  ASSERT_TRUE(anchor.ok()) << anchor.status();
  auto descending = *BLinkTree::Open(cluster_->manager(0), *ctx_, *anchor,
                                     testing::TestTreeTuning());
  std::sort(keys.rbegin(), keys.rend());
  InsertAllAndCheck(*descending, *ctx_, keys, &stats);
  EXPECT_GE(LeafFill(stats), 0.45);
}

TEST_P(BLinkTreeModelTest, RejectsKeysOfTheWrongWidth) {
  const std::string narrow(config_.key_width - 1, 'a');
  EXPECT_EQ(tree_->Insert(*ctx_, narrow, 1).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tree_
                ->Scan(*ctx_, narrow, std::nullopt, 1,
                       [](auto, auto) { return true; })
                .code(),
            absl::StatusCode::kInvalidArgument);
}

const ModelConfig kConfigs[] = {
    {8, 256, true, 100000},
    {16, 512, true, 25000},
    {64, 512, true, 25000},
    {12, 256, false, 25000},
};

INSTANTIATE_TEST_SUITE_P(
    Protocols, BLinkTreeModelTest,
    ::testing::Combine(::testing::ValuesIn(testing::TestProtocols()),
                       ::testing::ValuesIn(kConfigs)),
    [](const auto& info) {
      return std::string(cc::ProtocolName(std::get<0>(info.param))) + "_" +
             ConfigName(std::get<1>(info.param));
    });

TEST(BLinkTreeCreateTest, RefusesNodesThatHoldTooFewKeys) {
  cc::CcOptions o;
  o.protocol = testing::TestProtocols().front();
  o.gcl_size = 256;
  auto cluster = *testing::CcCluster::Create(1, o);
  auto ctx = *cluster->manager(0).NewThreadContext();
  auto anchor = BLinkTree::Create(cluster->manager(0), *ctx, {.key_width = 64});
  EXPECT_EQ(anchor.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(BLinkTree::Create(cluster->manager(0), *ctx, {.key_width = 0})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strand::index
