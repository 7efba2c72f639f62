#include "tpcc/new_order.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "partition/fragment.h"
#include "tpcc/procedure_util.h"

namespace strand::tpcc {

NewOrderInput MakeNewOrderInput(Random& r, const Scale& scale, int w,
                                int warehouses, const RemotePolicy& remote,
                                int32_t now) {
  NewOrderInput in;
  in.w = w;
  in.d = r.Uniform(1, scale.districts);
  in.c = r.NURand(1023, 1, scale.customers);
  in.ol_cnt = r.Uniform(5, 15);
  in.entry_d = now;
  const bool rollback = r.Percent(1);
  const int remote_line = remote.remote_order_ratio >= 0 && warehouses > 1 &&
                                  r.Percent(100 * remote.remote_order_ratio)
                              ? r.Uniform(0, in.ol_cnt - 1)
                              : -1;
  for (int i = 0; i < in.ol_cnt; ++i) {
    in.item[i] = r.NURand(8191, 1, scale.items);
    bool is_remote = false;
    if (warehouses > 1) {
      is_remote =
          remote.remote_order_ratio < 0 ? r.Percent(1) : i == remote_line;
    }
    in.supply_w[i] = is_remote ? RemoteWarehouse(r, w, warehouses, remote) : w;
    in.quantity[i] = r.Uniform(1, 10);
  }
  if (rollback) in.item[in.ol_cnt - 1] = scale.items + 1;
  return in;
}

namespace {

// One supply warehouse's lines of a New-Order, updated by the warehouse's
// owner in partitioned mode (partition/fragment.h): the lines' stock rows
// change there, and their S_DIST_xx for the order's district come back.
struct StockLinesIn {
  int32_t w = 0, d = 0, supply_w = 0, lines = 0;
  int32_t item[Scale::kMaxOrderLines] = {};
  int32_t quantity[Scale::kMaxOrderLines] = {};
};
struct StockLinesOut {
  char dist_info[Scale::kMaxOrderLines][kDistInfoWidth] = {};
};

// Clause 2.4.2.2's stock update of one line; returns S_DIST_xx of
// district `d` (a view into `s`).
std::string_view UpdateStock(storage::TupleBuffer& s, int qty, bool remote,
                             int d) {
  const storage::TupleView sv = s.view();
  const int64_t s_qty = sv.GetInt(stock::kQuantity);
  s.SetInt(stock::kQuantity,
           s_qty >= qty + 10 ? s_qty - qty : s_qty - qty + 91);
  s.SetInt(stock::kYtd, sv.GetInt(stock::kYtd) + qty);
  s.SetInt(stock::kOrderCnt, sv.GetInt(stock::kOrderCnt) + 1);
  if (remote) s.SetInt(stock::kRemoteCnt, sv.GetInt(stock::kRemoteCnt) + 1);
  return s.view().GetChars(stock::kDist01 + d - 1);
}

using StockLines = partition::Fragment<StockLinesIn, StockLinesOut>;

// The fragment that updates one supply warehouse's stock lines.
absl::StatusOr<StockLinesOut> UpdateStockLines(txn::Txn& txn, const Tables& t,
                                               const StockLinesIn& in) {
  StockLinesOut out;
  for (int k = 0; k < in.lines; ++k) {
    auto at = txn.Lookup(t.stock_pk, StockKey(in.supply_w, in.item[k]));
    if (absl::IsNotFound(at.status())) {
      return absl::NotFoundError(absl::StrFormat(
          "no stock row for item %d of warehouse %d", in.item[k], in.supply_w));
    }
    STRAND_RETURN_IF_ERROR(at.status());
    STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * s, txn.Modify(t.stock, *at));
    const std::string_view dist =
        UpdateStock(*s, in.quantity[k], in.supply_w != in.w, in.d);
    std::memcpy(out.dist_info[k], dist.data(),
                std::min(dist.size(), sizeof(out.dist_info[k])));
  }
  return out;
}

using LineAddresses = std::array<storage::TupleAddress, Scale::kMaxOrderLines>;

// Where an order's lines are: which update their stock on another compute
// node (partitioned mode), and the addresses of their ITEM rows and of the
// local lines' STOCK rows.
struct OrderLines {
  size_t count = 0;
  std::array<bool, Scale::kMaxOrderLines> elsewhere{};
  std::array<size_t, Scale::kMaxOrderLines> all{};   // 0..count-1
  std::array<size_t, Scale::kMaxOrderLines> here{};  // local lines
  size_t here_count = 0;
  LineAddresses item_at;
  LineAddresses stock_at;
};

// The key of each line of `which` in `index` (key(i) builds line i's) into
// `at`, as one batch.
template <typename KeyOf>
absl::Status LookupLines(txn::Txn& txn, txn::IndexId index, KeyOf key,
                         absl::Span<const size_t> which, LineAddresses& at) {
  std::array<std::string, Scale::kMaxOrderLines> keys;
  std::array<std::string_view, Scale::kMaxOrderLines> views;
  LineAddresses found;
  for (size_t k = 0; k < which.size(); ++k) {
    keys[k] = key(which[k]);
    views[k] = keys[k];
  }
  absl::Status s =
      txn.LookupBatch(index, absl::MakeConstSpan(views.data(), which.size()),
                      absl::MakeSpan(found.data(), which.size()));
  for (size_t k = 0; k < which.size(); ++k) at[which[k]] = found[k];
  return s;
}

// Finds the lines' ITEM and local STOCK rows, as two batches, and
// prefetches them: their cache misses overlap with each other and with the
// work on the warehouse and district, instead of coming one after another.
// An unused item id (a null address) rolls the transaction back only when
// its line is reached (InsertOrderLines): clause 2.4.2.3 wants every valid
// item processed first (its stock lookup, absent, costs one more key in
// the batch).
absl::StatusOr<OrderLines> FindLines(txn::Txn& txn, const Tables& t,
                                     const NewOrderInput& in) {
  OrderLines lines;
  lines.count = in.ol_cnt;
  const txn::RemoteBranches* remote = txn.remote();
  for (size_t i = 0; i < lines.count; ++i) {
    lines.all[i] = i;
    lines.elsewhere[i] =
        remote != nullptr && remote->OwnerOf(in.supply_w[i]) != remote->self();
    if (!lines.elsewhere[i]) lines.here[lines.here_count++] = i;
  }
  STRAND_RETURN_IF_ERROR(LookupLines(
      txn, t.item_pk, [&](size_t i) { return ItemKey(in.item[i]); },
      absl::MakeConstSpan(lines.all.data(), lines.count), lines.item_at));
  STRAND_RETURN_IF_ERROR(LookupLines(
      txn, t.stock_pk,
      [&](size_t i) { return StockKey(in.supply_w[i], in.item[i]); },
      absl::MakeConstSpan(lines.here.data(), lines.here_count),
      lines.stock_at));
  for (size_t i = 0; i < lines.count; ++i) {
    if (!lines.elsewhere[i] && !lines.item_at[i].is_null() &&
        lines.stock_at[i].is_null()) {
      return absl::NotFoundError(
          absl::StrFormat("no stock row for item %d of warehouse %d",
                          in.item[i], in.supply_w[i]));
    }
  }
  txn.Prefetch(t.item, absl::MakeConstSpan(lines.item_at.data(), lines.count));
  txn.Prefetch(t.stock,
               absl::MakeConstSpan(lines.stock_at.data(), lines.count));
  return lines;
}

// Partitioned mode: the lines supplied by other compute nodes' warehouses,
// grouped by supply warehouse, one request per owner node, all at once.
// Line i is line placed[i].second of group placed[i].first.
struct RemoteLines {
  std::array<StockLinesIn, Scale::kMaxOrderLines> groups;
  std::array<absl::StatusOr<StockLinesOut>, Scale::kMaxOrderLines> out;
  std::array<std::pair<int, int>, Scale::kMaxOrderLines> placed{};
  size_t group_count = 0;

