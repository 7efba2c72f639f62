#include "tpcc/deferred_delivery.h"

namespace strand::tpcc {

void DeliveryQueue::Push(const QueuedDelivery& delivery) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(delivery);
  size_.store(queue_.size(), std::memory_order_relaxed);
}

std::optional<QueuedDelivery> DeliveryQueue::Pop() {
  if (size_.load(std::memory_order_relaxed) == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty()) return std::nullopt;
  QueuedDelivery oldest = queue_.front();
  queue_.pop_front();
  size_.store(queue_.size(), std::memory_order_relaxed);
  return oldest;
}

}  // namespace strand::tpcc
