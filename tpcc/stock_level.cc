#include "tpcc/stock_level.h"

#include <algorithm>
#include <vector>

#include "tpcc/procedure_util.h"

namespace strand::tpcc {

StockLevelInput MakeStockLevelInput(Random& r, int w, int d) {
  return {w, d, static_cast<int>(r.Uniform(10, 20))};
}

absl::StatusOr<engine::ProcedureId> RegisterStockLevel(engine::Engine& engine,
                                                       const Tables& t) {
  return engine.RegisterProcedure(
      "tpcc_stock_level",
      std::function<absl::StatusOr<StockLevelOutput>(txn::Txn&,
                                                     StockLevelInput)>(
          [t](txn::Txn& txn,
              const StockLevelInput& in) -> absl::StatusOr<StockLevelOutput> {
            StockLevelOutput out;
            STRAND_ASSIGN_OR_RETURN(
                auto da, txn.Lookup(t.district_pk, DistrictKey(in.w, in.d)));
            STRAND_ASSIGN_OR_RETURN(auto dr, txn.Read(t.district, da));
            const int next = dr.GetInt(district::kNextOId);
            std::vector<storage::TupleAddress> lines;
            STRAND_RETURN_IF_ERROR(
                txn.Scan(t.order_line_pk,
                         OrderLineKey(in.w, in.d, std::max(next - 20, 0), 0),
                         OrderLineKey(in.w, in.d, next - 1, 255),
                         /*forward=*/true, 20 * Scale::kMaxOrderLines,
                         [&](std::string_view, storage::TupleAddress a) {
                           lines.push_back(a);
                           return true;
                         }));
            std::vector<int> items;
            items.reserve(lines.size());
            for (storage::TupleAddress a : lines) {
              auto ol = txn.Read(t.order_line, a);
              if (absl::IsNotFound(ol.status())) continue;  // rolled back
              if (!ol.ok()) return ol.status();
              items.push_back(ol->GetInt(order_line::kIId));
            }
            std::sort(items.begin(), items.end());
            items.erase(std::unique(items.begin(), items.end()), items.end());
            out.distinct_items = items.size();
            for (int i : items) {
              STRAND_ASSIGN_OR_RETURN(
                  auto sa, txn.Lookup(t.stock_pk, StockKey(in.w, i)));
              STRAND_ASSIGN_OR_RETURN(auto s, txn.Read(t.stock, sa));
              out.low_stock += s.GetInt(stock::kQuantity) < in.threshold;
            }
            return out;
          }));
}

}  // namespace strand::tpcc
