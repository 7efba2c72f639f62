#ifndef STRAND_PUBLIC_STRAND_H_
#define STRAND_PUBLIC_STRAND_H_

// All of strand's embedding API: engine, sessions, transactions, rows,
// and the status macros.

#include "strand/engine.h"   // IWYU pragma: export
#include "strand/schema.h"   // IWYU pragma: export
#include "strand/session.h"  // IWYU pragma: export
#include "strand/status.h"   // IWYU pragma: export
#include "strand/txn.h"      // IWYU pragma: export

#endif  // STRAND_PUBLIC_STRAND_H_
