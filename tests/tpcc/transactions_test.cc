// Each transaction's effect, checked in isolation on a tiny database
// against what the heap tables say before and after.

#include <algorithm>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "tests/tpcc/tpcc_test_db.h"
#include "tpcc/delivery.h"
#include "tpcc/new_order.h"
#include "tpcc/order_status.h"
#include "tpcc/payment.h"
#include "tpcc/stock_level.h"

namespace strand::tpcc {
namespace {

using storage::TupleView;
using testing::CountRows;
using testing::ForEachRow;

class TransactionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = testing::LoadTestDb(
        testing::TestOptions(txn::CcAlgorithm::kTwoPhaseLocking,
                             cc::Protocol::kSelcc, 1),
        1);
    ASSERT_NE(db_, nullptr);
    session_ = *db_->engine().NewSession(0);
  }
  engine::Engine& engine() { return db_->engine(); }
  const Procedures& procs() { return db_->procedures(); }

  // A column of the single row of `table` matching `match`.
  int64_t Get(const char* table, size_t column,
              const std::function<bool(const TupleView&)>& match,
              bool decimal = false) {
    int64_t v = 0;
    int found = 0;
    ForEachRow(engine(), table, [&](const TupleView& t) {
      if (!match(t)) return;
      ++found;
      v = decimal ? t.GetDecimal(column) : t.GetInt(column);
    });
    EXPECT_EQ(found, 1) << table;
    return v;
  }
  int64_t NextOrderId(int d) {
    return Get("district", district::kNextOId, [d](const TupleView& t) {
      return t.GetInt(district::kId) == d;
    });
  }
  int64_t StockQuantity(int i) {
    return Get("stock", stock::kQuantity,
               [i](const TupleView& t) { return t.GetInt(stock::kIId) == i; });
  }

  NewOrderInput Order(int d, int c, int lines) {
    NewOrderInput in;
    in.w = 1;
    in.d = d;
    in.c = c;
    in.ol_cnt = lines;
    for (int i = 0; i < lines; ++i) {
      in.item[i] = 10 + i;
      in.supply_w[i] = 1;
      in.quantity[i] = 3;
    }
    return in;
  }

  std::unique_ptr<TpccDatabase> db_;
  std::unique_ptr<engine::Session> session_;
};

TEST_F(TransactionsTest, NewOrderAddsOneOrderItsLinesAndANewOrderRow) {
  const int64_t orders = CountRows(engine(), "order");
  const int64_t lines = CountRows(engine(), "order_line");
  const int64_t new_orders = CountRows(engine(), "new_order");
  const int64_t next = NextOrderId(3);
  const int64_t qty = StockQuantity(10);
  auto out = session_->Call<NewOrderOutput>(procs().new_order, Order(3, 7, 6));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->o_id, next);
  EXPECT_GT(out->total_cents, 0);
  EXPECT_EQ(CountRows(engine(), "order"), orders + 1);
  EXPECT_EQ(CountRows(engine(), "order_line"), lines + 6);
  EXPECT_EQ(CountRows(engine(), "new_order"), new_orders + 1);
  EXPECT_EQ(NextOrderId(3), next + 1);
  EXPECT_EQ(StockQuantity(10), qty >= 13 ? qty - 3 : qty - 3 + 91);
  EXPECT_EQ(Get("order", order::kCId,
                [&](const TupleView& t) {
                  return t.GetInt(order::kId) == next &&
                         t.GetInt(order::kDId) == 3;
                }),
            7);
}

TEST_F(TransactionsTest, RolledBackNewOrderLeavesNothing) {
  const int64_t orders = CountRows(engine(), "order");
  const int64_t lines = CountRows(engine(), "order_line");
  const int64_t new_orders = CountRows(engine(), "new_order");
  const int64_t next = NextOrderId(2);
  const int64_t qty = StockQuantity(10);
  NewOrderInput in = Order(2, 5, 5);
  in.item[4] = db_->scale().items + 1;  // unused item id
  auto out = session_->Call<NewOrderOutput>(procs().new_order, in);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::IsAborted(out.status())) << out.status();
  EXPECT_EQ(CountRows(engine(), "order"), orders);
  EXPECT_EQ(CountRows(engine(), "order_line"), lines);
  EXPECT_EQ(CountRows(engine(), "new_order"), new_orders);
  EXPECT_EQ(NextOrderId(2), next);
  EXPECT_EQ(StockQuantity(10), qty);
  // The order id was not consumed: the next New-Order gets it.
  auto ok = session_->Call<NewOrderOutput>(procs().new_order, Order(2, 5, 5));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->o_id, next);
}

