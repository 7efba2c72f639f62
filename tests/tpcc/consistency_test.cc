// The consistency check of clause 3.3.2 catches each of its twelve
// conditions: after a short run (every transaction type, deliveries and
// remote payments included) it passes; then one row at a time is
// corrupted (written straight into its heap table) and the check must
// report exactly the conditions that row breaks, and pass again once the
// row is restored.

#include "tpcc/consistency.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "tests/tpcc/tpcc_test_db.h"
#include "tpcc/driver.h"

namespace strand::tpcc {
namespace {

using storage::TupleBuffer;
using storage::TupleView;

constexpr int kWarehouses = 2;

class ConsistencyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = testing::LoadTestDb(
              testing::TestOptions(txn::CcAlgorithm::kTwoPhaseLocking,
                                   cc::Protocol::kSelcc, 1),
              kWarehouses)
              .release();
    ASSERT_NE(db_, nullptr);
    DriverOptions d;
    d.warehouses = kWarehouses;
    d.txns = 1000;
    d.remote.remote_order_ratio = 0.3;
    auto run = RunDriver(*db_, d);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_EQ(run->errors(), 0u) << run->first_error;
    ASSERT_GT(run->by_type[kDelivery].commits, 10u);
  }
  static void TearDownTestSuite() {
    delete db_;
    db_ = nullptr;
  }

  // The conditions (1-12) the check reports violated.
  std::set<int> Violated() {
    auto c = CheckConsistency(db_->engine(), kWarehouses, db_->scale());
    EXPECT_TRUE(c.ok()) << c.status();
    std::set<int> violated;
    if (!c.ok()) return violated;
    for (int i = 0; i < ConsistencyResult::kConditions; ++i) {
      if (c->violations[i] > 0) violated.insert(i + 1);
      EXPECT_GT(c->checked[i], 0) << "condition " << i + 1;
    }
    return violated;
  }

  // Rewrites the `skip`-th row of `table` that `match` accepts with
  // `mutate`, and returns how to put it back.
  std::function<void()> Corrupt(
      const char* table, const std::function<bool(const TupleView&)>& match,
      const std::function<void(TupleBuffer&)>& mutate, int skip = 0) {
    cc::GclManager& m = **engine::EngineInternals::manager(db_->engine(), 0);
    auto ctx = std::shared_ptr<cc::ThreadContext>(*m.NewThreadContext());
    auto catalog = *storage::Catalog::Open(m, *ctx);
    auto desc = *catalog->FindTable(*ctx, table);
    std::shared_ptr<storage::HeapTable> heap =
        *storage::HeapTable::Open(m, *ctx, desc.root, desc.schema);
    const storage::Schema& schema = heap->schema();
    storage::TupleAddress at;
    std::vector<uint8_t> original;
    EXPECT_TRUE(heap->Scan(*ctx,
                           [&](storage::TupleAddress a, const uint8_t* t) {
                             if (!match(TupleView(schema, t)) || skip-- > 0) {
                               return true;
                             }
                             at = a;
                             original.assign(t, t + schema.tuple_bytes());
                             return false;
                           })
                    .ok());
    EXPECT_FALSE(original.empty()) << "no matching row in " << table;
    if (original.empty()) return [] {};
    TupleBuffer row(schema, original);
    mutate(row);
    EXPECT_TRUE(
        heap->Update(*ctx, at, absl::MakeConstSpan(row.data(), row.size()))
            .ok());
    return [ctx, heap, at, original] {
      EXPECT_TRUE(heap->Update(*ctx, at, original).ok());
    };
  }

  // Applies a corruption, expects exactly `conditions` violated, undoes it.
  void Expect(const std::set<int>& conditions,
              const std::function<std::function<void()>()>& corrupt) {
    std::function<void()> undo = corrupt();
    EXPECT_EQ(Violated(), conditions);
    undo();
    EXPECT_EQ(Violated(), std::set<int>{});
  }

  static TpccDatabase* db_;
};

TpccDatabase* ConsistencyTest::db_ = nullptr;

auto Any = [](const TupleView&) { return true; };

struct OrderId {
  int w = 0, d = 0, o = 0;
};

std::function<bool(const TupleView&)> Order(OrderId id) {
  return [id](const TupleView& t) {
    return t.GetInt(order::kWId) == id.w && t.GetInt(order::kDId) == id.d &&
           t.GetInt(order::kId) == id.o;
  };
}

TEST_F(ConsistencyTest, AfterARunEveryConditionHolds) {
  EXPECT_EQ(Violated(), std::set<int>{});
}

