#include "tpcc/schema.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "index/key_codec.h"

namespace strand::tpcc {
namespace {

using storage::ColumnSpec;
using storage::ColumnType;

// Column helpers by domain; schema.h says why each has its width.
ColumnSpec Int(std::string name) {
  return {std::move(name), ColumnType::kInt32};
}
ColumnSpec Int16(std::string name) {
  return {std::move(name), ColumnType::kInt16};
}
ColumnSpec Int8(std::string name) {
  return {std::move(name), ColumnType::kInt8};
}
ColumnSpec WarehouseId(std::string name) { return Int16(std::move(name)); }
ColumnSpec DistrictId(std::string name) { return Int8(std::move(name)); }
ColumnSpec CustomerId(std::string name) { return Int16(std::move(name)); }
ColumnSpec Date(std::string name) { return Int(std::move(name)); }
ColumnSpec Char(std::string name, uint16_t n) {
  return {std::move(name), ColumnType::kChar, n};
}
// Sums that grow with the run: int64 cents.
ColumnSpec Money(std::string name) {
  return {std::move(name), ColumnType::kDecimal, 8, 2};
}
// Amounts the specification bounds far below 2^31 cents: int32 cents.
ColumnSpec BoundedMoney(std::string name) {
  return {std::move(name), ColumnType::kDecimal, 4, 2};
}
// Rates, 0 to 0.5 with 4 digits: int16 count of 10^-4.
ColumnSpec Rate(std::string name) {
  return {std::move(name), ColumnType::kDecimal, 2, 4};
}

std::vector<ColumnSpec> Address(const std::string& p) {
  return {Char(p + "_street_1", 20), Char(p + "_street_2", 20),
          Char(p + "_city", 20), Char(p + "_state", 2), Char(p + "_zip", 9)};
}

std::vector<ColumnSpec> Concat(std::vector<ColumnSpec> a,
                               const std::vector<ColumnSpec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Creates the table, or (create == false) opens the existing one by name
// (which keeps the options it was created with).
absl::StatusOr<txn::TableId> Create(engine::Engine& e, bool create,
                                    std::string_view name,
                                    std::vector<ColumnSpec> columns,
                                    const storage::Schema** schema,
                                    const storage::TableOptions& options = {}) {
  auto s = storage::Schema::Create(std::move(columns));
  if (!s.ok()) return s.status();
  auto id = create ? e.CreateTable(name, *s, options) : e.OpenTable(name);
  if (!id.ok()) return id.status();
  auto made = e.schema(*id);
  if (!made.ok()) return made.status();
  *schema = *made;
  return *id;
}

absl::StatusOr<txn::IndexId> CreateIndex(engine::Engine& e, bool create,
                                         std::string_view name,
                                         txn::TableId table,
                                         uint16_t key_width) {
  return create ? e.CreateIndex(name, table, key_width, /*unique=*/true)
                : e.OpenIndex(name);
}

// WAREHOUSE and DISTRICT rows are small (about 35 to a 4 KiB page) and
// every Payment (W_YTD, D_YTD) and New-Order (D_NEXT_O_ID) writes one. The
// page is the unit of latching, so rows of two warehouses that the loader
// happened to put on one page made threads and nodes with different home
// warehouses abort each other (2PL no-wait: 30-45% of attempts, half the
// throughput, depending on which loader thread wrote which row). One row
// per page costs 11 GCLs per warehouse.
constexpr storage::TableOptions kOneRowPerPage{.max_rows_per_page = 1};

uint32_t Wd(int w, int d) {
  return (static_cast<uint32_t>(w) << 8) | static_cast<uint32_t>(d);
}

absl::StatusOr<Tables> DefineTables(engine::Engine& e, bool create) {
  Tables t;
#define STRAND_ASSIGN(lhs, expr)    \
  do {                              \
    auto r = (expr);                \
    if (!r.ok()) return r.status(); \
    lhs = *r;                       \
  } while (0)
  STRAND_ASSIGN(t.warehouse,
                Create(e, create, "warehouse",
                       Concat(Concat({WarehouseId("w_id"), Char("w_name", 10)},
                                     Address("w")),
                              {Rate("w_tax"), Money("w_ytd")}),
                       &t.warehouse_schema, kOneRowPerPage));
  STRAND_ASSIGN(
      t.district,
      Create(e, create, "district",
             Concat(Concat({DistrictId("d_id"), WarehouseId("d_w_id"),
                            Char("d_name", 10)},
                           Address("d")),
                    {Rate("d_tax"), Money("d_ytd"), Int("d_next_o_id")}),
             &t.district_schema, kOneRowPerPage));
  STRAND_ASSIGN(
      t.customer,
      Create(e, create, "customer",
             Concat(Concat({CustomerId("c_id"), DistrictId("c_d_id"),
                            WarehouseId("c_w_id"), Char("c_first", 16),
                            Char("c_middle", 2), Char("c_last", 16)},
                           Address("c")),
                    {Char("c_phone", 16), Date("c_since"), Char("c_credit", 2),
                     BoundedMoney("c_credit_lim"), Rate("c_discount"),
                     Money("c_balance"), Money("c_ytd_payment"),
                     Int("c_payment_cnt"), Int("c_delivery_cnt"),
                     Char("c_data", 500)}),
             &t.customer_schema));
  STRAND_ASSIGN(t.history,
                Create(e, create, "history",
                       {CustomerId("h_c_id"), DistrictId("h_c_d_id"),
                        WarehouseId("h_c_w_id"), DistrictId("h_d_id"),
                        WarehouseId("h_w_id"), Date("h_date"),
                        BoundedMoney("h_amount"), Char("h_data", 24)},
                       &t.history_schema));
  STRAND_ASSIGN(t.new_order, Create(e, create, "new_order",
                                    {Int("no_o_id"), DistrictId("no_d_id"),
                                     WarehouseId("no_w_id")},
                                    &t.new_order_schema));
  STRAND_ASSIGN(t.order, Create(e, create, "order",
                                {Int("o_id"), DistrictId("o_d_id"),
                                 WarehouseId("o_w_id"), CustomerId("o_c_id"),
                                 Date("o_entry_d"), Int8("o_carrier_id"),
                                 Int8("o_ol_cnt"), Int8("o_all_local")},
                                &t.order_schema));
  STRAND_ASSIGN(
      t.order_line,
      Create(e, create, "order_line",
             {Int("ol_o_id"), DistrictId("ol_d_id"), WarehouseId("ol_w_id"),
              Int8("ol_number"), Int("ol_i_id"), WarehouseId("ol_supply_w_id"),
              Date("ol_delivery_d"), Int8("ol_quantity"),
              BoundedMoney("ol_amount"), Char("ol_dist_info", kDistInfoWidth)},
             &t.order_line_schema));
  STRAND_ASSIGN(t.item, Create(e, create, "item",
                               {Int("i_id"), Int("i_im_id"), Char("i_name", 24),
                                BoundedMoney("i_price"), Char("i_data", 50)},
                               &t.item_schema));
  std::vector<ColumnSpec> stock = {Int("s_i_id"), WarehouseId("s_w_id"),
                                   Int16("s_quantity")};
  for (int i = 1; i <= 10; ++i) {
    stock.push_back(
        Char(absl::StrCat("s_dist_", i < 10 ? "0" : "", i), kDistInfoWidth));
  }
  stock.insert(stock.end(), {Int("s_ytd"), Int("s_order_cnt"),
                             Int("s_remote_cnt"), Char("s_data", 50)});
  STRAND_ASSIGN(t.stock, Create(e, create, "stock", stock, &t.stock_schema));

  STRAND_ASSIGN(t.warehouse_pk, CreateIndex(e, create, "warehouse_pk",
                                            t.warehouse, kWarehouseKeyWidth));
  STRAND_ASSIGN(t.district_pk, CreateIndex(e, create, "district_pk", t.district,
                                           kDistrictKeyWidth));
  STRAND_ASSIGN(t.customer_pk, CreateIndex(e, create, "customer_pk", t.customer,
                                           kCustomerKeyWidth));
  STRAND_ASSIGN(t.customer_by_name,
                CreateIndex(e, create, "customer_by_name", t.customer,
                            kCustomerNameKeyWidth));
  STRAND_ASSIGN(t.new_order_pk, CreateIndex(e, create, "new_order_pk",
                                            t.new_order, kNewOrderKeyWidth));
  STRAND_ASSIGN(t.order_pk,
                CreateIndex(e, create, "order_pk", t.order, kOrderKeyWidth));
  STRAND_ASSIGN(t.order_by_customer,
                CreateIndex(e, create, "order_by_customer", t.order,
                            kOrderCustomerKeyWidth));
  STRAND_ASSIGN(t.order_line_pk, CreateIndex(e, create, "order_line_pk",
                                             t.order_line, kOrderLineKeyWidth));
  STRAND_ASSIGN(t.item_pk,
                CreateIndex(e, create, "item_pk", t.item, kItemKeyWidth));
  STRAND_ASSIGN(t.stock_pk,
                CreateIndex(e, create, "stock_pk", t.stock, kStockKeyWidth));
  // The engine keeps schemas in a vector that grew meanwhile: take the
  // pointers now that every table exists.
  STRAND_ASSIGN(t.warehouse_schema, e.schema(t.warehouse));
  STRAND_ASSIGN(t.district_schema, e.schema(t.district));
  STRAND_ASSIGN(t.customer_schema, e.schema(t.customer));
  STRAND_ASSIGN(t.history_schema, e.schema(t.history));
  STRAND_ASSIGN(t.new_order_schema, e.schema(t.new_order));
  STRAND_ASSIGN(t.order_schema, e.schema(t.order));
  STRAND_ASSIGN(t.order_line_schema, e.schema(t.order_line));
  STRAND_ASSIGN(t.item_schema, e.schema(t.item));
  STRAND_ASSIGN(t.stock_schema, e.schema(t.stock));
#undef STRAND_ASSIGN
  return t;
}

}  // namespace

absl::StatusOr<Tables> CreateTables(engine::Engine& e) {
  return DefineTables(e, /*create=*/true);
}

absl::StatusOr<Tables> OpenTables(engine::Engine& e) {
  return DefineTables(e, /*create=*/false);
}

uint64_t RawBytes::PerWarehouse(const Scale& s) {
  const uint64_t districts = s.districts;
  const uint64_t customers = districts * s.customers;
  return kWarehouse + districts * kDistrict + customers * kCustomer +
         customers * kHistory + districts * s.new_orders() * kNewOrder +
         customers * kOrder + customers * 10 * kOrderLine +
         uint64_t(s.items) * kStock;
}

std::string WarehouseKey(int w) {
  return index::KeyBuilder().Uint32(w).Build(kWarehouseKeyWidth);
}
std::string DistrictKey(int w, int d) {
  return index::KeyBuilder().Uint32(Wd(w, d)).Build(kDistrictKeyWidth);
}
std::string CustomerKey(int w, int d, int c) {
  return index::KeyBuilder().Uint32(Wd(w, d)).Uint32(c).Build(
      kCustomerKeyWidth);
}
std::string CustomerNameKey(int w, int d, std::string_view last,
                            std::string_view first, int c) {
  return index::KeyBuilder()
      .Uint32(Wd(w, d))
      .String(last, 16)
      .String(first, 16)
      .Uint32(static_cast<uint32_t>(c))
      .Build(kCustomerNameKeyWidth);
}
std::string NewOrderKey(int w, int d, int o) {
  return index::KeyBuilder().Uint32(Wd(w, d)).Uint32(o).Build(
      kNewOrderKeyWidth);
}
std::string OrderKey(int w, int d, int o) {
  return index::KeyBuilder().Uint32(Wd(w, d)).Uint32(o).Build(kOrderKeyWidth);
}
std::string OrderCustomerKey(int w, int d, int c, int o) {
  return index::KeyBuilder().Uint32(Wd(w, d)).Uint32(c).Uint32(o).Build(
      kOrderCustomerKeyWidth);
}
std::string OrderLineKey(int w, int d, int o, int ol) {
  return index::KeyBuilder()
      .Uint32(Wd(w, d))
      .Uint32(o)
      .String(std::string(1, static_cast<char>(ol)), 1)
      .Build(kOrderLineKeyWidth);
}
std::string ItemKey(int i) {
  return index::KeyBuilder().Uint32(i).Build(kItemKeyWidth);
}
std::string StockKey(int w, int i) {
  return index::KeyBuilder().Uint32(w).Uint32(i).Build(kStockKeyWidth);
}

}  // namespace strand::tpcc
