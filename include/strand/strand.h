#ifndef STRAND_PUBLIC_STRAND_H_
#define STRAND_PUBLIC_STRAND_H_

// All of strand's embedding API: engine, sessions, transactions, rows.

#include "strand/engine.h"   // IWYU pragma: export
#include "strand/schema.h"   // IWYU pragma: export
#include "strand/session.h"  // IWYU pragma: export
#include "strand/txn.h"      // IWYU pragma: export

#endif  // STRAND_PUBLIC_STRAND_H_
