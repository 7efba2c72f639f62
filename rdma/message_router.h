#ifndef STRAND_RDMA_MESSAGE_ROUTER_H_
#define STRAND_RDMA_MESSAGE_ROUTER_H_

// Several layers receive messages on one compute node (cc/selcc's
// invalidations, partition/'s two-phase commit): each registers a handler
// for its own range of message types (ComputeNode::AddHandler), and the
// node's one handler (ComputeNode::StartHandlers) dispatches through this.
// Routes are only added, at most kMaxRoutes, and are published with a
// release store: dispatch reads them without a lock.

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "rdma/fabric.h"

namespace strand::rdma {

class MessageRouter {
 public:
  static constexpr int kMaxRoutes = 8;

  // Routes types [first, last] to `handler`. AlreadyExists if the range
  // overlaps a route, ResourceExhausted past kMaxRoutes.
  absl::Status Add(uint16_t first, uint16_t last, MessageHandler handler);
  // Calls the handler of `message.type`; logs and drops an unrouted one.
  void Dispatch(const Message& message, Endpoint& endpoint) const;
  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  struct Route {
    uint16_t first = 0, last = 0;
    MessageHandler handler;
  };
  std::mutex add_mu_;  // serializes Add
  std::array<Route, kMaxRoutes> routes_;
  std::atomic<int> count_{0};
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_MESSAGE_ROUTER_H_
