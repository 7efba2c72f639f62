#ifndef STRAND_BASE_LATENCY_HISTOGRAM_H_
#define STRAND_BASE_LATENCY_HISTOGRAM_H_

// Latencies in nanoseconds, bucketed logarithmically (4 sub-buckets per power
// of two, so a percentile is within 19% of the true value), in a fixed array:
// recording is a few instructions and no allocation, and histograms of many
// threads merge by adding. Not thread-safe: one per thread, then Merge().

#include <array>
#include <cstdint>

namespace strand {

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

 private:
  static constexpr int kSubBits = 2;
  static constexpr int kBuckets = 64 << kSubBits;
  static int BucketOf(uint64_t nanos);
  static uint64_t UpperEdge(int bucket);

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
};

}  // namespace strand

#endif  // STRAND_BASE_LATENCY_HISTOGRAM_H_
