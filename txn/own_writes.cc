#include "txn/own_writes.h"

#include <algorithm>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace strand::txn {
namespace {

using storage::TupleAddress;

// Up to this many own index writes are searched one by one; past it
// they are counted by hash first (TxnState::own_key_counts).
constexpr size_t kLinearSearchLimit = 32;

uint64_t KeyHash(IndexId index, std::string_view key) {
  return absl::Hash<std::pair<IndexId, absl::string_view>>{}(
      {index, absl::string_view(key.data(), key.size())});
}

void Count(TxnState& txn, IndexId index, std::string_view key, int delta) {
  if (!txn.own_keys_counted) return;
  auto it = txn.own_key_counts.find(KeyHash(index, key));
  if (delta > 0) {
    if (it == txn.own_key_counts.end()) {
      txn.own_key_counts[KeyHash(index, key)] = 1;
    } else {
      ++it->second;
    }
  } else if (it != txn.own_key_counts.end() && --it->second == 0) {
    txn.own_key_counts.erase(it);
  }
}

void Push(TxnState& txn, std::vector<IndexWrite>& writes, IndexId index,
          std::string_view key, TupleAddress value) {
  writes.push_back({index, std::string(key), value});
  if (txn.own_keys_counted) {
    Count(txn, index, key, +1);
  } else if (txn.index_inserts.size() + txn.index_removes.size() >
             kLinearSearchLimit) {
    txn.own_keys_counted = true;
    for (const auto* all : {&txn.index_inserts, &txn.index_removes}) {
      for (const IndexWrite& w : *all) Count(txn, w.index, w.key, +1);
    }
  }
}

// The position of (index, key, value) in `writes`, or -1. With no value,
// of the first entry of (index, key).
int Find(const TxnState& txn, const std::vector<IndexWrite>& writes,
         IndexId index, std::string_view key,
         std::optional<TupleAddress> value) {
  if (writes.empty()) return -1;
  if (txn.own_keys_counted &&
      !txn.own_key_counts.contains(KeyHash(index, key))) {
    return -1;
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    const IndexWrite& w = writes[i];
    if (w.index == index && w.key == key && (!value || w.value == *value)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void Erase(TxnState& txn, std::vector<IndexWrite>& writes, int at) {
  Count(txn, writes[at].index, writes[at].key, -1);
  writes.erase(writes.begin() + at);
}

// An entry in a scan's order: by key, then (non-unique trees) by value,
// which the tree appends big-endian, i.e. in numeric order.
struct Entry {
  std::string_view key;
  uint64_t value;
  friend bool operator<(const Entry& a, const Entry& b) {
    if (int c = a.key.compare(b.key); c != 0) return c < 0;
    return a.value < b.value;
  }
};

bool InRange(std::string_view key, std::optional<std::string_view> low,
             std::optional<std::string_view> high) {
  return (!low || key >= *low) && (!high || key <= *high);
}

}  // namespace

void AddOwnEntry(TxnState& txn, IndexId index, std::string_view key,
                 TupleAddress value) {
  if (int at = Find(txn, txn.index_removes, index, key, value); at >= 0) {
    Erase(txn, txn.index_removes, at);  // back as it was in the tree
    return;
  }
  Push(txn, txn.index_inserts, index, key, value);
}

void RemoveOwnEntry(TxnState& txn, IndexId index, std::string_view key,
                    TupleAddress value) {
  if (int at = Find(txn, txn.index_inserts, index, key, value); at >= 0) {
    Erase(txn, txn.index_inserts, at);  // never reaches the tree
    // The commit will not check this key's absence any more: the read
    // that found it absent is validated instead (it was observed).
    auto& pending = txn.absent_key_reads;
    for (size_t i = 0; i < pending.size();) {
      if (pending[i].index == index && pending[i].key == key) {
        txn.leaf_reads.push_back({index, pending[i].read});
        pending.erase(pending.begin() + i);
      } else {
        ++i;
      }
    }
    return;
  }
  Push(txn, txn.index_removes, index, key, value);
}

bool HasOwnWrites(const TxnState& txn, IndexId index) {
  for (const IndexWrite& w : txn.index_inserts) {
    if (w.index == index) return true;
  }
  for (const IndexWrite& w : txn.index_removes) {
    if (w.index == index) return true;
  }
  return false;
}

void RecordLeafReads(TxnState& txn, IndexId index) {
  if (!txn.db.validate_index_reads) return;
  for (const index::LeafRead& read : txn.leaf_scratch) {
    txn.leaf_reads.push_back({index, read});
  }
}

absl::StatusOr<std::optional<TupleAddress>> LookupOwnView(TxnState& txn,
                                                          IndexId index,
                                                          std::string_view key,
                                                          bool record_absent) {
  if (!txn.index_inserts.empty() || !txn.index_removes.empty()) {
    if (int at = Find(txn, txn.index_inserts, index, key, std::nullopt);
        at >= 0) {
      return txn.index_inserts[at].value;
    }
    // A unique key removed and not added back: absent whatever the tree
    // says now (the commit checks the removed entry is still there).
    if (Find(txn, txn.index_removes, index, key, std::nullopt) >= 0) {
      return std::nullopt;
    }
  }
  txn.leaf_scratch.clear();
  absl::StatusOr<uint64_t> value =
      txn.db.indexes[index]->Lookup(txn.ctx, key, &txn.leaf_scratch);
  if (value.status().code() == absl::StatusCode::kNotFound) {
    if (record_absent) {
      RecordLeafReads(txn, index);
    } else if (txn.db.validate_index_reads) {
      for (const index::LeafRead& read : txn.leaf_scratch) {
        txn.absent_key_reads.push_back({index, std::string(key), read});
      }
    }
    return std::nullopt;
  }
  RecordLeafReads(txn, index);
  if (!value.ok()) return value.status();
  return TupleAddress::FromRaw(*value);
}

void PatchOwnLookups(const TxnState& txn, IndexId index,
                     absl::Span<const std::string_view> keys,
                     absl::Span<TupleAddress> addresses) {
  if (!HasOwnWrites(txn, index)) return;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (int at = Find(txn, txn.index_inserts, index, keys[i], std::nullopt);
        at >= 0) {
      addresses[i] = txn.index_inserts[at].value;
    } else if (Find(txn, txn.index_removes, index, keys[i], std::nullopt) >=
               0) {
      addresses[i] = TupleAddress();
    }
  }
}

absl::Status ScanOwnView(
    TxnState& txn, IndexId index, std::optional<std::string_view> low,
    std::optional<std::string_view> high, bool forward, uint64_t limit,
    absl::FunctionRef<bool(std::string_view, TupleAddress)> visit) {
  index::BLinkTree& tree = *txn.db.indexes[index];
  txn.leaf_scratch.clear();
  if (!HasOwnWrites(txn, index)) {
    auto adapt = [&](std::string_view key, uint64_t value) {
      return visit(key, TupleAddress::FromRaw(value));
    };
    return forward
               ? tree.Scan(txn.ctx, low, high, limit, adapt, &txn.leaf_scratch)
               : tree.ScanBackward(txn.ctx, high, low, limit, adapt,
                                   &txn.leaf_scratch);
  }
  // The added entries of the range, in the scan's order, and the removed
  // ones (pointing into txn's vectors, which nothing changes meanwhile).
  absl::InlinedVector<Entry, 16> added;
  for (const IndexWrite& w : txn.index_inserts) {
    if (w.index == index && InRange(w.key, low, high)) {
      added.push_back({w.key, w.value.raw()});
    }
  }
  std::sort(added.begin(), added.end());
  if (!forward) std::reverse(added.begin(), added.end());
  // A unique key removed hides the tree's entry whatever its value (as
  // LookupOwnView): the value takes no part in the comparison.
  const bool unique = tree.unique();
  absl::InlinedVector<Entry, 8> removed;
  for (const IndexWrite& w : txn.index_removes) {
    if (w.index == index && InRange(w.key, low, high)) {
      removed.push_back({w.key, unique ? 0 : w.value.raw()});
    }
  }
  std::sort(removed.begin(), removed.end());
  auto is_removed = [&](std::string_view key, uint64_t value) {
    const Entry e{key, unique ? 0 : value};
    return std::binary_search(removed.begin(), removed.end(), e);
  };
  // Visits an entry; false once the scan is to stop.
  uint64_t visited = 0;
  bool stopped = limit == 0;
  auto emit = [&](std::string_view key, uint64_t value) {
    if (stopped) return false;
    stopped = !visit(key, TupleAddress::FromRaw(value)) || ++visited >= limit;
    return !stopped;
  };
  size_t next_added = 0;
  auto merged = [&](std::string_view key, uint64_t value) {
    const Entry tree_entry{key, value};
    while (next_added < added.size() &&
           (forward ? added[next_added] < tree_entry
                    : tree_entry < added[next_added])) {
      const Entry& a = added[next_added++];
      if (!emit(a.key, a.value)) return false;
    }
    if (!removed.empty() && is_removed(key, value)) return true;
    return emit(key, value);
  };
  // The tree's entries this scan can use: `limit`, plus one per removed
  // entry it may skip (the tree reads no further than a plain scan would,
  // once nothing was added in the range).
  const uint64_t tree_limit =
      !added.empty() || limit > index::BLinkTree::kNoLimit - removed.size()
          ? index::BLinkTree::kNoLimit
          : limit + removed.size();
  absl::Status s = forward ? tree.Scan(txn.ctx, low, high, tree_limit, merged,
                                       &txn.leaf_scratch)
                           : tree.ScanBackward(txn.ctx, high, low, tree_limit,
                                               merged, &txn.leaf_scratch);
  if (!s.ok()) return s;
  // The tree's range is exhausted (or the visitor stopped): the added
  // entries beyond its last entry.
  while (next_added < added.size()) {
    const Entry& a = added[next_added++];
    if (!emit(a.key, a.value)) break;
  }
  return absl::OkStatus();
}

}  // namespace strand::txn
