#include "rdma/fabric.h"

#include "absl/strings/str_format.h"
#include "rdma/message_router.h"

namespace strand::rdma {

absl::Status Endpoint::Read(GlobalAddress src, void* dst, uint32_t length) {
  Batch b;
  b.Read(src, dst, length);
  return Execute(b);
}

absl::Status Endpoint::Write(GlobalAddress dst, const void* src,
                             uint32_t length) {
  Batch b;
  b.Write(dst, src, length);
  return Execute(b);
}

absl::StatusOr<uint64_t> Endpoint::CompareAndSwap(GlobalAddress addr,
                                                  uint64_t expected,
                                                  uint64_t desired) {
  uint64_t old = 0;
  Batch b;
  b.CompareAndSwap(addr, expected, desired, &old);
  if (absl::Status s = Execute(b); !s.ok()) return s;
  return old;
}

absl::StatusOr<uint64_t> Endpoint::FetchAndAdd(GlobalAddress addr,
                                               uint64_t delta) {
  uint64_t old = 0;
  Batch b;
  b.FetchAndAdd(addr, delta, &old);
  if (absl::Status s = Execute(b); !s.ok()) return s;
  return old;
}

void Endpoint::Multicast(absl::Span<const ComputeNodeId> dsts,
                         const Message& message,
                         absl::Span<absl::Status> results) {
  for (size_t i = 0; i < dsts.size(); ++i) results[i] = Send(dsts[i], message);
}

void Endpoint::SendEach(absl::Span<const ComputeNodeId> dsts,
                        absl::Span<const Message> messages,
                        absl::Span<absl::Status> results) {
  for (size_t i = 0; i < dsts.size(); ++i) {
    results[i] = Send(dsts[i], messages[i]);
  }
}

ComputeNode::ComputeNode() = default;
// Out of line: MessageRouter is complete here. The backends' destructors
// stopped the handlers before the router goes.
ComputeNode::~ComputeNode() = default;

absl::Status Fabric::Fence(ComputeNodeId node) {
  return absl::UnimplementedError(
      absl::StrFormat("this fabric cannot fence compute node %d (loopback: set "
                      "FabricOptions::fencing)",
                      node));
}

absl::Status Fabric::Unfence(ComputeNodeId node) {
  return absl::UnimplementedError(
      absl::StrFormat("this fabric cannot readmit compute node %d", node));
}

absl::Status Fabric::Crash(ComputeNodeId node) {
  return absl::UnimplementedError(absl::StrFormat(
      "this fabric cannot inject the failure of compute node %d (loopback: "
      "set FabricOptions::fencing)",
      node));
}

absl::Status ComputeNode::ResetHandlers() {
  std::lock_guard<std::mutex> lock(router_mu_);
  if (absl::Status s = ReopenHandlers(); !s.ok()) return s;
  router_.reset();
  return absl::OkStatus();
}

absl::Status ComputeNode::AddHandler(uint16_t first, uint16_t last,
                                     MessageHandler handler, int threads) {
  std::lock_guard<std::mutex> lock(router_mu_);
  const bool start = router_ == nullptr;
  if (start) router_ = std::make_unique<MessageRouter>();
  if (absl::Status s = router_->Add(first, last, std::move(handler)); !s.ok()) {
    return s;
  }
  if (!start) return absl::OkStatus();
  MessageRouter* router = router_.get();
  return StartHandlers(
      [router](const Message& m, Endpoint& ep) { router->Dispatch(m, ep); },
      threads);
}

FabricCounters Fabric::Counters() {
  FabricCounters sum;
  for (ComputeNodeId id : local_compute_nodes()) {
    auto node = compute_node(id);
    if (node.ok()) sum += (*node)->Counters();
  }
  return sum;
}

}  // namespace strand::rdma
