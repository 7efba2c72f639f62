#include "txn/index_writes.h"

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

}  // namespace

absl::Status InsertIndexEntries(TxnState& txn) {
  for (size_t i = 0; i < txn.index_inserts.size(); ++i) {
    absl::Status s = Insert(txn, txn.index_inserts[i]);
    if (!s.ok()) {
      UndoFirst(txn, txn.index_inserts, i, Remove);
      txn.abort_reason = AbortReason::kError;
      return s;
    }
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
