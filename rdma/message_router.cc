#include "rdma/message_router.h"

#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace strand::rdma {

absl::Status MessageRouter::Add(uint16_t first, uint16_t last,
                                MessageHandler handler) {
  if (first > last || !handler) {
    return absl::InvalidArgumentError(
        "a route needs first <= last and a "
        "handler");
  }
  std::lock_guard<std::mutex> lock(add_mu_);
  const int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (first <= routes_[i].last && routes_[i].first <= last) {
      return absl::AlreadyExistsError(
          absl::StrFormat("message types %#x-%#x overlap a route for %#x-%#x",
                          first, last, routes_[i].first, routes_[i].last));
    }
  }
  if (n == kMaxRoutes) {
    return absl::ResourceExhaustedError("too many message routes");
  }
  routes_[n] = Route{first, last, std::move(handler)};
  count_.store(n + 1, std::memory_order_release);
  return absl::OkStatus();
}

void MessageRouter::Dispatch(const Message& message, Endpoint& endpoint) const {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    const Route& r = routes_[i];
    if (message.type >= r.first && message.type <= r.last) {
      r.handler(message, endpoint);
      return;
    }
  }
  LOG(ERROR) << "compute node " << endpoint.node_id()
             << " got a message of unknown type " << message.type
             << " from node " << message.source;
}

}  // namespace strand::rdma
