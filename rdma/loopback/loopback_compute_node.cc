#include "rdma/loopback/loopback_compute_node.h"

#include <thread>

#include "absl/strings/str_format.h"
#include "rdma/loopback/cost_model.h"
#include "rdma/loopback/loopback_endpoint.h"
#include "rdma/loopback/loopback_fabric.h"

namespace strand::rdma::loopback {

LoopbackComputeNode::LoopbackComputeNode(LoopbackFabric* fabric,
                                         ComputeNodeId id)
    : fabric_(fabric),
      id_(id),
      gate_(std::make_shared<FenceGate>(fabric->options().fencing)),
      inbox_(kInboxCapacity, absl::Seconds(10)) {}

LoopbackComputeNode::~LoopbackComputeNode() { StopHandlers(); }

absl::StatusOr<std::unique_ptr<Endpoint>> LoopbackComputeNode::NewEndpoint() {
  return NewLoopbackEndpoint();
}

std::unique_ptr<LoopbackEndpoint> LoopbackComputeNode::NewLoopbackEndpoint() {
  return std::make_unique<LoopbackEndpoint>(
      fabric_, id_, counters_.NewEndpointCounters(), gate_);
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
  fabric_->CommitMemory(base, bytes);
  region.base = base;
  region.bytes = bytes;
  region.peer_address.address = reinterpret_cast<uint64_t>(base);
  region.peer_address.key = static_cast<uint32_t>(index);
  region.peer_address.node = id_;
  live_[index].store(true, std::memory_order_relaxed);
  region_count_.store(index + 1, std::memory_order_release);
  return region;
}

absl::Status LoopbackComputeNode::UnregisterLocalMemory(void* base) {
  absl::MutexLock lock(&register_mu_);
  const int count = region_count_.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    if (regions_[i].base == base && live_[i].load(std::memory_order_relaxed)) {
      live_[i].store(false, std::memory_order_release);
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrFormat(
      "compute node %d has no registered region at %p", id_, base));
}

absl::StatusOr<uint8_t*> LoopbackComputeNode::TranslatePeer(
    const PeerAddress& dst, uint64_t length) const {
  const int count = region_count_.load(std::memory_order_acquire);
  if (dst.key >= static_cast<uint32_t>(count)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d has no registered region with key %d", id_, dst.key));
  }
  if (!live_[dst.key].load(std::memory_order_acquire)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d unregistered its region with key %d", id_, dst.key));
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
  absl::MutexLock lock(&handler_mu_);
  if (threads < 1) {
    return absl::InvalidArgumentError("a compute node needs >= 1 handler");
  }
  if (handler_ || stopped_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("compute node %d already ran message handlers", id_));
  }
  handler_ = handler;
  absl::Status started = handlers_.Start(
      *this, std::move(handler), threads,
      [this](Message* message) {
        MessageInbox::Entry entry;
        for (;;) {
          if (!inbox_.Pop(&entry)) return false;
          // The cost model delays delivery by half a round trip.
          if (!fabric_->cost_model().is_free()) {
            CostModel::SpinUntil(entry.deliver_at_ns);
          }
          // Its sender fenced since (fence_gate.h): as if lost on the way.
          if (SenderGate(entry.message).EnterHandler(entry.sender_generation)) {
            break;
          }
        }
        *message = entry.message;
        return true;
      },
      [](Endpoint& endpoint) {
        static_cast<LoopbackEndpoint&>(endpoint).CountReceived();
      },
      [this](const Message& message) { SenderGate(message).ExitHandler(); });
  if (started.ok()) accepting_.store(true, std::memory_order_seq_cst);
  return started;
}

FenceGate& LoopbackComputeNode::SenderGate(const Message& message) const {
  return fabric_->node(message.source).gate();
}

const MessageHandler* LoopbackComputeNode::BeginInline() {
  // Dekker with StopHandlers: either it sees this delivery running, or
  // this delivery sees that it stopped accepting.
  inline_running_.fetch_add(1, std::memory_order_seq_cst);
  if (!accepting_.load(std::memory_order_seq_cst)) {
    inline_running_.fetch_sub(1, std::memory_order_release);
    return nullptr;
  }
  return &handler_;
}

void LoopbackComputeNode::EndInline() {
  inline_running_.fetch_sub(1, std::memory_order_release);
}

void LoopbackComputeNode::StopHandlers() {
  absl::MutexLock lock(&handler_mu_);
  stopped_ = true;
  accepting_.store(false, std::memory_order_seq_cst);
  // Inline handlers never wait (fabric.h), so this ends within one
  // handler's run.
  while (inline_running_.load(std::memory_order_seq_cst) > 0) {
    std::this_thread::yield();
  }
  inbox_.Close();
  handlers_.Join();
}

absl::Status LoopbackComputeNode::ReopenHandlers() {
  absl::MutexLock lock(&handler_mu_);
  if (!stopped_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "compute node %d's handlers must stop before they restart", id_));
  }
  stopped_ = false;
  handler_ = nullptr;
  inbox_.Reopen();
  return absl::OkStatus();
}

}  // namespace strand::rdma::loopback
