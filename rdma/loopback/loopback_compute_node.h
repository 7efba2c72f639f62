#ifndef STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_
#define STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_

// A compute node of the loopback fabric: its registered regions (what peers
// may WriteToPeer into), its message handler, inbox and handler threads, and
// the counters of its endpoints.
//
// Inline delivery (MessageDelivery::kInline, fabric_options.h): a sender's
// endpoint runs this node's handler itself (LoopbackEndpoint::Send) between
// BeginInline and EndInline, with an endpoint of this node that the sender's
// thread owns. BeginInline fails once StopHandlers began, and StopHandlers
// waits until every inline handler has returned, so a handler never runs on
// state its node is tearing down. Messages that arrive before the handler is
// registered, or nested deeper than kMaxInlineDepth, go to the inbox.

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rdma/fabric.h"
#include "rdma/handler_threads.h"
#include "rdma/loopback/fence_gate.h"
#include "rdma/loopback/message_inbox.h"

namespace strand::rdma::loopback {

class LoopbackEndpoint;
class LoopbackFabric;

class LoopbackComputeNode : public ComputeNode {
 public:
  // Registered over the node's life, unregistered ones included.
  static constexpr int kMaxRegions = 256;
  static constexpr size_t kInboxCapacity = 1 << 16;
  // Inline handlers nested on one thread (a request's handler sending the
  // reply is 2) beyond which messages go to the handler threads instead.
  static constexpr int kMaxInlineDepth = 8;

  LoopbackComputeNode(LoopbackFabric* fabric, ComputeNodeId id);
  ~LoopbackComputeNode() override;

  ComputeNodeId id() const override { return id_; }
  absl::StatusOr<std::unique_ptr<Endpoint>> NewEndpoint() override;
  std::unique_ptr<LoopbackEndpoint> NewLoopbackEndpoint();
  absl::StatusOr<LocalRegion> RegisterLocalMemory(void* base,
                                                  uint64_t bytes) override;
  absl::Status UnregisterLocalMemory(void* base) override;
  absl::Status StartHandlers(MessageHandler handler, int threads) override;
  void StopHandlers() override;
  FabricCounters Counters() const override { return counters_.Sum(); }

  // For peers' endpoints: the pointer behind [dst, dst + length) if it lies
  // in one of this node's registered regions.
  absl::StatusOr<uint8_t*> TranslatePeer(const PeerAddress& dst,
                                         uint64_t length) const;
  MessageInbox& inbox() { return inbox_; }
  // Whether this node's operations may proceed (fence_gate.h).
  FenceGate& gate() { return *gate_; }

  // Inline delivery: the handler, if registered and still accepting
  // messages (then EndInline must follow), else null.
  const MessageHandler* BeginInline();
  void EndInline();

 protected:
  absl::Status ReopenHandlers() override;

 private:
  // The gate of the node that sent `message`, which admits its handling.
  FenceGate& SenderGate(const Message& message) const;

  LoopbackFabric* const fabric_;
  const ComputeNodeId id_;
  CounterRegistry counters_;
  // Shared with the endpoints, which may outlive this node.
  const std::shared_ptr<FenceGate> gate_;
  MessageInbox inbox_;

  // Append-only; a region is published by the release store of the count,
  // so TranslatePeer reads it without a lock.
  absl::Mutex register_mu_;
  std::array<LocalRegion, kMaxRegions> regions_;
  // Cleared, never set again, when a region is unregistered.
  std::array<std::atomic<bool>, kMaxRegions> live_{};
  std::atomic<int> region_count_{0};

  absl::Mutex handler_mu_;  // StartHandlers and StopHandlers
  bool stopped_ ABSL_GUARDED_BY(handler_mu_) = false;
  // Set once by StartHandlers before `accepting_`; read by inline senders.
  MessageHandler handler_;
  std::atomic<bool> accepting_{false};
  std::atomic<int> inline_running_{0};

  HandlerThreads handlers_;
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_
