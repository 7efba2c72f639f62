// A transaction that reads a tuple on its node's current insert page and
// then inserts into the same table must not wait for itself: under 2PL it
// holds that page's latch until commit, and the heap used to latch the
// page again for the insert (it waited out the lock timeout, then failed).

#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;

class ReadThenInsertTest
    : public ::testing::TestWithParam<testing::TxnTestConfig> {};

TEST_P(ReadThenInsertTest, InsertAfterReadingTheCurrentInsertPage) {
  EngineOptions options = testing::TxnTestOptions(GetParam());
  options.cc.lock_timeout = absl::Seconds(2);
  options.retry.max_retries = 3;
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const storage::Schema schema =
      *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                {"value", storage::ColumnType::kInt64}});
  const txn::TableId table = *(*engine)->CreateTable("events", schema);
  const txn::IndexId index =
      *(*engine)->CreateIndex("events_by_id", table, 8, true);
  const storage::Schema* s = *(*engine)->schema(table);
  // Appends event `id` with value = 1 + the value of event id - 1 (read
  // first, so its page, this node's current insert page, is latched).
  const ProcedureId append = *(*engine)->RegisterProcedure(
      "append", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                    [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
                      int64_t value = 0;
                      if (id > 0) {
                        auto prev = txn.Lookup(index, AccountKey(id - 1));
                        if (!prev.ok()) return prev.status();
                        auto t = txn.Read(table, *prev);
                        if (!t.ok()) return t.status();
                        value = t->GetInt(1) + 1;
                      }
                      storage::TupleBuffer t(*s);
                      t.SetInt(0, id);
                      t.SetInt(1, value);
                      auto addr = txn.Insert(table, t);
                      if (!addr.ok()) return addr.status();
                      if (absl::Status added =
                              txn.AddIndexEntry(index, AccountKey(id), *addr);
                          !added.ok()) {
                        return added;
                      }
                      return value;
                    }));
  auto session = (*engine)->NewSession(0);
  ASSERT_TRUE(session.ok());
  const absl::Time start = absl::Now();
  for (int64_t id = 0; id < 20; ++id) {
    auto r = (*session)->Call<int64_t>(append, id);
    ASSERT_TRUE(r.ok()) << "event " << id << ": " << r.status();
    EXPECT_EQ(*r, id);
  }
  // No call sat out a lock timeout.
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, ReadThenInsertTest,
    ::testing::Values(testing::TxnTestConfig{txn::CcAlgorithm::kTwoPhaseLocking,
                                             cc::Protocol::kSelcc, 1},
                      testing::TxnTestConfig{txn::CcAlgorithm::kTwoPhaseLocking,
                                             cc::Protocol::kSel, 1},
                      testing::TxnTestConfig{
                          txn::CcAlgorithm::kTimestampOrdering,
                          cc::Protocol::kSelcc, 1},
                      testing::TxnTestConfig{txn::CcAlgorithm::kOptimistic,
                                             cc::Protocol::kSelcc, 1}),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
