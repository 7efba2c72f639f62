#ifndef STRAND_TPCC_MEMORY_BREAKDOWN_H_
#define STRAND_TPCC_MEMORY_BREAKDOWN_H_

// Where the pool bytes of a loaded TPC-C database go: GCLs per heap table
// (pages and root) and per index (nodes and anchor), next to the raw bytes
// of the table's rows (RawBytes, clause 1.3). The load's "memory" figure
// (report.h) is the pool total; this splits it, so a change to the tuple
// header, the page layout or the index can be judged table by table.
//
// Like the consistency check, it reads the catalog, the heap tables' roots
// and every index node on compute node 0 under shared latches: run it only
// on a quiescent database. Cost: one latch per table root and one per
// index node (BLinkTree::Verify), so about a second per warehouse.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct MemoryBreakdown {
  struct Table {
    std::string name;
    uint64_t gcls = 0;       // pages + the root
    uint64_t raw_bytes = 0;  // expected rows x clause 1.3 row bytes
  };
  struct Index {
    std::string name;
    uint64_t gcls = 0;  // nodes + the anchor
    uint64_t entries = 0;
    uint64_t leaves = 0;
    uint32_t node_capacity = 0;  // entries a full node holds
    double leaf_fill() const {
      return leaves == 0 ? 0
                         : static_cast<double>(entries) /
                               (static_cast<double>(leaves) * node_capacity);
    }
  };
  uint32_t gcl_size = 0;
  std::vector<Table> tables;
  std::vector<Index> indexes;

  uint64_t table_bytes() const;
  uint64_t index_bytes() const;
};

absl::StatusOr<MemoryBreakdown> MeasureMemory(engine::Engine& engine,
                                              int warehouses,
                                              const Scale& scale);
// The same, read through compute node `node`.
absl::StatusOr<MemoryBreakdown> MeasureMemory(engine::Engine& engine,
                                              int warehouses,
                                              const Scale& scale,
                                              rdma::ComputeNodeId node);

// One line per table and index, in MiB per warehouse (ITEM and item_pk
// shared by all warehouses, like the load's figure), and what the pool
// total (`pool_bytes`) holds beyond them (catalog, unused chunk tails).
// The raw bytes are those of the loaded rows; after a run (`loaded_rows`
// false) the header says so, as tables hold more rows than that.
void PrintMemoryBreakdown(std::ostream& out, const MemoryBreakdown& m,
                          int warehouses, uint64_t pool_bytes,
                          bool loaded_rows = true);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_MEMORY_BREAKDOWN_H_
