// Catalog: installed once per pool, shared by every compute node, clear
// errors for duplicate and unknown names.

#include "storage/catalog.h"

#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/heap_table.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/protocols.h"

namespace strand::storage {
namespace {

class CatalogTest : public ::testing::TestWithParam<cc::Protocol> {
 protected:
  void SetUp() override {
    cc::CcOptions o;
    o.protocol = GetParam();
    o.gcl_size = 256;  // three entries per catalog GCL: chains form quickly
    auto cluster = testing::CcCluster::Create(3, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    for (int i = 0; i < 3; ++i) ctx_.push_back(*m(i).NewThreadContext());
  }
  cc::GclManager& m(int i) { return cluster_->manager(i); }
  std::unique_ptr<Catalog> OpenOn(int node) {
    auto c = Catalog::Open(m(node), *ctx_[node]);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::vector<std::unique_ptr<cc::ThreadContext>> ctx_;
};

TEST_P(CatalogTest, ConcurrentOpensAgreeOnOneCatalog) {
  std::vector<rdma::GlobalAddress> heads(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto c = Catalog::Open(m(i), *ctx_[i]);
      ASSERT_TRUE(c.ok()) << c.status();
      heads[i] = (*c)->head();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(heads[0], heads[1]);
  EXPECT_EQ(heads[0], heads[2]);
}

TEST_P(CatalogTest, TableCreatedOnOneNodeOpensOnAnother) {
  auto schema = *Schema::Create(
      {{"w_id", ColumnType::kInt32}, {"w_name", ColumnType::kChar, 10}});
  auto created = OpenOn(0)->CreateTable(*ctx_[0], "warehouse", schema);
  ASSERT_TRUE(created.ok()) << created.status();
  auto writer = *HeapTable::Open(m(0), *ctx_[0], created->root, schema);
  TupleBuffer row(schema);
  row.SetInt(0, 42);
  row.SetChars(1, "north");
  auto address =
      *writer->Insert(*ctx_[0], absl::MakeConstSpan(row.data(), row.size()));

  auto found = OpenOn(1)->FindTable(*ctx_[1], "warehouse");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id, created->id);
  EXPECT_EQ(found->root, created->root);
  EXPECT_TRUE(found->schema == schema);
  auto reader = HeapTable::Open(m(1), *ctx_[1], found->root, found->schema);
  ASSERT_TRUE(reader.ok()) << reader.status();
  TupleBuffer out(found->schema);
  ASSERT_TRUE(
      (*reader)
          ->Read(*ctx_[1], address, absl::MakeSpan(out.data(), out.size()))
          .ok());
  EXPECT_EQ(out.view().GetInt(0), 42);
  EXPECT_EQ(out.view().GetChars(1), "north");
}

TEST_P(CatalogTest, DuplicateAndUnknownNamesAreClearErrors) {
  auto catalog = OpenOn(0);
  auto schema = *Schema::Create({{"a", ColumnType::kInt64}});
  ASSERT_TRUE(catalog->CreateTable(*ctx_[0], "t", schema).ok());
  auto again = OpenOn(1)->CreateTable(*ctx_[1], "t", schema);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("'t'"), std::string::npos);

  auto missing = catalog->FindTable(*ctx_[0], "nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  EXPECT_EQ(catalog->FindIndex(*ctx_[0], "nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(catalog->FindIndex(*ctx_[0], "t").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(catalog->CreateTable(*ctx_[0], "", schema).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(catalog->CreateTable(*ctx_[0], std::string(32, 'x'), schema)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);

  // A duplicate index name never calls the factory (nothing leaks).
  bool called = false;
  auto dup =
      catalog->CreateIndex(*ctx_[0], "t", IndexSpec{1, 8, true}, [&](uint32_t) {
        called = true;
        return m(0).Allocate(*ctx_[0]);
      });
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(called);
}

TEST_P(CatalogTest, IndexKeyColumnsAreRecordedForEveryNode) {
  auto catalog = OpenOn(0);
  auto anchor = [&](uint32_t) { return m(0).Allocate(*ctx_[0]); };
  IndexSpec declared{7, 16, false, {255, 0, 3, 1, 2, 4, 6}};  // the most
  ASSERT_TRUE(
      catalog->CreateIndex(*ctx_[0], "declared", declared, anchor).ok());
  ASSERT_TRUE(
      catalog->CreateIndex(*ctx_[0], "by_hand", IndexSpec{7, 8, true}, anchor)
          .ok());

  auto other = OpenOn(1);
  auto found = other->FindIndex(*ctx_[1], "declared");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->spec.table_id, 7u);
  EXPECT_EQ(found->spec.key_width, 16);
  EXPECT_FALSE(found->spec.unique);
  EXPECT_EQ(found->spec.key_columns, declared.key_columns);
  auto by_hand = other->FindIndex(*ctx_[1], "by_hand");
  ASSERT_TRUE(by_hand.ok()) << by_hand.status();
  EXPECT_TRUE(by_hand->spec.key_columns.empty());

  // More than the entry holds, or a column no schema has: refused before
  // the index is built.
  bool called = false;
  auto count_anchor = [&](uint32_t) {
    called = true;
    return m(0).Allocate(*ctx_[0]);
  };
  IndexSpec too_many{7, 16, true, {0, 1, 2, 3, 4, 5, 6, 7}};
  EXPECT_EQ(catalog->CreateIndex(*ctx_[0], "wide", too_many, count_anchor)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  IndexSpec beyond{7, 16, true, {256}};
  EXPECT_EQ(catalog->CreateIndex(*ctx_[0], "beyond", beyond, count_anchor)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(called);
}

TEST_P(CatalogTest, ManyNamesFromSeveralNodesSpanAChain) {
  constexpr int kPerNode = 8;
  std::vector<std::thread> threads;
  for (int n = 0; n < 3; ++n) {
    threads.emplace_back([&, n] {
      auto catalog = *Catalog::Open(m(n), *ctx_[n]);
      for (int i = 0; i < kPerNode; ++i) {
        auto anchor = catalog->CreateIndex(
            *ctx_[n], absl::StrCat("idx_", n, "_", i),
            IndexSpec{0, static_cast<uint16_t>(8 + i), i % 2 == 0},
            [&](uint32_t) { return m(n).Allocate(*ctx_[n]); });
        ASSERT_TRUE(anchor.ok()) << anchor.status();
      }
      // Everyone races for one shared name: exactly one wins.
      (void)catalog->CreateIndex(
          *ctx_[n], "shared", IndexSpec{0, 8, true},
          [&](uint32_t) { return m(n).Allocate(*ctx_[n]); });
    });
  }
  for (auto& t : threads) t.join();
  auto catalog = OpenOn(2);
  auto names = *catalog->ListNames(*ctx_[2]);
  EXPECT_EQ(names.size(), 3u * kPerNode + 1);
  absl::flat_hash_set<uint32_t> ids;
  for (int n = 0; n < 3; ++n) {
    for (int i = 0; i < kPerNode; ++i) {
      auto idx = catalog->FindIndex(*ctx_[2], absl::StrCat("idx_", n, "_", i));
      ASSERT_TRUE(idx.ok()) << idx.status();
      EXPECT_EQ(idx->spec.key_width, 8 + i);
      EXPECT_EQ(idx->spec.unique, i % 2 == 0);
      EXPECT_TRUE(ids.insert(idx->id).second);
    }
  }
  EXPECT_TRUE(catalog->FindIndex(*ctx_[2], "shared").ok());
}

INSTANTIATE_TEST_SUITE_P(Protocols, CatalogTest,
                         ::testing::ValuesIn(testing::TestProtocols()),
                         testing::ProtocolTestName);

}  // namespace
}  // namespace strand::storage
