#ifndef STRAND_TXN_DECLARED_INDEXES_H_
#define STRAND_TXN_DECLARED_INDEXES_H_

// Indexes declared with key columns (index_key.h) are kept by the
// transaction, not by the procedure: Txn's Insert, Update, Upsert and
// Delete change the entries of every declared index of the row's table,
// and a row changed through Modify's buffer is compared with its entries
// ("synced") before any index of its table is read, and at commit. The
// entries go through own_writes.h, so the transaction's reads see them
// and the commit applies them like any index write. Internal to txn/.
//
// Unique keys are checked when they are written: an Insert, Update or
// Upsert that would give a unique declared index a key some other row
// has (as the transaction sees the index) fails at that statement with
// AlreadyExists, and the transaction goes on. A key changed through
// Modify's buffer is checked when it is synced; a conflict there aborts
// the transaction (there was no statement to fail). The check reads the
// key's leaf, validated at commit like a Lookup: if another transaction
// takes the key between the check and the commit, the commit fails its
// validation and is retried, and the retry's check sees the key.
//
// Cost: tables without declared indexes pay one test of an empty vector
// per write; rows of tables with them pay a key build per declared index
// per sync, and a Lookup per changed unique key.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "storage/schema.h"
#include "storage/tuple_address.h"
#include "txn/txn_state.h"

namespace strand::txn {

// `key` of `index` for a message: its columns' values for a declared
// index ("id=7"), else its bytes in hex.
std::string DescribeKey(const Database& db, IndexId index,
                        std::string_view key);

// The keys of `row` for each declared index of `table`, in order.
std::vector<std::string> DeclaredKeys(const TxnState& txn, TableId table,
                                      const storage::TupleView& row);

// Whether `keys` (DeclaredKeys of a row of `table`) are free in every
// unique declared index as the transaction sees them; keys equal to
// `self`'s current entries are not checked (null `self`: a new row).
// AlreadyExists naming the table, index and key, with the row that holds
// it in *holder; any other error is the index's (the caller fails the
// transaction).
absl::Status CheckUniqueKeys(TxnState& txn, TableId table,
                             const std::vector<std::string>& keys,
                             const Access* self, storage::TupleAddress* holder);

// Moves `access`'s entries in the table's declared indexes to `keys`
// (those that differ; all of them for a row with no entries yet).
void WriteDeclaredEntries(TxnState& txn, Access& access,
                          std::vector<std::string> keys);
// Removes every entry of `access` (a row about to be deleted).
void RemoveDeclaredEntries(TxnState& txn, Access& access);

// From now on `access` (a row of a table with declared indexes whose
// buffer the procedure may change) is synced; its entries are those of
// its original tuple unless it has some already.
void Track(TxnState& txn, Access& access);

// Syncs the tracked rows of `table` (kNoTable: of every table): entries
// whose key changed in the buffer are moved, removals first, then the
// new unique keys checked (so rows may swap keys). A conflict is
// AlreadyExists as above; the caller fails the transaction.
absl::Status SyncTracked(TxnState& txn, TableId table);

}  // namespace strand::txn

#endif  // STRAND_TXN_DECLARED_INDEXES_H_
