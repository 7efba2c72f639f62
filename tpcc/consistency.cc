#include "tpcc/consistency.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "storage/catalog.h"
#include "storage/heap_table.h"

namespace strand::tpcc {
namespace {

struct DistrictFacts {
  int64_t ytd = 0;
  int next_o_id = 0;
  bool seen = false;
  int max_o_id = 0;
  int64_t sum_ol_cnt = 0;
  int64_t order_lines = 0;
  int64_t new_orders = 0;
  int min_no = INT_MAX;
  int max_no = 0;
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

}  // namespace

std::string ConsistencyResult::ToString() const {
  static constexpr const char* kNames[4] = {
      "1 W_YTD = sum(D_YTD)", "2 D_NEXT_O_ID-1 = max(O_ID) = max(NO_O_ID)",
      "3 NEW-ORDER count = max-min+1", "4 sum(O_OL_CNT) = ORDER-LINE rows"};
  std::string s;
  for (int i = 0; i < 4; ++i) {
    absl::StrAppendFormat(&s, "  condition %-44s %s (%d checked, %d failed)\n",
                          kNames[i], violations[i] == 0 ? "ok" : "FAILED",
                          checked[i], violations[i]);
  }
  for (const std::string& m : messages) absl::StrAppend(&s, "    ", m, "\n");
  return s;
}

absl::StatusOr<CatalogReader> CatalogReader::Open(engine::Engine& engine) {
  auto manager = engine.manager(engine.local_compute_nodes().front());
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
  auto reader = CatalogReader::Open(engine);
  if (!reader.ok()) return reader.status();
  cc::GclManager& m = *reader->manager;
  cc::ThreadContext& ctx = *reader->ctx;
  storage::Catalog& catalog = *reader->catalog;

  const int D = scale.districts;
  std::vector<int64_t> w_ytd(warehouses + 1, 0);
  std::vector<bool> w_seen(warehouses + 1, false);
  std::vector<DistrictFacts> dist((warehouses + 1) * (D + 1));
  auto at = [&](int64_t w, int64_t d) -> DistrictFacts* {
    if (w < 1 || w > warehouses || d < 1 || d > D) return nullptr;
    return &dist[w * (D + 1) + d];
  };
  ConsistencyResult result;
  auto fail = [&](int condition, std::string message) {
    result.violations[condition]++;
    if (result.messages.size() < 10) result.messages.push_back(message);
  };
  int64_t stray = 0;  // rows of warehouses or districts out of range
  absl::Status s =
      ScanTable(m, ctx, catalog, "warehouse", [&](const storage::TupleView& v) {
        const int64_t w = v.GetInt(warehouse::kId);
        if (w < 1 || w > warehouses) return void(++stray);
        w_ytd[w] = v.GetDecimal(warehouse::kYtd);
        w_seen[w] = true;
      });
  if (s.ok()) {
    s = ScanTable(m, ctx, catalog, "district",
                  [&](const storage::TupleView& v) {
                    DistrictFacts* f =
                        at(v.GetInt(district::kWId), v.GetInt(district::kId));
                    if (f == nullptr) return void(++stray);
                    f->ytd = v.GetDecimal(district::kYtd);
                    f->next_o_id = v.GetInt(district::kNextOId);
                    f->seen = true;
                  });
  }
  if (s.ok()) {
    s = ScanTable(m, ctx, catalog, "order", [&](const storage::TupleView& v) {
      DistrictFacts* f = at(v.GetInt(order::kWId), v.GetInt(order::kDId));
      if (f == nullptr) return void(++stray);
      f->max_o_id = std::max<int>(f->max_o_id, v.GetInt(order::kId));
      f->sum_ol_cnt += v.GetInt(order::kOlCnt);
    });
  }
  if (s.ok()) {
    s = ScanTable(
        m, ctx, catalog, "new_order", [&](const storage::TupleView& v) {
          DistrictFacts* f =
              at(v.GetInt(new_order::kWId), v.GetInt(new_order::kDId));
          if (f == nullptr) return void(++stray);
          const int o = v.GetInt(new_order::kOId);
          f->new_orders++;
          f->min_no = std::min(f->min_no, o);
          f->max_no = std::max(f->max_no, o);
        });
  }
  if (s.ok()) {
    s = ScanTable(
        m, ctx, catalog, "order_line", [&](const storage::TupleView& v) {
          DistrictFacts* f =
              at(v.GetInt(order_line::kWId), v.GetInt(order_line::kDId));
          if (f == nullptr) return void(++stray);
          f->order_lines++;
        });
  }
  if (!s.ok()) return s;
  if (stray > 0) {
    fail(0, absl::StrCat(stray,
                         " rows name a warehouse or district out of "
                         "range"));
  }

  for (int w = 1; w <= warehouses; ++w) {
    int64_t sum = 0;
    for (int d = 1; d <= D; ++d) sum += at(w, d)->ytd;
    result.checked[0]++;
    if (!w_seen[w] || w_ytd[w] != sum) {
      fail(0, absl::StrFormat("warehouse %d: W_YTD %d != sum(D_YTD) %d", w,
                              w_ytd[w], sum));
    }
    for (int d = 1; d <= D; ++d) {
      const DistrictFacts& f = *at(w, d);
      for (int c = 1; c < 4; ++c) result.checked[c]++;
      if (!f.seen || f.next_o_id - 1 != f.max_o_id ||
          (f.new_orders > 0 && f.max_no != f.max_o_id)) {
        fail(1,
             absl::StrFormat("district %d/%d: D_NEXT_O_ID-1 %d, max(O_ID) %d, "
                             "max(NO_O_ID) %d",
                             w, d, f.next_o_id - 1, f.max_o_id, f.max_no));
      }
      if (f.new_orders > 0 && f.new_orders != f.max_no - f.min_no + 1) {
        fail(2, absl::StrFormat(
                    "district %d/%d: %d NEW-ORDER rows, max-min+1 = %d", w, d,
                    f.new_orders, f.max_no - f.min_no + 1));
      }
      if (f.sum_ol_cnt != f.order_lines) {
        fail(3, absl::StrFormat(
                    "district %d/%d: sum(O_OL_CNT) %d != %d ORDER-LINE rows", w,
                    d, f.sum_ol_cnt, f.order_lines));
      }
    }
  }
  return result;
}

}  // namespace strand::tpcc
