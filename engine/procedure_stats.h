#ifndef STRAND_ENGINE_PROCEDURE_STATS_H_
#define STRAND_ENGINE_PROCEDURE_STATS_H_

// What the calls of one stored procedure did: commits, aborts by reason
// (each aborted attempt counts, retried or not), and the latency of calls
// that committed (from the first attempt to the commit, retries included).

#include <cstdint>
#include <string>

#include "base/latency_histogram.h"
#include "txn/abort_reason.h"

namespace strand::engine {

struct ProcedureStats {
  uint64_t calls = 0;
  uint64_t commits = 0;
  txn::AbortCounts aborts{};
  uint64_t gave_up = 0;  // calls that ran out of retries
  LatencyHistogram latency;

  uint64_t aborts_total() const;
  uint64_t aborts_for(txn::AbortReason reason) const {
    return aborts[static_cast<int>(reason)];
  }
  // Aborted attempts / all attempts.
  double abort_rate() const;
  void Merge(const ProcedureStats& other);
  std::string ToString() const;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_PROCEDURE_STATS_H_