  // S_DIST_xx of remote line i, as its owner returned it.
  std::string_view DistInfo(size_t i) const {
    const auto [g, k] = placed[i];
    const char* info = out[g]->dist_info[k];
    return std::string_view(info, strnlen(info, kDistInfoWidth));
  }
};

absl::Status UpdateRemoteLines(txn::Txn& txn, const StockLines& stock_lines,
                               const NewOrderInput& in, const OrderLines& lines,
                               RemoteLines& remote) {
  for (size_t i = 0; i < lines.count; ++i) {
    if (!lines.elsewhere[i] || lines.item_at[i].is_null()) continue;
    size_t g = 0;
    while (g < remote.group_count &&
           remote.groups[g].supply_w != in.supply_w[i]) {
      ++g;
    }
    if (g == remote.group_count) {
      remote.groups[g] = StockLinesIn{};
      remote.groups[g].w = in.w;
      remote.groups[g].d = in.d;
      remote.groups[g].supply_w = in.supply_w[i];
      ++remote.group_count;
    }
    StockLinesIn& group = remote.groups[g];
    remote.placed[i] = {static_cast<int>(g), group.lines};
    group.item[group.lines] = in.item[i];
    group.quantity[group.lines] = in.quantity[i];
    ++group.lines;
  }
  if (remote.group_count == 0) return absl::OkStatus();
  partition::FragmentBatch batch(txn);
  for (size_t g = 0; g < remote.group_count; ++g) {
    batch.Add(remote.groups[g].supply_w, stock_lines, remote.groups[g],
              &remote.out[g]);
  }
  STRAND_RETURN_IF_ERROR(batch.Run());
  for (size_t g = 0; g < remote.group_count; ++g) {
    STRAND_RETURN_IF_ERROR(remote.out[g].status());
  }
  return absl::OkStatus();
}

// The ORDER row and its NEW-ORDER row, with their index entries.
absl::Status InsertOrder(txn::Txn& txn, const Tables& t,
                         const NewOrderInput& in, int o_id, bool all_local) {
  storage::TupleBuffer o(*t.order_schema);
  o.SetInt(order::kId, o_id);
  o.SetInt(order::kDId, in.d);
  o.SetInt(order::kWId, in.w);
  o.SetInt(order::kCId, in.c);
  o.SetInt(order::kEntryD, in.entry_d);
  o.SetInt(order::kCarrierId, 0);
  o.SetInt(order::kOlCnt, in.ol_cnt);
  o.SetInt(order::kAllLocal, all_local ? 1 : 0);
  STRAND_ASSIGN_OR_RETURN(auto oa, txn.Insert(t.order, o));
  STRAND_RETURN_IF_ERROR(
      txn.AddIndexEntry(t.order_pk, OrderKey(in.w, in.d, o_id), oa));
  STRAND_RETURN_IF_ERROR(txn.AddIndexEntry(
      t.order_by_customer, OrderCustomerKey(in.w, in.d, in.c, o_id), oa));
  storage::TupleBuffer no(*t.new_order_schema);
  no.SetInt(new_order::kOId, o_id);
  no.SetInt(new_order::kDId, in.d);
  no.SetInt(new_order::kWId, in.w);
  STRAND_ASSIGN_OR_RETURN(auto noa, txn.Insert(t.new_order, no));
  STRAND_RETURN_IF_ERROR(
      txn.AddIndexEntry(t.new_order_pk, NewOrderKey(in.w, in.d, o_id), noa));
  return absl::OkStatus();
}

// Every line: its stock updated (here, or by its owner already) and its
// ORDER-LINE row inserted. Returns the sum of the lines' amounts, or the
// user abort of the first unused item id (clause 2.4.2.3: everything
// before it is done).
absl::StatusOr<int64_t> InsertOrderLines(txn::Txn& txn, const Tables& t,
                                         const NewOrderInput& in, int o_id,
                                         const OrderLines& lines,
                                         const RemoteLines& remote) {
  storage::TupleBuffer ol(*t.order_line_schema);
  int64_t sum = 0;
  for (int i = 0; i < in.ol_cnt; ++i) {
    if (lines.item_at[i].is_null()) return txn.UserAbort("unused item id");
    STRAND_ASSIGN_OR_RETURN(auto ir, txn.Read(t.item, lines.item_at[i]));
    const int64_t price = ir.GetDecimal(item::kPrice);
    const int qty = in.quantity[i];
    std::string_view dist_info;
    if (lines.elsewhere[i]) {
      dist_info = remote.DistInfo(i);
    } else {
      STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * s,
                              txn.Modify(t.stock, lines.stock_at[i]));
      dist_info = UpdateStock(*s, qty, in.supply_w[i] != in.w, in.d);
    }
    const int64_t amount = qty * price;
    sum += amount;
    ol.SetInt(order_line::kOId, o_id);
    ol.SetInt(order_line::kDId, in.d);
    ol.SetInt(order_line::kWId, in.w);
    ol.SetInt(order_line::kNumber, i + 1);
    ol.SetInt(order_line::kIId, in.item[i]);
    ol.SetInt(order_line::kSupplyWId, in.supply_w[i]);
    ol.SetInt(order_line::kDeliveryD, 0);
    ol.SetInt(order_line::kQuantity, qty);
    ol.SetDecimal(order_line::kAmount, amount);
    ol.SetChars(order_line::kDistInfo, dist_info);
    STRAND_ASSIGN_OR_RETURN(auto ola, txn.Insert(t.order_line, ol));
    STRAND_RETURN_IF_ERROR(txn.AddIndexEntry(
        t.order_line_pk, OrderLineKey(in.w, in.d, o_id, i + 1), ola));
  }
  return sum;
}

