#ifndef STRAND_RDMA_BLOCK_ALLOCATOR_H_
#define STRAND_RDMA_BLOCK_ALLOCATOR_H_

// Hands out fixed-size blocks (GCLs) of the memory pool to one compute node.
//
// Memory nodes do no work, so allocation is split in two levels:
//  - chunks: a compute node takes a whole chunk from a memory node by one FAA
//    on the bump pointer in that node's header (memory_node_layout.h);
//  - blocks: the compute node carves its chunks into blocks locally and keeps
//    its own free list. Free() puts a block back on this node's list.
// Chunks are taken round robin over the memory nodes, starting at a node that
// depends on the compute node id, so data spreads over all memory nodes.
//
// Cost: Allocate() is one round trip (the FAA) once per chunk_bytes /
// block_bytes blocks, and no remote op otherwise. Thread-safe; the FAA is
// issued outside the lock.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rdma/fabric.h"

namespace strand::rdma {

class BlockAllocator {
 public:
  // `block_bytes` must be a multiple of 8 and at most the chunk size.
  static absl::StatusOr<std::unique_ptr<BlockAllocator>> Create(
      const Fabric& fabric, ComputeNodeId node, uint64_t block_bytes);

  // A block nobody else holds. Its content is whatever was last written
  // there (zero for a never-used block). ResourceExhausted when every memory
  // node is full; the message names --pool_mb.
  absl::StatusOr<GlobalAddress> Allocate(Endpoint& endpoint);

  // Returns a block obtained from Allocate() (of any allocator with the same
  // block size) to this node's free list.
  void Free(GlobalAddress block);

  uint64_t block_bytes() const { return block_bytes_; }
  uint64_t free_blocks() const;
  uint64_t chunks_taken() const { return chunks_taken_.load(); }

 private:
  BlockAllocator(int memory_nodes, uint64_t region_bytes, uint64_t chunk_bytes,
                 ComputeNodeId node, uint64_t block_bytes);

  // Takes a chunk from some memory node with FAA and returns its blocks.
  absl::StatusOr<std::vector<GlobalAddress>> TakeChunk(Endpoint& endpoint);

  const int memory_nodes_;
  const uint64_t region_bytes_;
  const uint64_t chunk_bytes_;
  const uint64_t block_bytes_;
  std::atomic<uint64_t> next_memory_node_;
  std::atomic<uint64_t> chunks_taken_{0};
  // One flag per memory node, set once its bump pointer ran past the end.
  std::unique_ptr<std::atomic<bool>[]> exhausted_;

  mutable absl::Mutex mu_;
  std::vector<GlobalAddress> free_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_BLOCK_ALLOCATOR_H_
