#include "tpcc/schema.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "index/key_codec.h"

namespace strand::tpcc {
namespace {

using storage::ColumnSpec;
using storage::ColumnType;

constexpr ColumnType kInt = ColumnType::kInt32;
constexpr ColumnType kChar = ColumnType::kChar;
constexpr ColumnType kDec = ColumnType::kDecimal;

ColumnSpec Int(std::string name) { return {std::move(name), kInt}; }
ColumnSpec Date(std::string name) { return {std::move(name), kInt}; }
ColumnSpec Char(std::string name, uint16_t n) {
  return {std::move(name), kChar, n};
}
ColumnSpec Money(std::string name) { return {std::move(name), kDec, 0, 2}; }
ColumnSpec Rate(std::string name) { return {std::move(name), kDec, 0, 4}; }

std::vector<ColumnSpec> Address(const std::string& p) {
  return {Char(p + "_street_1", 20), Char(p + "_street_2", 20),
          Char(p + "_city", 20), Char(p + "_state", 2), Char(p + "_zip", 9)};
}

std::vector<ColumnSpec> Concat(std::vector<ColumnSpec> a,
                               const std::vector<ColumnSpec>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Creates the table, or (create == false) opens the existing one by name.
absl::StatusOr<txn::TableId> Create(engine::Engine& e, bool create,
                                    std::string_view name,
                                    std::vector<ColumnSpec> columns,
                                    const storage::Schema** schema) {
  auto s = storage::Schema::Create(std::move(columns));
  if (!s.ok()) return s.status();
  auto id = create ? e.CreateTable(name, *s) : e.OpenTable(name);
  if (!id.ok()) return id.status();
  *schema = &e.schema(*id);
  return *id;
}

absl::StatusOr<txn::IndexId> CreateIndex(engine::Engine& e, bool create,
                                         std::string_view name,
                                         txn::TableId table,
                                         uint16_t key_width) {
  return create ? e.CreateIndex(name, table, key_width, /*unique=*/true)
                : e.OpenIndex(name);
}

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
  STRAND_ASSIGN(
      t.warehouse,
      Create(e, create, "warehouse",
             Concat(Concat({Int("w_id"), Char("w_name", 10)}, Address("w")),
                    {Rate("w_tax"), Money("w_ytd")}),
             &t.warehouse_schema));
  STRAND_ASSIGN(
      t.district,
      Create(e, create, "district",
             Concat(Concat({Int("d_id"), Int("d_w_id"), Char("d_name", 10)},
                           Address("d")),
                    {Rate("d_tax"), Money("d_ytd"), Int("d_next_o_id")}),
             &t.district_schema));
  STRAND_ASSIGN(t.customer,
                Create(e, create, "customer",
                       Concat(Concat({Int("c_id"), Int("c_d_id"), Int("c_w_id"),
                                      Char("c_first", 16), Char("c_middle", 2),
                                      Char("c_last", 16)},
                                     Address("c")),
                              {Char("c_phone", 16), Date("c_since"),
                               Char("c_credit", 2), Money("c_credit_lim"),
                               Rate("c_discount"), Money("c_balance"),
                               Money("c_ytd_payment"), Int("c_payment_cnt"),
                               Int("c_delivery_cnt"), Char("c_data", 500)}),
                       &t.customer_schema));
  STRAND_ASSIGN(t.history,
                Create(e, create, "history",
                       {Int("h_c_id"), Int("h_c_d_id"), Int("h_c_w_id"),
                        Int("h_d_id"), Int("h_w_id"), Date("h_date"),
                        Money("h_amount"), Char("h_data", 24)},
                       &t.history_schema));
  STRAND_ASSIGN(t.new_order,
                Create(e, create, "new_order",
                       {Int("no_o_id"), Int("no_d_id"), Int("no_w_id")},
                       &t.new_order_schema));
  STRAND_ASSIGN(
      t.order, Create(e, create, "order",
                      {Int("o_id"), Int("o_d_id"), Int("o_w_id"), Int("o_c_id"),
                       Date("o_entry_d"), Int("o_carrier_id"), Int("o_ol_cnt"),
                       Int("o_all_local")},
                      &t.order_schema));
  STRAND_ASSIGN(
      t.order_line,
      Create(e, create, "order_line",
             {Int("ol_o_id"), Int("ol_d_id"), Int("ol_w_id"), Int("ol_number"),
              Int("ol_i_id"), Int("ol_supply_w_id"), Date("ol_delivery_d"),
              Int("ol_quantity"), Money("ol_amount"), Char("ol_dist_info", 24)},
             &t.order_line_schema));
  STRAND_ASSIGN(t.item, Create(e, create, "item",
                               {Int("i_id"), Int("i_im_id"), Char("i_name", 24),
                                Money("i_price"), Char("i_data", 50)},
                               &t.item_schema));
  std::vector<ColumnSpec> stock = {Int("s_i_id"), Int("s_w_id"),
                                   Int("s_quantity")};
  for (int i = 1; i <= 10; ++i) {
    stock.push_back(Char(absl::StrCat("s_dist_", i < 10 ? "0" : "", i), 24));
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
#undef STRAND_ASSIGN
  // The engine keeps schemas in a vector that grew meanwhile: take the
  // pointers now that every table exists.
  t.warehouse_schema = &e.schema(t.warehouse);
  t.district_schema = &e.schema(t.district);
  t.customer_schema = &e.schema(t.customer);
  t.history_schema = &e.schema(t.history);
  t.new_order_schema = &e.schema(t.new_order);
  t.order_schema = &e.schema(t.order);
  t.order_line_schema = &e.schema(t.order_line);
  t.item_schema = &e.schema(t.item);
  t.stock_schema = &e.schema(t.stock);
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
