// The initial database (clause 4.3) at the test scale: row counts of all
// nine tables and a sample of the column rules.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine_internals.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "storage/heap_page.h"
#include "storage/tuple_address.h"
#include "tests/tpcc/tpcc_test_db.h"
#include "tpcc/consistency.h"
#include "tpcc/memory_breakdown.h"
#include "tpcc/random.h"

namespace strand::tpcc {
namespace {

using storage::TupleView;
using testing::CountRows;
using testing::ForEachRow;
using testing::TestScale;

class LoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = testing::LoadTestDb(
        testing::TestOptions(txn::CcAlgorithm::kTwoPhaseLocking,
                             cc::Protocol::kSelcc, 2),
        kWarehouses);
    ASSERT_NE(db_, nullptr);
  }
  engine::Engine& engine() { return db_->engine(); }

  static constexpr int kWarehouses = 2;
  std::unique_ptr<TpccDatabase> db_;
};

TEST_F(LoaderTest, RowCountsFollowTheScale) {
  const Scale s = TestScale();
  const int64_t districts = kWarehouses * s.districts;
  EXPECT_EQ(CountRows(engine(), "item"), s.items);
  EXPECT_EQ(CountRows(engine(), "warehouse"), kWarehouses);
  EXPECT_EQ(CountRows(engine(), "district"), districts);
  EXPECT_EQ(CountRows(engine(), "stock"), kWarehouses * s.items);
  EXPECT_EQ(CountRows(engine(), "customer"), districts * s.customers);
  EXPECT_EQ(CountRows(engine(), "history"), districts * s.customers);
  EXPECT_EQ(CountRows(engine(), "order"), districts * s.customers);
  EXPECT_EQ(CountRows(engine(), "new_order"), districts * s.new_orders());
  int64_t lines = 0;
  ForEachRow(engine(), "order",
             [&](const TupleView& o) { lines += o.GetInt(order::kOlCnt); });
  EXPECT_EQ(CountRows(engine(), "order_line"), lines);
  EXPECT_EQ(s.new_orders(), 18);
  // The specification's cardinalities are the default.
  EXPECT_EQ(Scale().items, 100000);
  EXPECT_EQ(Scale().customers, 3000);
  EXPECT_EQ(Scale().new_orders(), 900);
}

// tpcc/schema.cc: WAREHOUSE and DISTRICT rows, which every Payment and
// New-Order writes, sit one to a page (GCL, the unit of latching), so
// transactions of different home warehouses never latch the same page for
// them, whichever loader thread wrote which row.
TEST_F(LoaderTest, WarehouseAndDistrictRowsHaveAPageEach) {
  cc::GclManager& m = **engine::EngineInternals::manager(engine(), 0);
  auto ctx = *m.NewThreadContext();
  auto catalog = *storage::Catalog::Open(m, *ctx);
  for (const char* name : {"warehouse", "district"}) {
    SCOPED_TRACE(name);
    auto desc = *catalog->FindTable(*ctx, name);
    auto heap = *storage::HeapTable::Open(m, *ctx, desc.root, desc.schema);
    EXPECT_EQ(heap->slots_per_page(), 1u);
    std::map<rdma::GlobalAddress, int> rows_by_page;
    int rows = 0;
    ASSERT_TRUE(heap->Scan(*ctx,
                           [&](storage::TupleAddress a, const uint8_t*) {
                             ++rows_by_page[a.gcl()];
                             ++rows;
                             return true;
                           })
                    .ok());
    EXPECT_EQ(rows, std::string(name) == "warehouse"
                        ? kWarehouses
                        : kWarehouses * TestScale().districts);
    EXPECT_EQ(rows_by_page.size(), size_t(rows));
    EXPECT_EQ(*heap->PageCount(*ctx), uint64_t(rows));
  }
}

