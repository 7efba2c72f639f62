#ifndef STRAND_TXN_INDEX_WRITES_H_
#define STRAND_TXN_INDEX_WRITES_H_

// The index part of a commit (each algorithm's Commit calls these, in this
// order), and what makes index reads serializable.
//
// Writes, all-or-nothing: PrepareIndexWrites latches exclusively every leaf
// the transaction's index changes go to and checks that every change will
// succeed (unique keys absent unless removed by the same commit, removed
// entries present, room in each leaf), changing nothing; the algorithm then
// validates, takes its commit timestamp and appends the redo record; only
// then does ApplyIndexWrites change the leaves, and nothing after it can
// fail. So no reader sees an entry of a commit that fails, and as removals
// go before additions, a transaction may remove a key and add it again.
//
// Reads: every leaf a Lookup, LookupBatch or Scan read is recorded with its
// version (the leaves cover the key range read, absent keys included);
// ValidateIndexReads checks at commit that none changed.
//
// Waiting: leaves are latched with no_wait. A busy leaf releases every leaf
// held and retries after a short back-off, at most kPrepareAttempts times,
// then aborts with kConflict. A full leaf is split with the tree's ordinary
// (waiting) latches, holding no leaf, and the preparation starts over.
// Design: docs/design/concurrency_control.md, "Index reads" and "2PL: what
// no-wait still waits for".

#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "txn/txn_state.h"

namespace strand::txn {

// Preparations started over (busy leaves, splits) before a commit gives up.
inline constexpr int kPrepareAttempts = 64;

// The timestamp index leaves carry for this transaction: TO's start
// timestamp (its reads raise a leaf's read_ts, its changes stamp write_ts
// and are refused below either), nullopt for 2PL and OCC.
std::optional<uint64_t> LeafTimestamp(const TxnState& txn);

// Latches and checks (see above). Errors: AlreadyExists or NotFound (abort
// reason kError), Aborted (kConflict).
// On error no leaf stays latched.
absl::Status PrepareIndexWrites(TxnState& txn);
// PrepareIndexWrites, except that its errors become the conflicts they
// are (Aborted, retried):
//   - AlreadyExists, when Txn checked every unique key free as it was
//     added (declared indexes): another commit took one since (kConflict);
//   - AlreadyExists from AddIndexEntry (checked only against the
//     transaction's own entries) or NotFound, when a read of the
//     transaction is stale (kValidation): `validate_tuples` (OCC's tuple
//     versions; OkStatus for 2PL and TO, whose tuple reads cannot be
//     stale here) or an index read fails. Then the key was added or
//     removed by a commit this transaction should have seen (two
//     New-Orders that read one district's next order id both add that
//     order's key).
absl::Status PrepareIndexWritesOrConflict(
    TxnState& txn, absl::FunctionRef<absl::Status(TxnState&)> validate_tuples);
// Checks every recorded leaf read (TO: raises their read_ts). Aborted
// (kValidation) if one changed or another commit holds it.
absl::Status ValidateIndexReads(TxnState& txn);
// Applies the prepared changes (cannot fail); the leaves stay latched
// (ReleaseIndexLeaves), so a write-through can carry them (write_set.h).
void ApplyIndexWrites(TxnState& txn);
// Releases the leaves PrepareIndexWrites latched (a commit that failed).
void ReleaseIndexLeaves(TxnState& txn);

}  // namespace strand::txn

#endif  // STRAND_TXN_INDEX_WRITES_H_
