#ifndef STRAND_TPCC_STOCK_LEVEL_H_
#define STRAND_TPCC_STOCK_LEVEL_H_

// The Stock-Level transaction (clause 2.8), read-only: the distinct items
// of the district's last 20 orders whose stock in the home warehouse is
// below a threshold (10..20).

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct StockLevelInput {
  int w = 0, d = 0;
  int threshold = 0;
};

struct StockLevelOutput {
  int low_stock = 0;       // distinct items below the threshold
  int distinct_items = 0;  // distinct items of the last 20 orders
};

// Clause 2.8.1: the terminal's own warehouse `w` and district `d`, fixed
// for the run (2.8.1.1, tpcc/terminal.h), and a threshold in 10..20.
StockLevelInput MakeStockLevelInput(Random& r, int w, int d);

absl::StatusOr<engine::ProcedureId> RegisterStockLevel(engine::Engine& engine,
                                                       const Tables& tables);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_STOCK_LEVEL_H_
