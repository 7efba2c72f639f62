#ifndef STRAND_TXN_TIMESTAMP_ORACLE_H_
#define STRAND_TXN_TIMESTAMP_ORACLE_H_

// Global timestamps: one FAA on a well-known word of memory node 0
// (cc::RootWord::kTimestampOracle), one round trip each.
//
// Guarantee: every call, on any compute node, returns a distinct value, and
// a call that starts after another call returned gets a larger value
// (linearizable: FAA on one word is). Timestamps start at 1; 0 means "none"
// in tuple headers.

#include <cstdint>

#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"

namespace strand::txn {

class TimestampOracle {
 public:
  explicit TimestampOracle(cc::GclManager& manager) : manager_(manager) {}

  absl::StatusOr<uint64_t> Next(cc::ThreadContext& ctx);

 private:
  cc::GclManager& manager_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TIMESTAMP_ORACLE_H_
