#include "tpcc/memory_breakdown.h"

#include "absl/strings/str_format.h"
#include "index/blink_tree.h"
#include "storage/heap_table.h"
#include "tpcc/consistency.h"

namespace strand::tpcc {
namespace {

// Rows of each table right after the load (order lines: 10 per order on
// average), per warehouse except ITEM.
struct TableRows {
  const char* name;
  uint64_t row_bytes;
  uint64_t rows;
};

std::vector<TableRows> LoadedRows(int warehouses, const Scale& s) {
  const uint64_t w = warehouses;
  const uint64_t districts = w * s.districts;
  const uint64_t customers = districts * s.customers;
  return {
      {"warehouse", RawBytes::kWarehouse, w},
      {"district", RawBytes::kDistrict, districts},
      {"customer", RawBytes::kCustomer, customers},
      {"history", RawBytes::kHistory, customers},
      {"new_order", RawBytes::kNewOrder,
       districts * static_cast<uint64_t>(s.new_orders())},
      {"order", RawBytes::kOrder, customers},
      {"order_line", RawBytes::kOrderLine, customers * 10},
      {"item", RawBytes::kItem, static_cast<uint64_t>(s.items)},
      {"stock", RawBytes::kStock, w * static_cast<uint64_t>(s.items)},
  };
}

constexpr const char* kIndexes[] = {
    "warehouse_pk", "district_pk", "customer_pk",       "customer_by_name",
    "new_order_pk", "order_pk",    "order_by_customer", "order_line_pk",
    "item_pk",      "stock_pk"};

}  // namespace

uint64_t MemoryBreakdown::table_bytes() const {
  uint64_t gcls = 0;
  for (const Table& t : tables) gcls += t.gcls;
  return gcls * gcl_size;
}

uint64_t MemoryBreakdown::index_bytes() const {
  uint64_t gcls = 0;
  for (const Index& i : indexes) gcls += i.gcls;
  return gcls * gcl_size;
}

absl::StatusOr<MemoryBreakdown> MeasureMemory(engine::Engine& engine,
                                              int warehouses,
                                              const Scale& scale) {
  return MeasureMemory(engine, warehouses, scale,
                       engine.local_compute_nodes().front());
}

absl::StatusOr<MemoryBreakdown> MeasureMemory(engine::Engine& engine,
                                              int warehouses,
                                              const Scale& scale,
                                              rdma::ComputeNodeId node) {
  auto reader = CatalogReader::Open(engine, node);
  if (!reader.ok()) return reader.status();
  cc::ThreadContext& ctx = *reader->ctx;

  MemoryBreakdown result;
  result.gcl_size = reader->manager->options().gcl_size;
  for (const TableRows& rows : LoadedRows(warehouses, scale)) {
    auto desc = reader->catalog->FindTable(ctx, rows.name);
    if (!desc.ok()) return desc.status();
    auto heap = storage::HeapTable::Open(*reader->manager, ctx, desc->root,
                                         desc->schema);
    if (!heap.ok()) return heap.status();
    auto pages = (*heap)->PageCount(ctx);
    if (!pages.ok()) return pages.status();
    result.tables.push_back(
        {rows.name, *pages + 1, rows.rows * rows.row_bytes});
  }
  for (const char* name : kIndexes) {
    auto desc = reader->catalog->FindIndex(ctx, name);
    if (!desc.ok()) return desc.status();
    auto tree = index::BLinkTree::Open(*reader->manager, ctx, desc->anchor);
    if (!tree.ok()) return tree.status();
    auto stats = (*tree)->Verify(ctx);
    if (!stats.ok()) return stats.status();
    result.indexes.push_back({name, stats->leaves + stats->inner_nodes + 1,
                              stats->entries, stats->leaves,
                              stats->node_capacity});
  }
  return result;
}

void PrintMemoryBreakdown(std::ostream& out, const MemoryBreakdown& m,
                          int warehouses, uint64_t pool_bytes,
                          bool loaded_rows) {
  const double per = 1048576.0 * warehouses;
  out << absl::StrFormat(
      "memory by table (MiB per warehouse, %d-byte GCLs; raw = clause 1.3 "
      "row bytes%s):\n",
      m.gcl_size, loaded_rows ? "" : " of the loaded rows, not the run's");
  out << absl::StrFormat("  %-18s %10s %9s %9s %7s\n", "table", "gcls",
                         "MiB/wh", "raw", "ratio");
  for (const MemoryBreakdown::Table& t : m.tables) {
    const double bytes = static_cast<double>(t.gcls) * m.gcl_size;
    out << absl::StrFormat("  %-18s %10llu %9.2f %9.2f %6.2fx\n", t.name,
                           static_cast<unsigned long long>(t.gcls), bytes / per,
                           t.raw_bytes / per,
                           t.raw_bytes == 0 ? 0 : bytes / t.raw_bytes);
  }
  out << absl::StrFormat("  %-18s %10s %9s %9s %7s\n", "index", "gcls",
                         "MiB/wh", "entries", "leaf fill");
  for (const MemoryBreakdown::Index& i : m.indexes) {
    out << absl::StrFormat("  %-18s %10llu %9.2f %9llu %6.1f%%\n", i.name,
                           static_cast<unsigned long long>(i.gcls),
                           static_cast<double>(i.gcls) * m.gcl_size / per,
                           static_cast<unsigned long long>(i.entries),
                           100 * i.leaf_fill());
  }
  const double tables = m.table_bytes();
  const double indexes = m.index_bytes();
  out << absl::StrFormat(
      "  total: tables %.2f, indexes %.2f, rest of the pool (catalog, "
      "unused chunk tails) %.2f MiB per warehouse\n",
      tables / per, indexes / per, (pool_bytes - tables - indexes) / per);
}

}  // namespace strand::tpcc
