#ifndef STRAND_BASE_CYCLE_CLOCK_H_
#define STRAND_BASE_CYCLE_CLOCK_H_

// A clock cheap enough to read twice around every loopback fabric op
// (~10 ns, against ~25 ns for steady_clock on the development VM): the
// time-stamp counter on x86-64 (constant rate on every CPU strand targets),
// steady_clock elsewhere. Only differences are meaningful; CyclesToNanos
// converts them.

#include <cstdint>

namespace strand {

uint64_t CycleNow();
// Nanoseconds in `cycles`, from a rate measured once (a few milliseconds,
// on the first call).
double CyclesToNanos(uint64_t cycles);
// steady_clock's nanoseconds since its epoch.
int64_t SteadyNanos();

}  // namespace strand

#if defined(__x86_64__)
#include <x86intrin.h>
inline uint64_t strand::CycleNow() { return __rdtsc(); }
#endif

#endif  // STRAND_BASE_CYCLE_CLOCK_H_
