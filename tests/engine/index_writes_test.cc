// The index part of a commit (txn/index_writes.h): a commit inserts its
// index entries in runs (consecutive entries ascending in one index, one
// B-link InsertBatch each), and a commit that fails on a duplicate leaves
// none of its entries behind, neither those of earlier runs nor those its
// failing run inserted before the duplicate.

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;

// Which indexes AddRange writes to: kA, then kB, each as one run.
constexpr int64_t kA = 1;
constexpr int64_t kB = 2;
// An id of every row in the non-unique index: its entries differ only in
// their values (the rows' addresses).
constexpr int64_t kGroup = 1;

class IndexWritesTest
    : public ::testing::TestWithParam<testing::TxnTestConfig> {
 protected:
  void SetUp() override {
    EngineOptions options = testing::TxnTestOptions(GetParam());
    // A commit holds every index leaf it changes at once (txn/txn.h, size
    // limit): 40 rows in three indexes take more than the default 16 lines.
    options.cc.cache_bytes = 256 * 64;
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    const storage::Schema schema =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64}});
    const txn::TableId table = *engine_->CreateTable("rows", schema);
    a_ = *engine_->CreateIndex("rows_a", table, 8, true);
    b_ = *engine_->CreateIndex("rows_b", table, 8, true);
    group_ = *engine_->CreateIndex("rows_group", table, 8, false);
    const storage::Schema* s = &engine_->schema(table);
    // Inserts rows first..first+count-1; their keys go into the indexes in
    // `which` (kA | kB), all of index A's first, each index's ascending,
    // and every row into the non-unique index under one key.
    add_range_ = *engine_->RegisterProcedure(
        "add_range",
        std::function<absl::StatusOr<int64_t>(Txn&, int64_t, int64_t, int64_t)>(
            [=, this](Txn& txn, int64_t first, int64_t count,
                      int64_t which) -> absl::StatusOr<int64_t> {
              std::vector<storage::TupleAddress> rows;
              for (int64_t id = first; id < first + count; ++id) {
                storage::TupleBuffer t(*s);
                t.SetInt(0, id);
                auto addr = txn.Insert(table, t);
                if (!addr.ok()) return addr.status();
                rows.push_back(*addr);
              }
              for (int64_t i = 0; i < count && (which & kA); ++i) {
                txn.AddIndexEntry(a_, AccountKey(first + i), rows[i]);
              }
              for (int64_t i = 0; i < count && (which & kB); ++i) {
                txn.AddIndexEntry(b_, AccountKey(first + i), rows[i]);
              }
              // Equal keys: a run as far as the rows' addresses ascend.
              for (int64_t i = 0; i < count; ++i) {
                txn.AddIndexEntry(group_, AccountKey(kGroup), rows[i]);
              }
              return count;
            }));
    // The ids in an index, in key order (with their rows' ids checked).
    ids_ = *engine_->RegisterProcedure(
        "ids",
        std::function<absl::StatusOr<std::string>(Txn&, int64_t)>(
            [=, this](Txn& txn, int64_t index) -> absl::StatusOr<std::string> {
              std::string out;
              absl::Status s = txn.Scan(
                  static_cast<txn::IndexId>(index), std::nullopt, std::nullopt,
                  true, index::BLinkTree::kNoLimit,
                  [&](std::string_view key, storage::TupleAddress) {
                    out += std::to_string(index::DecodeInt64(key.data())) + " ";
                    return true;
                  });
              if (!s.ok()) return s;
              return out;
            }));
    session_ = *engine_->NewSession(0);
  }

  absl::StatusOr<int64_t> AddRange(int64_t first, int64_t count,
                                   int64_t which) {
    return session_->Call<int64_t>(add_range_, first, count, which);
  }
  static void ExpectAdded(const absl::StatusOr<int64_t>& added, int64_t n) {
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_EQ(*added, n);
  }
  std::string Ids(txn::IndexId index) {
    auto ids = session_->Call<std::string>(ids_, int64_t{index});
    EXPECT_TRUE(ids.ok()) << ids.status();
    return ids.ok() ? *ids : "";
  }
  // How many entries the non-unique index holds.
  size_t GroupSize() {
    const std::string ids = Ids(group_);
    return std::count(ids.begin(), ids.end(), ' ');
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Session> session_;
  txn::IndexId a_ = 0, b_ = 0, group_ = 0;
  ProcedureId add_range_ = 0, ids_ = 0;
};

TEST_P(IndexWritesTest, ABatchedCommitInsertsEveryEntry) {
  ExpectAdded(AddRange(10, 3, kA | kB), 3);
  // Crosses several leaves of 256-byte GCLs (splits inside the batch).
  ExpectAdded(AddRange(20, 40, kA | kB), 40);
  std::string want = "10 11 12 ";
  for (int id = 20; id < 60; ++id) want += std::to_string(id) + " ";
  EXPECT_EQ(Ids(a_), want);
  EXPECT_EQ(Ids(b_), want);
  EXPECT_EQ(GroupSize(), 43u);
}

TEST_P(IndexWritesTest, ADuplicateInTheRunUndoesTheRunsPrefix) {
  ASSERT_TRUE(AddRange(7, 1, kA).ok());
  // Index A's run 0..9 fails at 7, after inserting 0..6.
  auto r = AddRange(0, 10, kA | kB);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  EXPECT_EQ(Ids(a_), "7 ");
  EXPECT_EQ(Ids(b_), "");
  EXPECT_EQ(GroupSize(), 1u);
}

TEST_P(IndexWritesTest, ADuplicateInALaterRunUndoesTheEarlierRuns) {
  ASSERT_TRUE(AddRange(25, 1, kB).ok());
  // Index A's run 0..29 goes in whole (its leaves split on the way), then
  // index B's fails at 25 after 0..24.
  auto r = AddRange(0, 30, kA | kB);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAlreadyExists) << r.status();
  EXPECT_EQ(Ids(a_), "");
  EXPECT_EQ(Ids(b_), "25 ");
  EXPECT_EQ(GroupSize(), 1u);
  // The failed commit left nothing in the way of the same rows.
  ExpectAdded(AddRange(0, 25, kA | kB), 25);
  EXPECT_EQ(GroupSize(), 26u);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, IndexWritesTest,
    ::testing::ValuesIn(testing::TxnTestConfigs(testing::TestProtocols())),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
