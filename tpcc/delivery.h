#ifndef STRAND_TPCC_DELIVERY_H_
#define STRAND_TPCC_DELIVERY_H_

// The Delivery transaction (clause 2.7), run as one transaction over all
// districts of a warehouse: for each district the oldest NEW-ORDER row is
// deleted, its order gets the carrier, its lines the delivery date, and its
// customer the order's amount (balance) and one more delivery. A district
// with no undelivered order is skipped. The driver runs it deferred
// (clause 2.7.2, tpcc/deferred_delivery.h).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct DeliveryInput {
  int w = 0;
  int carrier_id = 0;
  int32_t date = 0;
};

struct DeliveryOutput {
  int delivered = 0;  // districts with an order delivered
  int skipped = 0;    // districts with none
  // Per district (index d - 1): the order delivered, 0 if skipped.
  std::vector<int> o_ids;
};

DeliveryInput MakeDeliveryInput(Random& r, int w, int32_t now);

absl::StatusOr<engine::ProcedureId> RegisterDelivery(engine::Engine& engine,
                                                     const Tables& tables,
                                                     const Scale& scale);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_DELIVERY_H_
