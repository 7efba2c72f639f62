#ifndef STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_
#define STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_

// A loopback endpoint: executes a batch by validating every op first (so a
// bad address fails the batch before anything changes), then running the ops
// in order on the memory node's mapping, then paying the cost model once for
// the whole batch.

#include <memory>

#include "rdma/fabric.h"

namespace strand::rdma {

class LoopbackFabric;

class LoopbackEndpoint : public Endpoint {
 public:
  LoopbackEndpoint(LoopbackFabric* fabric, ComputeNodeId node,
                   std::shared_ptr<EndpointCounters> counters)
      : fabric_(fabric), node_(node), counters_(std::move(counters)) {}

  ComputeNodeId node_id() const override { return node_; }
  absl::Status Execute(const Batch& batch) override;
  absl::Status WriteToPeer(const PeerAddress& dst, const void* src,
                           uint32_t length) override;
  absl::Status Send(ComputeNodeId dst, const Message& message) override;
  FabricCounters Counters() const override { return counters_->Snapshot(); }

  // Counts a message handled by the handler thread owning this endpoint.
  void CountReceived() { counters_->AddMessageReceived(); }

 private:
  LoopbackFabric* const fabric_;
  const ComputeNodeId node_;
  const std::shared_ptr<EndpointCounters> counters_;
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_LOOPBACK_LOOPBACK_ENDPOINT_H_
