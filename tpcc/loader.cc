#include "tpcc/loader.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/session.h"
#include "rdma/memory_node_layout.h"

namespace strand::tpcc {
namespace {

using storage::TupleBuffer;
using txn::Txn;

// A load procedure: (w, d, first, last, seed) -> rows written.
using LoadFn = std::function<absl::StatusOr<int64_t>(
    Txn&, int64_t, int64_t, int64_t, int64_t, int64_t)>;

constexpr int kItemsPerUnit = 1000;
constexpr int kStockPerUnit = 500;
constexpr int kCustomersPerUnit = 250;
constexpr int kOrdersPerUnit = 100;

uint64_t Mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ULL;
  for (uint64_t v : {a, b, c, d}) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

void SetAddress(TupleBuffer& t, size_t first, Random& r) {
  t.SetChars(first, r.AString(10, 20));
  t.SetChars(first + 1, r.AString(10, 20));
  t.SetChars(first + 2, r.AString(10, 20));
  t.SetChars(first + 3, r.AString(2, 2));
  t.SetChars(first + 4, r.Zip());
}

// Inserts `t` and adds one index entry.
absl::Status Put(Txn& txn, txn::TableId table, const TupleBuffer& t,
                 txn::IndexId index, const std::string& key,
                 storage::TupleAddress* out = nullptr) {
  auto a = txn.Insert(table, t);
  if (!a.ok()) return a.status();
  txn.AddIndexEntry(index, key, *a);
  if (out != nullptr) *out = *a;
  return absl::OkStatus();
}

#define STRAND_RETURN_IF_ERROR(expr) \
  do {                               \
    absl::Status s_ = (expr);        \
    if (!s_.ok()) return s_;         \
  } while (0)

}  // namespace

absl::StatusOr<std::unique_ptr<Loader>> Loader::Register(
    engine::Engine& engine, const Tables& tables, const Scale& scale,
    const NURandConstants& constants, int32_t load_time) {
  if (scale.districts < 1 || scale.districts > kMaxDistricts ||
      scale.customers < 1 || scale.customers > kMaxCustomers ||
      scale.items < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "scale of %d districts, %d customers, %d items: the schema holds 1 "
        "to %d districts per warehouse and 1 to %d customers per district",
        scale.districts, scale.customers, scale.items, kMaxDistricts,
        kMaxCustomers));
  }
  std::unique_ptr<Loader> loader(new Loader(engine, scale));
  absl::Status status;
  loader->RegisterProcedures(tables, constants, load_time, &status);
  if (!status.ok()) return status;
  return loader;
}

