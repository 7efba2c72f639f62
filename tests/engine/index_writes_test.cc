// The index part of a commit (txn/index_writes.h): a commit inserts its
// index entries in runs (consecutive entries ascending in one index, one
// B-link InsertBatch each), and a commit that fails on a duplicate leaves
// none of its entries behind, neither those of earlier runs nor those its
// failing run inserted before the duplicate. Indexes declared with key
// columns (txn/index_key.h) get their entries from the rows the
// transaction writes, the same keys a procedure would build by hand.

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"
#include "txn/index_key.h"

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
    const storage::Schema* s = *engine_->schema(table);
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
                if (absl::Status added =
                        txn.AddIndexEntry(a_, AccountKey(first + i), rows[i]);
                    !added.ok()) {
                  return added;
                }
              }
              for (int64_t i = 0; i < count && (which & kB); ++i) {
                if (absl::Status added =
                        txn.AddIndexEntry(b_, AccountKey(first + i), rows[i]);
                    !added.ok()) {
                  return added;
                }
              }
              // Equal keys: a run as far as the rows' addresses ascend.
              for (int64_t i = 0; i < count; ++i) {
                if (absl::Status added =
                        txn.AddIndexEntry(group_, AccountKey(kGroup), rows[i]);
                    !added.ok()) {
                  return added;
                }
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

// A table of people with two declared indexes: unique on id, and on
// (city, name) with equal keys allowed.
class DeclaredIndexTest : public ::testing::Test {
 protected:
  static constexpr int kCity = 0, kName = 1, kId = 2, kScore = 3;

  static EngineOptions Options() {
    return testing::TxnTestOptions(
        {txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, 2});
  }

  // Creates (or, `create` false, opens) the table and its indexes, and
  // registers the procedures.
  void Define(Engine& engine, bool create) {
    if (create) {
      auto schema =
          *storage::Schema::Create({{"city", storage::ColumnType::kInt16},
                                    {"name", storage::ColumnType::kChar, 6},
                                    {"id", storage::ColumnType::kInt64},
                                    {"score", storage::ColumnType::kDouble}});
      people_ = *engine.CreateTable("people", schema);
      auto by_id = engine.CreateIndex("by_id", people_, {"id"}, true);
      ASSERT_TRUE(by_id.ok()) << by_id.status();
      by_id_ = *by_id;
      by_city_ = *engine.CreateIndex("by_city", people_, {"city", "name"},
                                     /*unique=*/false);
    } else {
      people_ = *engine.OpenTable("people");
      by_id_ = *engine.OpenIndex("by_id");
      by_city_ = *engine.OpenIndex("by_city");
    }
    const storage::Schema* s = *engine.schema(people_);
    const txn::TableId people = people_;
    insert_ =
        *engine.RegisterProcedure("insert",
                                  [=](Txn& txn, int64_t city, std::string name,
                                      int64_t id) -> absl::StatusOr<bool> {
                                    storage::TupleBuffer row(*s);
                                    row.SetInt(kCity, city);
                                    row.SetChars(kName, name);
                                    row.SetInt(kId, id);
                                    auto at = txn.Insert(people, row);
                                    if (!at.ok()) return at.status();
                                    return true;
                                  });
    const txn::IndexId by_id = by_id_;
    // Moves person `id` to another city through Modify's buffer: its
    // by_city entry moves too, with no call of the procedure's.
    move_ = *engine.RegisterProcedure(
        "move",
        [=](Txn& txn, int64_t id, int64_t city) -> absl::StatusOr<bool> {
          auto at = txn.Lookup(by_id, index::KeyBuilder().Int64(id).Build(8));
          if (!at.ok()) return at.status();
          auto row = txn.Modify(people, *at);
          if (!row.ok()) return row.status();
          (*row)->SetInt(kCity, city);
          return true;
        });
    const txn::IndexId by_city = by_city_;
    // "city:name:id " for every entry of by_city, in key order.
    list_ = *engine.RegisterProcedure(
        "list", [=](Txn& txn) -> absl::StatusOr<std::string> {
          std::string out;
          absl::Status read;
          absl::Status scan =
              txn.Scan(by_city, std::nullopt, std::nullopt, true,
                       index::BLinkTree::kNoLimit,
                       [&](std::string_view, storage::TupleAddress at) {
                         auto row = txn.Read(people, at);
                         if (!row.ok()) {
                           read = row.status();
                           return false;
                         }
                         absl::StrAppend(&out, row->GetInt(kCity), ":",
                                         std::string(row->GetChars(kName)), ":",
                                         row->GetInt(kId), " ");
                         return true;
                       });
          if (!scan.ok()) return scan;
          if (!read.ok()) return read;
          return out;
        });
  }

  txn::TableId people_ = 0;
  txn::IndexId by_id_ = 0, by_city_ = 0;
  Procedure<bool(int64_t, std::string, int64_t)> insert_;
  Procedure<bool(int64_t, int64_t)> move_;
  Procedure<std::string()> list_;
};

TEST_F(DeclaredIndexTest, InsertsAndUpdatesKeepEveryDeclaredIndex) {
  auto engine = *Engine::Open(Options());
  ASSERT_NO_FATAL_FAILURE(Define(*engine, /*create=*/true));
  ASSERT_NE(engine->index_key(by_id_), nullptr);
  EXPECT_EQ(engine->index_key(by_id_)->width(), 8);
  EXPECT_EQ(engine->index_key(by_city_)->width(), 4 + 6);  // int16 as Int32

  auto s0 = *engine->NewSession(0);
  auto s1 = *engine->NewSession(1);
  ASSERT_TRUE(*s0->Call(insert_, 2, "bo", 10));
  ASSERT_TRUE(*s1->Call(insert_, -1, "cy", 11));
  ASSERT_TRUE(*s0->Call(insert_, 2, "al", 12));
  // Negative cities order first, names within a city.
  EXPECT_EQ(*s1->Call(list_), "-1:cy:11 2:al:12 2:bo:10 ");
  // A duplicate id fails its Insert; nothing of it stays.
  EXPECT_EQ(s0->Call(insert_, 5, "zz", 10).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(*s1->Call(move_, 12, -3));
  EXPECT_EQ(*s0->Call(list_), "-3:al:12 -1:cy:11 2:bo:10 ");
}

TEST_F(DeclaredIndexTest, KeysAreWhatAProcedureWouldBuildByHand) {
  auto engine = *Engine::Open(Options());
  ASSERT_NO_FATAL_FAILURE(Define(*engine, /*create=*/true));
  const storage::Schema& schema = **engine->schema(people_);
  storage::TupleBuffer row(schema);
  row.SetInt(kCity, -7);
  row.SetChars(kName, "eve");
  row.SetInt(kId, 1234);
  EXPECT_EQ(engine->index_key(by_city_)->Build(row.view()),
            index::KeyBuilder().Int32(-7).String("eve", 6).Build(10));
  EXPECT_EQ(engine->index_key(by_id_)->Build(row.view()),
            index::KeyBuilder().Int64(1234).Build(8));
}

TEST_F(DeclaredIndexTest, BadKeyColumnsAreRefused) {
  auto engine = *Engine::Open(Options());
  ASSERT_NO_FATAL_FAILURE(Define(*engine, /*create=*/true));
  auto unknown = engine->CreateIndex("bad1", people_, {"city", "nope"}, true);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()),
              ::testing::HasSubstr("no column nope"));
  auto real = engine->CreateIndex("bad2", people_, {"score"}, true);
  EXPECT_EQ(real.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(real.status().message()),
              ::testing::HasSubstr("score is double"));
  auto none =
      engine->CreateIndex("bad3", people_, std::vector<std::string>{}, true);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(none.status().message()),
              ::testing::HasSubstr("1 to 7 columns, not 0"));
  auto twice = engine->CreateIndex("bad4", people_, {"id", "id"}, true);
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.status().message()),
              ::testing::HasSubstr("id is named twice"));
  // An index by width only keeps its keys to the procedures.
  auto by_hand = engine->CreateIndex("by_hand", people_, 8, true);
  ASSERT_TRUE(by_hand.ok());
  EXPECT_EQ(engine->index_key(*by_hand), nullptr);
}

