#ifndef STRAND_CC_SELCC_NODE_STATE_H_
#define STRAND_CC_SELCC_NODE_STATE_H_

// What the parts of one compute node's SELCC share: options, node id, the
// cache, counters, the measured round-trip time, and the helper that builds
// a release of a frame's ownership (used by eviction, leases, handlers and
// Free). Owned by SelccManager; the handler and the evictor hold pointers.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "cc/cache_stats.h"
#include "cc/options.h"
#include "cc/selcc/cache.h"
#include "cc/selcc/frame.h"
#include "cc/selcc/latch_word.h"
#include "rdma/batch.h"

namespace strand::cc::selcc {

inline int64_t SteadyNowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CacheStats as atomics. A block written by one thread uses Bump (a relaxed
// load and store, no locked instruction on the hit path); blocks shared by
// handler threads use Add.
struct AtomicStats {
#define STRAND_DECLARE(f) std::atomic<uint64_t> f{0};
  STRAND_CACHE_STATS_FIELDS(STRAND_DECLARE)
#undef STRAND_DECLARE

  static void Bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  static void Add(std::atomic<uint64_t>& c, uint64_t n = 1) {
    c.fetch_add(n, std::memory_order_relaxed);
  }
  void AddTo(CacheStats& s) const {
#define STRAND_SUM(f) s.f += f.load(std::memory_order_relaxed);
    STRAND_CACHE_STATS_FIELDS(STRAND_SUM)
#undef STRAND_SUM
  }
};

struct NodeState {
  // `memory_nodes` of `memory_node_bytes` each: the pool the cache's frame
  // table covers.
  NodeState(const CcOptions& o, int node_id, int memory_nodes,
            uint64_t memory_node_bytes)
      : options(o),
        node(node_id),
        payload_bytes(o.payload_bytes()),
        cache(o.cache_bytes, o.gcl_size,
              FrameTable::Geometry{memory_nodes, memory_node_bytes, o.gcl_size},
              o.identity_frames),
        zeros(o.payload_bytes(), 0) {}

  const CcOptions options;
  const int node;
  const uint32_t payload_bytes;
  Cache cache;
  const std::vector<uint8_t> zeros;  // Free() clears payloads with it

  // Counters of handlers, the evictor and other shared paths.
  AtomicStats shared_stats;
  // Per-thread counter blocks (Bump), kept after their thread is gone.
  std::mutex stats_mu;  // std::mutex: visible to TSan (see cache.h)
  std::vector<std::shared_ptr<AtomicStats>> thread_stats;  // by stats_mu

  // Round trip of an atomic as measured by this node's threads (EWMA, ns):
  // the RTT of the back-off T = C * RTT / N_r (5.1.2) and of spin-waits.
  std::atomic<int64_t> rtt_ns{1000};
  // Worker threads (P of the lease formula, 5.3.1).
  std::atomic<int> worker_threads{0};

  // Failed peers (GclManager::SetPeerStates), a bit per node: fenced ones
  // are sent nothing and waited for no more; the holder fields and reader
  // bits of stealable ones are taken out of latch words by whoever meets
  // them. `stealers` counts threads between reading `stealable_peers` and
  // their CAS, so the mask can be narrowed safely (SetPeerStates waits
  // for them).
  std::atomic<uint64_t> fenced_peers{0};
  std::atomic<uint64_t> stealable_peers{0};
  std::atomic<int> stealers{0};
  bool IsFenced(int n) const {
    return n >= 0 && n < 64 &&
           ((fenced_peers.load(std::memory_order_relaxed) >> n) & 1) != 0;
  }

  void ObserveRtt(int64_t ns) {
    const int64_t old = rtt_ns.load(std::memory_order_relaxed);
    rtt_ns.store(old + (ns - old) / 8, std::memory_order_relaxed);
  }

  // Appends to `b` the WRITE of `f`'s dirty range (all of the payload when
  // dirty_bounds is off) from `src`, counting the flush into `stats`.
  void AppendFlush(const Frame& f, const uint8_t* src, rdma::Batch& b,
                   AtomicStats& stats, bool shared_stats_block) const {
    uint32_t begin = f.dirty_begin, end = f.dirty_end;
    if (begin != end && !options.dirty_bounds) {
      begin = 0;
      end = payload_bytes;
    }
    if (begin == end) return;
    b.Write(f.gcl + 8 + begin, src + begin, end - begin);
    if (shared_stats_block) {
      AtomicStats::Add(stats.flushes, 1);
      AtomicStats::Add(stats.flushed_bytes, end - begin);
    } else {
      AtomicStats::Bump(stats.flushes, 1);
      AtomicStats::Bump(stats.flushed_bytes, end - begin);
    }
  }

  // Appends to `b` the priority handover of `f` (kModified) to node `to`
  // (5.3.2): the flush of the dirty range, then FAA Handover(node, to). No
  // forward: `to` is not waiting for one (docs/design/selcc.md); memory is
  // current once the FAA lands, so `to`'s next CAS/FAA (batched with its
  // READ) finds itself holder and reads the line. One round trip.
  void AppendHandover(const Frame& f, int to, rdma::Batch& b,
                      AtomicStats& stats, bool shared_stats_block) const {
    AppendFlush(f, f.data, b, stats, shared_stats_block);
    b.FetchAndAdd(f.gcl, LatchWord::Handover(node, to), nullptr);
  }

  // Appends to `b` the release of `f`'s global ownership: for kModified the
  // WRITE of the dirty range (read from `src`, the payload copy: f->data or
  // a staging buffer) and FAA -Exclusive; for kShared FAA -Reader; nothing
  // for kInvalid. Counts flushes into `stats`. One round trip once executed.
  void AppendRelease(const Frame& f, const uint8_t* src, rdma::Batch& b,
                     AtomicStats& stats, bool shared_stats_block) const {
    switch (f.memo) {
      case Memo::kInvalid:
        return;
      case Memo::kShared:
        b.FetchAndAdd(f.gcl, LatchWord::ReleaseShared(node), nullptr);
        return;
      case Memo::kModified: {
        AppendFlush(f, src, b, stats, shared_stats_block);
        b.FetchAndAdd(f.gcl, LatchWord::ReleaseExclusive(node), nullptr);
        return;
      }
    }
  }
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_NODE_STATE_H_
