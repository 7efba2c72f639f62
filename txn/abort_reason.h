#ifndef STRAND_TXN_ABORT_REASON_H_
#define STRAND_TXN_ABORT_REASON_H_

// Why a transaction aborted. Conflicts and validation failures are the
// concurrency control's doing and worth retrying; a user abort is the
// procedure's decision (e.g. TPC-C's unused item id) and is not retried.

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "base/json_line.h"

namespace strand::txn {

enum class AbortReason : uint8_t {
  kNone = 0,
  kConflict,    // a latch could not be had without waiting (2PL no-wait),
                // or a timestamp rule was violated (TO)
  kValidation,  // a commit-time check of a read failed (OCC's read set,
                // index leaves, 2PL's unlatched tuple reads)
  kUser,        // the procedure asked for it
  kError,       // an error that is not a conflict (fabric, pool full, ...)
};
inline constexpr int kAbortReasonCount = 5;

const char* AbortReasonName(AbortReason reason);

// Aborted attempts counted by reason, indexed by AbortReason (kNone's slot
// stays 0).
using AbortCounts = std::array<uint64_t, kAbortReasonCount>;
// {"conflict":N,"validation":N,"user":N,"error":N}: the "aborts_by_reason"
// of a binary's --json record.
JsonLine AbortCountsJson(const AbortCounts& counts);

// Whether running the transaction again may succeed.
inline bool IsRetryable(AbortReason reason) {
  return reason == AbortReason::kConflict || reason == AbortReason::kValidation;
}

// The reason an Aborted status stands for, carried as a status payload so
// that callers tell outcomes apart without reading messages.
// Txn::UserAbort's status carries kUser; a Session that gave up retrying a
// conflict returns the conflict's reason (engine/call_status.h). Other
// statuses carry none.
absl::Status WithAbortReason(absl::Status status, AbortReason reason);
// The reason `status` carries, or nullopt (OK, or no reason attached).
std::optional<AbortReason> AbortReasonOf(const absl::Status& status);

}  // namespace strand::txn

#endif  // STRAND_TXN_ABORT_REASON_H_