TEST_F(DeclaredIndexTest, AnotherEngineOpensTheKeyColumnsFromTheCatalog) {
  const std::string image =
      (std::filesystem::path(::testing::TempDir()) /
       ("declared_index_" + std::to_string(::getpid()) + ".img"))
          .string();
  {
    auto engine = *Engine::Open(Options());
    ASSERT_NO_FATAL_FAILURE(Define(*engine, /*create=*/true));
    auto session = *engine->NewSession(0);
    ASSERT_TRUE(*session->Call(insert_, 1, "ann", 1));
    session.reset();
    ASSERT_TRUE(engine->SaveImage(image).ok());
  }
  EngineOptions options = Options();
  options.image_path = image;
  {
    // Its table is not open: its keys could not be built.
    auto engine = *Engine::Open(options);
    EXPECT_EQ(engine->OpenIndex("by_city").status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  auto engine = *Engine::Open(options);
  ASSERT_NO_FATAL_FAILURE(Define(*engine, /*create=*/false));
  std::filesystem::remove(image);
  ASSERT_NE(engine->index_key(by_city_), nullptr);
  auto session = *engine->NewSession(1);
  ASSERT_TRUE(*session->Call(insert_, 0, "bob", 2));
  EXPECT_EQ(*session->Call(list_), "0:bob:2 1:ann:1 ");
  EXPECT_EQ(session->Call(insert_, 0, "dup", 1).status().code(),
            absl::StatusCode::kAlreadyExists);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, IndexWritesTest,
    ::testing::ValuesIn(testing::TxnTestConfigs(testing::TestProtocols())),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
