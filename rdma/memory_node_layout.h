#ifndef STRAND_RDMA_MEMORY_NODE_LAYOUT_H_
#define STRAND_RDMA_MEMORY_NODE_LAYOUT_H_

// The layout of a memory node's registered region. A memory node does no
// work after start-up, so everything compute nodes need to share about it
// lives in the region itself:
//
//   [0, 4 KiB)        header: magic, format, sizes, and the chunk bump
//                     pointer that compute nodes advance with FAA
//   [4 KiB, 64 KiB)   root area: well-known words and lines that upper layers
//                     place at fixed offsets (catalog, timestamp oracle)
//   [64 KiB, size)    chunks, handed out whole by the bump pointer
//
// The region is zero-filled at start-up except for the header.

#include <cstdint>

namespace strand::rdma {

struct MemoryNodeHeader {
  static constexpr uint64_t kMagic = 0x4e4d444e41525453;  // "STRANDMN"
  static constexpr uint64_t kFormatVersion = 2;
  static constexpr int kFenceWords = 64;  // compute nodes that can be fenced

  uint64_t magic;
  uint64_t format_version;
  uint64_t region_bytes;
  uint64_t chunk_bytes;
  // Offset of the next free chunk; advanced by FAA(chunk_bytes). It may run
  // past region_bytes once the node is full: a compute node that gets an
  // offset beyond the end knows the node is exhausted.
  uint64_t next_chunk_offset;
  // Fencing over verbs (rdma/verbs/fence_control.h), per compute node: the
  // generation compute nodes ask for (odd: fenced, even: admitted), and the
  // last one the memory node's control plane applied to its queue pairs.
  uint64_t fence_requested[kFenceWords];
  uint64_t fence_applied[kFenceWords];
};

inline constexpr uint64_t kHeaderOffset = 0;
inline constexpr uint64_t kNextChunkWordOffset =
    __builtin_offsetof(MemoryNodeHeader, next_chunk_offset);
inline constexpr uint64_t kRootAreaOffset = 4096;
inline constexpr uint64_t kRootAreaBytes = 60 * 1024;
inline constexpr uint64_t kFirstChunkOffset = kRootAreaOffset + kRootAreaBytes;

inline constexpr uint64_t FenceRequestedWordOffset(int compute_node) {
  return __builtin_offsetof(MemoryNodeHeader, fence_requested) +
         8 * static_cast<uint64_t>(compute_node);
}
inline constexpr uint64_t FenceAppliedWordOffset(int compute_node) {
  return __builtin_offsetof(MemoryNodeHeader, fence_applied) +
         8 * static_cast<uint64_t>(compute_node);
}

static_assert(sizeof(MemoryNodeHeader) <= kRootAreaOffset);
static_assert(FenceRequestedWordOffset(0) % 8 == 0, "atomics need words");
static_assert(kNextChunkWordOffset % 8 == 0, "FAA needs an aligned word");

// Writes a fresh header into a zeroed region. Used by every backend at
// memory-node start-up (the loopback fabric and strand_memnode).
void InitMemoryNodeRegion(void* region, uint64_t region_bytes,
                          uint64_t chunk_bytes);

}  // namespace strand::rdma

#endif  // STRAND_RDMA_MEMORY_NODE_LAYOUT_H_