void Loader::RegisterProcedures(const Tables& t, const NURandConstants& nc,
                                int32_t now, absl::Status* status) {
  const Scale scale = scale_;
  auto reg = [&](const char* name, LoadFn fn, engine::ProcedureId* id) {
    if (!status->ok()) return;
    auto r = engine_.RegisterProcedure(name, std::move(fn));
    if (!r.ok()) {
      *status = r.status();
    } else {
      *id = *r;
    }
  };
  reg(
      "tpcc_load_items",
      [t](Txn& txn, int64_t, int64_t, int64_t first, int64_t last,
          int64_t seed) -> absl::StatusOr<int64_t> {
        Random r(seed);
        TupleBuffer row(*t.item_schema);
        for (int64_t i = first; i <= last; ++i) {
          row.SetInt(item::kId, i);
          row.SetInt(item::kImId, r.Uniform(1, 10000));
          row.SetChars(item::kName, r.AString(14, 24));
          row.SetDecimal(item::kPrice, r.Uniform(100, 10000));
          row.SetChars(item::kData, r.DataWithOriginal(26, 50));
          STRAND_RETURN_IF_ERROR(Put(txn, t.item, row, t.item_pk, ItemKey(i)));
        }
        return last - first + 1;
      },
      &items_);
  reg(
      "tpcc_load_warehouse",
      [t, scale](Txn& txn, int64_t w, int64_t, int64_t, int64_t,
                 int64_t seed) -> absl::StatusOr<int64_t> {
        Random r(seed);
        TupleBuffer wh(*t.warehouse_schema);
        wh.SetInt(warehouse::kId, w);
        wh.SetChars(warehouse::kName, r.AString(6, 10));
        SetAddress(wh, warehouse::kStreet1, r);
        wh.SetDecimal(warehouse::kTax, r.Uniform(0, 2000));
        wh.SetDecimal(warehouse::kYtd, 30000000);
        STRAND_RETURN_IF_ERROR(
            Put(txn, t.warehouse, wh, t.warehouse_pk, WarehouseKey(w)));
        TupleBuffer d(*t.district_schema);
        for (int i = 1; i <= scale.districts; ++i) {
          d.SetInt(district::kId, i);
          d.SetInt(district::kWId, w);
          d.SetChars(district::kName, r.AString(6, 10));
          SetAddress(d, district::kStreet1, r);
          d.SetDecimal(district::kTax, r.Uniform(0, 2000));
          d.SetDecimal(district::kYtd, 3000000);
          d.SetInt(district::kNextOId, scale.customers + 1);
          STRAND_RETURN_IF_ERROR(
              Put(txn, t.district, d, t.district_pk, DistrictKey(w, i)));
        }
        return 1 + scale.districts;
      },
      &warehouse_);
  reg(
      "tpcc_load_stock",
      [t](Txn& txn, int64_t w, int64_t, int64_t first, int64_t last,
          int64_t seed) -> absl::StatusOr<int64_t> {
        Random r(seed);
        TupleBuffer s(*t.stock_schema);
        for (int64_t i = first; i <= last; ++i) {
          s.SetInt(stock::kIId, i);
          s.SetInt(stock::kWId, w);
          s.SetInt(stock::kQuantity, r.Uniform(10, 100));
          for (int k = 0; k < 10; ++k) {
            s.SetChars(stock::kDist01 + k, r.AString(24, 24));
          }
          s.SetInt(stock::kYtd, 0);
          s.SetInt(stock::kOrderCnt, 0);
          s.SetInt(stock::kRemoteCnt, 0);
          s.SetChars(stock::kData, r.DataWithOriginal(26, 50));
          STRAND_RETURN_IF_ERROR(
              Put(txn, t.stock, s, t.stock_pk, StockKey(w, i)));
        }
        return last - first + 1;
      },
      &stock_);
  reg(
      "tpcc_load_customers",
      [t, nc, now](Txn& txn, int64_t w, int64_t d, int64_t first, int64_t last,
                   int64_t seed) -> absl::StatusOr<int64_t> {
        Random r(seed, nc);
        TupleBuffer c(*t.customer_schema);
        TupleBuffer h(*t.history_schema);
        for (int64_t id = first; id <= last; ++id) {
          const std::string last_name =
              LastName(id <= 1000 ? id - 1 : r.NURand(255, 0, 999));
          const std::string first_name = r.AString(8, 16);
          c.SetInt(customer::kId, id);
          c.SetInt(customer::kDId, d);
          c.SetInt(customer::kWId, w);
          c.SetChars(customer::kFirst, first_name);
          c.SetChars(customer::kMiddle, "OE");
          c.SetChars(customer::kLast, last_name);
          SetAddress(c, customer::kStreet1, r);
          c.SetChars(customer::kPhone, r.NString(16, 16));
          c.SetInt(customer::kSince, now);
          c.SetChars(customer::kCredit, r.Percent(10) ? "BC" : "GC");
          c.SetDecimal(customer::kCreditLim, 5000000);
          c.SetDecimal(customer::kDiscount, r.Uniform(0, 5000));
          c.SetDecimal(customer::kBalance, -1000);
          c.SetDecimal(customer::kYtdPayment, 1000);
          c.SetInt(customer::kPaymentCnt, 1);
          c.SetInt(customer::kDeliveryCnt, 0);
          c.SetChars(customer::kData, r.AString(300, 500));
          storage::TupleAddress a;
          STRAND_RETURN_IF_ERROR(Put(txn, t.customer, c, t.customer_pk,
                                     CustomerKey(w, d, id), &a));
          txn.AddIndexEntry(t.customer_by_name,
                            CustomerNameKey(w, d, last_name, first_name, id),
                            a);
          h.SetInt(history::kCId, id);
          h.SetInt(history::kCDId, d);
          h.SetInt(history::kCWId, w);
          h.SetInt(history::kDId, d);
          h.SetInt(history::kWId, w);
          h.SetInt(history::kDate, now);
          h.SetDecimal(history::kAmount, 1000);
          h.SetChars(history::kData, r.AString(12, 24));
          auto ha = txn.Insert(t.history, h);
          if (!ha.ok()) return ha.status();
        }
        return 2 * (last - first + 1);
      },
      &customers_);
  reg(
      "tpcc_load_orders",
      [t, scale, now](Txn& txn, int64_t w, int64_t d, int64_t first,
                      int64_t last, int64_t seed) -> absl::StatusOr<int64_t> {
        // O_C_ID is a random permutation of the customers, the same for
        // every unit of this district (seeded by the district alone).
        std::vector<int> perm(scale.customers);
        std::iota(perm.begin(), perm.end(), 1);
        std::mt19937_64 prng(Mix(seed, 0x5eed, w, d, 0));
        std::shuffle(perm.begin(), perm.end(), prng);
        Random r(Mix(seed, w, d, first, 1));
        const int first_new = scale.customers - scale.new_orders() + 1;
        TupleBuffer o(*t.order_schema);
        TupleBuffer ol(*t.order_line_schema);
        TupleBuffer no(*t.new_order_schema);
        int64_t rows = 0;
        for (int64_t id = first; id <= last; ++id) {
          const bool delivered = id < first_new;
          const int c = perm[id - 1];
          const int lines = r.Uniform(5, 15);
          o.SetInt(order::kId, id);
          o.SetInt(order::kDId, d);
          o.SetInt(order::kWId, w);
          o.SetInt(order::kCId, c);
          o.SetInt(order::kEntryD, now);
          o.SetInt(order::kCarrierId, delivered ? r.Uniform(1, 10) : 0);
          o.SetInt(order::kOlCnt, lines);
          o.SetInt(order::kAllLocal, 1);
          storage::TupleAddress a;
          STRAND_RETURN_IF_ERROR(
              Put(txn, t.order, o, t.order_pk, OrderKey(w, d, id), &a));
          txn.AddIndexEntry(t.order_by_customer, OrderCustomerKey(w, d, c, id),
                            a);
          for (int n = 1; n <= lines; ++n) {
            ol.SetInt(order_line::kOId, id);
            ol.SetInt(order_line::kDId, d);
            ol.SetInt(order_line::kWId, w);
            ol.SetInt(order_line::kNumber, n);
            ol.SetInt(order_line::kIId, r.Uniform(1, scale.items));
            ol.SetInt(order_line::kSupplyWId, w);
            ol.SetInt(order_line::kDeliveryD, delivered ? now : 0);
            ol.SetInt(order_line::kQuantity, 5);
            ol.SetDecimal(order_line::kAmount,
                          delivered ? 0 : r.Uniform(1, 999999));
            ol.SetChars(order_line::kDistInfo, r.AString(24, 24));
            STRAND_RETURN_IF_ERROR(Put(txn, t.order_line, ol, t.order_line_pk,
                                       OrderLineKey(w, d, id, n)));
          }
          rows += 1 + lines;
          if (!delivered) {
            no.SetInt(new_order::kOId, id);
            no.SetInt(new_order::kDId, d);
            no.SetInt(new_order::kWId, w);
            STRAND_RETURN_IF_ERROR(Put(txn, t.new_order, no, t.new_order_pk,
                                       NewOrderKey(w, d, id)));
            ++rows;
          }
        }
        return rows;
      },
      &orders_);
}

