#ifndef STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_
#define STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_

// A loopback endpoint: executes a batch by validating every op first (so a
// bad address fails the batch before anything changes), then running the ops
// in order on the memory node's mapping, then paying the cost model once for
// the whole batch. The time the copies and atomics take (a NIC's work, done
// here by the calling thread) goes to the thread's ledger apart from the
// model's charge (base/thread_ledger.h).
//
// Send delivers as FabricOptions::message_delivery says: inline, it runs
// the receiver's handler right here inside a ChargeScope (cost_model.h) with
// an endpoint of the receiver that this endpoint owns (one per receiver,
// made on first use; its counters are the receiver's, so the message and
// the handler's ops count as the receiver's), charged one-way before the
// handler; else it queues the message in the receiver's inbox.

#include <memory>
#include <vector>

#include "rdma/fabric.h"
#include "rdma/loopback/fence_gate.h"

namespace strand::rdma::loopback {

class LoopbackFabric;

class LoopbackEndpoint : public Endpoint {
 public:
  // Sits at `gate`, its node's fence gate (fence_gate.h), until destroyed;
  // it may be destroyed after its node.
  LoopbackEndpoint(LoopbackFabric* fabric, ComputeNodeId node,
                   std::shared_ptr<EndpointCounters> counters,
                   std::shared_ptr<FenceGate> gate);
  ~LoopbackEndpoint() override;

  ComputeNodeId node_id() const override { return node_; }
  absl::Status Execute(const Batch& batch) override;
  absl::Status WriteToPeer(const PeerAddress& dst, const void* src,
                           uint32_t length) override;
  absl::Status PostWriteToPeer(const PeerAddress& dst, const void* src,
                               uint32_t length) override;
  absl::Status Send(ComputeNodeId dst, const Message& message) override;
  void Multicast(absl::Span<const ComputeNodeId> dsts, const Message& message,
                 absl::Span<absl::Status> results) override;
  void SendEach(absl::Span<const ComputeNodeId> dsts,
                absl::Span<const Message> messages,
                absl::Span<absl::Status> results) override;
  FabricCounters Counters() const override { return counters_->Snapshot(); }

  // Counts a message handled by the handler thread owning this endpoint.
  void CountReceived() { counters_->AddMessageReceived(); }

 private:
  // Brackets one operation at the fence gate (fence_gate.h): a pass that
  // is not ok() is the fence's Unavailable.
  class Pass;
  // Unavailable if `node` is fenced (a failed node receives nothing).
  absl::Status CheckReachable(ComputeNodeId node) const;
  // Copies into a peer's registered memory; the NIC's work, timed.
  absl::Status CopyToPeer(const PeerAddress& dst, const void* src,
                          uint32_t length);
  // Checks `dst` and stamps the sender.
  absl::StatusOr<Message> Prepare(ComputeNodeId dst, const Message& message);
  // Delivers a prepared message: inline if possible, else to the inbox.
  absl::Status Deliver(ComputeNodeId dst, const Message& message);
  // The receiver's endpoint this thread's inline handlers of `dst` use.
  LoopbackEndpoint& InlineEndpoint(ComputeNodeId dst);

  LoopbackFabric* const fabric_;
  const ComputeNodeId node_;
  const std::shared_ptr<EndpointCounters> counters_;
  const std::shared_ptr<FenceGate> gate_;
  std::shared_ptr<FenceGate::Seat> seat_;
  std::vector<std::unique_ptr<LoopbackEndpoint>> inline_endpoints_;
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_
