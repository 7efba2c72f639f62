#ifndef STRAND_PUBLIC_TXN_H_
#define STRAND_PUBLIC_TXN_H_

// What a transaction can do (a stored procedure's or an interactive
// transaction's Txn&): read, insert, update, upsert and delete rows, look
// up and scan indexes (by callback or with an iterator), all of it seeing
// the transaction's own writes; indexes declared with key columns follow
// the rows by themselves. txn/txn.h has the contract.

#include "strand/schema.h"       // IWYU pragma: export
#include "txn/abort_reason.h"    // IWYU pragma: export
#include "txn/index_iterator.h"  // IWYU pragma: export
#include "txn/txn.h"             // IWYU pragma: export

namespace strand {

using txn::AbortReason;
using txn::IndexIterator;
using txn::IndexRange;
using txn::Txn;

}  // namespace strand

#endif  // STRAND_PUBLIC_TXN_H_
