#include "tpcc/loader.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "engine/engine_internals.h"
#include "engine/session.h"
#include "partition/partition_map.h"
#include "rdma/memory_node_layout.h"

namespace strand::tpcc {
namespace {

using storage::TupleBuffer;
using txn::Txn;

// Every customer's one payment at the load (clause 4.3.3.1: H_AMOUNT 10.00,
// C_YTD_PAYMENT 10.00, C_BALANCE -10.00).
constexpr int64_t kLoadPaymentCents = 1000;

// A load procedure: (w, d, first, last, seed) -> rows written.
using LoadFn = std::function<absl::StatusOr<int64_t>(
    Txn&, int64_t, int64_t, int64_t, int64_t, int64_t)>;

constexpr int kItemsPerUnit = 1000;
constexpr int kStockPerUnit = 500;
constexpr int kCustomersPerUnit = 250;
constexpr int kOrdersPerUnit = 100;
// Entries of a secondary index per transaction of the index phase.
constexpr int kIndexEntriesPerUnit = 500;

uint64_t MixSeed(uint64_t seed, uint64_t a, uint64_t b, uint64_t c,
                 uint64_t d) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ULL;
  for (uint64_t v : {a, b, c, d}) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

// The seed of everything loaded for district (w, d): its customers, its
// orders and their secondary index entries, so the index phase can recompute
// what the row units drew (names, the O_C_ID permutation).
uint64_t DistrictSeed(uint64_t seed, int64_t w, int64_t d) {
  return MixSeed(seed, 0xd157c7, w, d, 0);
}

struct CustomerName {
  std::string last, first;
};

// C_LAST and C_FIRST of customer `id`, from a stream of their own.
CustomerName NameOf(uint64_t district_seed, const NURandConstants& nc,
                    int64_t id) {
  Random r(MixSeed(district_seed, 0x4e414d45, id, 0, 0), nc);
  std::string last = LastName(id <= 1000 ? id - 1 : r.NURand(255, 0, 999));
  return {std::move(last), r.AString(8, 16)};
}

// O_C_ID of orders 1..customers (index o - 1): a random permutation of the
// customers (clause 4.3.3.1), the same for every unit of the district.
std::vector<int> CustomerOfOrder(uint64_t district_seed, int64_t w, int64_t d,
                                 int customers) {
  std::vector<int> perm(customers);
  std::iota(perm.begin(), perm.end(), 1);
  std::mt19937_64 prng(MixSeed(district_seed, 0x5eed, w, d, 0));
  std::shuffle(perm.begin(), perm.end(), prng);
  return perm;
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
  STRAND_ASSIGN_OR_RETURN(const storage::TupleAddress a, txn.Insert(table, t));
  STRAND_RETURN_IF_ERROR(txn.AddIndexEntry(index, key, a));
  if (out != nullptr) *out = a;
  return absl::OkStatus();
}

// What the load procedures read besides their arguments.
struct LoadContext {
  Tables tables;
  Scale scale;
  NURandConstants nc;
  int32_t now;  // the load's time (C_SINCE, O_ENTRY_D, H_DATE)
};

// A load procedure's body: (w, d, first, last, seed) -> rows written.
using LoadBody = absl::StatusOr<int64_t> (*)(const LoadContext&, Txn&, int64_t,
                                             int64_t, int64_t, int64_t,
                                             int64_t);

// ITEM rows first..last (clause 4.3.3.1).
absl::StatusOr<int64_t> LoadItems(const LoadContext& context, Txn& txn,
                                  int64_t /*w*/, int64_t /*d*/, int64_t first,
                                  int64_t last, int64_t seed) {
  const Tables& t = context.tables;
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
}

// Warehouse w and its districts.
absl::StatusOr<int64_t> LoadWarehouse(const LoadContext& context, Txn& txn,
                                      int64_t w, int64_t /*d*/,
                                      int64_t /*first*/, int64_t /*last*/,
                                      int64_t seed) {
  const Tables& t = context.tables;
  const Scale& scale = context.scale;
  Random r(seed);
  TupleBuffer wh(*t.warehouse_schema);
  wh.SetInt(warehouse::kId, w);
  wh.SetChars(warehouse::kName, r.AString(6, 10));
  SetAddress(wh, warehouse::kStreet1, r);
  wh.SetDecimal(warehouse::kTax, r.Uniform(0, 2000));
  // W_YTD and D_YTD are the sums of the load's HISTORY rows (one of
  // 10.00 per customer), as consistency conditions 8 and 9 demand:
  // 300,000.00 and 30,000.00 at the specification's scale (4.3.3.1),
  // less in a scaled-down load.
  wh.SetDecimal(warehouse::kYtd,
                kLoadPaymentCents * scale.districts * scale.customers);
  STRAND_RETURN_IF_ERROR(
      Put(txn, t.warehouse, wh, t.warehouse_pk, WarehouseKey(w)));
  TupleBuffer d(*t.district_schema);
  for (int i = 1; i <= scale.districts; ++i) {
    d.SetInt(district::kId, i);
    d.SetInt(district::kWId, w);
    d.SetChars(district::kName, r.AString(6, 10));
    SetAddress(d, district::kStreet1, r);
    d.SetDecimal(district::kTax, r.Uniform(0, 2000));
    d.SetDecimal(district::kYtd, kLoadPaymentCents * scale.customers);
    d.SetInt(district::kNextOId, scale.customers + 1);
    STRAND_RETURN_IF_ERROR(
        Put(txn, t.district, d, t.district_pk, DistrictKey(w, i)));
  }
  return 1 + scale.districts;
}

// Warehouse w's STOCK rows of items first..last.
absl::StatusOr<int64_t> LoadStock(const LoadContext& context, Txn& txn,
                                  int64_t w, int64_t /*d*/, int64_t first,
                                  int64_t last, int64_t seed) {
  const Tables& t = context.tables;
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
    STRAND_RETURN_IF_ERROR(Put(txn, t.stock, s, t.stock_pk, StockKey(w, i)));
  }
  return last - first + 1;
}

// District (w, d)'s customers first..last, each with its HISTORY row.
absl::StatusOr<int64_t> LoadCustomers(const LoadContext& context, Txn& txn,
                                      int64_t w, int64_t d, int64_t first,
                                      int64_t last, int64_t seed) {
  const Tables& t = context.tables;
  const NURandConstants& nc = context.nc;
  const int32_t now = context.now;
  Random r(MixSeed(seed, w, d, first, 2), nc);
  TupleBuffer c(*t.customer_schema);
  TupleBuffer h(*t.history_schema);
  for (int64_t id = first; id <= last; ++id) {
    const CustomerName name = NameOf(seed, nc, id);
    c.SetInt(customer::kId, id);
    c.SetInt(customer::kDId, d);
    c.SetInt(customer::kWId, w);
    c.SetChars(customer::kFirst, name.first);
    c.SetChars(customer::kMiddle, "OE");
    c.SetChars(customer::kLast, name.last);
    SetAddress(c, customer::kStreet1, r);
    c.SetChars(customer::kPhone, r.NString(16, 16));
    c.SetInt(customer::kSince, now);
    c.SetChars(customer::kCredit, r.Percent(10) ? "BC" : "GC");
    c.SetDecimal(customer::kCreditLim, 5000000);
    c.SetDecimal(customer::kDiscount, r.Uniform(0, 5000));
    c.SetDecimal(customer::kBalance, -kLoadPaymentCents);
    c.SetDecimal(customer::kYtdPayment, kLoadPaymentCents);
    c.SetInt(customer::kPaymentCnt, 1);
    c.SetInt(customer::kDeliveryCnt, 0);
    c.SetChars(customer::kData, r.AString(300, 500));
    // customer_by_name: in the index phase (tpcc_load_customer_names).
    STRAND_RETURN_IF_ERROR(
        Put(txn, t.customer, c, t.customer_pk, CustomerKey(w, d, id)));
    h.SetInt(history::kCId, id);
    h.SetInt(history::kCDId, d);
    h.SetInt(history::kCWId, w);
    h.SetInt(history::kDId, d);
    h.SetInt(history::kWId, w);
    h.SetInt(history::kDate, now);
    h.SetDecimal(history::kAmount, kLoadPaymentCents);
    h.SetChars(history::kData, r.AString(12, 24));
    auto ha = txn.Insert(t.history, h);
    if (!ha.ok()) return ha.status();
  }
  return 2 * (last - first + 1);
}

// District (w, d)'s orders first..last with their lines, the newest
// (clause 4.3.3.1's last 900 of 3000) with a NEW-ORDER row.
absl::StatusOr<int64_t> LoadOrders(const LoadContext& context, Txn& txn,
                                   int64_t w, int64_t d, int64_t first,
                                   int64_t last, int64_t seed) {
  const Tables& t = context.tables;
  const Scale& scale = context.scale;
  const int32_t now = context.now;
  const std::vector<int> perm = CustomerOfOrder(seed, w, d, scale.customers);
  Random r(MixSeed(seed, w, d, first, 1));
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
    // order_by_customer: in the index phase (tpcc_load_order_customers).
    STRAND_RETURN_IF_ERROR(
        Put(txn, t.order, o, t.order_pk, OrderKey(w, d, id)));
    for (int n = 1; n <= lines; ++n) {
      ol.SetInt(order_line::kOId, id);
      ol.SetInt(order_line::kDId, d);
      ol.SetInt(order_line::kWId, w);
      ol.SetInt(order_line::kNumber, n);
      ol.SetInt(order_line::kIId, r.Uniform(1, scale.items));
      ol.SetInt(order_line::kSupplyWId, w);
      ol.SetInt(order_line::kDeliveryD, delivered ? now : 0);
      ol.SetInt(order_line::kQuantity, 5);
      ol.SetDecimal(order_line::kAmount, delivered ? 0 : r.Uniform(1, 999999));
      ol.SetChars(order_line::kDistInfo, r.AString(24, 24));
      STRAND_RETURN_IF_ERROR(Put(txn, t.order_line, ol, t.order_line_pk,
                                 OrderLineKey(w, d, id, n)));
    }
    rows += 1 + lines;
    if (!delivered) {
      no.SetInt(new_order::kOId, id);
      no.SetInt(new_order::kDId, d);
      no.SetInt(new_order::kWId, w);
      STRAND_RETURN_IF_ERROR(
          Put(txn, t.new_order, no, t.new_order_pk, NewOrderKey(w, d, id)));
      ++rows;
    }
  }
  return rows;
}

