#ifndef STRAND_TXN_WRITE_SET_H_
#define STRAND_TXN_WRITE_SET_H_

// Commit steps every algorithm shares: reading a tuple out of a latched
// page, latching the pages a transaction writes in one global order, and
// applying its buffered writes under those latches. Internal to txn/.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "storage/tuple_header.h"
#include "txn/txn_state.h"

namespace strand::txn {

// Copies the tuple at `access.address` out of its page's latched payload
// into access.original. NotFound if the slot is free or deleted;
// InvalidArgument if the address is not a slot of this table's pages.
absl::Status CopyTuple(const TxnState& txn, const uint8_t* page_payload,
                       Access& access);

// The tuple header inside a latched page payload.
storage::TupleHeader HeaderAt(const TxnState& txn, const uint8_t* payload,
                              const Access& access);
// Offset of the tuple's slot in its page payload.
uint32_t TupleOffset(const TxnState& txn, const Access& access);

// Takes exclusive latches (waiting, bounded) on every page the transaction
// writes, in address order; with `include_inserted` also the pages of its
// inserted tuples (to stamp their write_ts).
absl::Status LatchWritePages(TxnState& txn, bool include_inserted);

// Applies the index entries and the buffered writes; the write pages must be
// latched exclusively. With `stamp`, every written and inserted tuple's
// write_ts becomes *stamp. Index inserts go first and are undone if one
// fails (a duplicate key: Aborted), so a failed commit changed nothing.
absl::Status ApplyWrites(TxnState& txn, std::optional<uint64_t> stamp);

}  // namespace strand::txn

#endif  // STRAND_TXN_WRITE_SET_H_
