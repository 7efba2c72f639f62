#ifndef STRAND_TPCC_ORDER_STATUS_H_
#define STRAND_TPCC_ORDER_STATUS_H_

// The Order-Status transaction (clause 2.6), read-only: the customer (60%
// by last name), their most recent order (the last entry of the orders by
// (w, d, customer, order id) index) and its lines.

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/procedure_util.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct OrderStatusInput {
  int w = 0, d = 0;
  CustomerSelector customer;
};

struct OrderStatusOutput {
  int c_id = 0;
  int64_t c_balance_cents = 0;
  int o_id = 0;  // 0 if the customer has no order
  int carrier_id = 0;
  int lines = 0;
  int64_t amount_cents = 0;  // sum of the lines' OL_AMOUNT
  int delivered_lines = 0;   // lines with a delivery date
};

OrderStatusInput MakeOrderStatusInput(Random& r, const Scale& scale, int w);

absl::StatusOr<engine::ProcedureId> RegisterOrderStatus(engine::Engine& engine,
                                                        const Tables& tables);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_ORDER_STATUS_H_
