#ifndef STRAND_CC_CACHE_SIZING_H_
#define STRAND_CC_CACHE_SIZING_H_

// How large an automatically sized SELCC cache is (CcOptions::cache_bytes
// == CcOptions::kAutoCacheBytes, the default; --cache_mb=0 in the binaries).
//
// A cache smaller than what its node works on costs every transaction:
// misses copy whole lines, and the evictor thread writes lines back and
// releases them, which on a small machine takes CPU from the workers (a
// TPC-C profile, docs/results.md: 64 MiB against ~95 MiB per warehouse, a hit
// ratio of 0.990 and 8% of the CPU in the evictor). So an auto cache is as
// large as what its node may touch, bounded by the machine:
//
//   cache = clamp(wanted, 16 GCLs, RamCap)
//   RamCap = MemAvailable / 4 / compute nodes in this process
//
// `wanted` is the whole pool (every memory node's bytes: a single node then
// never evicts) unless the caller knows better (tpcc sizes it from its
// node's share of the warehouses). A large cache is cheap where nothing
// touches it: frames are backed on first use (base/huge_page_memory.h);
// the verbs backend registers, and so pins, the whole arena, hence the cap
// by the memory available when the node starts.

#include <cstdint>

namespace strand::cc {

// MemAvailable of /proc/meminfo (what can be allocated without swapping),
// or the physical memory where that is not readable.
uint64_t AvailableMemoryBytes();

// The largest auto cache of one of `local_compute_nodes` compute nodes in
// this process, given `available_bytes` of memory.
uint64_t AutoCacheCapBytes(uint64_t available_bytes, int local_compute_nodes);

// An auto cache of `wanted_bytes` for GCLs of `gcl_size`: at least the
// 16 lines CcOptions::Validate asks for, at most `cap_bytes`, a whole
// number of GCLs.
uint64_t AutoCacheBytes(uint64_t wanted_bytes, uint32_t gcl_size,
                        uint64_t cap_bytes);

}  // namespace strand::cc

#endif  // STRAND_CC_CACHE_SIZING_H_
