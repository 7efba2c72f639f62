#ifndef STRAND_CC_OPTIONS_H_
#define STRAND_CC_OPTIONS_H_

// Settings of the coherence layer, fixed for the life of an engine. Every
// optimization of the paper has its own switch so its ablation (Figure 15)
// can be re-run without a rebuild.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/option_naming.h"

namespace strand::cc {

enum class Protocol {
  kSelcc,  // cached, lazy release, invalidation messages (the paper)
  kSel,    // no cache, eager release: the baseline
};

absl::StatusOr<Protocol> ParseProtocol(const std::string& name);
const char* ProtocolName(Protocol protocol);

// How much of an index node the B-link tree asks the prefetch hints
// (GclManager::PrefetchLines) for before it searches it. (Tuples are
// prefetched whole either way: a read copies all of a tuple, and
// prefetching its first line only measured slower.)
enum class PrefetchScope {
  // The lines a search will touch: the node's header and fences and the
  // few entries around where the key is expected. Cheap on the CPU: each
  // hint is a handful of prefetch instructions.
  kNarrow,
  // Whole nodes (64 lines of a 4 KiB node): a search never waits for a
  // line, but the prefetches queue on the core's few line-fill buffers
  // (14.7% of a TPC-C profile). For the ablation.
  kFull,
};

absl::StatusOr<PrefetchScope> ParsePrefetchScope(const std::string& name);
const char* PrefetchScopeName(PrefetchScope scope);

// Faults a protocol test injects into SELCC's invalidation handling.
struct CcFaults {
  // Delay before a handler processes an invalidation.
  absl::Duration message_delay = absl::ZeroDuration();
  // The probability that a handler drops an invalidation as if busy.
  double drop_probability = 0;
};

struct CcOptions {
  Protocol protocol = Protocol::kSelcc;

  // Bytes of one GCL including its 8-byte latch word (--gcl_size). A
  // multiple of 64 from 128 to the fabric's chunk size.
  uint32_t gcl_size = 1024;
  // Bytes of GCL copies a compute node may cache (--cache_mb). SELCC only.
  // 0 (kAutoCacheBytes, the default): as much as the pool, capped by the
  // memory available (cache_sizing.h); GclManager::Create resolves it, and
  // the manager's options() then hold the size in use.
  uint64_t cache_bytes = 0;
  static constexpr uint64_t kAutoCacheBytes = 0;
  // Message handler threads per compute node. SELCC only.
  int handler_threads = 1;

  // How long a lock request may wait before it reports DeadlineExceeded
  // (there is no unbounded wait anywhere in cc/).
  absl::Duration lock_timeout = absl::Seconds(10);

  // SELCC optimizations (paper section in brackets).
  bool gcl_forwarding = true;    // ownership handover + forwarding (4.4.1)
  bool batched_eviction = true;  // background batched flushes (5.2.1)
  bool dirty_bounds = true;      // flush only the dirty range (5.2.2)
  // Lease threshold gamma (5.3.1). Once a peer's invalidation was dropped
  // because local threads held the line, the node counts local accesses
  // that waited (R_c / threads + W_c) and gives the line up at the next
  // unlock once the count reaches gamma: 0 gives it up at the very next
  // unlock; kInfiniteLease never does (leases off).
  int64_t lease_gamma = 64;
  static constexpr int64_t kInfiniteLease = INT64_MAX;
  bool spin_wait = true;          // readers wait for starved writers (5.3.2)
  bool priority_matching = true;  // only as-urgent readers may invalidate

  // Write-through (docs/design/node_failure.md): an exclusive unlock that
  // changed the line writes its dirty bytes to memory before the local
  // latch goes (the global latch stays: lazy release is unchanged), and a
  // commit writes all of its lines in one batch (txn/write_set.h). Memory
  // then holds every byte of every finished critical section, so a
  // compute node that fails leaves only its unfinished writes behind in
  // its cache. Costs one round trip per exclusive unlock that wrote
  // something outside a commit. What surviving a compute node's failure
  // needs (SELCC: SEL writes at every unlock anyway); a deployment that
  // cannot fail leaves it off and pays nothing.
  bool write_through = false;

  // What index/ prefetches (--prefetch). Changes no result.
  PrefetchScope prefetch = PrefetchScope::kNarrow;
  // SELCC's identity frames (--identity_frames, selcc/cache.h): a miss
  // takes the frame its GCL's address names when that is free, and a hit
  // looks there before the frame table. Changes no result.
  bool identity_frames = true;

  // Faults the protocol tests inject (no flag sets them; a deployment
  // leaves them off).
  CcFaults testing_faults;

  uint32_t payload_bytes() const { return gcl_size - 8; }

  // Range and combination checks, for a fabric of `chunk_bytes` chunks.
  // The message names the setting to change as `naming` says
  // (base/option_naming.h); by default as a field, "CcOptions::gcl_size".
  absl::Status Validate(uint64_t chunk_bytes) const;
  absl::Status Validate(uint64_t chunk_bytes, const OptionNaming& naming) const;
};

}  // namespace strand::cc

#endif  // STRAND_CC_OPTIONS_H_
