#ifndef STRAND_TPCC_NEW_ORDER_H_
#define STRAND_TPCC_NEW_ORDER_H_

// The New-Order transaction (clause 2.4): takes the district's next order
// id, inserts ORDER, NEW-ORDER and 5-15 ORDER-LINE rows and updates the
// STOCK of every item. 1% of the inputs carry an unused item id on the last
// line: the transaction then processes every line before it, as a
// committing one would, and rolls back with Txn::UserAbort when it reaches
// the unused one (clause 2.4.2.3).

#include <array>
#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/random.h"
#include "tpcc/remote_policy.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct NewOrderInput {
  int w = 0, d = 0, c = 0;
  int ol_cnt = 0;
  std::array<int, Scale::kMaxOrderLines> item{};
  std::array<int, Scale::kMaxOrderLines> supply_w{};
  std::array<int, Scale::kMaxOrderLines> quantity{};
  int32_t entry_d = 0;
};

struct NewOrderOutput {
  int o_id = 0;
  int64_t total_cents = 0;  // sum of OL_AMOUNT * (1 - C_DISCOUNT)(1 + taxes)
  bool all_local = true;
};

// Clause 2.4.1 inputs for home warehouse `w`: customer NURand(1023), item
// ids NURand(8191), 1% with an unused item id (`scale.items + 1`) on the
// last line.
NewOrderInput MakeNewOrderInput(Random& r, const Scale& scale, int w,
                                int warehouses, const RemotePolicy& remote,
                                int32_t now);

absl::StatusOr<engine::ProcedureId> RegisterNewOrder(engine::Engine& engine,
                                                     const Tables& tables);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_NEW_ORDER_H_
