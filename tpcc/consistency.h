#ifndef STRAND_TPCC_CONSISTENCY_H_
#define STRAND_TPCC_CONSISTENCY_H_

// The twelve consistency conditions of clause 3.3.2 (listed at
// ConsistencyResult), checked after a run on a quiescent database. "Null"
// is 0 in strand's schema (tpcc/schema.h). An ORDER-LINE, NEW-ORDER or
// HISTORY row naming an order or customer that does not exist violates the
// condition that joins it (6, 5, 10). Rows of a warehouse or district
// outside the load count against condition 1.
//
// The engine has no table scan, so the checker reads the heap tables
// directly (storage::Catalog + HeapTable::Scan on one compute node, under
// shared latches, as tools may): it checks the tables' contents, not what
// the indexes say. No transaction may run meanwhile. Cost: one scan of
// WAREHOUSE, DISTRICT, CUSTOMER, HISTORY, ORDER, NEW-ORDER and ORDER-LINE
// (the tables with rows that grow, plus CUSTOMER), and per-order and
// per-customer facts in arrays (~12 and ~40 bytes a row).
// Design (why condition 11 is not the specification's): docs/design/tpcc.md.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "storage/catalog.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct ConsistencyResult {
  // The conditions, numbered as in the clause:
  //   1. W_YTD = sum(D_YTD) per warehouse;
  //   2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district;
  //   3. count(NEW-ORDER) = max(NO_O_ID) - min(NO_O_ID) + 1 per district;
  //   4. sum(O_OL_CNT) = count(ORDER-LINE) per district;
  //   5. per order: O_CARRIER_ID is null iff the order has a NEW-ORDER row;
  //   6. per order: O_OL_CNT = the number of its ORDER-LINE rows;
  //   7. per order line: OL_DELIVERY_D is null iff its order's O_CARRIER_ID
  //      is null;
  //   8. W_YTD = sum(H_AMOUNT) of the warehouse's HISTORY rows (H_W_ID);
  //   9. D_YTD = sum(H_AMOUNT) of the district's HISTORY rows (H_W_ID,
  //      H_D_ID);
  //  10. per customer: C_BALANCE = sum(OL_AMOUNT of its delivered order
  //      lines) - sum(H_AMOUNT of its payments (H_C_W_ID, H_C_D_ID, H_C_ID));
  //  11. per district: count(ORDER) - count(NEW-ORDER) = 2100 +
  //      sum(C_DELIVERY_CNT) (the specification's "= 2100" holds for the
  //      initial population only); 2100 is the load's delivered orders per
  //      district (customers - new orders: 3000 - 900; less when scaled);
  //  12. per customer: C_BALANCE + C_YTD_PAYMENT = sum(OL_AMOUNT of its
  //      delivered order lines).
  static constexpr int kConditions = 12;
  // Per condition (index 0 is condition 1): how many warehouses,
  // districts, orders, order lines or customers were checked and how many
  // violated it.
  int64_t checked[kConditions] = {};
  int64_t violations[kConditions] = {};
  std::vector<std::string> messages;  // the first few violations
  double seconds = 0;                 // the check's run time

  bool ok() const;
  std::string ToString() const;
};

// What a reader of a quiescent database (this check, the memory breakdown)
// works with: a hosted compute node's manager (the first's, or `node`'s:
// a live one, after a failure), a thread context on it and the catalog.
struct CatalogReader {
  static absl::StatusOr<CatalogReader> Open(engine::Engine& engine);
  static absl::StatusOr<CatalogReader> Open(engine::Engine& engine,
                                            rdma::ComputeNodeId node);

  cc::GclManager* manager = nullptr;
  std::unique_ptr<cc::ThreadContext> ctx;
  std::unique_ptr<storage::Catalog> catalog;
};

absl::StatusOr<ConsistencyResult> CheckConsistency(engine::Engine& engine,
                                                   int warehouses,
                                                   const Scale& scale);
// The same, read through compute node `node`.
absl::StatusOr<ConsistencyResult> CheckConsistency(engine::Engine& engine,
                                                   int warehouses,
                                                   const Scale& scale,
                                                   rdma::ComputeNodeId node);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_CONSISTENCY_H_
