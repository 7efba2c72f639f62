#include "rdma/loopback/loopback_fabric.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "rdma/loopback/loopback_compute_node.h"
#include "rdma/loopback/memory_populator.h"
#include "rdma/memory_node_layout.h"

namespace strand::rdma::loopback {

absl::StatusOr<std::unique_ptr<LoopbackMemoryNode>> LoopbackMemoryNode::Create(
    uint64_t bytes, uint64_t chunk_bytes) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot map a %d MiB memory node: %s; lower "
                        "EngineOptions::fabric.pool_bytes (--pool_mb)",
                        bytes >> 20, std::strerror(errno)));
  }
  InitMemoryNodeRegion(base, bytes, chunk_bytes);
  return std::unique_ptr<LoopbackMemoryNode>(
      new LoopbackMemoryNode(static_cast<uint8_t*>(base), bytes));
}

LoopbackMemoryNode::~LoopbackMemoryNode() { munmap(base_, bytes_); }

LoopbackFabric::LoopbackFabric(const FabricOptions& options)
    : options_(options),
      cost_model_(CostModelOptions{options.rtt_ns, options.bandwidth_gbps,
                                   options.nic_op_ns, options.nic_gbps},
                  options.memory_nodes) {}

LoopbackFabric::~LoopbackFabric() {
  populator_.Stop();  // before the regions it populates go away
  // Handler threads may still touch memory nodes: stop them first.
  for (auto& node : compute_nodes_) node->StopHandlers();
  compute_nodes_.clear();
  memory_nodes_.clear();
}

absl::StatusOr<std::unique_ptr<Fabric>> LoopbackFabric::Create(
    const FabricOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  std::unique_ptr<LoopbackFabric> fabric(new LoopbackFabric(options));
  for (int i = 0; i < options.memory_nodes; ++i) {
    auto node =
        LoopbackMemoryNode::Create(options.pool_bytes, options.chunk_bytes);
    if (!node.ok()) return node.status();
    fabric->CommitMemory((*node)->base(), (*node)->bytes());
    fabric->memory_nodes_.push_back(*std::move(node));
  }
  for (int i = 0; i < options.compute_nodes; ++i) {
    fabric->compute_nodes_.push_back(std::make_unique<LoopbackComputeNode>(
        fabric.get(), static_cast<ComputeNodeId>(i)));
  }
  return std::unique_ptr<Fabric>(std::move(fabric));
}

void LoopbackFabric::CommitMemory(void* base, uint64_t bytes) {
  switch (options_.populate_memory) {
    case PopulateMode::kOnFirstTouch:
      return;
    case PopulateMode::kInBackground:
      populator_.Add(base, bytes);
      return;
    case PopulateMode::kAtStart:
      PopulateMemory(base, bytes);
      return;
  }
}

std::vector<ComputeNodeId> LoopbackFabric::local_compute_nodes() const {
  std::vector<ComputeNodeId> ids;
  for (const auto& node : compute_nodes_) ids.push_back(node->id());
  return ids;
}

absl::StatusOr<ComputeNode*> LoopbackFabric::compute_node(ComputeNodeId id) {
  if (id >= compute_nodes_.size()) {
    return absl::NotFoundError(
        absl::StrFormat("compute node %d does not exist: the deployment has %d "
                        "(EngineOptions::fabric.compute_nodes, "
                        "--compute_nodes)",
                        id, compute_nodes_.size()));
  }
  return compute_nodes_[id].get();
}

absl::StatusOr<uint8_t*> LoopbackFabric::Translate(GlobalAddress addr,
                                                   uint64_t length) const {
  if (addr.node() >= memory_nodes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("address %s names memory node %d, but there are %d",
                        addr.ToString(), addr.node(), memory_nodes_.size()));
  }
  const LoopbackMemoryNode& node = *memory_nodes_[addr.node()];
  if (addr.offset() > node.bytes() || length > node.bytes() - addr.offset()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%d bytes at %s run past the end of the %d-byte memory node", length,
        addr.ToString(), node.bytes()));
  }
  return node.base() + addr.offset();
}

absl::Status LoopbackFabric::Fence(ComputeNodeId node) {
  if (node >= compute_nodes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("fence of compute node %d, but there are %d", node,
                        compute_nodes_.size()));
  }
  if (!compute_nodes_[node]->gate().Fence()) {
    return Fabric::Fence(node);  // not armed
  }
  return absl::OkStatus();
}

absl::Status LoopbackFabric::Crash(ComputeNodeId node) {
  if (node >= compute_nodes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("crash of compute node %d, but there are %d", node,
                        compute_nodes_.size()));
  }
  if (!compute_nodes_[node]->gate().Kill()) return Fabric::Crash(node);
  return absl::OkStatus();
}

absl::Status LoopbackFabric::Unfence(ComputeNodeId node) {
  if (node >= compute_nodes_.size() || !compute_nodes_[node]->gate().armed()) {
    return Fabric::Unfence(node);
  }
  compute_nodes_[node]->gate().Unfence();
  return absl::OkStatus();
}

}  // namespace strand::rdma::loopback
