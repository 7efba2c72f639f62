#include "tpcc/consistency.h"

#include <algorithm>
#include <climits>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "engine/engine_internals.h"
#include "storage/catalog.h"
#include "storage/heap_table.h"

namespace strand::tpcc {
namespace {

// Condition numbers as in the clause (1-based).
enum Condition {
  kWarehouseYtd = 1,
  kNextOrderId,
  kNewOrderRange,
  kOrderLineCount,
  kCarrierIffNewOrder,
  kOrderLines,
  kDeliveryDateIffCarrier,
  kWarehouseHistory,
  kDistrictHistory,
  kCustomerBalance,
  kDeliveredOrders,
  kCustomerPaid,
};

constexpr const char* kConditionNames[ConsistencyResult::kConditions] = {
    "W_YTD = sum(D_YTD)",
    "D_NEXT_O_ID-1 = max(O_ID) = max(NO_O_ID)",
    "NEW-ORDER count = max-min+1",
    "sum(O_OL_CNT) = ORDER-LINE rows",
    "O_CARRIER_ID null <=> NEW-ORDER row",
    "O_OL_CNT = the order's ORDER-LINE rows",
    "OL_DELIVERY_D null <=> O_CARRIER_ID null",
    "W_YTD = sum(H_AMOUNT)",
    "D_YTD = sum(H_AMOUNT)",
    "C_BALANCE = sum(delivered OL_AMOUNT)-sum(H_AMOUNT)",
    "count(ORDER)-count(NEW-ORDER) = 2100+sum(C_DELIVERY_CNT)",
    "C_BALANCE+C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
};

// No district holds more orders than this: a corrupt D_NEXT_O_ID must not
// size an array beyond reason (its orders then violate condition 2).
constexpr int kMaxOrdersPerDistrict = 1 << 24;

struct WarehouseFacts {
  bool seen = false;
  int64_t ytd = 0;
  int64_t district_ytd = 0;
  int64_t history = 0;
};

struct DistrictFacts {
  bool seen = false;
  int64_t ytd = 0;
  int next_o_id = 0;
  int max_o_id = 0;
  int64_t orders = 0;
  int64_t sum_ol_cnt = 0;
  int64_t order_lines = 0;
  int64_t new_orders = 0;
  int min_no = INT_MAX;
  int max_no = 0;
  int64_t history = 0;
  int64_t delivery_cnt = 0;  // sum(C_DELIVERY_CNT)
};

// One ORDER row, indexed by O_ID within its district.
struct OrderFacts {
  bool seen = false;
  bool carrier_null = false;
  bool has_new_order = false;
  int16_t c_id = 0;
  int16_t ol_cnt = 0;
  int16_t lines = 0;  // its ORDER-LINE rows
};

// One CUSTOMER row, indexed by C_ID within its district.
struct CustomerFacts {
  bool seen = false;
  int64_t balance = 0;
  int64_t ytd_payment = 0;
  int64_t delivered_amount = 0;  // OL_AMOUNT of its delivered lines
  int64_t paid = 0;              // H_AMOUNT of its payments
};

// Calls `visit` for every live row of table `name`.
absl::Status ScanTable(
    cc::GclManager& m, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const char* name,
    const std::function<void(const storage::TupleView&)>& visit) {
  auto desc = catalog.FindTable(ctx, name);
  if (!desc.ok()) return desc.status();
  auto heap = storage::HeapTable::Open(m, ctx, desc->root, desc->schema);
  if (!heap.ok()) return heap.status();
  const storage::Schema& schema = (*heap)->schema();
  return (*heap)->Scan(ctx, [&](storage::TupleAddress, const uint8_t* tuple) {
    visit(storage::TupleView(schema, tuple));
    return true;
  });
}

// Gathers the facts of every table in one scan each, then checks them.
class Checker {
 public:
  Checker(int warehouses, const Scale& scale, ConsistencyResult& result)
      : warehouses_(warehouses),
        scale_(scale),
        result_(result),
        warehouse_(warehouses + 1),
        district_(DistrictIndex(warehouses, scale.districts) + 1),
        orders_(district_.size()),
        customers_(district_.size()) {}

