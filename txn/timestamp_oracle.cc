#include "txn/timestamp_oracle.h"

#include "cc/root_words.h"

namespace strand::txn {

absl::StatusOr<uint64_t> TimestampOracle::Next(cc::ThreadContext& ctx) {
  auto old = manager_.FetchAndAdd(
      ctx, cc::RootWordAddress(cc::RootWord::kTimestampOracle), 1);
  if (!old.ok()) return old.status();
  last_seen_.store(*old + 1, std::memory_order_relaxed);
  return *old + 1;
}

absl::StatusOr<uint64_t> TimestampOracle::Current(
    cc::ThreadContext& ctx) const {
  return manager_.FetchAndAdd(
      ctx, cc::RootWordAddress(cc::RootWord::kTimestampOracle), 0);
}

}  // namespace strand::txn
