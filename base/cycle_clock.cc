#include "base/cycle_clock.h"

#include <chrono>

namespace strand {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

double MeasureNanosPerCycle() {
  const int64_t t0 = SteadyNanos();
  const uint64_t c0 = CycleNow();
  int64_t t1 = t0;
  while (t1 - t0 < 5'000'000) t1 = SteadyNanos();
  const uint64_t c1 = CycleNow();
  return c1 > c0 ? static_cast<double>(t1 - t0) / (c1 - c0) : 1.0;
}

}  // namespace

#if !defined(__x86_64__)
uint64_t CycleNow() { return static_cast<uint64_t>(SteadyNanos()); }
#endif

double CyclesToNanos(uint64_t cycles) {
  static const double nanos_per_cycle = MeasureNanosPerCycle();
  return cycles * nanos_per_cycle;
}

}  // namespace strand
