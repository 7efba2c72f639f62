#include "cc/cache_stats.h"

#include "absl/strings/str_format.h"

namespace strand::cc {

#define STRAND_ONE(f) +1
static_assert(sizeof(CacheStats) ==
                  (0 STRAND_CACHE_STATS_FIELDS(STRAND_ONE)) * sizeof(uint64_t),
              "a CacheStats counter is missing from STRAND_CACHE_STATS_FIELDS");
#undef STRAND_ONE

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
