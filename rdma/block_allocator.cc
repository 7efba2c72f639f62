#include "rdma/block_allocator.h"

#include "absl/strings/str_format.h"
#include "rdma/memory_node_layout.h"

namespace strand::rdma {

absl::StatusOr<std::unique_ptr<BlockAllocator>> BlockAllocator::Create(
    const Fabric& fabric, ComputeNodeId node, uint64_t block_bytes) {
  if (block_bytes == 0 || block_bytes % 8 != 0 ||
      block_bytes > fabric.chunk_bytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "block size %d is not valid: use a multiple of 8 up to the chunk "
        "size %d (EngineOptions::fabric.chunk_bytes, --chunk_kb)",
        block_bytes, fabric.chunk_bytes()));
  }
  return std::unique_ptr<BlockAllocator>(
      new BlockAllocator(fabric.memory_node_count(), fabric.memory_node_bytes(),
                         fabric.chunk_bytes(), node, block_bytes));
}

BlockAllocator::BlockAllocator(int memory_nodes, uint64_t region_bytes,
                               uint64_t chunk_bytes, ComputeNodeId node,
                               uint64_t block_bytes)
    : memory_nodes_(memory_nodes),
      region_bytes_(region_bytes),
      chunk_bytes_(chunk_bytes),
      block_bytes_(block_bytes),
      next_memory_node_(node),
      exhausted_(new std::atomic<bool>[memory_nodes]) {
  for (int i = 0; i < memory_nodes; ++i) exhausted_[i] = false;
}

absl::StatusOr<GlobalAddress> BlockAllocator::Allocate(Endpoint& endpoint) {
  {
    absl::MutexLock lock(&mu_);
    if (!free_.empty()) {
      GlobalAddress block = free_.back();
      free_.pop_back();
      return block;
    }
  }
  auto blocks = TakeChunk(endpoint);
  if (!blocks.ok()) return blocks.status();
  GlobalAddress mine = blocks->back();
  blocks->pop_back();
  absl::MutexLock lock(&mu_);
  free_.insert(free_.end(), blocks->begin(), blocks->end());
  return mine;
}

absl::StatusOr<std::vector<GlobalAddress>> BlockAllocator::TakeChunk(
    Endpoint& endpoint) {
  for (int attempt = 0; attempt < memory_nodes_; ++attempt) {
    const auto mn = static_cast<MemoryNodeId>(
        next_memory_node_.fetch_add(1) % static_cast<uint64_t>(memory_nodes_));
    if (exhausted_[mn].load(std::memory_order_relaxed)) continue;
    auto offset = endpoint.FetchAndAdd(GlobalAddress(mn, kNextChunkWordOffset),
                                       chunk_bytes_);
    if (!offset.ok()) return offset.status();
    if (*offset > region_bytes_ || chunk_bytes_ > region_bytes_ - *offset) {
      exhausted_[mn].store(true, std::memory_order_relaxed);
      continue;
    }
    chunks_taken_.fetch_add(1, std::memory_order_relaxed);
    std::vector<GlobalAddress> blocks;
    const uint64_t count = chunk_bytes_ / block_bytes_;
    blocks.reserve(count);
    // Reverse order so Allocate() pops blocks in address order.
    for (uint64_t i = count; i-- > 0;) {
      blocks.push_back(GlobalAddress(mn, *offset + i * block_bytes_));
    }
    return blocks;
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "the memory pool is exhausted: %d memory node(s) of %d MiB are full; "
      "raise EngineOptions::fabric.pool_bytes (--pool_mb) or "
      "fabric.memory_nodes (--memory_nodes)",
      memory_nodes_, region_bytes_ >> 20));
}

void BlockAllocator::Free(GlobalAddress block) {
  absl::MutexLock lock(&mu_);
  free_.push_back(block);
}

uint64_t BlockAllocator::free_blocks() const {
  absl::MutexLock lock(&mu_);
  return free_.size();
}

}  // namespace strand::rdma
