#include "rdma/loopback/loopback_compute_node.h"

#include "absl/strings/str_format.h"
#include "rdma/loopback/cost_model.h"
#include "rdma/loopback/loopback_endpoint.h"
#include "rdma/loopback/loopback_fabric.h"

namespace strand::rdma {

LoopbackComputeNode::LoopbackComputeNode(LoopbackFabric* fabric,
                                         ComputeNodeId id)
    : fabric_(fabric), id_(id), inbox_(kInboxCapacity, absl::Seconds(10)) {}

LoopbackComputeNode::~LoopbackComputeNode() { StopHandlers(); }

absl::StatusOr<std::unique_ptr<Endpoint>> LoopbackComputeNode::NewEndpoint() {
  return std::make_unique<LoopbackEndpoint>(fabric_, id_,
                                            counters_.NewEndpointCounters());
}

absl::StatusOr<LocalRegion> LoopbackComputeNode::RegisterLocalMemory(
    void* base, uint64_t bytes) {
  if (base == nullptr || bytes == 0) {
    return absl::InvalidArgumentError("cannot register an empty region");
  }
  absl::MutexLock lock(&register_mu_);
  const int index = region_count_.load(std::memory_order_relaxed);
  if (index == kMaxRegions) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "compute node %d already registered %d regions", id_, kMaxRegions));
  }
  LocalRegion& region = regions_[index];
  region.base = base;
  region.bytes = bytes;
  region.peer_address.address = reinterpret_cast<uint64_t>(base);
  region.peer_address.key = static_cast<uint32_t>(index);
  region.peer_address.node = id_;
  region_count_.store(index + 1, std::memory_order_release);
  return region;
}

absl::StatusOr<uint8_t*> LoopbackComputeNode::TranslatePeer(
    const PeerAddress& dst, uint64_t length) const {
  const int count = region_count_.load(std::memory_order_acquire);
  if (dst.key >= static_cast<uint32_t>(count)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d has no registered region with key %d", id_, dst.key));
  }
  const LocalRegion& region = regions_[dst.key];
  const uint64_t begin = region.peer_address.address;
  if (dst.address < begin || dst.address - begin > region.bytes ||
      length > region.bytes - (dst.address - begin)) {
    return absl::OutOfRangeError(absl::StrFormat(
        "peer write of %d bytes at 0x%x falls outside region %d of compute "
        "node %d",
        length, dst.address, dst.key, id_));
  }
  return reinterpret_cast<uint8_t*>(dst.address);
}

absl::Status LoopbackComputeNode::StartHandlers(MessageHandler handler,
                                                int threads) {
  if (threads < 1) {
    return absl::InvalidArgumentError("a compute node needs >= 1 handler");
  }
  absl::MutexLock lock(&handlers_mu_);
  if (handlers_started_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("compute node %d already runs message handlers", id_));
  }
  handlers_started_ = true;
  handler_ = std::move(handler);
  for (int i = 0; i < threads; ++i) {
    auto endpoint = NewEndpoint();
    if (!endpoint.ok()) return endpoint.status();
    handler_endpoints_.push_back(*std::move(endpoint));
  }
  for (auto& endpoint : handler_endpoints_) {
    handler_threads_.emplace_back(&LoopbackComputeNode::HandlerLoop, this,
                                  endpoint.get());
  }
  return absl::OkStatus();
}

void LoopbackComputeNode::StopHandlers() {
  inbox_.Close();
  absl::MutexLock lock(&handlers_mu_);
  for (auto& t : handler_threads_) t.join();
  handler_threads_.clear();
  handler_endpoints_.clear();
}

void LoopbackComputeNode::HandlerLoop(Endpoint* endpoint) {
  auto* loopback = static_cast<LoopbackEndpoint*>(endpoint);
  MessageInbox::Entry entry;
  while (inbox_.Pop(&entry)) {
    if (!fabric_->cost_model().is_free()) {
      CostModel::SpinUntil(entry.deliver_at_ns);
    }
    loopback->CountReceived();
    handler_(entry.message, *endpoint);
  }
}

}  // namespace strand::rdma
