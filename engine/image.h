#ifndef STRAND_ENGINE_IMAGE_H_
#define STRAND_ENGINE_IMAGE_H_

// Pool images: a copy of every memory node's used region in one file, the
// initial image recovery replays the logs over (engine/recovery.h).
//
// An image is taken with no transaction running and no compute-node cache
// holding dirty lines: Engine::SaveImage destroys the compute-node runtimes
// first (SELCC writes back and releases every line then); the compute
// processes of a cluster each call Engine::WriteBackCaches and stay up,
// and one of them writes the image. It records the
// timestamp oracle's value at that moment: every commit in it has a smaller
// commit timestamp, every later one a larger; recovery replays the latter.
// Allocator state (each node's chunk bump pointer) lives in the region, so
// tuples that existed at the image keep their addresses after a restore.
//
// File (little endian; version 3; version 2 had no compute_nodes, version
// 1 no gcl_size either):
//   0 magic u64 "STRANDIM"  8 version u32  12 memory_nodes u32
//  16 database_id u64      24 timestamp u64   32 region_bytes u64
//  40 chunk_bytes u64      48 gcl_size u32    52 compute_nodes u32
//  56 reserved (zero) up to 64
//   then per memory node: used_bytes u64, crc32c u32, 0 u32, used_bytes of
//   the region from offset 0 (header, root area, allocated chunks).
// Written to <path>.tmp, fsynced and renamed, so a crash leaves the old
// image or the new one, never half of one.
//
// The header records the layout the bytes only make sense in: memory
// nodes, region and chunk size, and the GCL size (cc/options.h: every
// heap page and index node is one GCL, so an engine with another GCL size
// would misread every table and index). Restoring checks all of them.
//
// WriteImage reads the loopback fabric's memory nodes in place and any
// other fabric's with one-sided READs through a compute node this process
// hosts. RestoreImage fills memory nodes before a compute node runs, which
// only the loopback fabric's, in this process, allow; other fabrics get
// Unimplemented (recovery runs offline on the loopback: strand_recover).

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