// Clause 2.4.2.3: a New-Order rolled back for its unused item processes
// every valid item first (reads ITEM, updates STOCK, ...), so the rollback
// costs what the profile costs. Observed through 2PL no-wait: while another
// transaction holds the STOCK row of the first line, the New-Order must
// meet that lock (a conflict), not roll back before reaching it.
TEST(NewOrderRollbackTest, ProcessesEveryValidItemBeforeRollingBack) {
  engine::EngineOptions options = testing::TestOptions(
      txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, 1);
  options.retry.max_retries = 0;  // report the first conflict
  auto db = TpccDatabase::Open(options, testing::TestScale(), 42);
  ASSERT_TRUE(db.ok()) << db.status();
  engine::Engine& engine = (*db)->engine();
  const Tables& t = (*db)->tables();
  absl::Notification held, release;
  auto hold = engine.RegisterProcedure(
      "test_hold_stock",
      std::function<absl::StatusOr<int>(txn::Txn&, int)>(
          [&](txn::Txn& txn, int item) -> absl::StatusOr<int> {
            auto at = txn.Lookup(t.stock_pk, StockKey(1, item));
            if (!at.ok()) return at.status();
            auto row = txn.Modify(t.stock, *at);
            if (!row.ok()) return row.status();
            held.Notify();
            release.WaitForNotification();
            return 0;
          }));
  ASSERT_TRUE(hold.ok()) << hold.status();
  ASSERT_TRUE((*db)->loader().Load(1, 1, 42, false).ok());

  NewOrderInput in;
  in.w = 1;
  in.d = 2;
  in.c = 5;
  in.ol_cnt = 5;
  for (int i = 0; i < 5; ++i) {
    in.item[i] = 10 + 7 * i;
    in.supply_w[i] = 1;
    in.quantity[i] = 3;
  }
  in.item[4] = (*db)->scale().items + 1;  // unused: roll back
  const engine::ProcedureId new_order = (*db)->procedures().new_order;
  auto aborts = [&](txn::AbortReason reason) {
    return engine.Stats()[new_order].aborts_for(reason);
  };

  std::thread holder([&] {
    auto session = engine.NewSession(0);
    ASSERT_TRUE(session.ok());
    EXPECT_TRUE((*session)->Call<int>(*hold, in.item[0]).ok());
  });
  held.WaitForNotification();
  auto session = engine.NewSession(0);
  ASSERT_TRUE(session.ok());
  auto blocked = (*session)->Call<NewOrderOutput>(new_order, in);
  EXPECT_FALSE(blocked.ok());
  EXPECT_EQ(aborts(txn::AbortReason::kConflict), 1u) << blocked.status();
  EXPECT_EQ(aborts(txn::AbortReason::kUser), 0u) << blocked.status();
  release.Notify();
  holder.join();

  // Unblocked, it runs to the unused item and rolls back.
  auto rolled_back = (*session)->Call<NewOrderOutput>(new_order, in);
  EXPECT_TRUE(absl::IsAborted(rolled_back.status())) << rolled_back.status();
  EXPECT_EQ(aborts(txn::AbortReason::kUser), 1u);
}