// Clause 2.4.2: the New-Order procedure. The rows it reads are independent
// and mostly cold (the customer's, every line's item and stock), so they
// are looked up and prefetched first.
absl::StatusOr<NewOrderOutput> NewOrder(txn::Txn& txn, const Tables& t,
                                        const StockLines& stock_lines,
                                        const NewOrderInput& in) {
  STRAND_ASSIGN_OR_RETURN(
      const storage::TupleAddress ca,
      txn.Lookup(t.customer_pk, CustomerKey(in.w, in.d, in.c)));
  txn.Prefetch(t.customer, absl::MakeConstSpan(&ca, 1));
  STRAND_ASSIGN_OR_RETURN(const OrderLines lines, FindLines(txn, t, in));
  RemoteLines remote;
  STRAND_RETURN_IF_ERROR(
      UpdateRemoteLines(txn, stock_lines, in, lines, remote));

  STRAND_ASSIGN_OR_RETURN(auto wa,
                          txn.Lookup(t.warehouse_pk, WarehouseKey(in.w)));
  STRAND_ASSIGN_OR_RETURN(auto wr, txn.Read(t.warehouse, wa));
  const int64_t w_tax = wr.GetDecimal(warehouse::kTax);
  STRAND_ASSIGN_OR_RETURN(auto da,
                          txn.Lookup(t.district_pk, DistrictKey(in.w, in.d)));
  STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * dr,
                          txn.Modify(t.district, da));
  const int64_t d_tax = dr->view().GetDecimal(district::kTax);
  const int o_id = dr->view().GetInt(district::kNextOId);
  dr->SetInt(district::kNextOId, o_id + 1);
  STRAND_ASSIGN_OR_RETURN(auto cr, txn.Read(t.customer, ca));
  const int64_t discount = cr.GetDecimal(customer::kDiscount);

  NewOrderOutput out;
  for (int i = 0; i < in.ol_cnt; ++i) {
    out.all_local &= in.supply_w[i] == in.w;
  }
  STRAND_RETURN_IF_ERROR(InsertOrder(txn, t, in, o_id, out.all_local));
  STRAND_ASSIGN_OR_RETURN(const int64_t sum,
                          InsertOrderLines(txn, t, in, o_id, lines, remote));
  // total = sum * (1 - discount) * (1 + w_tax + d_tax), rates in 10^-4
  // units.
  out.total_cents =
      static_cast<int64_t>(static_cast<double>(sum) * (10000 - discount) /
                           10000 * (10000 + w_tax + d_tax) / 10000);
  out.o_id = o_id;
  return out;
}

}  // namespace

absl::StatusOr<engine::ProcedureId> RegisterNewOrder(engine::Engine& engine,
                                                     const Tables& t) {
  STRAND_ASSIGN_OR_RETURN(
      StockLines stock_lines,
      (engine.RegisterFragment<StockLinesIn, StockLinesOut>(
          "tpcc_new_order_stock", [t](txn::Txn& txn, const StockLinesIn& in) {
            return UpdateStockLines(txn, t, in);
          })));
  return engine.RegisterProcedure(
      "tpcc_new_order",
      std::function<absl::StatusOr<NewOrderOutput>(txn::Txn&, NewOrderInput)>(
          [t, stock_lines](txn::Txn& txn, const NewOrderInput& in) {
            return NewOrder(txn, t, stock_lines, in);
          }));
}

}  // namespace strand::tpcc
