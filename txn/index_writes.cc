#include "txn/index_writes.h"

#include <algorithm>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "txn/declared_indexes.h"

namespace strand::txn {
namespace {

// Fills txn.index_changes with the commit's changes grouped by index, and
// txn.index_change_runs with where each index's group ends.
void GroupChanges(TxnState& txn) {
  txn.index_changes.clear();
  txn.index_change_runs.clear();
  // Allocated once here, not grown change by change (a New-Order makes 13
  // changes in 5 indexes); the indexes' list is inline.
  txn.index_changes.reserve(txn.index_removes.size() +
                            txn.index_inserts.size());
  absl::InlinedVector<IndexId, 16> indexes;
  for (const IndexWrite& w : txn.index_removes) indexes.push_back(w.index);
  for (const IndexWrite& w : txn.index_inserts) indexes.push_back(w.index);
  std::sort(indexes.begin(), indexes.end());
  indexes.erase(std::unique(indexes.begin(), indexes.end()), indexes.end());
  txn.index_change_runs.reserve(indexes.size());
  for (IndexId index : indexes) {
    for (const bool remove : {true, false}) {
      for (const IndexWrite& w :
           remove ? txn.index_removes : txn.index_inserts) {
        if (w.index != index) continue;
        txn.index_changes.push_back({w.key, w.value.raw(), remove, {}});
      }
    }
    txn.index_change_runs.emplace_back(index, txn.index_changes.size());
  }
}

// Calls fn(index, tree, changes of that tree) for each index the commit
// changes.
template <typename Fn>
void ForEachRun(TxnState& txn, Fn fn) {
  size_t begin = 0;
  for (const auto& [index, end] : txn.index_change_runs) {
    fn(index, *txn.db.indexes[index],
       absl::MakeSpan(txn.index_changes).subspan(begin, end - begin));
    begin = end;
  }
}

// A change the tree refused (AlreadyExists, NotFound), with the index and
// the key named.
absl::Status NameRefusedChange(const TxnState& txn, IndexId index,
                               const index::BLinkTree::Change& change,
                               const absl::Status& status) {
  return absl::Status(
      status.code(),
      absl::StrFormat("index %s, key %s (row %s): %s",
                      txn.db.index_names[index],
                      DescribeKey(txn.db, index, change.key),
                      storage::TupleAddress::FromRaw(change.value).ToString(),
                      status.message()));
}

void BackOff(int attempt) {
  if (attempt < 8) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(attempt));
  }
}

}  // namespace

std::optional<uint64_t> LeafTimestamp(const TxnState& txn) {
  if (txn.db.algorithm != CcAlgorithm::kTimestampOrdering) return std::nullopt;
  return txn.start_ts;
}

absl::Status PrepareIndexWrites(TxnState& txn) {
  if (txn.index_inserts.empty() && txn.index_removes.empty()) {
    return absl::OkStatus();
  }
  GroupChanges(txn);
  // Room for a commit's leaves up front (no rehash chain as they come in).
  txn.index_leaves.reserve(16);
  const std::optional<uint64_t> ts = LeafTimestamp(txn);
  for (int attempt = 0; attempt < kPrepareAttempts; ++attempt) {
    absl::Status error;
    bool retry = false;
    ForEachRun(txn, [&](IndexId index, index::BLinkTree& tree,
                        absl::Span<index::BLinkTree::Change> changes) {
      if (!error.ok() || retry) return;
      size_t split_at = 0;
      auto prepared = tree.PrepareChanges(txn.ctx, changes, txn.index_leaves,
                                          ts, &split_at);
      if (!prepared.ok()) {
        error = prepared.status();
        if ((absl::IsAlreadyExists(error) || absl::IsNotFound(error)) &&
            split_at < changes.size()) {
          error = NameRefusedChange(txn, index, changes[split_at], error);
        }
        return;
      }
      if (*prepared == index::BLinkTree::Prepared::kReady) return;
      retry = true;
      ReleaseIndexLeaves(txn);
      if (*prepared == index::BLinkTree::Prepared::kNeedSplit) {
        // Holding no leaf: the split's latches may wait, as any tree
        // writer's do, and go up the tree.
        const index::BLinkTree::Change& full = changes[split_at];
        error = tree.SplitLeafOf(txn.ctx, full.key, full.value);
      } else {
        BackOff(attempt);
      }
    });
    if (!error.ok()) {
      ReleaseIndexLeaves(txn);
      txn.abort_reason =
          absl::IsAborted(error) ? AbortReason::kConflict : AbortReason::kError;
      return error;
    }
    if (!retry) return absl::OkStatus();
  }
  ReleaseIndexLeaves(txn);
  txn.abort_reason = AbortReason::kConflict;
  return absl::AbortedError(absl::StrFormat(
      "the index leaves of this commit stayed busy over %d attempts",
      kPrepareAttempts));
}

