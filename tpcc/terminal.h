#ifndef STRAND_TPCC_TERMINAL_H_
#define STRAND_TPCC_TERMINAL_H_

// A TPC-C terminal (clause 2.1): what one driver thread stands for. It has
// a home warehouse and a Stock-Level district, both fixed for the run,
// deals the type of its next transaction from the mix's deck (clause
// 5.2.4, tpcc/mix_deck.h) and draws the inputs of each transaction
// (clauses 2.4.1 - 2.8.1), all from its own random stream, so a run is
// reproducible from its seed.
//
// Terminal i (0-based over the deployment) of a run over W warehouses has
// home warehouse i mod W + 1 and district (i / W) mod 10 + 1 (with a
// HomeRange of H warehouses from F and position p: F + p mod H and
// (p / H) mod 10 + 1): the first
// 10 W terminals, the specification's 10 per warehouse, have distinct
// (warehouse, district) pairs, as clause 2.8.1.1 requires of Stock-Level;
// more terminals than that share pairs. With HomeWarehouse::kRandom every
// transaction draws its warehouse, Stock-Level's too (its district stays
// the terminal's).

#include <cstdint>

#include "tpcc/delivery.h"
#include "tpcc/mix.h"
#include "tpcc/mix_deck.h"
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

// The warehouses a terminal's home is drawn from: first..first + count - 1,
// the terminal being number `position` of those sharing them (count 0: all
// warehouses, shared by the whole deployment). In partitioned mode those
// of the terminal's compute node (tpcc/remote_policy.h).
struct HomeRange {
  int first = 1;
  int count = 0;
  int position = 0;
};

class Terminal {
 public:
  // Terminal `index` (0-based over the whole deployment: it seeds the
  // terminal's random stream) of a run over `warehouses` warehouses.
  Terminal(int index, int warehouses, HomeWarehouse home, const Scale& scale,
           const Mix& mix, const RemotePolicy& remote, uint64_t seed,
           const NURandConstants& constants, HomeRange homes = {});

  // The home warehouse (kPerThread; kRandom draws one per transaction).
  int warehouse() const { return w_; }
  int district() const { return d_; }

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

  const HomeRange homes_;
  const int w_;
  const HomeWarehouse home_;
  const int d_;  // Stock-Level's district (clause 2.8.1.1)
  const int warehouses_;
  const Scale scale_;
  const RemotePolicy remote_;
  MixDeck deck_;
  Random r_;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_TERMINAL_H_
