// Engine::CreateTable's storage::TableOptions reach the heap: a table made
// with max_rows_per_page = 1 puts every row inserted through transactions,
// from any compute node, on its own page (GCL), while a table without the
// option packs rows as before.

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using txn::Txn;

class TableOptionsTest
    : public ::testing::TestWithParam<testing::TxnTestConfig> {};

TEST_P(TableOptionsTest, OneRowPerPageThroughTheEngine) {
  auto engine = Engine::Open(testing::TxnTestOptions(GetParam()));
  ASSERT_TRUE(engine.ok()) << engine.status();
  const storage::Schema schema =
      *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                {"value", storage::ColumnType::kInt64}});
  auto hot = (*engine)->CreateTable(
      "hot", schema, storage::TableOptions{.max_rows_per_page = 1});
  ASSERT_TRUE(hot.ok()) << hot.status();
  auto packed = (*engine)->CreateTable("packed", schema);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const storage::Schema* s = *(*engine)->schema(*hot);
  // Inserts row `id` into `table`; returns its tuple address (raw bits).
  const ProcedureId insert = *(*engine)->RegisterProcedure(
      "insert",
      std::function<absl::StatusOr<int64_t>(Txn&, txn::TableId, int64_t)>(
          [=](Txn& txn, txn::TableId table,
              int64_t id) -> absl::StatusOr<int64_t> {
            storage::TupleBuffer t(*s);
            t.SetInt(0, id);
            t.SetInt(1, 2 * id);
            auto address = txn.Insert(table, t);
            if (!address.ok()) return address.status();
            return static_cast<int64_t>(address->raw());
          }));

  constexpr int kRowsPerNode = 10;
  const int nodes = GetParam().compute_nodes;
  absl::flat_hash_set<rdma::GlobalAddress> hot_pages, packed_pages;
  for (int node = 0; node < nodes; ++node) {
    auto session = (*engine)->NewSession(node);
    ASSERT_TRUE(session.ok()) << session.status();
    for (int64_t i = 0; i < kRowsPerNode; ++i) {
      const int64_t id = node * kRowsPerNode + i;
      for (auto [table, pages] :
           {std::pair{*hot, &hot_pages}, std::pair{*packed, &packed_pages}}) {
        auto raw = (*session)->Call<int64_t>(insert, table, id);
        ASSERT_TRUE(raw.ok()) << raw.status();
        const auto address =
            storage::TupleAddress::FromRaw(static_cast<uint64_t>(*raw));
        pages->insert(address.gcl());
        if (table == *hot) {
          EXPECT_EQ(address.slot(), 0u);
        }
      }
    }
  }
  EXPECT_EQ(hot_pages.size(), nodes * kRowsPerNode);
  // Without the option seven 32-byte rows share a 256-byte page.
  EXPECT_LT(packed_pages.size(), nodes * kRowsPerNode / 2);
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, TableOptionsTest,
    ::testing::Values(testing::TxnTestConfig{txn::CcAlgorithm::kTwoPhaseLocking,
                                             cc::Protocol::kSelcc, 2},
                      testing::TxnTestConfig{txn::CcAlgorithm::kTwoPhaseLocking,
                                             cc::Protocol::kSel, 2}),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
