#ifndef STRAND_PUBLIC_SESSION_H_
#define STRAND_PUBLIC_SESSION_H_

// Sessions run transactions on one compute node, one at a time, on the
// thread that owns them: registered procedures (Call, pipelined CallAsync)
// and interactive transactions (Run). call_status.h tells the kinds of
// failure apart without reading messages.

#include "engine/call_status.h"  // IWYU pragma: export
#include "engine/session.h"      // IWYU pragma: export
#include "strand/engine.h"       // IWYU pragma: export
#include "strand/txn.h"          // IWYU pragma: export

namespace strand {

using engine::IsRetriesExhausted;
using engine::IsUserAbort;
using engine::Session;

}  // namespace strand

#endif  // STRAND_PUBLIC_SESSION_H_
