#ifndef STRAND_BASE_LATENCY_HISTOGRAM_H_
#define STRAND_BASE_LATENCY_HISTOGRAM_H_

// Latencies in nanoseconds, in log-linear buckets (HdrHistogram's layout):
// values below 32 each have a bucket of their own, and every power of two
// above is split into 32 equal sub-buckets, so a bucket is at most 1/32 of
// its values wide and a percentile, reported as its bucket's upper edge, is
// at most 3.2% above the exact one (never below it). The buckets are a fixed
// array (15 KiB): recording is a few instructions and no allocation, and
// histograms of many threads merge by adding. Not thread-safe: one per
// thread, then Merge().

#include <array>
#include <cstdint>
#include <string_view>

namespace strand {

class JsonLine;

class LatencyHistogram {
 public:
  void Record(uint64_t nanos);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t max_nanos() const { return max_; }
  double mean_nanos() const {
    return count_ == 0 ? 0 : static_cast<double>(sum_) / count_;
  }
  // The latency below which `fraction` (0..1) of the samples fall: the upper
  // edge of the bucket holding that rank, capped at the maximum seen.
  uint64_t Percentile(double fraction) const;

  // The unit the figures of AddTo are printed in.
  enum class Unit { kNanos, kMicros };
  // Adds <prefix>_p50, _p95, _p99, _p99_9, _mean and _max, each suffixed by
  // the unit ("_ns", "_us"): what every binary's --json reports of a
  // latency. An empty prefix gives "p50_us", ...
  void AddTo(JsonLine& json, std::string_view prefix, Unit unit) const;

 private:
  static constexpr int kSubBits = 5;  // 32 sub-buckets per power of two
  // Values below 2^kSubBits, then one row of sub-buckets per exponent from
  // kSubBits to 63.
  static constexpr int kBuckets = (64 - kSubBits + 1) << kSubBits;
  static int BucketOf(uint64_t nanos);
  static uint64_t UpperEdge(int bucket);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
};

}  // namespace strand

#endif  // STRAND_BASE_LATENCY_HISTOGRAM_H_