// The index phase: the entries of the two secondary indexes, whose keys
// come in random order as rows are loaded, inserted per district in
// ascending key order instead (entries of ranks first..last, 1-based), so
// the B-link tree's split at the insertion point leaves full leaves (about
// 70% full in load order). The rows exist by now: their addresses come
// from the primary keys.
//
// District (w, d)'s customer_by_name entries.
absl::StatusOr<int64_t> LoadCustomerNames(const LoadContext& context, Txn& txn,
                                          int64_t w, int64_t d, int64_t first,
                                          int64_t last, int64_t seed) {
  const Tables& t = context.tables;
  const Scale& scale = context.scale;
  const NURandConstants& nc = context.nc;
  std::vector<std::pair<std::string, int>> keys;
  keys.reserve(scale.customers);
  for (int id = 1; id <= scale.customers; ++id) {
    const CustomerName name = NameOf(seed, nc, id);
    keys.emplace_back(CustomerNameKey(w, d, name.last, name.first, id), id);
  }
  std::sort(keys.begin(), keys.end());
  for (int64_t rank = first; rank <= last; ++rank) {
    const auto& [key, id] = keys[rank - 1];
    auto a = txn.Lookup(t.customer_pk, CustomerKey(w, d, id));
    if (!a.ok()) return a.status();
    STRAND_RETURN_IF_ERROR(txn.AddIndexEntry(t.customer_by_name, key, *a));
  }
  return int64_t{0};  // entries, not rows
}