TEST_F(TransactionsTest, PaymentMovesMoneyConsistently) {
  auto w_ytd = [&] {
    return Get(
        "warehouse", warehouse::kYtd, [](const TupleView&) { return true; },
        true);
  };
  auto d_ytd = [&](int d) {
    return Get(
        "district", district::kYtd,
        [d](const TupleView& t) { return t.GetInt(district::kId) == d; }, true);
  };
  auto c_col = [&](int d, int c, size_t col, bool dec) {
    return Get(
        "customer", col,
        [d, c](const TupleView& t) {
          return t.GetInt(customer::kDId) == d && t.GetInt(customer::kId) == c;
        },
        dec);
  };
  const int64_t w0 = w_ytd(), d0 = d_ytd(4),
                b0 = c_col(4, 9, customer::kBalance, true);
  const int64_t y0 = c_col(4, 9, customer::kYtdPayment, true);
  const int64_t n0 = c_col(4, 9, customer::kPaymentCnt, false);
  const int64_t h0 = CountRows(engine(), "history");
  PaymentInput in;
  in.w = in.c_w = 1;
  in.d = in.c_d = 4;
  in.customer.c_id = 9;
  in.amount_cents = 12345;
  auto out = session_->Call<PaymentOutput>(procs().payment, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->c_id, 9);
  EXPECT_EQ(w_ytd(), w0 + 12345);
  EXPECT_EQ(d_ytd(4), d0 + 12345);
  EXPECT_EQ(c_col(4, 9, customer::kBalance, true), b0 - 12345);
  EXPECT_EQ(c_col(4, 9, customer::kYtdPayment, true), y0 + 12345);
  EXPECT_EQ(c_col(4, 9, customer::kPaymentCnt, false), n0 + 1);
  EXPECT_EQ(CountRows(engine(), "history"), h0 + 1);

  // By last name: the middle row (ceil(n/2)) in C_FIRST order. With 60
  // customers per district each has its own name; load two more rows of
  // one name is not possible here, so check the single-row case and that
  // the chosen row carries the name.
  in.customer = {0, LastName(20)};
  auto by_name = session_->Call<PaymentOutput>(procs().payment, in);
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(by_name->c_id, 21);
}

// Clause 2.5.2.2: a bad-credit customer's C_DATA gets the payment's ids
// and H_AMOUNT on its left; an amount is a decimal with two digits.
TEST_F(TransactionsTest, PaymentPrependsTheAmountWithTwoDecimalsToBadCredit) {
  int d = 0, c = 0;
  ForEachRow(engine(), "customer", [&](const TupleView& t) {
    if (c == 0 && t.GetChars(customer::kCredit) == "BC") {
      d = t.GetInt(customer::kDId);
      c = t.GetInt(customer::kId);
    }
  });
  ASSERT_NE(c, 0) << "no bad-credit customer in the test load";
  auto c_data = [&] {
    std::string data;
    ForEachRow(engine(), "customer", [&](const TupleView& t) {
      if (t.GetInt(customer::kDId) == d && t.GetInt(customer::kId) == c) {
        data = std::string(t.GetChars(customer::kData));
      }
    });
    return data;
  };
  for (const auto& [cents, text] :
       std::vector<std::pair<int64_t, std::string>>{{1205, "12.05"},
                                                    {1200, "12.00"},
                                                    {7, "0.07"},
                                                    {500000, "5000.00"}}) {
    const std::string before = c_data();
    PaymentInput in;
    in.w = in.c_w = 1;
    in.d = 3;
    in.c_d = d;
    in.customer.c_id = c;
    in.amount_cents = cents;
    auto out = session_->Call<PaymentOutput>(procs().payment, in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_TRUE(out->bad_credit);
    const std::string prefix = absl::StrCat(c, " ", d, " 1 3 1 ", text, "|");
    const std::string after = c_data();
    EXPECT_EQ(after.substr(0, prefix.size()), prefix) << after;
    EXPECT_EQ(
        after.substr(prefix.size()),
        before.substr(0, std::min<size_t>(before.size(), 500 - prefix.size())));
  }
}

TEST_F(TransactionsTest, DeliveryDeliversTheOldestOrderOfEachDistrict) {
  std::map<int, int> oldest;  // district -> min NO_O_ID
  ForEachRow(engine(), "new_order", [&](const TupleView& t) {
    const int d = t.GetInt(new_order::kDId);
    const int o = t.GetInt(new_order::kOId);
    if (!oldest.count(d) || o < oldest[d]) oldest[d] = o;
  });
  ASSERT_EQ(oldest.size(), 10u);
  const int64_t new_orders = CountRows(engine(), "new_order");
  std::map<int, int> customer_of;
  std::map<int, int64_t> amount_of;
  ForEachRow(engine(), "order", [&](const TupleView& t) {
    const int d = t.GetInt(order::kDId);
    if (t.GetInt(order::kId) == oldest[d]) {
      customer_of[d] = t.GetInt(order::kCId);
    }
  });
  ForEachRow(engine(), "order_line", [&](const TupleView& t) {
    const int d = t.GetInt(order_line::kDId);
    if (t.GetInt(order_line::kOId) == oldest[d]) {
      amount_of[d] += t.GetDecimal(order_line::kAmount);
    }
  });
  std::map<int, int64_t> balance_before;
  ForEachRow(engine(), "customer", [&](const TupleView& t) {
    const int d = t.GetInt(customer::kDId);
    if (t.GetInt(customer::kId) == customer_of[d]) {
      balance_before[d] = t.GetDecimal(customer::kBalance);
    }
  });
  auto out = session_->Call<DeliveryOutput>(procs().delivery,
                                            DeliveryInput{1, 7, 1234567});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->delivered, 10);
  EXPECT_EQ(CountRows(engine(), "new_order"), new_orders - 10);
  ForEachRow(engine(), "new_order", [&](const TupleView& t) {
    EXPECT_GT(t.GetInt(new_order::kOId), oldest[t.GetInt(new_order::kDId)]);
  });
  ForEachRow(engine(), "order", [&](const TupleView& t) {
    if (t.GetInt(order::kId) == oldest[t.GetInt(order::kDId)]) {
      EXPECT_EQ(t.GetInt(order::kCarrierId), 7);
    }
  });
  ForEachRow(engine(), "order_line", [&](const TupleView& t) {
    if (t.GetInt(order_line::kOId) == oldest[t.GetInt(order_line::kDId)]) {
      EXPECT_EQ(t.GetInt(order_line::kDeliveryD), 1234567);
    }
  });
  ForEachRow(engine(), "customer", [&](const TupleView& t) {
    const int d = t.GetInt(customer::kDId);
    if (t.GetInt(customer::kId) == customer_of[d]) {
      EXPECT_EQ(t.GetDecimal(customer::kBalance),
                balance_before[d] + amount_of[d]);
      EXPECT_EQ(t.GetInt(customer::kDeliveryCnt), 1);
    }
  });
}