  absl::Status Scan(cc::GclManager& m, cc::ThreadContext& ctx,
                    storage::Catalog& catalog);
  void Check();

 private:
  int DistrictIndex(int64_t w, int64_t d) const {
    return (w - 1) * scale_.districts + (d - 1);
  }
  bool InRange(int64_t w, int64_t d) const {
    return w >= 1 && w <= warehouses_ && d >= 1 && d <= scale_.districts;
  }
  DistrictFacts* District(int64_t w, int64_t d) {
    return InRange(w, d) ? &district_[DistrictIndex(w, d)] : nullptr;
  }
  OrderFacts* Order(int64_t w, int64_t d, int64_t o) {
    if (!InRange(w, d)) return nullptr;
    std::vector<OrderFacts>& orders = orders_[DistrictIndex(w, d)];
    return o >= 1 && o < static_cast<int64_t>(orders.size()) ? &orders[o]
                                                             : nullptr;
  }
  CustomerFacts* Customer(int64_t w, int64_t d, int64_t c) {
    if (!InRange(w, d) || c < 1 || c > scale_.customers) return nullptr;
    return &customers_[DistrictIndex(w, d)][c];
  }
  void Fail(int condition, std::string message) {
    result_.violations[condition - 1]++;
    if (result_.messages.size() < 10) {
      result_.messages.push_back(
          absl::StrCat("condition ", condition, ": ", message));
    }
  }
  void Checked(int condition) { result_.checked[condition - 1]++; }

  void VisitOrder(const storage::TupleView& v);
  void VisitNewOrder(const storage::TupleView& v);
  void VisitOrderLine(const storage::TupleView& v);
  void VisitHistory(const storage::TupleView& v);

