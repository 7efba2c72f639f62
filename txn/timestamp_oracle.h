#ifndef STRAND_TXN_TIMESTAMP_ORACLE_H_
#define STRAND_TXN_TIMESTAMP_ORACLE_H_

// Global timestamps: one FAA on a well-known word of memory node 0
// (cc::RootWord::kTimestampOracle), one round trip each.
//
// Guarantee: every call, on any compute node, returns a distinct value, and
// a call that starts after another call returned gets a larger value
// (linearizable: FAA on one word is). Timestamps start at 1; 0 means "none"
// in tuple headers.

#include <atomic>
#include <cstdint>

#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"

namespace strand::txn {

class TimestampOracle {
 public:
  explicit TimestampOracle(cc::GclManager& manager) : manager_(manager) {}

  absl::StatusOr<uint64_t> Next(cc::ThreadContext& ctx);
  // The last timestamp issued (every later Next returns more), without
  // taking one: one FAA of 0.
  absl::StatusOr<uint64_t> Current(cc::ThreadContext& ctx) const;
  // The largest timestamp this node's Next returned lately (0 before the
  // first): a lower bound of every later Next, on any node, for free.
  uint64_t last_seen() const {
    return last_seen_.load(std::memory_order_relaxed);
  }

 private:
  cc::GclManager& manager_;
  // Not a strict max (racing Nexts may store out of order): any value
  // Next returned is a lower bound of what later calls return.
  std::atomic<uint64_t> last_seen_{0};
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TIMESTAMP_ORACLE_H_
