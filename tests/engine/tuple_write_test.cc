// A commit writes back only the bytes of a tuple that changed (the span
// from the first to the last differing byte). Whatever column a
// transaction changes, wherever it sits in the tuple, and whatever it
// changes back, the committed tuple must be exactly the transaction's
// version: every column checked against a model after each commit.

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using txn::Txn;

// 1-, 2- and 8-byte columns, so a change falls at every offset of an
// 8-byte word and at the tuple's ends.
constexpr int kColumns = 37;
storage::ColumnType TypeOf(int c) {
  if (c == 0) return storage::ColumnType::kInt64;  // the key
  switch (c % 3) {
    case 0:
      return storage::ColumnType::kInt8;
    case 1:
      return storage::ColumnType::kInt16;
    default:
      return storage::ColumnType::kInt64;
  }
}
int64_t Bound(int c) {
  switch (TypeOf(c)) {
    case storage::ColumnType::kInt8:
      return 127;
    case storage::ColumnType::kInt16:
      return 32767;
    default:
      return int64_t{1} << 40;
  }
}

// A change: set `column` to `value`, and if `restore`, set `other` back to
// the value it had (a write that cancels out) after changing it.
struct Change {
  int64_t id;
  int column;
  int64_t value;
  int other;
};

class TupleWriteTest : public ::testing::TestWithParam<testing::TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::TxnTestOptions(GetParam()));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    std::vector<storage::ColumnSpec> columns;
    for (int c = 0; c < kColumns; ++c) {
      columns.push_back({"c" + std::to_string(c), TypeOf(c)});
    }
    auto schema = storage::Schema::Create(columns);
    ASSERT_TRUE(schema.ok()) << schema.status();
    table_ = *engine_->CreateTable("wide", *schema);
    index_ = *engine_->CreateIndex("wide_by_id", table_, 8, true);
    const txn::TableId table = table_;
    const txn::IndexId index = index_;
    const storage::Schema* s = *engine_->schema(table_);
    insert_ = *engine_->RegisterProcedure(
        "insert", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                      [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                        storage::TupleBuffer t(*s);
                        t.SetInt(0, id);
                        auto addr = txn.Insert(table, t);
                        if (!addr.ok()) return addr.status();
                        // Changed again after the insert, in the same
                        // transaction: the commit must carry it.
                        auto again = txn.Modify(table, *addr);
                        if (!again.ok()) return again.status();
                        (*again)->SetInt(kColumns - 1, id % 100);
                        if (absl::Status added = txn.AddIndexEntry(
                                index, testing::AccountKey(id), *addr);
                            !added.ok()) {
                          return added;
                        }
                        return true;
                      }));
    change_ = *engine_->RegisterProcedure(
        "change", std::function<absl::StatusOr<bool>(Txn&, Change)>(
                      [=](Txn& txn, Change c) -> absl::StatusOr<bool> {
                        auto addr =
                            txn.Lookup(index, testing::AccountKey(c.id));
                        if (!addr.ok()) return addr.status();
                        auto t = txn.Modify(table, *addr);
                        if (!t.ok()) return t.status();
                        const int64_t kept = (*t)->view().GetInt(c.other);
                        (*t)->SetInt(c.other, kept == 0 ? 1 : 0);
                        (*t)->SetInt(c.column, c.value);
                        if (c.other != c.column) (*t)->SetInt(c.other, kept);
                        return true;
                      }));
    read_ = *engine_->RegisterProcedure(
        "read",
        std::function<absl::StatusOr<std::vector<int64_t>>(Txn&, int64_t)>(
            [=](Txn& txn, int64_t id) -> absl::StatusOr<std::vector<int64_t>> {
              auto addr = txn.Lookup(index, testing::AccountKey(id));
              if (!addr.ok()) return addr.status();
              auto t = txn.Read(table, *addr);
              if (!t.ok()) return t.status();
              std::vector<int64_t> row;
              for (int c = 0; c < kColumns; ++c) row.push_back(t->GetInt(c));
              return row;
            }));
  }

  std::unique_ptr<Engine> engine_;
  txn::TableId table_ = 0;
  txn::IndexId index_ = 0;
  ProcedureId insert_ = 0, change_ = 0, read_ = 0;
};

TEST_P(TupleWriteTest, EveryColumnChangeCommitsExactly) {
  constexpr int kRows = 4;
  auto session = *engine_->NewSession(0);
  std::vector<std::vector<int64_t>> model(kRows,
                                          std::vector<int64_t>(kColumns, 0));
  for (int64_t id = 0; id < kRows; ++id) {
    ASSERT_TRUE(session->Call<bool>(insert_, id).ok());
    model[id][0] = id;
    model[id][kColumns - 1] = id % 100;
  }
  std::mt19937_64 rng(3);
  for (int round = 0; round < 3; ++round) {
    for (int column = 1; column < kColumns; ++column) {
      const int64_t id = rng() % kRows;
      const int64_t value =
          static_cast<int64_t>(rng() % (2 * Bound(column) + 1)) - Bound(column);
      const int other = 1 + static_cast<int>(rng() % (kColumns - 1));
      auto r = session->Call<bool>(change_, Change{id, column, value, other});
      ASSERT_TRUE(r.ok()) << r.status();
      model[id][column] = value;
      for (int64_t check = 0; check < kRows; ++check) {
        auto row = session->Call<std::vector<int64_t>>(read_, check);
        ASSERT_TRUE(row.ok()) << row.status();
        ASSERT_EQ(*row, model[check])
            << "row " << check << " after setting column " << column
            << " of row " << id << " (round " << round << ")";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllConfigs, TupleWriteTest,
    ::testing::ValuesIn(testing::TxnTestConfigs({cc::Protocol::kSelcc})),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
