#ifndef STRAND_RDMA_VERBS_VERBS_FABRIC_H_
#define STRAND_RDMA_VERBS_VERBS_FABRIC_H_

// The verbs fabric (rdma-core): memory nodes are strand_memnode processes
// (or MemoryNodeServers in this process, for tests), reached with one-sided
// RDMA over RC queue pairs; compute nodes listed in the cluster file are
// hosted by their own processes, usually one each.
//
// Create() hosts compute node --node_id of --cluster and returns once every
// memory node answered and every compute node reached the start-up barrier
// (bootstrap.h), or, with FabricOptions::join_running (a process restarted
// after its node failed), once every memory node answered. CreateInProcess()
// builds a whole deployment in this process on one RDMA address: the memory
// nodes are served here and all compute nodes are hosted here, so the fabric
// suites run unchanged on verbs (tests/testing/test_fabric.h,
// STRAND_TEST_FABRIC=verbs).
//
// Fence(node) asks every memory node's control plane to move the node's
// queue pairs to the error state (fence_control.h) and does the same for
// the queue pairs it opened to the compute nodes hosted here; hosted
// endpoints also refuse the node's operations and messages at once. A
// process that hosts only some of the compute nodes fences only its own
// listeners: the peers in other processes are not told (not built, see
// docs/design/node_failure.md). Crash(node) is the in-process injection:
// the node's hosted endpoints fail, what others send it is dropped.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rdma/fabric.h"
#include "rdma/fabric_options.h"
#include "rdma/verbs/bootstrap.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/memory_node_server.h"
#include "rdma/verbs/queue_pair.h"

namespace strand::rdma::verbs {

class VerbsComputeNode;

class VerbsFabric : public Fabric {
 public:
  // How long start-up waits for nodes that are not up yet.
  static constexpr absl::Duration kStartupTimeout = absl::Seconds(60);

  // `startup_timeout`: how long to wait for nodes that are not up yet.
  static absl::StatusOr<std::unique_ptr<Fabric>> Create(
      const FabricOptions& options,
      absl::Duration startup_timeout = kStartupTimeout);
  static absl::StatusOr<std::unique_ptr<Fabric>> CreateInProcess(
      const FabricOptions& options, const std::string& address);
  ~VerbsFabric() override;

  int memory_node_count() const override {
    return static_cast<int>(config_.memory_nodes.size());
  }
  int compute_node_count() const override {
    return static_cast<int>(config_.compute_nodes.size());
  }
  std::vector<ComputeNodeId> local_compute_nodes() const override;
  absl::StatusOr<ComputeNode*> compute_node(ComputeNodeId id) override;
  uint64_t memory_node_bytes() const override { return region_bytes_; }
  uint64_t chunk_bytes() const override { return chunk_bytes_; }

  absl::Status Fence(ComputeNodeId node) override;
  absl::Status Unfence(ComputeNodeId node) override;
  absl::Status Crash(ComputeNodeId node) override;
  absl::Status FenceHere(ComputeNodeId node) override;
  absl::Status UnfenceHere(ComputeNodeId node) override;
  // How long Fence and Unfence wait for a memory node's control plane.
  static constexpr absl::Duration kFenceTimeout = absl::Seconds(10);

  // Endpoints' checks, one load each. Blocked: fenced or crashed; its
  // operations fail. Crashed: messages sent to it are lost without error.
  bool blocked(ComputeNodeId node) const {
    return (blocked_.load(std::memory_order_acquire) >> node) & 1;
  }
  bool crashed(ComputeNodeId node) const {
    return (crashed_.load(std::memory_order_acquire) >> node) & 1;
  }
  // How many times `node` was fenced: its endpoints' queue pairs opened
  // before the last fence are dead at the memory nodes and peers.
  uint32_t fence_count(ComputeNodeId node) const {
    return fence_counts_[node].load(std::memory_order_acquire);
  }
  // How many times peer `node` was admitted again here (UnfenceHere): the
  // queue pairs endpoints opened to it before lead to a dead incarnation.
  uint32_t admission_count(ComputeNodeId node) const {
    return admission_counts_[node].load(std::memory_order_acquire);
  }
  // Which life of hosted compute node `node` this is, sent with every
  // connection (wire.h): the wall clock in ns when this process started it
  // or readmitted it (Unfence). Listeners refuse a fenced node's
  // incarnations that started before the fence, by their own clock, so
  // the hosts' clocks must agree within the time a restart takes.
  uint64_t incarnation(ComputeNodeId node) const {
    return incarnations_[node].load(std::memory_order_acquire);
  }

  // For endpoints and compute nodes.
  const Device& device() const { return *device_; }
  const std::shared_ptr<Device>& shared_device() const { return device_; }
  const RemoteMemoryNode& memory_node(MemoryNodeId id) const {
    return memory_nodes_[id];
  }
  const ClusterNode& compute_node_address(ComputeNodeId id) const {
    return config_.compute_nodes[id];
  }
  // The compute node `id` if this process hosts it, else null.
  VerbsComputeNode* hosted(ComputeNodeId id) const { return hosted_[id].get(); }

 private:
  VerbsFabric(ClusterConfig config, std::shared_ptr<Device> device);
  // Starts the compute nodes in `hosted`, probes the memory nodes and meets
  // the remote compute nodes at the barrier.
  absl::Status Start(const std::vector<int>& hosted,
                     absl::Duration startup_timeout, bool join_running);
  // An endpoint of a hosted node other than `node`, not fenced itself.
  absl::StatusOr<Endpoint*> FenceEndpoint(ComputeNodeId node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(fence_mu_);
  // The listeners of the other compute nodes hosted here drop `node`'s
  // queue pairs and refuse its fenced incarnations' connections.
  absl::Status FenceListeners(ComputeNodeId node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(fence_mu_);
  // Fences or readmits `node` at every memory node.
  absl::Status RequestFenceEverywhere(Endpoint& endpoint, ComputeNodeId node,
                                      bool fenced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(fence_mu_);

  const std::shared_ptr<Device> device_;
  // Served in this process (CreateInProcess); outlive the compute nodes.
  std::vector<std::unique_ptr<MemoryNodeServer>> local_memory_nodes_;
  ClusterConfig config_;  // ports of hosted nodes filled in by Start()
  std::vector<RemoteMemoryNode> memory_nodes_;
  uint64_t region_bytes_ = 0;
  uint64_t chunk_bytes_ = 0;
  ibv_cq* barrier_cq_ = nullptr;
  std::vector<std::unique_ptr<QueuePair>> barrier_qps_;
  std::vector<std::unique_ptr<VerbsComputeNode>> hosted_;  // by id

  std::atomic<uint64_t> blocked_{0};  // bit per compute node
  std::atomic<uint64_t> crashed_{0};
  std::array<std::atomic<uint32_t>, 64> fence_counts_{};
  std::array<std::atomic<uint32_t>, 64> admission_counts_{};
  std::array<std::atomic<uint64_t>, 64> incarnations_{};
  absl::Mutex fence_mu_;  // one fence at a time; guards the endpoints
  // An endpoint per hosted node, for fencing the others; made when needed.
  std::vector<std::unique_ptr<Endpoint>> fence_endpoints_
      ABSL_GUARDED_BY(fence_mu_);
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_VERBS_FABRIC_H_
