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

absl::StatusOr<partition::Fragment<StockLinesIn, StockLinesOut>>
RegisterStockLines(engine::Engine& engine, const Tables& t) {
  return engine.RegisterFragment<StockLinesIn, StockLinesOut>(
      "tpcc_new_order_stock",
      [t](txn::Txn& txn,
          const StockLinesIn& in) -> absl::StatusOr<StockLinesOut> {
        StockLinesOut out;
        for (int k = 0; k < in.lines; ++k) {
          auto at = txn.Lookup(t.stock_pk, StockKey(in.supply_w, in.item[k]));
          if (absl::IsNotFound(at.status())) {
            return absl::NotFoundError(
                absl::StrFormat("no stock row for item %d of warehouse %d",
                                in.item[k], in.supply_w));
          }
          TPCC_RETURN_IF_ERROR(at.status());
          TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * s,
                                txn.Modify(t.stock, *at));
          const std::string_view dist =
              UpdateStock(*s, in.quantity[k], in.supply_w != in.w, in.d);
          std::memcpy(out.dist_info[k], dist.data(),
                      std::min(dist.size(), sizeof(out.dist_info[k])));
        }
        return out;
      });
}

}  // namespace

absl::StatusOr<engine::ProcedureId> RegisterNewOrder(engine::Engine& engine,
                                                     const Tables& t) {
  auto stock_lines = RegisterStockLines(engine, t);
  if (!stock_lines.ok()) return stock_lines.status();
  return engine.RegisterProcedure(
      "tpcc_new_order",
      std::function<absl::StatusOr<NewOrderOutput>(txn::Txn&, NewOrderInput)>(
          [t, stock_lines = *stock_lines](
              txn::Txn& txn,
              const NewOrderInput& in) -> absl::StatusOr<NewOrderOutput> {
            NewOrderOutput out;
            const size_t lines = in.ol_cnt;
            // Partitioned mode: lines supplied by another compute node's
            // warehouse update their stock there (StockLinesIn).
            const txn::RemoteBranches* remote = txn.remote();
            std::array<bool, Scale::kMaxOrderLines> elsewhere{};
            std::array<size_t, Scale::kMaxOrderLines> all_lines{};
            std::array<size_t, Scale::kMaxOrderLines> here{};
            size_t here_count = 0;
            for (size_t i = 0; i < lines; ++i) {
              all_lines[i] = i;
              elsewhere[i] = remote != nullptr &&
                             remote->OwnerOf(in.supply_w[i]) != remote->self();
              if (!elsewhere[i]) here[here_count++] = i;
            }
            // The rows this transaction reads are independent and mostly
            // cold (the customer's, every line's item and stock), so they
            // are looked up and prefetched first, the lines' as two
            // batches: their cache misses overlap with each other and with
            // the work on the warehouse and district, instead of coming
            // one after another.
            TPCC_ASSIGN_OR_RETURN(
                const storage::TupleAddress ca,
                txn.Lookup(t.customer_pk, CustomerKey(in.w, in.d, in.c)));
            txn.Prefetch(t.customer, absl::MakeConstSpan(&ca, 1));
            using LineAddresses =
                std::array<storage::TupleAddress, Scale::kMaxOrderLines>;
            // The key of each line of `which` in `index` (key(i) builds
            // line i's) into `at`, as one batch.
            auto lookup_lines = [&](txn::IndexId index, auto key,
                                    absl::Span<const size_t> which,
                                    LineAddresses& at) {
              std::array<std::string, Scale::kMaxOrderLines> keys;
              std::array<std::string_view, Scale::kMaxOrderLines> views;
              LineAddresses found;
              for (size_t k = 0; k < which.size(); ++k) {
                keys[k] = key(which[k]);
                views[k] = keys[k];
              }
              absl::Status s = txn.LookupBatch(
                  index, absl::MakeConstSpan(views.data(), which.size()),
                  absl::MakeSpan(found.data(), which.size()));
              for (size_t k = 0; k < which.size(); ++k) {
                at[which[k]] = found[k];
              }
              return s;
            };
            LineAddresses item_at;
            LineAddresses stock_at;
            // An unused item id (null here) rolls the transaction back
            // only when its line is reached, below: clause 2.4.2.3 wants
            // every valid item processed first (its stock lookup, absent,
            // costs one more key in the batch).
            TPCC_RETURN_IF_ERROR(lookup_lines(
                t.item_pk, [&](size_t i) { return ItemKey(in.item[i]); },
                absl::MakeConstSpan(all_lines.data(), lines), item_at));
            TPCC_RETURN_IF_ERROR(lookup_lines(
                t.stock_pk,
                [&](size_t i) { return StockKey(in.supply_w[i], in.item[i]); },
                absl::MakeConstSpan(here.data(), here_count), stock_at));
            for (size_t i = 0; i < lines; ++i) {
              if (!elsewhere[i] && !item_at[i].is_null() &&
                  stock_at[i].is_null()) {
                return absl::NotFoundError(
                    absl::StrFormat("no stock row for item %d of warehouse %d",
                                    in.item[i], in.supply_w[i]));
              }
            }
            txn.Prefetch(t.item, absl::MakeConstSpan(item_at.data(), lines));
            txn.Prefetch(t.stock, absl::MakeConstSpan(stock_at.data(), lines));

            // The remote lines: one request per owner node, all at once.
            // Their line k of group g is line remote_line[g][k].
            std::array<StockLinesIn, Scale::kMaxOrderLines> groups;
            std::array<absl::StatusOr<StockLinesOut>, Scale::kMaxOrderLines>
                group_out;
            std::array<std::pair<int, int>, Scale::kMaxOrderLines> placed{};
            size_t group_count = 0;
            for (size_t i = 0; i < lines; ++i) {
              if (!elsewhere[i] || item_at[i].is_null()) continue;
              size_t g = 0;
              while (g < group_count && groups[g].supply_w != in.supply_w[i]) {
                ++g;
              }
              if (g == group_count) {
                groups[g] = StockLinesIn{};
                groups[g].w = in.w;
                groups[g].d = in.d;
                groups[g].supply_w = in.supply_w[i];
                ++group_count;
              }
              StockLinesIn& group = groups[g];
              placed[i] = {static_cast<int>(g), group.lines};
              group.item[group.lines] = in.item[i];
              group.quantity[group.lines] = in.quantity[i];
              ++group.lines;
            }
            if (group_count > 0) {
              partition::FragmentBatch batch(txn);
              for (size_t g = 0; g < group_count; ++g) {
                batch.Add(groups[g].supply_w, stock_lines, groups[g],
                          &group_out[g]);
              }
              TPCC_RETURN_IF_ERROR(batch.Run());
              for (size_t g = 0; g < group_count; ++g) {
                TPCC_RETURN_IF_ERROR(group_out[g].status());
              }
            }

            TPCC_ASSIGN_OR_RETURN(
                auto wa, txn.Lookup(t.warehouse_pk, WarehouseKey(in.w)));
            TPCC_ASSIGN_OR_RETURN(auto wr, txn.Read(t.warehouse, wa));
            const int64_t w_tax = wr.GetDecimal(warehouse::kTax);
            TPCC_ASSIGN_OR_RETURN(
                auto da, txn.Lookup(t.district_pk, DistrictKey(in.w, in.d)));
            TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * dr,
                                  txn.Modify(t.district, da));
            const int64_t d_tax = dr->view().GetDecimal(district::kTax);
            const int o_id = dr->view().GetInt(district::kNextOId);
            dr->SetInt(district::kNextOId, o_id + 1);
            TPCC_ASSIGN_OR_RETURN(auto cr, txn.Read(t.customer, ca));
            const int64_t discount = cr.GetDecimal(customer::kDiscount);

            for (int i = 0; i < in.ol_cnt; ++i) {
              out.all_local &= in.supply_w[i] == in.w;
            }
            storage::TupleBuffer o(*t.order_schema);
            o.SetInt(order::kId, o_id);
            o.SetInt(order::kDId, in.d);
            o.SetInt(order::kWId, in.w);
            o.SetInt(order::kCId, in.c);
            o.SetInt(order::kEntryD, in.entry_d);
            o.SetInt(order::kCarrierId, 0);
            o.SetInt(order::kOlCnt, in.ol_cnt);
            o.SetInt(order::kAllLocal, out.all_local ? 1 : 0);
            TPCC_ASSIGN_OR_RETURN(auto oa, txn.Insert(t.order, o));
            TPCC_RETURN_IF_ERROR(
                txn.AddIndexEntry(t.order_pk, OrderKey(in.w, in.d, o_id), oa));
            TPCC_RETURN_IF_ERROR(txn.AddIndexEntry(
                t.order_by_customer, OrderCustomerKey(in.w, in.d, in.c, o_id),
                oa));
            storage::TupleBuffer no(*t.new_order_schema);
            no.SetInt(new_order::kOId, o_id);
            no.SetInt(new_order::kDId, in.d);
            no.SetInt(new_order::kWId, in.w);
            TPCC_ASSIGN_OR_RETURN(auto noa, txn.Insert(t.new_order, no));
            TPCC_RETURN_IF_ERROR(txn.AddIndexEntry(
                t.new_order_pk, NewOrderKey(in.w, in.d, o_id), noa));

            storage::TupleBuffer ol(*t.order_line_schema);
            int64_t sum = 0;
            for (int i = 0; i < in.ol_cnt; ++i) {
              if (item_at[i].is_null()) {
                // Clause 2.4.2.3: everything before this line is done.
                return txn.UserAbort("unused item id");
              }
              TPCC_ASSIGN_OR_RETURN(auto ir, txn.Read(t.item, item_at[i]));
              const int64_t price = ir.GetDecimal(item::kPrice);
              const int qty = in.quantity[i];
              std::string_view dist_info;
              if (elsewhere[i]) {
                const auto [g, k] = placed[i];
                const char* info = group_out[g]->dist_info[k];
                dist_info =
                    std::string_view(info, strnlen(info, kDistInfoWidth));
              } else {
                TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * s,
                                      txn.Modify(t.stock, stock_at[i]));
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
              TPCC_ASSIGN_OR_RETURN(auto ola, txn.Insert(t.order_line, ol));
              TPCC_RETURN_IF_ERROR(txn.AddIndexEntry(
                  t.order_line_pk, OrderLineKey(in.w, in.d, o_id, i + 1), ola));
            }
            // total = sum * (1 - discount) * (1 + w_tax + d_tax), rates in
            // 10^-4 units.
            out.total_cents = static_cast<int64_t>(
                static_cast<double>(sum) * (10000 - discount) / 10000 *
                (10000 + w_tax + d_tax) / 10000);
            out.o_id = o_id;
            return out;
          }));
}

}  // namespace strand::tpcc
