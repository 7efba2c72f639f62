#include "tpcc/deferred_delivery.h"

namespace strand::tpcc {

void DeliveryQueue::Push(const QueuedDelivery& delivery) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(delivery);
}

std::optional<QueuedDelivery> DeliveryQueue::Pop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty()) return std::nullopt;
  QueuedDelivery oldest = queue_.front();
  queue_.pop_front();
  return oldest;
}

}  // namespace strand::tpcc
