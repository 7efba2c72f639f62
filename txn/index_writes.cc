#include "txn/index_writes.h"

#include "absl/container/inlined_vector.h"
#include "glog/logging.h"
#include "index/blink_tree.h"

namespace strand::txn {
namespace {

absl::Status Remove(TxnState& txn, const IndexWrite& w) {
  index::BLinkTree& tree = *txn.db.indexes[w.index];
  return tree.unique() ? tree.Delete(txn.ctx, w.key)
                       : tree.DeleteEntry(txn.ctx, w.key, w.value.raw());
}

absl::Status Insert(TxnState& txn, const IndexWrite& w) {
  return txn.db.indexes[w.index]->Insert(txn.ctx, w.key, w.value.raw());
}

// Undoes the first `count` writes of `writes` with `undo`; an undo that
// fails means the index no longer matches the heap, which only a bug (or a
// dead fabric) can cause.
template <typename Undo>
void UndoFirst(TxnState& txn, const std::vector<IndexWrite>& writes,
               size_t count, Undo undo) {
  for (size_t i = 0; i < count; ++i) {
    absl::Status s = undo(txn, writes[i]);
    LOG_IF(ERROR, !s.ok()) << "undoing an index write of a failed commit: "
                           << s;
  }
}

// Whether `b` comes right after `a` in one InsertBatch: the same index and
// a key above a's in the index's order (in a non-unique index the value
// breaks ties, as it is part of the tree's internal key). std::string's
// order is memcmp's, the tree's order.
bool ExtendsRun(const index::BLinkTree& tree, const IndexWrite& a,
                const IndexWrite& b) {
  if (a.index != b.index) return false;
  if (tree.unique()) return a.key < b.key;
  const int c = a.key.compare(b.key);
  return c < 0 || (c == 0 && a.value.raw() < b.value.raw());
}

}  // namespace

absl::Status InsertIndexEntries(TxnState& txn) {
  // Each maximal run of consecutive entries that ascend in one index goes
  // in as one batch: a commit's keys of one table (an order's lines) mostly
  // share a leaf, and the batch latches it once for all of them. The order
  // of index_inserts is kept: the redo record and the undo follow it.
  const std::vector<IndexWrite>& writes = txn.index_inserts;
  absl::InlinedVector<index::BLinkTree::Entry, 16> run;
  size_t done = 0;  // writes[0, done) are in their indexes
  while (done < writes.size()) {
    index::BLinkTree& tree = *txn.db.indexes[writes[done].index];
    size_t end = done + 1;
    while (end < writes.size() &&
           ExtendsRun(tree, writes[end - 1], writes[end])) {
      ++end;
    }
    run.clear();
    for (size_t i = done; i < end; ++i) {
      run.push_back({writes[i].key, writes[i].value.raw()});
    }
    size_t inserted = 0;
    absl::Status s = tree.InsertBatch(txn.ctx, run, &inserted);
    if (!s.ok()) {
      UndoFirst(txn, writes, done + inserted, Remove);
      txn.abort_reason = AbortReason::kError;
      return s;
    }
    done = end;
  }
  return absl::OkStatus();
}

absl::Status RemoveIndexEntries(TxnState& txn) {
  for (size_t i = 0; i < txn.index_removes.size(); ++i) {
    absl::Status s = Remove(txn, txn.index_removes[i]);
    if (!s.ok()) {
      UndoFirst(txn, txn.index_removes, i, Insert);
      UndoFirst(txn, txn.index_inserts, txn.index_inserts.size(), Remove);
      txn.abort_reason = AbortReason::kError;
      return s;
    }
  }
  return absl::OkStatus();
}

void UndoIndexEntries(TxnState& txn) {
  UndoFirst(txn, txn.index_removes, txn.index_removes.size(), Insert);
  UndoFirst(txn, txn.index_inserts, txn.index_inserts.size(), Remove);
}

}  // namespace strand::txn
