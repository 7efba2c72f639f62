#include "base/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/json_line.h"
#include "gtest/gtest.h"

namespace strand {
namespace {

TEST(LatencyHistogramTest, EmptyHasNoPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), 0u);
}

// The exact percentile as Percentile() ranks it: the sample of rank
// round(fraction * n), counting from 1.
uint64_t ExactPercentile(const std::vector<uint64_t>& sorted, double fraction) {
  const auto rank = std::max<size_t>(
      1,
      static_cast<size_t>(fraction * static_cast<double>(sorted.size()) + 0.5));
  return sorted[rank - 1];
}

// Draws 200,000 samples of `draw` into a histogram and checks every
// reported percentile against the exact one: never below it, and at most
// one sub-bucket (1/32, 3.2%) above.
template <typename Draw>
void ExpectPercentilesWithinAFewPercent(const char* what, Draw draw) {
  std::mt19937_64 rng(7);
  LatencyHistogram h;
  std::vector<uint64_t> samples;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = draw(rng);
    samples.push_back(v);
    h.Record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
    const uint64_t exact = ExactPercentile(samples, p);
    const uint64_t approx = h.Percentile(p);
    EXPECT_GE(approx, exact) << what << " p" << p * 100;
    EXPECT_LE(static_cast<double>(approx), exact * (1 + 1.0 / 32))
        << what << " p" << p * 100 << " exact " << exact;
  }
  EXPECT_EQ(h.Percentile(1.0), samples.back()) << what;
  EXPECT_EQ(h.max_nanos(), samples.back()) << what;
  EXPECT_EQ(h.count(), samples.size()) << what;
}

TEST(LatencyHistogramTest, PercentilesWithinAFewPercentOfExact) {
  ExpectPercentilesWithinAFewPercent("lognormal", [](std::mt19937_64& rng) {
    // ~8 us median, a long tail: a transaction's commit latency.
    return static_cast<uint64_t>(
        std::lognormal_distribution<double>(9, 1.5)(rng));
  });
  ExpectPercentilesWithinAFewPercent("uniform", [](std::mt19937_64& rng) {
    return std::uniform_int_distribution<uint64_t>(1000, 2000)(rng);
  });
  ExpectPercentilesWithinAFewPercent("exponential", [](std::mt19937_64& rng) {
    return static_cast<uint64_t>(
        std::exponential_distribution<double>(1.0 / 50000)(rng));
  });
  // Cache hits at ~200 ns, misses at ~20 us: percentiles on both modes.
  ExpectPercentilesWithinAFewPercent("bimodal", [](std::mt19937_64& rng) {
    const bool miss = std::bernoulli_distribution(0.2)(rng);
    return static_cast<uint64_t>(
        std::max(0.0, std::normal_distribution<double>(miss ? 20000 : 200,
                                                       miss ? 2000 : 20)(rng)));
  });
  // Pareto (alpha 1.2): a tail out to seconds.
  ExpectPercentilesWithinAFewPercent("pareto", [](std::mt19937_64& rng) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return static_cast<uint64_t>(1000 / std::pow(1 - u, 1 / 1.2));
  });
  // Small values, each in a bucket of its own: exact.
  ExpectPercentilesWithinAFewPercent("small", [](std::mt19937_64& rng) {
    return std::uniform_int_distribution<uint64_t>(0, 40)(rng);
  });
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t v = 0; v < 64; ++v) h.Record(v);
  for (uint64_t v = 1; v <= 64; ++v) {
    EXPECT_EQ(h.Percentile(v / 64.0), v - 1) << v;
  }
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  for (int i = 0; i < 100; ++i) a.Record(1000);
  for (int i = 0; i < 300; ++i) b.Record(100000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 400u);
  EXPECT_GE(a.Percentile(0.2), 1000u);
  EXPECT_LE(a.Percentile(0.2), 1032u);    // within one sub-bucket
  EXPECT_EQ(a.Percentile(0.5), 100000u);  // capped at the maximum
  EXPECT_DOUBLE_EQ(a.mean_nanos(), (100 * 1000.0 + 300 * 100000.0) / 400);
}

TEST(LatencyHistogramTest, SmallAndHugeValues) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(3);
  h.Record(UINT64_MAX / 2);
  EXPECT_EQ(h.Percentile(0.01), 0u);
  EXPECT_EQ(h.Percentile(1.0), UINT64_MAX / 2);
}

TEST(LatencyHistogramTest, AddToReportsEveryPercentileInTheUnit) {
  LatencyHistogram h;
  for (int i = 1; i <= 1000; ++i) h.Record(i * 1000);
  JsonLine j;
  h.AddTo(j, "commit", LatencyHistogram::Unit::kMicros);
  h.AddTo(j, "", LatencyHistogram::Unit::kNanos);
  const std::string s = j.str();
  for (const char* key : {"\"commit_p50_us\":", "\"commit_p95_us\":",
                          "\"commit_p99_us\":", "\"commit_p99_9_us\":",
                          "\"commit_mean_us\":500.5", "\"commit_max_us\":1000",
                          "\"p50_ns\":", "\"p99_9_ns\":", "\"max_ns\":1e+06"}) {
    EXPECT_NE(s.find(key), std::string::npos) << key << " in " << s;
  }
}

}  // namespace
}  // namespace strand
