#include "txn/timestamp_oracle.h"

#include "cc/root_words.h"

namespace strand::txn {

absl::StatusOr<uint64_t> TimestampOracle::Next(cc::ThreadContext& ctx) {
  auto old = manager_.FetchAndAdd(
      ctx, cc::RootWordAddress(cc::RootWord::kTimestampOracle), 1);
  if (!old.ok()) return old.status();
  return *old + 1;
}

}  // namespace strand::txn
