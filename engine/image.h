#ifndef STRAND_ENGINE_IMAGE_H_
#define STRAND_ENGINE_IMAGE_H_

// Pool images: a copy of every memory node's used region in one file, the
// initial image recovery replays the logs over (engine/recovery.h).
//
// An image is taken with no transaction running and no compute-node cache
// holding dirty lines (Engine::SaveImage; a cluster's compute processes each
// call Engine::WriteBackCaches first and stay up). It records the timestamp
// oracle's value then: every commit in it has a smaller commit timestamp,
// every later one a larger. Tuples keep their addresses after a restore
// (the allocator state lives in the region). The header records the layout
// the bytes only make sense in (memory nodes, region and chunk size, GCL
// size), and restoring checks all of it. A crash while writing leaves the
// old image or the new one, never half of one. WriteImage works over any
// fabric; RestoreImage only on the loopback fabric, in this process
// (others: Unimplemented; recovery runs offline there: strand_recover).
// File format and how images are taken: docs/design/recovery.md.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/image_info.h"
#include "rdma/fabric.h"

namespace strand::engine {

// Writes the image of `fabric`'s memory nodes (nobody may be using them),
// whose GCLs are `gcl_size` bytes. Over a remote fabric it costs one READ
// round trip per 256 KiB.
absl::StatusOr<ImageInfo> WriteImage(rdma::Fabric& fabric,
                                     const std::string& path,
                                     uint32_t gcl_size);

// The header of the image at `path`, without its data: the layout to open
// it with. NotFound / PermissionDenied (or another errno's code) if it
// cannot be opened; InvalidArgument if it is not an image;
// FailedPrecondition if it has a newer version.
absl::StatusOr<ImageInfo> ReadImageHeader(const std::string& path);

// Loads an image into `fabric`'s freshly created memory nodes, before any
// compute node uses them, for an engine with GCLs of `gcl_size` bytes.
// FailedPrecondition if the deployment differs (memory node count, region
// or chunk size, GCL size); DataLoss on a CRC mismatch; InvalidArgument if
// the file is not an image.
absl::StatusOr<ImageInfo> RestoreImage(rdma::Fabric& fabric,
                                       const std::string& path,
                                       uint32_t gcl_size);

}  // namespace strand::engine

#endif  // STRAND_ENGINE_IMAGE_H_
