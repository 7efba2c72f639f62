#ifndef STRAND_TXN_OWN_WRITES_H_
#define STRAND_TXN_OWN_WRITES_H_

// A transaction's index writes as its own reads see them (read your own
// writes). Internal to txn/.
//
// TxnState::index_inserts and index_removes are what the commit applies,
// removals first (index_writes.h). They are kept normalized, so that they
// also say what the transaction's reads must see:
//   - a removal names an entry of the tree (committed by others): removing
//     an entry the transaction added itself cancels that addition;
//   - an addition names an entry the tree does not hold: adding back an
//     entry the transaction removed cancels that removal.
// So an index as the transaction sees it is the tree, less its removed
// pairs, plus its added ones. Reads answered from the transaction's own
// writes alone read no leaf: the commit checks those writes against the
// tree anyway (a removed entry present, an added unique key absent).
//
// Cost: nothing when the transaction has written no index entry (one test
// of two empty vectors); otherwise a pass over its own index writes per
// read, which are few in OLTP transactions.

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "index/blink_tree.h"
#include "storage/tuple_address.h"
#include "txn/txn_state.h"

namespace strand::txn {

void AddOwnEntry(TxnState& txn, IndexId index, std::string_view key,
                 storage::TupleAddress value);
void RemoveOwnEntry(TxnState& txn, IndexId index, std::string_view key,
                    storage::TupleAddress value);

// Whether the transaction added or removed an entry of `index`.
bool HasOwnWrites(const TxnState& txn, IndexId index);

// Appends the leaves of txn.leaf_scratch (one index read's) to the leaves
// validated at commit.
void RecordLeafReads(TxnState& txn, IndexId index);

// The value of `key` in unique index `index` as the transaction sees it
// (nullopt: absent). Reads the tree unless its own writes decide; the
// leaf read is recorded for validation at commit. Unless `record_absent`,
// a read that finds the key absent (a check before adding the key) is
// kept aside instead: the commit finds the key taken if another commit
// took it meanwhile (index_writes.h), which covers the observation, so the
// read is validated only if the transaction removes its addition again
// (RemoveOwnEntry) - and its own commit's split of that leaf never aborts
// it. Errors are the tree's (the caller fails the transaction).
absl::StatusOr<std::optional<storage::TupleAddress>> LookupOwnView(
    TxnState& txn, IndexId index, std::string_view key,
    bool record_absent = true);

// LookupBatch's results (from the tree) corrected by the transaction's
// own writes to those keys of unique index `index`.
void PatchOwnLookups(const TxnState& txn, IndexId index,
                     absl::Span<const std::string_view> keys,
                     absl::Span<storage::TupleAddress> addresses);

// index::BLinkTree::Scan (forward) or ScanBackward over `index` as the
// transaction sees it: the tree's entries less its removed ones, merged
// in order with its added ones. Leaves read are left in txn.leaf_scratch.
absl::Status ScanOwnView(
    TxnState& txn, IndexId index, std::optional<std::string_view> low,
    std::optional<std::string_view> high, bool forward, uint64_t limit,
    absl::FunctionRef<bool(std::string_view, storage::TupleAddress)> visit);

}  // namespace strand::txn

#endif  // STRAND_TXN_OWN_WRITES_H_
