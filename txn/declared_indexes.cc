#include "txn/declared_indexes.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "txn/index_key.h"
#include "txn/own_writes.h"

namespace strand::txn {

using storage::TupleAddress;

std::string DescribeKey(const Database& db, IndexId index,
                        std::string_view key) {
  const IndexKey* declared =
      index < db.index_keys.size() ? db.index_keys[index] : nullptr;
  if (declared != nullptr && key.size() == declared->width()) {
    return absl::StrFormat("(%s)", declared->Describe(key));
  }
  return absl::StrCat(
      "0x", absl::BytesToHexString(absl::string_view(key.data(), key.size())));
}

std::vector<std::string> DeclaredKeys(const TxnState& txn, TableId table,
                                      const storage::TupleView& row) {
  std::vector<std::string> keys;
  for (IndexId index : txn.db.declared_indexes[table]) {
    keys.push_back(txn.db.index_keys[index]->Build(row));
  }
  return keys;
}

absl::Status CheckUniqueKeys(TxnState& txn, TableId table,
                             const std::vector<std::string>& keys,
                             const Access* self, TupleAddress* holder) {
  const std::vector<IndexId>& indexes = txn.db.declared_indexes[table];
  for (size_t i = 0; i < indexes.size(); ++i) {
    const IndexId index = indexes[i];
    if (!txn.db.indexes[index]->unique()) continue;
    if (self != nullptr && !self->indexed_keys.empty() &&
        self->indexed_keys[i] == keys[i]) {
      continue;  // its own entry, unchanged
    }
    auto value = LookupOwnView(txn, index, keys[i], /*record_absent=*/false);
    if (!value.ok()) return value.status();
    if (!value->has_value() || (self != nullptr && **value == self->address)) {
      continue;
    }
    *holder = **value;
    return absl::AlreadyExistsError(absl::StrFormat(
        "table %s: unique index %s already has key %s (row %s)",
        txn.db.table_names[table], txn.db.index_names[index],
        DescribeKey(txn.db, index, keys[i]), holder->ToString()));
  }
  return absl::OkStatus();
}

void WriteDeclaredEntries(TxnState& txn, Access& access,
                          std::vector<std::string> keys) {
  const std::vector<IndexId>& indexes = txn.db.declared_indexes[access.table];
  const bool had_entries = !access.indexed_keys.empty();
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (had_entries) {
      if (access.indexed_keys[i] == keys[i]) continue;
      RemoveOwnEntry(txn, indexes[i], access.indexed_keys[i], access.address);
    }
    AddOwnEntry(txn, indexes[i], keys[i], access.address);
  }
  access.indexed_keys = std::move(keys);
}

void RemoveDeclaredEntries(TxnState& txn, Access& access) {
  const std::vector<IndexId>& indexes = txn.db.declared_indexes[access.table];
  if (access.indexed_keys.empty()) {
    // Never written by this transaction: the entries of the committed row.
    access.indexed_keys =
        DeclaredKeys(txn, access.table,
                     storage::TupleView(txn.table(access.table).schema(),
                                        access.original.data()));
  }
  for (size_t i = 0; i < indexes.size(); ++i) {
    RemoveOwnEntry(txn, indexes[i], access.indexed_keys[i], access.address);
  }
  access.indexed_keys.clear();
}

void Track(TxnState& txn, Access& access) {
  if (access.tracked) return;
  if (access.indexed_keys.empty() && !access.inserted) {
    access.indexed_keys =
        DeclaredKeys(txn, access.table,
                     storage::TupleView(txn.table(access.table).schema(),
                                        access.original.data()));
  }
  access.tracked = true;
  txn.tracked.push_back(&access);
}

absl::Status SyncTracked(TxnState& txn, TableId table) {
  if (txn.tracked.empty()) return absl::OkStatus();
  // Phase 1: every changed entry leaves its old key, so that a key one
  // row gives up is free for another in phase 2.
  struct Moved {
    Access* access;
    std::vector<std::string> keys;
  };
  std::vector<Moved> moved;
  for (Access* a : txn.tracked) {
    if (a->deleted || a->modified == nullptr ||
        (table != kNoTable && a->table != table)) {
      continue;
    }
    std::vector<std::string> keys =
        DeclaredKeys(txn, a->table, a->modified->view());
    if (keys == a->indexed_keys) continue;
    const std::vector<IndexId>& indexes = txn.db.declared_indexes[a->table];
    for (size_t i = 0; i < indexes.size(); ++i) {
      if (a->indexed_keys.empty() || a->indexed_keys[i] == keys[i]) continue;
      RemoveOwnEntry(txn, indexes[i], a->indexed_keys[i], a->address);
    }
    moved.push_back({a, std::move(keys)});
  }
  // Phase 2: the new keys, checked, then added.
  for (Moved& m : moved) {
    Access& a = *m.access;
    const std::vector<IndexId>& indexes = txn.db.declared_indexes[a.table];
    for (size_t i = 0; i < indexes.size(); ++i) {
      const bool changed =
          a.indexed_keys.empty() || a.indexed_keys[i] != m.keys[i];
      if (!changed) continue;
      if (txn.db.indexes[indexes[i]]->unique()) {
        auto value =
            LookupOwnView(txn, indexes[i], m.keys[i], /*record_absent=*/false);
        if (!value.ok()) return value.status();
        if (value->has_value()) {
          return absl::AlreadyExistsError(absl::StrFormat(
              "table %s: row %s was changed (Modify) to key %s of unique "
              "index %s, which row %s has",
              txn.db.table_names[a.table], a.address.ToString(),
              DescribeKey(txn.db, indexes[i], m.keys[i]),
              txn.db.index_names[indexes[i]], (*value)->ToString()));
        }
      }
      AddOwnEntry(txn, indexes[i], m.keys[i], a.address);
    }
    a.indexed_keys = std::move(m.keys);
  }
  return absl::OkStatus();
}

}  // namespace strand::txn
