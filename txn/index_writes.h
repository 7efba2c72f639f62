#ifndef STRAND_TXN_INDEX_WRITES_H_
#define STRAND_TXN_INDEX_WRITES_H_

// The index part of a commit (write_set.h calls these). Index entries are
// written at commit, so entries of aborted transactions never exist.
// Each step undoes itself if it fails half-way: a commit that fails here
// left every index as it was.

#include "absl/status/status.h"
#include "txn/txn_state.h"

namespace strand::txn {

// Inserts txn.index_inserts in their order, each maximal run of
// consecutive entries ascending in one index as one BLinkTree::InsertBatch
// (one leaf latch for the entries that share a leaf). AlreadyExists (abort
// reason kError) on a duplicate key in a unique index; the entries inserted
// before it, in earlier runs and in the failing run, are removed again.
absl::Status InsertIndexEntries(TxnState& txn);
// Removes txn.index_removes; NotFound if an entry is missing (the inserts
// of this commit are undone too).
absl::Status RemoveIndexEntries(TxnState& txn);
// Undoes both steps after they succeeded (the commit's log append failed).
void UndoIndexEntries(TxnState& txn);

}  // namespace strand::txn

#endif  // STRAND_TXN_INDEX_WRITES_H_
