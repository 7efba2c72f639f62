#include "base/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/json_line.h"

namespace strand {

int LatencyHistogram::BucketOf(uint64_t nanos) {
  if (nanos < (1u << kSubBits)) return static_cast<int>(nanos);
  const int exponent = 63 - std::countl_zero(nanos);
  const int sub = static_cast<int>((nanos >> (exponent - kSubBits)) &
                                   ((1u << kSubBits) - 1));
  return ((exponent - kSubBits + 1) << kSubBits) + sub;
}

uint64_t LatencyHistogram::UpperEdge(int bucket) {
  if (bucket < (1 << kSubBits)) return static_cast<uint64_t>(bucket);
  const int exponent = (bucket >> kSubBits) + kSubBits - 1;
  const uint64_t sub = bucket & ((1 << kSubBits) - 1);
  const uint64_t base = uint64_t{1} << exponent;
  const uint64_t step = base >> kSubBits;
  return base + (sub + 1) * step - 1;
}

void LatencyHistogram::Record(uint64_t nanos) {
  buckets_[BucketOf(nanos)]++;
  count_++;
  sum_ += nanos;
  max_ = std::max(max_, nanos);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::Percentile(double fraction) const {
  if (count_ == 0) return 0;
  const double clamped = std::clamp(fraction, 0.0, 1.0);
  const uint64_t rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(clamped * static_cast<double>(count_) + 0.5));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(UpperEdge(i), max_);
  }
  return max_;
}

void LatencyHistogram::AddTo(JsonLine& json, std::string_view prefix,
                             Unit unit) const {
  const bool micros = unit == Unit::kMicros;
  const double scale = micros ? 1e-3 : 1;
  const std::string head =
      prefix.empty() ? std::string() : std::string(prefix) + "_";
  const char* suffix = micros ? "_us" : "_ns";
  constexpr std::pair<const char*, double> kPercentiles[] = {
      {"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}, {"p99_9", 0.999}};
  for (const auto& [name, fraction] : kPercentiles) {
    json.Add(absl::StrCat(head, name, suffix),
             static_cast<double>(Percentile(fraction)) * scale);
  }
  json.Add(absl::StrCat(head, "mean", suffix), mean_nanos() * scale)
      .Add(absl::StrCat(head, "max", suffix),
           static_cast<double>(max_nanos()) * scale);
}

}  // namespace strand