// District (w, d)'s order_by_customer entries.
absl::StatusOr<int64_t> LoadOrderCustomers(const LoadContext& context, Txn& txn,
                                           int64_t w, int64_t d, int64_t first,
                                           int64_t last, int64_t seed) {
  const Tables& t = context.tables;
  const Scale& scale = context.scale;
  // Keys (w, d, c, o) ascend with c: one order per customer.
  const std::vector<int> perm = CustomerOfOrder(seed, w, d, scale.customers);
  std::vector<int> order_of(scale.customers + 1);
  for (int o = 1; o <= scale.customers; ++o) order_of[perm[o - 1]] = o;
  for (int64_t c = first; c <= last; ++c) {
    const int o = order_of[c];
    auto a = txn.Lookup(t.order_pk, OrderKey(w, d, o));
    if (!a.ok()) return a.status();
    STRAND_RETURN_IF_ERROR(txn.AddIndexEntry(t.order_by_customer,
                                             OrderCustomerKey(w, d, c, o), *a));
  }
  return int64_t{0};
}

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
  const LoadContext context{t, scale_, nc, now};
  auto reg = [&](const char* name, LoadBody body, engine::ProcedureId* id) {
    if (!status->ok()) return;
    auto r = engine_.RegisterProcedure(
        name,
        LoadFn([context, body](Txn& txn, int64_t w, int64_t d, int64_t first,
                               int64_t last, int64_t seed) {
          return body(context, txn, w, d, first, last, seed);
        }));
    if (!r.ok()) {
      *status = r.status();
    } else {
      *id = *r;
    }
  };
  reg("tpcc_load_items", &LoadItems, &items_);
  reg("tpcc_load_warehouse", &LoadWarehouse, &warehouse_);
  reg("tpcc_load_stock", &LoadStock, &stock_);
  reg("tpcc_load_customers", &LoadCustomers, &customers_);
  reg("tpcc_load_orders", &LoadOrders, &orders_);
  reg("tpcc_load_customer_names", &LoadCustomerNames, &customer_names_);
  reg("tpcc_load_order_customers", &LoadOrderCustomers, &order_customers_);
}

