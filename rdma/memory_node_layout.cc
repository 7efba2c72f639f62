#include "rdma/memory_node_layout.h"

#include <cstring>

namespace strand::rdma {

void InitMemoryNodeRegion(void* region, uint64_t region_bytes,
                          uint64_t chunk_bytes) {
  MemoryNodeHeader header{};
  header.magic = MemoryNodeHeader::kMagic;
  header.format_version = MemoryNodeHeader::kFormatVersion;
  header.region_bytes = region_bytes;
  header.chunk_bytes = chunk_bytes;
  header.next_chunk_offset = kFirstChunkOffset;
  std::memcpy(static_cast<char*>(region) + kHeaderOffset, &header,
              sizeof(header));
}

}  // namespace strand::rdma
