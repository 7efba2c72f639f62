#ifndef STRAND_CC_CACHE_STATS_H_
#define STRAND_CC_CACHE_STATS_H_

// What the coherence layer did, per compute node. Benchmarks divide these by
// their operation counts (cache hit ratio, invalidation ratio, ...).

#include <cstdint>
#include <string>

namespace strand::cc {

struct CacheStats {
  uint64_t shared_locks = 0;     // SLock calls that succeeded
  uint64_t exclusive_locks = 0;  // XLock and Upgrade calls that succeeded
  uint64_t hits = 0;             // ... satisfied without any remote op
  uint64_t upgrades = 0;
  uint64_t lock_retries = 0;    // failed latch attempts that were retried
  uint64_t lock_timeouts = 0;   // DeadlineExceeded returned
  uint64_t no_wait_aborts = 0;  // Aborted returned under no_wait
  // Acquisitions that had to invalidate another node's copy.
  uint64_t invalidating_locks = 0;
  uint64_t invalidations_sent = 0;  // messages, resends included
  uint64_t invalidations_received = 0;
  uint64_t invalidations_dropped = 0;  // by a busy handler (sender resends)
  uint64_t forwards = 0;               // GCLs forwarded to a requester
  uint64_t evictions = 0;
  uint64_t flushes = 0;  // dirty write-backs
  uint64_t flushed_bytes = 0;
  // GclManager::OptimisticRead: tokens handed out, and calls answered
  // "not available" (not cached, invalid copy, held exclusive). Whether a
  // token's reads then validated only its caller knows.
  uint64_t optimistic_reads = 0;
  uint64_t optimistic_refusals = 0;
  // Latch words from which this node took a failed node's holder field or
  // reader bits on meeting them (GclManager::SetPeerStates).
  uint64_t failed_peer_steals = 0;

  uint64_t locks() const { return shared_locks + exclusive_locks; }
  double hit_ratio() const {
    return locks() == 0 ? 0 : static_cast<double>(hits) / locks();
  }

  CacheStats& operator+=(const CacheStats& o);
  friend CacheStats operator-(CacheStats a, const CacheStats& b);
  std::string ToString() const;
};

// Every counter of CacheStats, for code that treats them all alike (its
// arithmetic, SELCC's atomic copy in selcc/node_state.h). A counter added
// above goes here too (cache_stats.cc checks the count).
// clang-format off
#define STRAND_CACHE_STATS_FIELDS(X) \
  X(shared_locks) \
  X(exclusive_locks) \
  X(hits) \
  X(upgrades) \
  X(lock_retries) \
  X(lock_timeouts) \
  X(no_wait_aborts) \
  X(invalidating_locks) \
  X(invalidations_sent) \
  X(invalidations_received) \
  X(invalidations_dropped) \
  X(forwards) \
  X(evictions) \
  X(flushes) \
  X(flushed_bytes) \
  X(optimistic_reads) \
  X(optimistic_refusals) \
  X(failed_peer_steals)
// clang-format on

}  // namespace strand::cc

#endif  // STRAND_CC_CACHE_STATS_H_
