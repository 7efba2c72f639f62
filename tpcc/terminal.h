#ifndef STRAND_TPCC_TERMINAL_H_
#define STRAND_TPCC_TERMINAL_H_

// A TPC-C terminal (clause 2.1): what one driver thread stands for. It has
// a home warehouse and a Stock-Level district, both fixed for the run,
// draws the type of its next transaction from the mix and the inputs of
// each transaction (clauses 2.4.1 - 2.8.1), all from its own random
// stream, so a run is reproducible from its seed.

#include <cstdint>

#include "tpcc/delivery.h"
#include "tpcc/mix.h"
#include "tpcc/new_order.h"
#include "tpcc/order_status.h"
#include "tpcc/payment.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"
#include "tpcc/stock_level.h"

namespace strand::tpcc {

// Which warehouse a terminal's transactions are homed at.
enum class HomeWarehouse {
  // Terminal i of the deployment works on warehouse i mod W + 1, as a
  // TPC-C terminal does: with W >= threads each warehouse has its own
  // terminal(s).
  kPerThread,
  // Each transaction draws its warehouse uniformly: every warehouse is
  // shared by every node's threads (the SELCC paper's TPC-C shape).
  kRandom,
};

class Terminal {
 public:
  // Terminal `index` (0-based over the whole deployment) of a run over
  // `warehouses` warehouses.
  Terminal(int index, int warehouses, HomeWarehouse home, const Scale& scale,
           const Mix& mix, const RemotePolicy& remote, uint64_t seed,
           const NURandConstants& constants);

  // The home warehouse (kPerThread; kRandom draws one per transaction).
  int warehouse() const { return w_; }

  // The type of the next transaction.
  TxnType NextType();

  NewOrderInput NewOrder(int32_t now);
  PaymentInput Payment(int32_t now);
  OrderStatusInput OrderStatus();
  DeliveryInput Delivery(int32_t now);
  StockLevelInput StockLevel();

 private:
  // The warehouse of the next transaction.
  int NextWarehouse();

  const int w_;
  const HomeWarehouse home_;
  const int warehouses_;
  const Scale scale_;
  const Mix mix_;
  const RemotePolicy remote_;
  Random r_;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_TERMINAL_H_
