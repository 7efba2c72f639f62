#ifndef STRAND_RDMA_VERBS_VERBS_COMPUTE_NODE_H_
#define STRAND_RDMA_VERBS_VERBS_COMPUTE_NODE_H_

// A compute node hosted in this process on the verbs fabric: its registered
// regions (what peers WriteToPeer into, and what endpoints use without
// staging), its receive ring and handler threads, and a listener that
// accepts the queue pairs of peers' endpoints onto the ring. It also
// records which peers reached the start-up barrier (bootstrap.h).

#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "rdma/fabric.h"
#include "rdma/handler_threads.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/listener.h"
#include "rdma/verbs/receive_ring.h"

namespace strand::rdma::verbs {

class VerbsFabric;

class VerbsComputeNode : public ComputeNode {
 public:
  // Registered over the node's life, unregistered ones included.
  static constexpr int kMaxRegions = 256;

  // Listens on `self`'s address and port (0 = any; see port()).
  static absl::StatusOr<std::unique_ptr<VerbsComputeNode>> Create(
      VerbsFabric* fabric, const ClusterNode& self);
  ~VerbsComputeNode() override;

  ComputeNodeId id() const override { return id_; }
  absl::StatusOr<std::unique_ptr<Endpoint>> NewEndpoint() override;
  absl::StatusOr<LocalRegion> RegisterLocalMemory(void* base,
                                                  uint64_t bytes) override;
  absl::Status UnregisterLocalMemory(void* base) override;
  absl::Status StartHandlers(MessageHandler handler, int threads) override;
  void StopHandlers() override;
  FabricCounters Counters() const override { return counters_.Sum(); }

  uint16_t port() const { return listener_->port(); }

  // Fencing (VerbsFabric::Fence): stops the queue pairs `peer`'s endpoints
  // opened to this node and refuses new ones of its fenced incarnations.
  absl::Status FenceIncoming(ComputeNodeId peer);

  // True and the region's lkey if [p, p + length) lies in a registered
  // region. Lock-free: endpoints call it on the data path.
  bool LocalKey(const void* p, uint64_t length, uint32_t* lkey) const;
  // Whether a peer may write [dst, dst + length): the same checks and
  // errors as loopback.
  absl::Status CheckPeerWrite(const PeerAddress& dst, uint64_t length) const;
  bool accepts_messages() const {
    return !handlers_stopped_.load(std::memory_order_acquire);
  }

  // Waits until every node of `peers` connected to the barrier, or names
  // the ones that did not by `deadline`.
  absl::Status AwaitBarrier(const std::vector<ClusterNode>& peers,
                            absl::Time deadline);

 private:
  VerbsComputeNode(VerbsFabric* fabric, ComputeNodeId id)
      : fabric_(fabric), id_(id) {}
  absl::StatusOr<Listener::Accept> OnConnect(absl::string_view request);
  absl::Status ReopenHandlers() override;

  VerbsFabric* const fabric_;
  const ComputeNodeId id_;
  CounterRegistry counters_;

  // Append-only; a region is published by the release store of the count,
  // so lookups read it without a lock.
  absl::Mutex register_mu_;
  std::array<LocalRegion, kMaxRegions> regions_;
  // Cleared, never set again, when a region is unregistered.
  std::array<std::atomic<bool>, kMaxRegions> live_{};
  std::array<uint32_t, kMaxRegions> lkeys_{};
  std::vector<MemoryRegion> mrs_ ABSL_GUARDED_BY(register_mu_);
  std::atomic<int> region_count_{0};

  absl::Mutex barrier_mu_;
  absl::flat_hash_set<int> arrived_ ABSL_GUARDED_BY(barrier_mu_);

  std::atomic<bool> handlers_stopped_{false};
  HandlerThreads handlers_;

  // The listener owns the queue pairs attached to the ring: declared after
  // it, so it is destroyed first.
  std::unique_ptr<ReceiveRing> ring_;
  std::unique_ptr<Listener> listener_;
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_VERBS_COMPUTE_NODE_H_
