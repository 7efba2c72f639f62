#include "txn/concurrency_control.h"

#include "txn/optimistic.h"
#include "txn/timestamp_ordering.h"
#include "txn/two_phase_locking.h"

namespace strand::txn {

std::unique_ptr<ConcurrencyControl> ConcurrencyControl::Create(
    CcAlgorithm algorithm) {
  switch (algorithm) {
    case CcAlgorithm::kTwoPhaseLocking:
      return std::make_unique<TwoPhaseLocking>();
    case CcAlgorithm::kTimestampOrdering:
      return std::make_unique<TimestampOrdering>();
    case CcAlgorithm::kOptimistic:
      return std::make_unique<Optimistic>();
  }
  return nullptr;
}

const char* AbortReasonName(AbortReason reason) {
  switch (reason) {
    case AbortReason::kNone:
      return "none";
    case AbortReason::kConflict:
      return "conflict";
    case AbortReason::kValidation:
      return "validation";
    case AbortReason::kUser:
      return "user";
    case AbortReason::kError:
      return "error";
  }
  return "?";
}

absl::Status ConcurrencyControl::Prepare(TxnState&, uint64_t) {
  return absl::UnimplementedError(
      "two-phase commit needs 2PL (partitioned mode runs 2PL only)");
}

}  // namespace strand::txn
