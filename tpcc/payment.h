#ifndef STRAND_TPCC_PAYMENT_H_
#define STRAND_TPCC_PAYMENT_H_

// The Payment transaction (clause 2.5): adds the amount to W_YTD and D_YTD,
// takes it from the customer's balance (selected by id, or 60% of the time
// by last name with the middle-row rule), prepends the payment to C_DATA
// for bad-credit customers, and inserts a HISTORY row. 15% of payments are
// for a customer of a remote warehouse.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/procedure_util.h"
#include "tpcc/random.h"
#include "tpcc/remote_policy.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct PaymentInput {
  int w = 0, d = 0;
  int c_w = 0, c_d = 0;
  CustomerSelector customer;
  int64_t amount_cents = 0;
  int32_t date = 0;
};

struct PaymentOutput {
  int c_id = 0;
  int64_t c_balance_cents = 0;
  bool bad_credit = false;
};

// Clause 2.5.1 inputs for home warehouse `w`; the customer's warehouse as
// `remote` says (15% remote by default).
PaymentInput MakePaymentInput(Random& r, const Scale& scale, int w,
                              int warehouses, const RemotePolicy& remote,
                              int32_t now);

// A run-time last name: NURand(255, 0, 999), restricted to the names a
// scaled-down load created.
std::string RunLastName(Random& r, const Scale& scale);

absl::StatusOr<engine::ProcedureId> RegisterPayment(engine::Engine& engine,
                                                    const Tables& tables);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_PAYMENT_H_
