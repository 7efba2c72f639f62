#include "txn/abort_reason.h"

#include "absl/strings/cord.h"

namespace strand::txn {
namespace {

// The payload's type URL; its value is AbortReasonName(reason).
constexpr char kAbortReasonUrl[] = "type.strand/strand.txn.AbortReason";

}  // namespace

absl::Status WithAbortReason(absl::Status status, AbortReason reason) {
  if (!status.ok()) {
    status.SetPayload(kAbortReasonUrl, absl::Cord(AbortReasonName(reason)));
  }
  return status;
}

JsonLine AbortCountsJson(const AbortCounts& counts) {
  JsonLine j;
  for (int i = 0; i < kAbortReasonCount; ++i) {
    const auto reason = static_cast<AbortReason>(i);
    if (reason != AbortReason::kNone) j.Add(AbortReasonName(reason), counts[i]);
  }
  return j;
}

std::optional<AbortReason> AbortReasonOf(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  absl::optional<absl::Cord> payload = status.GetPayload(kAbortReasonUrl);
  if (!payload.has_value()) return std::nullopt;
  for (int i = 0; i < kAbortReasonCount; ++i) {
    const auto reason = static_cast<AbortReason>(i);
    if (*payload == AbortReasonName(reason)) return reason;
  }
  return std::nullopt;
}

}  // namespace strand::txn
