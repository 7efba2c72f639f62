#ifndef STRAND_RDMA_VERBS_VERBS_FABRIC_H_
#define STRAND_RDMA_VERBS_VERBS_FABRIC_H_

// The verbs fabric (rdma-core): memory nodes are strand_memnode processes
// (or MemoryNodeServers in this process, for tests), reached with one-sided
// RDMA over RC queue pairs; compute nodes listed in the cluster file are
// hosted by their own processes, usually one each.
//
// Create() hosts compute node --node_id of --cluster and returns once every
// memory node answered and every compute node reached the start-up barrier
// (bootstrap.h). CreateInProcess() builds a whole deployment in this
// process on one RDMA address: the memory nodes are served here and all
// compute nodes are hosted here, so the fabric suites run unchanged on
// verbs (tests/testing/test_fabric.h, STRAND_TEST_FABRIC=verbs).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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
                     absl::Duration startup_timeout);

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
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_VERBS_FABRIC_H_