absl::StatusOr<LoadResult> Loader::Load(int warehouses, int threads_per_node,
                                        uint64_t seed, bool show_progress) {
  if (warehouses < 1 || warehouses > kMaxWarehouses) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot load %d warehouses: the schema holds 1 to %d",
                        warehouses, kMaxWarehouses));
  }
  // Phase 1 loads the rows and their primary keys, phase 2 the two
  // secondary indexes (whose units need the rows). A task is a list of
  // calls one thread makes in order. Phase 2 is one task per index, all of
  // its entries in ascending key order: a B-link leaf splits at the
  // insertion point only when the new key is past its last entry, so a
  // district loaded while any larger key shares its last leaf (another
  // district loading in parallel) would carry that key along and leave
  // every leaf about half full (78% overall measured with 2 threads).
  std::vector<Task> rows_phase;
  // Partitioned mode: a warehouse's rows are loaded by its owner (Run),
  // so each index's entries make one task per owner, its range ascending.
  // So too when this process hosts only some compute nodes (verbs): each
  // process loads its nodes' share of the warehouses (the same ranges),
  // in parallel with the others.
  const partition::PartitionMap* owners = engine_.partition_map();
  std::optional<partition::PartitionMap> split;
  const std::vector<rdma::ComputeNodeId> local = engine_.local_compute_nodes();
  const int compute_nodes =
      engine::EngineInternals::fabric(engine_).compute_node_count();
  if (owners == nullptr && local.size() < static_cast<size_t>(compute_nodes)) {
    auto map = partition::PartitionMap::Create(warehouses, compute_nodes);
    if (!map.ok()) return map.status();
    split = *std::move(map);
    owners = &*split;
  }
  const int owner_count = owners != nullptr ? owners->nodes() : 1;
  std::vector<Task> index_phase(2 * owner_count);
  auto one = [&](engine::ProcedureId proc, int64_t w, int64_t d, int64_t first,
                 int64_t last) {
    rows_phase.push_back(
        {{proc, w, d, first, last, MixSeed(seed, proc, w, d, first)}});
  };
  for (int i = 1; i <= scale_.items; i += kItemsPerUnit) {
    one(items_, 0, 0, i, std::min(i + kItemsPerUnit - 1, scale_.items));
  }
  for (int w = 1; w <= warehouses; ++w) {
    one(warehouse_, w, 0, 0, 0);
    for (int i = 1; i <= scale_.items; i += kStockPerUnit) {
      one(stock_, w, 0, i, std::min(i + kStockPerUnit - 1, scale_.items));
    }
    for (int d = 1; d <= scale_.districts; ++d) {
      const uint64_t district_seed = DistrictSeed(seed, w, d);
      for (int c = 1; c <= scale_.customers; c += kCustomersPerUnit) {
        rows_phase.push_back(
            {{customers_, w, d, c,
              std::min(c + kCustomersPerUnit - 1, scale_.customers),
              district_seed}});
      }
      for (int o = 1; o <= scale_.customers; o += kOrdersPerUnit) {
        rows_phase.push_back(
            {{orders_, w, d, o,
              std::min(o + kOrdersPerUnit - 1, scale_.customers),
              district_seed}});
      }
      for (int i = 0; i < 2; ++i) {
        for (int r = 1; r <= scale_.customers; r += kIndexEntriesPerUnit) {
          index_phase[i * owner_count +
                      (owners != nullptr ? owners->Owner(w) : 0)]
              .push_back(
                  {i == 0 ? customer_names_ : order_customers_, w, d, r,
                   std::min(r + kIndexEntriesPerUnit - 1, scale_.customers),
                   district_seed});
        }
      }
    }
  }
  // Keep this process's tasks: its nodes' warehouses, and what any node
  // may do (ITEM) only where node 0 is, so that it is done once.
  const bool hosts_node_0 =
      std::find(local.begin(), local.end(), 0) != local.end();
  for (auto* phase : {&rows_phase, &index_phase}) {
    std::erase_if(*phase, [&](const Task& task) {
      if (task.empty()) return true;
      const int64_t w = task.front().w;
      if (owners == nullptr || w == 0) return !hosts_node_0;
      return std::find(local.begin(), local.end(), owners->Owner(w)) ==
             local.end();
    });
  }
  size_t calls = 0;
  for (const auto* phase : {&rows_phase, &index_phase}) {
    for (const Task& task : *phase) calls += task.size();
  }

  LoadResult result;
  Progress progress{warehouses, calls, ProgressLine(show_progress),
                    absl::Now()};
  for (const auto* phase : {&rows_phase, &index_phase}) {
    if (absl::Status s = Run(*phase, owners, threads_per_node, progress);
        !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("loading failed: ", s.message()));
    }
  }
  progress.line.Clear();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - progress.start);
  result.rows = progress.rows.load();
  result.transactions = calls;
  auto after = PoolBytesTaken(engine_);
  if (!after.ok()) return after.status();
  result.pool_bytes_used = *after;
  return result;
}

