#include "tpcc/terminal.h"

namespace strand::tpcc {

Terminal::Terminal(int index, int warehouses, HomeWarehouse home,
                   const Scale& scale, const Mix& mix,
                   const RemotePolicy& remote, uint64_t seed,
                   const NURandConstants& constants, HomeRange homes)
    : homes_(homes.count > 0 ? homes : HomeRange{1, warehouses, index}),
      w_(homes_.first + homes_.position % homes_.count),
      home_(home),
      d_(homes_.position / homes_.count % scale.districts + 1),
      warehouses_(warehouses),
      scale_(scale),
      remote_(remote),
      deck_(mix),
      r_(seed * 7919 + index, constants) {}

TxnType Terminal::NextType() { return deck_.Deal(r_.engine()); }

int Terminal::NextWarehouse() {
  return home_ == HomeWarehouse::kPerThread
             ? w_
             : r_.Uniform(homes_.first, homes_.first + homes_.count - 1);
}

NewOrderInput Terminal::NewOrder(int32_t now) {
  const int w = NextWarehouse();
  return MakeNewOrderInput(r_, scale_, w, warehouses_, remote_, now);
}

PaymentInput Terminal::Payment(int32_t now) {
  const int w = NextWarehouse();
  return MakePaymentInput(r_, scale_, w, warehouses_, remote_, now);
}

OrderStatusInput Terminal::OrderStatus() {
  const int w = NextWarehouse();
  return MakeOrderStatusInput(r_, scale_, w);
}

DeliveryInput Terminal::Delivery(int32_t now) {
  const int w = NextWarehouse();
  return MakeDeliveryInput(r_, w, now);
}

StockLevelInput Terminal::StockLevel() {
  const int w = NextWarehouse();
  return MakeStockLevelInput(r_, w, d_);
}

}  // namespace strand::tpcc