TEST_F(LoaderTest, ColumnsFollowTheRules) {
  const Scale s = TestScale();
  int bad_credit = 0, customers = 0;
  ForEachRow(engine(), "customer", [&](const TupleView& c) {
    ++customers;
    const int id = c.GetInt(customer::kId);
    EXPECT_EQ(c.GetChars(customer::kLast), LastName(id - 1));  // id <= 1000
    EXPECT_EQ(c.GetChars(customer::kMiddle), "OE");
    EXPECT_GE(c.GetChars(customer::kFirst).size(), 8u);
    EXPECT_EQ(c.GetDecimal(customer::kBalance), -1000);
    EXPECT_EQ(c.GetDecimal(customer::kCreditLim), 5000000);
    EXPECT_LE(c.GetDecimal(customer::kDiscount), 5000);
    EXPECT_GE(c.GetChars(customer::kData).size(), 300u);
    EXPECT_EQ(c.GetChars(customer::kZip).substr(4), "11111");
    const std::string credit(c.GetChars(customer::kCredit));
    EXPECT_TRUE(credit == "BC" || credit == "GC") << credit;
    bad_credit += credit == "BC";
  });
  EXPECT_GT(bad_credit, customers * 5 / 100);
  EXPECT_LT(bad_credit, customers * 15 / 100);

  int original = 0;
  ForEachRow(engine(), "item", [&](const TupleView& i) {
    EXPECT_GE(i.GetDecimal(item::kPrice), 100);
    EXPECT_LE(i.GetDecimal(item::kPrice), 10000);
    const std::string_view data = i.GetChars(item::kData);
    EXPECT_GE(data.size(), 26u);
    original += data.find("ORIGINAL") != std::string_view::npos;
  });
  EXPECT_GT(original, s.items * 5 / 100);
  EXPECT_LT(original, s.items * 15 / 100);

  ForEachRow(engine(), "stock", [&](const TupleView& st) {
    EXPECT_GE(st.GetInt(stock::kQuantity), 10);
    EXPECT_LE(st.GetInt(stock::kQuantity), 100);
    EXPECT_EQ(st.GetChars(stock::kDist01 + 3).size(), 24u);
  });
  ForEachRow(engine(), "district", [&](const TupleView& d) {
    EXPECT_EQ(d.GetInt(district::kNextOId), s.customers + 1);
    // 30,000.00 with 3,000 customers: one load payment of 10.00 each.
    EXPECT_EQ(d.GetDecimal(district::kYtd), 1000 * s.customers);
  });
  ForEachRow(engine(), "warehouse", [&](const TupleView& w) {
    EXPECT_EQ(w.GetDecimal(warehouse::kYtd), 1000 * 10 * s.customers);
  });
  const int first_new = s.customers - s.new_orders() + 1;
  std::map<std::pair<int, int>, std::set<int>> order_customers;
  ForEachRow(engine(), "order", [&](const TupleView& o) {
    const int id = o.GetInt(order::kId);
    EXPECT_GE(o.GetInt(order::kOlCnt), 5);
    EXPECT_LE(o.GetInt(order::kOlCnt), 15);
    if (id < first_new) {
      EXPECT_GE(o.GetInt(order::kCarrierId), 1);
    } else {
      EXPECT_EQ(o.GetInt(order::kCarrierId), 0);
    }
    order_customers[{o.GetInt(order::kWId), o.GetInt(order::kDId)}].insert(
        o.GetInt(order::kCId));
  });
  // O_C_ID is a permutation of the customers in every district.
  for (const auto& [wd, cs] : order_customers) {
    EXPECT_EQ(cs.size(), size_t(s.customers));
  }
  ForEachRow(engine(), "order_line", [&](const TupleView& ol) {
    const bool delivered = ol.GetInt(order_line::kOId) < first_new;
    EXPECT_EQ(ol.GetDecimal(order_line::kAmount) == 0, delivered);
    EXPECT_EQ(ol.GetInt(order_line::kDeliveryD) != 0, delivered);
    EXPECT_EQ(ol.GetInt(order_line::kQuantity), 5);
  });
  ForEachRow(engine(), "new_order", [&](const TupleView& no) {
    EXPECT_GE(no.GetInt(new_order::kOId), first_new);
  });
  auto c = CheckConsistency(engine(), kWarehouses, s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->ok()) << c->ToString();
}

// The memory target (docs/design/tpcc.md) rests on these widths: each
// table's column bytes, and six CUSTOMER rows to a 4 KiB GCL (five would
// cost about 4 MiB per warehouse).
TEST_F(LoaderTest, RowsAreAsNarrowAsTheMemoryTargetNeeds) {
  const Tables& t = db_->tables();
  EXPECT_EQ(t.warehouse_schema->data_bytes(), 93u);
  EXPECT_EQ(t.district_schema->data_bytes(), 98u);
  EXPECT_EQ(t.customer_schema->data_bytes(), 662u);
  EXPECT_EQ(t.history_schema->data_bytes(), 40u);
  EXPECT_EQ(t.new_order_schema->data_bytes(), 7u);
  EXPECT_EQ(t.order_schema->data_bytes(), 16u);
  EXPECT_EQ(t.order_line_schema->data_bytes(), 47u);
  EXPECT_EQ(t.item_schema->data_bytes(), 86u);
  EXPECT_EQ(t.stock_schema->data_bytes(), 310u);
  EXPECT_EQ(storage::heap_page::SlotsPerPage(4096 - 8,
                                             t.customer_schema->tuple_bytes(),
                                             storage::TupleAddress::kMaxSlots),
            6u);
}

// The narrow id columns (tpcc/schema.h) bound the scale: a load they cannot
// hold fails before it writes a row.
TEST_F(LoaderTest, RejectsLoadsTheIdColumnsCannotHold) {
  EXPECT_EQ(
      db_->loader().Load(kMaxWarehouses + 1, 1, 42, false).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->loader().Load(0, 1, 42, false).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(kMaxWarehouses, 32767);
  EXPECT_EQ(kMaxCustomers, 32767);
  for (auto [districts, customers] :
       {std::pair{kMaxDistricts + 1, 60}, std::pair{10, kMaxCustomers + 1},
        std::pair{0, 60}}) {
    Scale s = TestScale();
    s.districts = districts;
    s.customers = customers;
    auto db = TpccDatabase::Open(
        testing::TestOptions(txn::CcAlgorithm::kTwoPhaseLocking,
                             cc::Protocol::kSelcc, 1),
        s, /*seed=*/42);
    EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument)
        << districts << " districts, " << customers << " customers";
  }
}

