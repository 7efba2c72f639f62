#include "base/latency_histogram.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace strand {
namespace {

TEST(LatencyHistogramTest, EmptyHasNoPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(0.5), 0u);
}

TEST(LatencyHistogramTest, PercentilesWithinBucketErrorOfExact) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(9, 1.5);  // ~8 us median
  LatencyHistogram h;
  std::vector<uint64_t> samples;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<uint64_t>(dist(rng));
    samples.push_back(v);
    h.Record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {0.5, 0.9, 0.99, 0.999}) {
    const uint64_t exact = samples[static_cast<size_t>(p * samples.size()) - 1];
    const uint64_t approx = h.Percentile(p);
    EXPECT_GE(approx, exact) << p;  // upper bucket edge
    EXPECT_LE(approx, exact * 1.26 + 1) << p;
  }
  EXPECT_EQ(h.Percentile(1.0), samples.back());
  EXPECT_EQ(h.max_nanos(), samples.back());
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  for (int i = 0; i < 100; ++i) a.Record(1000);
  for (int i = 0; i < 300; ++i) b.Record(100000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 400u);
  EXPECT_GE(a.Percentile(0.2), 1000u);
  EXPECT_LE(a.Percentile(0.2), 1260u);  // within one bucket
  EXPECT_GE(a.Percentile(0.5), 100000u * 0.8);
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

}  // namespace
}  // namespace strand
