#ifndef STRAND_TPCC_CONSISTENCY_H_
#define STRAND_TPCC_CONSISTENCY_H_

// The consistency conditions of clause 3.3.2, checked after a run on a
// quiescent database:
//   1. W_YTD = sum(D_YTD) of the warehouse's districts;
//   2. D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) per district;
//   3. count(NEW-ORDER) = max(NO_O_ID) - min(NO_O_ID) + 1 per district;
//   4. sum(O_OL_CNT) = count(ORDER-LINE) per district.
//
// The engine has no table scan, so the checker reads the heap tables
// directly (storage::Catalog + HeapTable::Scan on compute node 0, under
// shared latches, as tools may): it checks the tables' contents, not what
// the indexes say. No transaction may run meanwhile.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "storage/catalog.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct ConsistencyResult {
  // Per condition (index 0 is condition 1): how many warehouses or
  // districts were checked and how many violated it.
  int checked[4] = {0, 0, 0, 0};
  int violations[4] = {0, 0, 0, 0};
  std::vector<std::string> messages;  // the first few violations

  bool ok() const {
    return violations[0] + violations[1] + violations[2] + violations[3] == 0;
  }
  std::string ToString() const;
};

// What a reader of a quiescent database (this check, the memory breakdown)
// works with: compute node 0's manager, a thread context on it and the
// catalog.
struct CatalogReader {
  static absl::StatusOr<CatalogReader> Open(engine::Engine& engine);

  cc::GclManager* manager = nullptr;
  std::unique_ptr<cc::ThreadContext> ctx;
  std::unique_ptr<storage::Catalog> catalog;
};

absl::StatusOr<ConsistencyResult> CheckConsistency(engine::Engine& engine,
                                                   int warehouses,
                                                   const Scale& scale);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_CONSISTENCY_H_