TEST_F(ConsistencyTest, EachConditionCatchesACorruptRow) {
  // The oldest undelivered order of a district with at least two (they
  // have NEW-ORDER rows), and the load's first order, delivered at the load
  // (its lines' amounts are 0).
  std::map<std::pair<int, int>, std::vector<int>> undelivered_by_district;
  testing::ForEachRow(db_->engine(), "new_order", [&](const TupleView& t) {
    undelivered_by_district[{static_cast<int>(t.GetInt(new_order::kWId)),
                             static_cast<int>(t.GetInt(new_order::kDId))}]
        .push_back(t.GetInt(new_order::kOId));
  });
  OrderId undelivered;
  for (auto& [wd, o_ids] : undelivered_by_district) {
    if (o_ids.size() < 2) continue;
    undelivered = {wd.first, wd.second,
                   *std::min_element(o_ids.begin(), o_ids.end())};
    break;
  }
  ASSERT_GT(undelivered.o, 5) << "no district with two undelivered orders";
  const OrderId delivered{1, 1, 1};
  auto add = [](size_t column, int64_t delta) {
    return [column, delta](TupleBuffer& t) {
      t.SetInt(column, t.view().GetInt(column) + delta);
    };
  };
  auto add_decimal = [](size_t column, int64_t delta) {
    return [column, delta](TupleBuffer& t) {
      t.SetDecimal(column, t.view().GetDecimal(column) + delta);
    };
  };
  // 1 (and 8): W_YTD off by a cent.
  Expect({1, 8}, [&] {
    return Corrupt("warehouse", Any, add_decimal(warehouse::kYtd, 1));
  });
  // 2: D_NEXT_O_ID past the last order.
  Expect({2},
         [&] { return Corrupt("district", Any, add(district::kNextOId, 1)); });
  // 3 (and 5): the oldest NEW-ORDER row of a district renamed to a
  // delivered order: a gap in the NEW-ORDER ids.
  Expect({3, 5}, [&] {
    return Corrupt(
        "new_order",
        [undelivered](const TupleView& t) {
          return t.GetInt(new_order::kWId) == undelivered.w &&
                 t.GetInt(new_order::kDId) == undelivered.d &&
                 t.GetInt(new_order::kOId) == undelivered.o;
        },
        add(new_order::kOId, -5));
  });
  // 4 (and 6): an order claims one more line than it has.
  Expect({4, 6}, [&] {
    return Corrupt("order", Order(delivered), add(order::kOlCnt, 1));
  });
  // 5 (and 7): an undelivered order gets a carrier.
  Expect({5, 7}, [&] {
    return Corrupt("order", Order(undelivered),
                   [](TupleBuffer& t) { t.SetInt(order::kCarrierId, 3); });
  });
  // 6 alone: one order claims a line more, another of its district one
  // less (the district's sum stays right).
  Expect({6}, [&] {
    auto first = Corrupt("order", Order(delivered), add(order::kOlCnt, 1));
    auto second = Corrupt("order", Order({1, 1, 2}), add(order::kOlCnt, -1));
    return [first, second] {
      second();
      first();
    };
  });
  // 7 alone: a line of a delivered order (amount 0 at the load) loses its
  // delivery date.
  Expect({7}, [&] {
    return Corrupt(
        "order_line",
        [delivered](const TupleView& t) {
          return t.GetInt(order_line::kWId) == delivered.w &&
                 t.GetInt(order_line::kDId) == delivered.d &&
                 t.GetInt(order_line::kOId) == delivered.o;
        },
        [](TupleBuffer& t) { t.SetInt(order_line::kDeliveryD, 0); });
  });
  // 8 (with 9 and 10): a payment's amount off by a cent.
  Expect({8, 9, 10}, [&] {
    return Corrupt("history", Any, add_decimal(history::kAmount, 1));
  });
  // 9 alone: a payment booked to another district of its warehouse.
  Expect({9}, [&] {
    return Corrupt("history", Any, [](TupleBuffer& t) {
      t.SetInt(history::kDId, t.view().GetInt(history::kDId) % 10 + 1);
    });
  });
  // 10 (and 12): a balance off by a cent.
  Expect({10, 12}, [&] {
    return Corrupt("customer", Any, add_decimal(customer::kBalance, 1));
  });
  // 11 alone: one delivery more than the district's orders show.
  Expect({11}, [&] {
    return Corrupt("customer", Any, add(customer::kDeliveryCnt, 1));
  });
  // 12 alone: a year-to-date payment off by a cent.
  Expect({12}, [&] {
    return Corrupt("customer", Any, add_decimal(customer::kYtdPayment, 1));
  });
}

}  // namespace
}  // namespace strand::tpcc
