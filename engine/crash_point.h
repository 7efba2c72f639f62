#ifndef STRAND_ENGINE_CRASH_POINT_H_
#define STRAND_ENGINE_CRASH_POINT_H_

// Crash points for kill -9 tests of multi-step protocols (checkpoints):
// with the environment variable STRAND_CRASH_AT=<name> (or <name>@<n>, the
// n-th time, from 1), the process kills itself with SIGKILL when it
// reaches CrashPoint(<name>), exactly as a kill -9 from outside would, but
// at a known step. Unset (every production run): one relaxed load per call.

#include <string_view>

namespace strand::engine {

void CrashPoint(std::string_view name);

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CRASH_POINT_H_
