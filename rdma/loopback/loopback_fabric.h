#ifndef STRAND_RDMA_LOOPBACK_LOOPBACK_FABRIC_H_
#define STRAND_RDMA_LOOPBACK_LOOPBACK_FABRIC_H_

// The embedded fabric: every memory node is an anonymous mapping in this
// process and every compute node is hosted here. One-sided ops are memory
// copies and std::atomic_ref read-modify-writes, charged by the CostModel.
// It is the default deployment and what the tests run on.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "rdma/fabric.h"
#include "rdma/fabric_options.h"
#include "rdma/loopback/cost_model.h"
#include "rdma/loopback/memory_populator.h"

namespace strand::rdma::loopback {

class LoopbackComputeNode;

// One memory node: a zero-filled anonymous mapping. Pages are committed on
// first touch, so a large --pool_mb costs only what is used, unless the
// fabric commits them (LoopbackFabric::CommitMemory).
class LoopbackMemoryNode {
 public:
  static absl::StatusOr<std::unique_ptr<LoopbackMemoryNode>> Create(
      uint64_t bytes, uint64_t chunk_bytes);
  ~LoopbackMemoryNode();

  uint8_t* base() const { return base_; }
  uint64_t bytes() const { return bytes_; }

 private:
  LoopbackMemoryNode(uint8_t* base, uint64_t bytes)
      : base_(base), bytes_(bytes) {}
  uint8_t* const base_;
  const uint64_t bytes_;
};

class LoopbackFabric : public Fabric {
 public:
  static absl::StatusOr<std::unique_ptr<Fabric>> Create(
      const FabricOptions& options);
  ~LoopbackFabric() override;

  int memory_node_count() const override {
    return static_cast<int>(memory_nodes_.size());
  }
  int compute_node_count() const override {
    return static_cast<int>(compute_nodes_.size());
  }
  std::vector<ComputeNodeId> local_compute_nodes() const override;
  absl::StatusOr<ComputeNode*> compute_node(ComputeNodeId id) override;
  uint64_t memory_node_bytes() const override { return options_.pool_bytes; }
  uint64_t chunk_bytes() const override { return options_.chunk_bytes; }
  void WaitUntilPopulated() override { populator_.WaitUntilIdle(); }
  absl::Status Fence(ComputeNodeId node) override;
  absl::Status Unfence(ComputeNodeId node) override;
  absl::Status Crash(ComputeNodeId node) override;
  const FabricOptions& options() const { return options_; }

  // For endpoints: the local pointer behind [addr, addr + length), or an
  // error naming the bad address.
  absl::StatusOr<uint8_t*> Translate(GlobalAddress addr, uint64_t length) const;
  // The hosted compute node `id` (checked by the caller).
  LoopbackComputeNode& node(ComputeNodeId id) { return *compute_nodes_[id]; }
  const CostModel& cost_model() const { return cost_model_; }
  // Commits [base, base + bytes) (a memory node's region, or one a compute
  // node registers) as options().populate_memory says: not at all (first
  // touch), now, or on the populator's thread.
  void CommitMemory(void* base, uint64_t bytes);

 private:
  explicit LoopbackFabric(const FabricOptions& options);

  const FabricOptions options_;
  const CostModel cost_model_;
  std::vector<std::unique_ptr<LoopbackMemoryNode>> memory_nodes_;
  std::vector<std::unique_ptr<LoopbackComputeNode>> compute_nodes_;
  MemoryPopulator populator_;  // stopped first: it touches the regions
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_LOOPBACK_FABRIC_H_
