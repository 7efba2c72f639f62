#ifndef STRAND_ENGINE_CALL_STATUS_H_
#define STRAND_ENGINE_CALL_STATUS_H_

// What a failed Session::Call (or CallAsync outcome) means, without
// reading its message. Both kinds of rollback have code kAborted, so code
// that only asks "did it commit?" keeps working; they differ in the
// AbortReason the status carries (txn/abort_reason.h):
//
//   auto r = session->Call(transfer, from, to, amount);
//   if (r.ok()) { ... }                                  // committed
//   else if (IsUserAbort(r.status())) { ... }            // refused: no retry
//   else if (IsRetriesExhausted(r.status())) { ... }     // contention
//   else { ... }  // an error: bad arguments, pool full, log failed, ...
//
// A procedure that returns another error (NotFound, InvalidArgument, ...)
// is rolled back too and counted as a user abort in ProcedureStats, but
// its status is its own: neither function is true for it.

#include "absl/status/status.h"
#include "txn/abort_reason.h"

namespace strand::engine {

// The procedure rolled back by returning txn.UserAbort(why)'s status.
inline bool IsUserAbort(const absl::Status& status) {
  return txn::AbortReasonOf(status) == txn::AbortReason::kUser;
}

// Every attempt aborted on a conflict (or OCC validation) and the session
// gave up after RetryPolicy::max_retries retries. The carried reason is
// the last attempt's.
inline bool IsRetriesExhausted(const absl::Status& status) {
  const std::optional<txn::AbortReason> reason = txn::AbortReasonOf(status);
  return reason.has_value() && txn::IsRetryable(*reason);
}

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CALL_STATUS_H_
