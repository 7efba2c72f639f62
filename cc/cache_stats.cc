#include "cc/cache_stats.h"

#include "absl/strings/str_format.h"

namespace strand::cc {

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
  X(optimistic_refusals)
// clang-format on

CacheStats& CacheStats::operator+=(const CacheStats& o) {
#define STRAND_ADD(f) f += o.f;
  STRAND_CACHE_STATS_FIELDS(STRAND_ADD)
#undef STRAND_ADD
  return *this;
}

CacheStats operator-(CacheStats a, const CacheStats& b) {
#define STRAND_SUB(f) a.f -= b.f;
  STRAND_CACHE_STATS_FIELDS(STRAND_SUB)
#undef STRAND_SUB
  return a;
}

std::string CacheStats::ToString() const {
  std::string out;
#define STRAND_PRINT(f) \
  absl::StrAppendFormat(&out, "%s%s=%d", out.empty() ? "" : " ", #f, f);
  STRAND_CACHE_STATS_FIELDS(STRAND_PRINT)
#undef STRAND_PRINT
  return out;
}

}  // namespace strand::cc