// At a scale with several units per district: O_C_ID is one permutation
// per district (not one per unit), and the secondary indexes, loaded per
// district in ascending key order, hold exactly one entry per row, pointing
// at that row, in full leaves.
TEST(LoaderIndexTest, SecondaryIndexesAreCompleteAndTheirLeavesFull) {
  Scale s = TestScale();
  s.customers = 1200;  // 12 order units, 3 index units per district
  engine::EngineOptions options = testing::TestOptions(
      txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, 2);
  // The check reads a district's 1200 customers in one transaction.
  options.cc.cache_bytes = 8 << 20;
  auto db = TpccDatabase::Open(options, s, /*seed=*/42);
  ASSERT_TRUE(db.ok()) << db.status();
  engine::Engine& e = (*db)->engine();
  const Tables t = (*db)->tables();
  // (w, d, 0) checks customer_by_name, (w, d, 1) order_by_customer: the
  // entries of the district, each the key of the row it points to.
  auto check = e.RegisterProcedure(
      "test_check_secondary",
      std::function<absl::StatusOr<int64_t>(txn::Txn&, int, int, int)>(
          [t](txn::Txn& txn, int w, int d,
              int which) -> absl::StatusOr<int64_t> {
            const bool names = which == 0;
            const std::string low = names ? CustomerNameKey(w, d, "", "", 0)
                                          : OrderCustomerKey(w, d, 0, 0);
            const std::string high = names
                                         ? CustomerNameKey(w, d + 1, "", "", 0)
                                         : OrderCustomerKey(w, d + 1, 0, 0);
            std::vector<std::pair<std::string, storage::TupleAddress>> found;
            absl::Status scan = txn.Scan(
                names ? t.customer_by_name : t.order_by_customer, low, high,
                /*forward=*/true, UINT64_MAX,
                [&](std::string_view key, storage::TupleAddress a) {
                  found.emplace_back(std::string(key), a);
                  return true;
                });
            if (!scan.ok()) return scan;
            for (const auto& [key, a] : found) {
              auto row = txn.Read(names ? t.customer : t.order, a);
              if (!row.ok()) return row.status();
              const std::string want =
                  names ? CustomerNameKey(w, d, row->GetChars(customer::kLast),
                                          row->GetChars(customer::kFirst),
                                          row->GetInt(customer::kId))
                        : OrderCustomerKey(w, d, row->GetInt(order::kCId),
                                           row->GetInt(order::kId));
              if (key != want) {
                return absl::InternalError("an entry points at another row");
              }
            }
            return static_cast<int64_t>(found.size());
          }));
  ASSERT_TRUE(check.ok()) << check.status();
  ASSERT_TRUE((*db)->loader().Load(1, 1, 42, false).ok());

  std::map<int, std::set<int>> order_customers;
  ForEachRow(e, "order", [&](const TupleView& o) {
    order_customers[o.GetInt(order::kDId)].insert(o.GetInt(order::kCId));
  });
  ASSERT_EQ(order_customers.size(), size_t(s.districts));
  for (const auto& [d, cs] : order_customers) {
    EXPECT_EQ(cs.size(), size_t(s.customers)) << "district " << d;
  }
  auto session = *e.NewSession(e.local_compute_nodes().front());
  for (int d = 1; d <= s.districts; ++d) {
    for (int which : {0, 1}) {
      auto n = session->Call<int64_t>(*check, 1, d, which);
      ASSERT_TRUE(n.ok()) << n.status();
      EXPECT_EQ(*n, s.customers) << "district " << d << " index " << which;
    }
  }
  session.reset();
  auto m = MeasureMemory(e, 1, s);
  ASSERT_TRUE(m.ok()) << m.status();
  int checked = 0;
  for (const auto& index : m->indexes) {
    if (index.name == "customer_by_name" || index.name == "order_by_customer") {
      // About 70% when the entries came in load order.
      EXPECT_GT(index.leaf_fill(), 0.9) << index.name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
}

TEST(RandomTest, NURandAndLastNames) {
  EXPECT_EQ(LastName(0), "BARBARBAR");
  EXPECT_EQ(LastName(371), "PRICALLYOUGHT");
  EXPECT_EQ(LastName(999), "EINGEINGEING");
  const NURandConstants load = NURandConstants::ForLoad(7);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const int delta =
        std::abs(NURandConstants::ForRun(load, seed).c_last - load.c_last);
    EXPECT_TRUE(delta >= 65 && delta <= 119 && delta != 96 && delta != 112);
  }
  Random r(1, load);
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = r.NURand(1023, 1, 3000);
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 3000);
  }
}

}  // namespace
}  // namespace strand::tpcc