absl::Status PrepareIndexWritesOrConflict(
    TxnState& txn, absl::FunctionRef<absl::Status(TxnState&)> validate_tuples) {
  absl::Status s = PrepareIndexWrites(txn);
  if (absl::IsAlreadyExists(s) && !txn.unchecked_unique_adds) {
    // Every unique key was found free when the transaction added it (Txn
    // checks at the statement, own_writes.h): another commit took it
    // since. Retried, the statement sees the key and reports it.
    txn.abort_reason = AbortReason::kConflict;
    return absl::AbortedError(absl::StrCat(
        "a unique key added by this transaction was taken by another "
        "commit since: ",
        s.message()));
  }
  if (!absl::IsAlreadyExists(s) && !absl::IsNotFound(s)) return s;
  absl::Status stale = validate_tuples(txn);
  if (stale.ok()) stale = ValidateIndexReads(txn);
  if (absl::IsAborted(stale)) {
    txn.abort_reason = AbortReason::kValidation;
    return stale;
  }
  txn.abort_reason = AbortReason::kError;
  return s;
}

absl::Status ValidateIndexReads(TxnState& txn) {
  std::vector<IndexLeafRead>& reads = txn.leaf_reads;
  if (reads.empty()) return absl::OkStatus();
  // One check per leaf and version read (a leaf read at two versions
  // fails at one of them).
  std::sort(reads.begin(), reads.end(),
            [](const IndexLeafRead& a, const IndexLeafRead& b) {
              return a.read < b.read;
            });
  reads.erase(std::unique(reads.begin(), reads.end(),
                          [](const IndexLeafRead& a, const IndexLeafRead& b) {
                            return a.read == b.read;
                          }),
              reads.end());
  const std::optional<uint64_t> ts = LeafTimestamp(txn);
  for (const IndexLeafRead& r : reads) {
    absl::Status s = txn.db.indexes[r.index]->ValidateRead(
        txn.ctx, r.read, txn.index_leaves, ts);
    if (!s.ok()) {
      txn.abort_reason =
          absl::IsAborted(s) ? AbortReason::kValidation : AbortReason::kError;
      return s;
    }
  }
  return absl::OkStatus();
}

void ApplyIndexWrites(TxnState& txn) {
  if (txn.index_inserts.empty() && txn.index_removes.empty()) return;
  const std::optional<uint64_t> ts = LeafTimestamp(txn);
  ForEachRun(txn, [&](IndexId, index::BLinkTree& tree,
                      absl::Span<index::BLinkTree::Change> changes) {
    tree.ApplyChanges(changes, txn.index_leaves, ts);
  });
}

void ReleaseIndexLeaves(TxnState& txn) {
  for (auto& [leaf, guard] : txn.index_leaves) {
    absl::Status s = guard.Unlock();
    LOG_IF(ERROR, !s.ok()) << "releasing index leaf " << leaf.ToString() << ": "
                           << s;
  }
  txn.index_leaves.clear();
}

}  // namespace strand::txn
