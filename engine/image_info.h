#ifndef STRAND_ENGINE_IMAGE_INFO_H_
#define STRAND_ENGINE_IMAGE_INFO_H_

// What a pool image's header records (image.h says how images are taken
// and restored; docs/design/recovery.md has the file format).

#include <cstdint>

namespace strand::engine {

struct ImageInfo {
  uint64_t database_id = 0;  // RootWord::kDatabaseId (0: never logged)
  uint64_t timestamp = 0;    // the oracle word when the image was taken
  uint32_t memory_nodes = 0;
  uint64_t region_bytes = 0;  // per memory node (--pool_mb)
  uint64_t chunk_bytes = 0;   // allocation chunk (--chunk_kb)
  uint32_t gcl_size = 0;      // 0: unknown (a version 1 image)
  // The deployment's compute nodes, whose logs continue the image (0:
  // unknown, an image before version 3).
  uint32_t compute_nodes = 0;
  uint64_t bytes = 0;  // of region data in the file (0 from ReadImageHeader)
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_IMAGE_INFO_H_
