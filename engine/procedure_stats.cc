#include "engine/procedure_stats.h"

#include "absl/strings/str_format.h"

namespace strand::engine {

uint64_t ProcedureStats::aborts_total() const {
  uint64_t n = 0;
  for (uint64_t a : aborts) n += a;
  return n;
}

double ProcedureStats::abort_rate() const {
  const uint64_t attempts = commits + aborts_total();
  return attempts == 0 ? 0 : static_cast<double>(aborts_total()) / attempts;
}

void ProcedureStats::Merge(const ProcedureStats& other) {
  calls += other.calls;
  commits += other.commits;
  for (size_t i = 0; i < aborts.size(); ++i) aborts[i] += other.aborts[i];
  gave_up += other.gave_up;
  latency.Merge(other.latency);
}

std::string ProcedureStats::ToString() const {
  return absl::StrFormat(
      "calls=%d commits=%d aborts=%d (conflict=%d validation=%d user=%d "
      "error=%d) abort_rate=%.3f p50=%dns p99=%dns",
      calls, commits, aborts_total(), aborts_for(txn::AbortReason::kConflict),
      aborts_for(txn::AbortReason::kValidation),
      aborts_for(txn::AbortReason::kUser), aborts_for(txn::AbortReason::kError),
      abort_rate(), latency.Percentile(0.5), latency.Percentile(0.99));
}

}  // namespace strand::engine