  const int warehouses_;
  const Scale scale_;
  ConsistencyResult& result_;
  std::vector<WarehouseFacts> warehouse_;              // by W_ID
  std::vector<DistrictFacts> district_;                // by DistrictIndex
  std::vector<std::vector<OrderFacts>> orders_;        // [district][O_ID]
  std::vector<std::vector<CustomerFacts>> customers_;  // [district][C_ID]
  int64_t stray_ = 0;  // rows of a warehouse or district out of range
};

absl::Status Checker::Scan(cc::GclManager& m, cc::ThreadContext& ctx,
                           storage::Catalog& catalog) {
  auto scan = [&](const char* table,
                  const std::function<void(const storage::TupleView&)>& visit) {
    return ScanTable(m, ctx, catalog, table, visit);
  };
  absl::Status s = scan("warehouse", [&](const storage::TupleView& v) {
    const int64_t w = v.GetInt(warehouse::kId);
    if (w < 1 || w > warehouses_) return void(++stray_);
    warehouse_[w].seen = true;
    warehouse_[w].ytd = v.GetDecimal(warehouse::kYtd);
  });
  if (s.ok()) {
    s = scan("district", [&](const storage::TupleView& v) {
      const int64_t w = v.GetInt(district::kWId);
      DistrictFacts* f = District(w, v.GetInt(district::kId));
      if (f == nullptr) return void(++stray_);
      f->seen = true;
      f->ytd = v.GetDecimal(district::kYtd);
      f->next_o_id = v.GetInt(district::kNextOId);
      warehouse_[w].district_ytd += f->ytd;
    });
  }
  if (!s.ok()) return s;
  for (size_t i = 0; i < district_.size(); ++i) {
    orders_[i].resize(
        std::clamp(district_[i].next_o_id, 1, kMaxOrdersPerDistrict));
    customers_[i].resize(scale_.customers + 1);
  }
  s = scan("customer", [&](const storage::TupleView& v) {
    const int64_t w = v.GetInt(customer::kWId);
    const int64_t d = v.GetInt(customer::kDId);
    if (!InRange(w, d)) return void(++stray_);
    CustomerFacts* c = Customer(w, d, v.GetInt(customer::kId));
    if (c == nullptr) {
      return Fail(kCustomerBalance,
                  absl::StrFormat("customer %d/%d/%d: C_ID out of range", w, d,
                                  v.GetInt(customer::kId)));
    }
    c->seen = true;
    c->balance = v.GetDecimal(customer::kBalance);
    c->ytd_payment = v.GetDecimal(customer::kYtdPayment);
    District(w, d)->delivery_cnt += v.GetInt(customer::kDeliveryCnt);
  });
  if (s.ok()) {
    s = scan("order", [&](const storage::TupleView& v) { VisitOrder(v); });
  }
  if (s.ok()) {
    s = scan("new_order",
             [&](const storage::TupleView& v) { VisitNewOrder(v); });
  }
  if (s.ok()) {
    s = scan("order_line",
             [&](const storage::TupleView& v) { VisitOrderLine(v); });
  }
  if (s.ok()) {
    s = scan("history", [&](const storage::TupleView& v) { VisitHistory(v); });
  }
  return s;
}

void Checker::VisitOrder(const storage::TupleView& v) {
  const int64_t w = v.GetInt(order::kWId);
  const int64_t d = v.GetInt(order::kDId);
  DistrictFacts* f = District(w, d);
  if (f == nullptr) return void(++stray_);
  const int o_id = v.GetInt(order::kId);
  f->max_o_id = std::max(f->max_o_id, o_id);
  f->sum_ol_cnt += v.GetInt(order::kOlCnt);
  f->orders++;
  // An O_ID at or past D_NEXT_O_ID has no facts: condition 2 reports it.
  if (OrderFacts* o = Order(w, d, o_id)) {
    o->seen = true;
    o->carrier_null = v.GetInt(order::kCarrierId) == 0;
    o->c_id = static_cast<int16_t>(v.GetInt(order::kCId));
    o->ol_cnt = static_cast<int16_t>(v.GetInt(order::kOlCnt));
  }
}

void Checker::VisitNewOrder(const storage::TupleView& v) {
  const int64_t w = v.GetInt(new_order::kWId);
  const int64_t d = v.GetInt(new_order::kDId);
  DistrictFacts* f = District(w, d);
  if (f == nullptr) return void(++stray_);
  const int o_id = v.GetInt(new_order::kOId);
  f->new_orders++;
  f->min_no = std::min(f->min_no, o_id);
  f->max_no = std::max(f->max_no, o_id);
  OrderFacts* o = Order(w, d, o_id);
  if (o == nullptr || !o->seen) {
    return Fail(
        kCarrierIffNewOrder,
        absl::StrFormat("NEW-ORDER row %d/%d/%d has no ORDER row", w, d, o_id));
  }
  o->has_new_order = true;
}

void Checker::VisitOrderLine(const storage::TupleView& v) {
  const int64_t w = v.GetInt(order_line::kWId);
  const int64_t d = v.GetInt(order_line::kDId);
  DistrictFacts* f = District(w, d);
  if (f == nullptr) return void(++stray_);
  f->order_lines++;
  const int o_id = v.GetInt(order_line::kOId);
  OrderFacts* o = Order(w, d, o_id);
  if (o == nullptr || !o->seen) {
    return Fail(kOrderLines,
                absl::StrFormat("ORDER-LINE row of %d/%d/%d has no ORDER row",
                                w, d, o_id));
  }
  o->lines++;
  const bool delivered = v.GetInt(order_line::kDeliveryD) != 0;
  Checked(kDeliveryDateIffCarrier);
  if (delivered == o->carrier_null) {
    Fail(kDeliveryDateIffCarrier,
         absl::StrFormat("order %d/%d/%d line %d: OL_DELIVERY_D %s, "
                         "O_CARRIER_ID %s",
                         w, d, o_id, v.GetInt(order_line::kNumber),
                         delivered ? "set" : "null",
                         o->carrier_null ? "null" : "set"));
  }
  if (!delivered) return;
  // An O_C_ID out of range is condition 10's to report, per customer.
  if (CustomerFacts* c = Customer(w, d, o->c_id)) {
    c->delivered_amount += v.GetDecimal(order_line::kAmount);
  }
}

void Checker::VisitHistory(const storage::TupleView& v) {
  const int64_t amount = v.GetDecimal(history::kAmount);
  const int64_t w = v.GetInt(history::kWId);
  const int64_t d = v.GetInt(history::kDId);
  if (DistrictFacts* f = District(w, d)) {
    warehouse_[w].history += amount;
    f->history += amount;
  } else {
    Fail(kWarehouseHistory,
         absl::StrFormat("HISTORY row of district %d/%d, outside the load", w,
                         d));
  }
  const int64_t c_w = v.GetInt(history::kCWId);
  const int64_t c_d = v.GetInt(history::kCDId);
  const int64_t c_id = v.GetInt(history::kCId);
  CustomerFacts* c = Customer(c_w, c_d, c_id);
  if (c == nullptr || !c->seen) {
    return Fail(kCustomerBalance,
                absl::StrFormat("HISTORY row of customer %d/%d/%d, who does "
                                "not exist",
                                c_w, c_d, c_id));
  }
  c->paid += amount;
}

void Checker::Check() {
  if (stray_ > 0) {
    Fail(kWarehouseYtd, absl::StrCat(stray_,
                                     " rows name a warehouse or district out "
                                     "of range"));
  }
  const int64_t delivered_at_load = scale_.customers - scale_.new_orders();
  for (int w = 1; w <= warehouses_; ++w) {
    const WarehouseFacts& wf = warehouse_[w];
    Checked(kWarehouseYtd);
    if (!wf.seen || wf.ytd != wf.district_ytd) {
      Fail(kWarehouseYtd, absl::StrFormat("warehouse %d: W_YTD %d != "
                                          "sum(D_YTD) %d",
                                          w, wf.ytd, wf.district_ytd));
    }
    Checked(kWarehouseHistory);
    if (!wf.seen || wf.ytd != wf.history) {
      Fail(kWarehouseHistory,
           absl::StrFormat("warehouse %d: W_YTD %d != sum(H_AMOUNT) %d", w,
                           wf.ytd, wf.history));
    }
    for (int d = 1; d <= scale_.districts; ++d) {
      const DistrictFacts& f = *District(w, d);
      for (Condition c : {kNextOrderId, kNewOrderRange, kOrderLineCount,
                          kDistrictHistory, kDeliveredOrders}) {
        Checked(c);
      }
      if (!f.seen || f.next_o_id - 1 != f.max_o_id ||
          (f.new_orders > 0 && f.max_no != f.max_o_id)) {
        Fail(kNextOrderId,
             absl::StrFormat("district %d/%d: D_NEXT_O_ID-1 %d, max(O_ID) "
                             "%d, max(NO_O_ID) %d",
                             w, d, f.next_o_id - 1, f.max_o_id, f.max_no));
      }
      if (f.new_orders > 0 && f.new_orders != f.max_no - f.min_no + 1) {
        Fail(kNewOrderRange,
             absl::StrFormat("district %d/%d: %d NEW-ORDER rows, max-min+1 "
                             "= %d",
                             w, d, f.new_orders, f.max_no - f.min_no + 1));
      }
      if (f.sum_ol_cnt != f.order_lines) {
        Fail(kOrderLineCount,
             absl::StrFormat("district %d/%d: sum(O_OL_CNT) %d != %d "
                             "ORDER-LINE rows",
                             w, d, f.sum_ol_cnt, f.order_lines));
      }
      if (f.ytd != f.history) {
        Fail(kDistrictHistory,
             absl::StrFormat("district %d/%d: D_YTD %d != sum(H_AMOUNT) %d", w,
                             d, f.ytd, f.history));
      }
      if (f.orders - f.new_orders != delivered_at_load + f.delivery_cnt) {
        Fail(kDeliveredOrders,
             absl::StrFormat("district %d/%d: %d ORDER - %d NEW-ORDER rows "
                             "!= %d + sum(C_DELIVERY_CNT) %d",
                             w, d, f.orders, f.new_orders, delivered_at_load,
                             f.delivery_cnt));
      }
    }
  }
  for (size_t i = 0; i < orders_.size(); ++i) {
    const int w = i / scale_.districts + 1, d = i % scale_.districts + 1;
    for (size_t o_id = 1; o_id < orders_[i].size(); ++o_id) {
      const OrderFacts& o = orders_[i][o_id];
      if (!o.seen) continue;
      Checked(kCarrierIffNewOrder);
      Checked(kOrderLines);
      if (o.carrier_null != o.has_new_order) {
        Fail(kCarrierIffNewOrder,
             absl::StrFormat("order %d/%d/%d: O_CARRIER_ID %s, %s NEW-ORDER "
                             "row",
                             w, d, o_id, o.carrier_null ? "null" : "set",
                             o.has_new_order ? "a" : "no"));
      }
      if (o.ol_cnt != o.lines) {
        Fail(kOrderLines,
             absl::StrFormat("order %d/%d/%d: O_OL_CNT %d, %d ORDER-LINE "
                             "rows",
                             w, d, o_id, o.ol_cnt, o.lines));
      }
    }
    for (size_t c_id = 1; c_id < customers_[i].size(); ++c_id) {
      const CustomerFacts& c = customers_[i][c_id];
      if (!c.seen) continue;
      Checked(kCustomerBalance);
      Checked(kCustomerPaid);
      if (c.balance != c.delivered_amount - c.paid) {
        Fail(
            kCustomerBalance,
            absl::StrFormat("customer %d/%d/%d: C_BALANCE %d != %d "
                            "delivered - %d paid",
                            w, d, c_id, c.balance, c.delivered_amount, c.paid));
      }
      if (c.balance + c.ytd_payment != c.delivered_amount) {
        Fail(kCustomerPaid, absl::StrFormat("customer %d/%d/%d: C_BALANCE %d + "
                                            "C_YTD_PAYMENT %d != %d delivered",
                                            w, d, c_id, c.balance,
                                            c.ytd_payment, c.delivered_amount));
      }
    }
  }
}

}  // namespace

bool ConsistencyResult::ok() const {
  for (int64_t v : violations) {
    if (v > 0) return false;
  }
  return true;
}

std::string ConsistencyResult::ToString() const {
  std::string s;
  for (int i = 0; i < kConditions; ++i) {
    absl::StrAppendFormat(&s,
                          "  condition %-2d %-58s %s (%d checked, %d "
                          "failed)\n",
                          i + 1, kConditionNames[i],
                          violations[i] == 0 ? "ok" : "FAILED", checked[i],
                          violations[i]);
  }
  for (const std::string& m : messages) absl::StrAppend(&s, "    ", m, "\n");
  return s;
}

absl::StatusOr<CatalogReader> CatalogReader::Open(engine::Engine& engine) {
  return Open(engine, engine.local_compute_nodes().front());
}

absl::StatusOr<CatalogReader> CatalogReader::Open(engine::Engine& engine,
                                                  rdma::ComputeNodeId node) {
  auto manager = engine::EngineInternals::manager(engine, node);
  if (!manager.ok()) return manager.status();
  auto ctx = (*manager)->NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  auto catalog = storage::Catalog::Open(**manager, **ctx);
  if (!catalog.ok()) return catalog.status();
  CatalogReader reader;
  reader.manager = *manager;
  reader.ctx = *std::move(ctx);
  reader.catalog = *std::move(catalog);
  return reader;
}

absl::StatusOr<ConsistencyResult> CheckConsistency(engine::Engine& engine,
                                                   int warehouses,
                                                   const Scale& scale) {
  return CheckConsistency(engine, warehouses, scale,
                          engine.local_compute_nodes().front());
}

absl::StatusOr<ConsistencyResult> CheckConsistency(engine::Engine& engine,
                                                   int warehouses,
                                                   const Scale& scale,
                                                   rdma::ComputeNodeId node) {
  const absl::Time start = absl::Now();
  auto reader = CatalogReader::Open(engine, node);
  if (!reader.ok()) return reader.status();
  ConsistencyResult result;
  Checker checker(warehouses, scale, result);
  if (absl::Status s =
          checker.Scan(*reader->manager, *reader->ctx, *reader->catalog);
      !s.ok()) {
    return s;
  }
  checker.Check();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

}  // namespace strand::tpcc
