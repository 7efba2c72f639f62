#ifndef STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_
#define STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_

// A compute node of the loopback fabric: its registered regions (what peers
// may WriteToPeer into), its message inbox and handler threads, and the
// counters of its endpoints.

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "rdma/fabric.h"
#include "rdma/handler_threads.h"
#include "rdma/loopback/message_inbox.h"

namespace strand::rdma {

class LoopbackFabric;

class LoopbackComputeNode : public ComputeNode {
 public:
  static constexpr int kMaxRegions = 64;
  static constexpr size_t kInboxCapacity = 1 << 16;

  LoopbackComputeNode(LoopbackFabric* fabric, ComputeNodeId id);
  ~LoopbackComputeNode() override;

  ComputeNodeId id() const override { return id_; }
  absl::StatusOr<std::unique_ptr<Endpoint>> NewEndpoint() override;
  absl::StatusOr<LocalRegion> RegisterLocalMemory(void* base,
                                                  uint64_t bytes) override;
  absl::Status StartHandlers(MessageHandler handler, int threads) override;
  void StopHandlers() override;
  FabricCounters Counters() const override { return counters_.Sum(); }

  // For peers' endpoints: the pointer behind [dst, dst + length) if it lies
  // in one of this node's registered regions.
  absl::StatusOr<uint8_t*> TranslatePeer(const PeerAddress& dst,
                                         uint64_t length) const;
  MessageInbox& inbox() { return inbox_; }

 private:
  LoopbackFabric* const fabric_;
  const ComputeNodeId id_;
  CounterRegistry counters_;
  MessageInbox inbox_;

  // Append-only; a region is published by the release store of the count,
  // so TranslatePeer reads it without a lock.
  absl::Mutex register_mu_;
  std::array<LocalRegion, kMaxRegions> regions_;
  std::atomic<int> region_count_{0};

  HandlerThreads handlers_;
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_LOOPBACK_LOOPBACK_COMPUTE_NODE_H_