TEST_F(TransactionsTest, OrderStatusReturnsTheLastOrderOfTheCustomer) {
  int last = 0, carrier = 0, ol_cnt = 0;
  ForEachRow(engine(), "order", [&](const TupleView& t) {
    if (t.GetInt(order::kDId) == 5 && t.GetInt(order::kCId) == 11 &&
        t.GetInt(order::kId) > last) {
      last = t.GetInt(order::kId);
      carrier = t.GetInt(order::kCarrierId);
      ol_cnt = t.GetInt(order::kOlCnt);
    }
  });
  int64_t amount = 0;
  ForEachRow(engine(), "order_line", [&](const TupleView& t) {
    if (t.GetInt(order_line::kDId) == 5 && t.GetInt(order_line::kOId) == last) {
      amount += t.GetDecimal(order_line::kAmount);
    }
  });
  OrderStatusInput in;
  in.w = 1;
  in.d = 5;
  in.customer.c_id = 11;
  auto out = session_->Call<OrderStatusOutput>(procs().order_status, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->o_id, last);
  EXPECT_EQ(out->carrier_id, carrier);
  EXPECT_EQ(out->lines, ol_cnt);
  EXPECT_EQ(out->amount_cents, amount);
  // A New-Order for the customer becomes their last order.
  auto no = session_->Call<NewOrderOutput>(procs().new_order, Order(5, 11, 7));
  ASSERT_TRUE(no.ok()) << no.status();
  in.customer = {0, LastName(10)};  // customer 11 by last name
  out = session_->Call<OrderStatusOutput>(procs().order_status, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->c_id, 11);
  EXPECT_EQ(out->o_id, no->o_id);
  EXPECT_EQ(out->lines, 7);
  EXPECT_EQ(out->delivered_lines, 0);
}

TEST_F(TransactionsTest, StockLevelCountsDistinctLowItemsOfTheLast20Orders) {
  const int next = NextOrderId(6);
  std::set<int> items;
  ForEachRow(engine(), "order_line", [&](const TupleView& t) {
    const int o = t.GetInt(order_line::kOId);
    if (t.GetInt(order_line::kDId) == 6 && o >= next - 20 && o < next) {
      items.insert(t.GetInt(order_line::kIId));
    }
  });
  for (int threshold : {10, 15, 20, 101}) {
    int low = 0;
    ForEachRow(engine(), "stock", [&](const TupleView& t) {
      low += items.count(t.GetInt(stock::kIId)) &&
             t.GetInt(stock::kQuantity) < threshold;
    });
    auto out = session_->Call<StockLevelOutput>(
        procs().stock_level, StockLevelInput{1, 6, threshold});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->distinct_items, int(items.size()));
    EXPECT_EQ(out->low_stock, low) << "threshold " << threshold;
  }
}

}  // namespace
}  // namespace strand::tpcc