absl::StatusOr<LoadResult> Loader::Load(int warehouses, int threads_per_node,
                                        uint64_t seed, bool progress) {
  if (warehouses < 1 || warehouses > kMaxWarehouses) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot load %d warehouses: the schema holds 1 to %d",
                        warehouses, kMaxWarehouses));
  }
  struct Unit {
    engine::ProcedureId proc;
    int64_t w, d, first, last;
  };
  std::vector<Unit> units;
  for (int i = 1; i <= scale_.items; i += kItemsPerUnit) {
    units.push_back(
        {items_, 0, 0, i, std::min(i + kItemsPerUnit - 1, scale_.items)});
  }
  for (int w = 1; w <= warehouses; ++w) {
    units.push_back({warehouse_, w, 0, 0, 0});
    for (int i = 1; i <= scale_.items; i += kStockPerUnit) {
      units.push_back(
          {stock_, w, 0, i, std::min(i + kStockPerUnit - 1, scale_.items)});
    }
    for (int d = 1; d <= scale_.districts; ++d) {
      for (int c = 1; c <= scale_.customers; c += kCustomersPerUnit) {
        units.push_back(
            {customers_, w, d, c,
             std::min(c + kCustomersPerUnit - 1, scale_.customers)});
      }
      for (int o = 1; o <= scale_.customers; o += kOrdersPerUnit) {
        units.push_back({orders_, w, d, o,
                         std::min(o + kOrdersPerUnit - 1, scale_.customers)});
      }
    }
  }

  LoadResult result;
  const absl::Time start = absl::Now();
  std::atomic<size_t> next{0}, done{0};
  std::atomic<uint64_t> rows{0};
  absl::Mutex mu;
  absl::Status first_error;
  std::vector<std::thread> threads;
  for (rdma::ComputeNodeId node : engine_.local_compute_nodes()) {
    for (int i = 0; i < threads_per_node; ++i) {
      threads.emplace_back([&, node] {
        auto session = engine_.NewSession(node);
        if (!session.ok()) {
          absl::MutexLock l(&mu);
          if (first_error.ok()) first_error = session.status();
          next = units.size();
          return;
        }
        for (size_t u = next++; u < units.size(); u = next++) {
          const Unit& unit = units[u];
          auto r = (*session)->Call<int64_t>(
              unit.proc, unit.w, unit.d, unit.first, unit.last,
              static_cast<int64_t>(
                  Mix(seed, unit.proc, unit.w, unit.d, unit.first)));
          if (!r.ok()) {
            absl::MutexLock l(&mu);
            if (first_error.ok()) first_error = r.status();
            next = units.size();
            return;
          }
          rows += *r;
          ++done;
        }
      });
    }
  }
  const bool tty = progress && isatty(STDERR_FILENO);
  while (tty && done.load() < units.size() && next.load() < units.size()) {
    absl::SleepFor(absl::Milliseconds(250));
    std::fprintf(stderr,
                 "\rloading %d warehouses: %zu/%zu units (%.0f%%) %.1fs",
                 warehouses, done.load(), units.size(),
                 100.0 * done.load() / units.size(),
                 absl::ToDoubleSeconds(absl::Now() - start));
  }
  for (auto& th : threads) th.join();
  if (tty) std::fprintf(stderr, "\r%70s\r", "");
  if (!first_error.ok()) {
    return absl::Status(
        first_error.code(),
        absl::StrCat("loading failed: ", first_error.message()));
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  result.rows = rows.load();
  result.transactions = units.size();
  auto after = PoolBytesTaken(engine_);
  if (!after.ok()) return after.status();
  result.pool_bytes_used = *after;
  return result;
}

absl::StatusOr<uint64_t> PoolBytesTaken(engine::Engine& engine) {
  rdma::Fabric& fabric = engine.fabric();
  auto node = fabric.compute_node(engine.local_compute_nodes().front());
  if (!node.ok()) return node.status();
  auto ep = (*node)->NewEndpoint();
  if (!ep.ok()) return ep.status();
  uint64_t total = 0;
  for (int m = 0; m < fabric.memory_node_count(); ++m) {
    uint64_t next = 0;
    absl::Status s = (*ep)->Read(
        rdma::GlobalAddress(m, rdma::kNextChunkWordOffset), &next, 8);
    if (!s.ok()) return s;
    next = std::min(next, fabric.memory_node_bytes());
    if (next > rdma::kFirstChunkOffset) total += next - rdma::kFirstChunkOffset;
  }
  return total;
}

}  // namespace strand::tpcc