absl::Status Loader::Run(const std::vector<Task>& tasks,
                         const partition::PartitionMap* owners,
                         int threads_per_node, Progress& progress) {
  // Which tasks each node's threads take, in order: with owners a
  // warehouse's only on its owner (in partitioned mode no node touches
  // another's partition), ITEM's anywhere; without, any task anywhere.
  absl::flat_hash_map<rdma::ComputeNodeId, std::vector<size_t>> queues;
  std::vector<size_t> anywhere;
  for (size_t u = 0; u < tasks.size(); ++u) {
    if (tasks[u].empty()) continue;
    const int64_t w = tasks[u].front().w;
    if (owners != nullptr && w > 0) {
      queues[owners->Owner(w)].push_back(u);
    } else {
      anywhere.push_back(u);
    }
  }
  absl::flat_hash_map<rdma::ComputeNodeId, std::unique_ptr<std::atomic<size_t>>>
      next_of_node;
  for (rdma::ComputeNodeId node : engine_.local_compute_nodes()) {
    next_of_node[node] = std::make_unique<std::atomic<size_t>>(0);
    queues[node];  // threads only read the map
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  absl::Status first_error;
  // Takes tasks until none is left or a call fails (which stops every
  // thread at its next task).
  auto work = [&](rdma::ComputeNodeId node) {
    auto fail = [&](const absl::Status& s) {
      absl::MutexLock l(&mu);
      if (first_error.ok()) first_error = s;
      stop = true;
    };
    auto session = engine_.NewSession(node);
    if (!session.ok()) return fail(session.status());
    const std::vector<size_t>& mine = queues.at(node);
    std::atomic<size_t>& next_mine = *next_of_node.at(node);
    // This node's tasks, then the ones anyone takes.
    auto take = [&]() -> const Task* {
      if (stop.load()) return nullptr;
      if (size_t i = next_mine++; i < mine.size()) return &tasks[mine[i]];
      if (size_t i = next++; i < anywhere.size()) return &tasks[anywhere[i]];
      return nullptr;
    };
    for (const Task* task = take(); task != nullptr; task = take()) {
      for (const Call& call : *task) {
        auto r = (*session)->Call<int64_t>(call.proc, call.w, call.d,
                                           call.first, call.last,
                                           static_cast<int64_t>(call.seed));
        if (!r.ok()) return fail(r.status());
        progress.rows += *r;
        ++progress.done;
      }
    }
  };
  std::vector<std::thread> threads;
  std::atomic<size_t> running{0};
  for (rdma::ComputeNodeId node : engine_.local_compute_nodes()) {
    for (int i = 0; i < threads_per_node; ++i) {
      ++running;
      threads.emplace_back([&, node] {
        work(node);
        --running;
      });
    }
  }
  while (running.load() > 0) {
    absl::SleepFor(absl::Milliseconds(250));
    progress.line.Update([&] {
      return absl::StrFormat(
          "loading %d warehouses: %d/%d units (%.0f%%) %.1fs",
          progress.warehouses, progress.done.load(), progress.calls,
          100.0 * progress.done.load() / progress.calls,
          absl::ToDoubleSeconds(absl::Now() - progress.start));
    });
  }
  for (auto& th : threads) th.join();
  return first_error;
}

absl::StatusOr<uint64_t> PoolBytesTaken(engine::Engine& engine) {
  rdma::Fabric& fabric = engine::EngineInternals::fabric(engine);
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
