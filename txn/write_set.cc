#include "txn/write_set.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/failure_point.h"
#include "glog/logging.h"
#include "txn/index_writes.h"
#include "txn/write_through.h"
#include "wal/redo_record.h"

namespace strand::txn {

using storage::TupleHeader;

uint32_t TupleOffset(const TxnState& txn, const Access& access) {
  return txn.table(access.table).SlotOffset(access.address.slot());
}

TupleHeader HeaderAt(const TxnState& txn, const uint8_t* payload,
                     const Access& access) {
  return TupleHeader::From(payload + TupleOffset(txn, access));
}

absl::Status CopyTuple(const TxnState& txn, const uint8_t* payload,
                       Access& access) {
  const storage::HeapTable& table = txn.table(access.table);
  auto tuple = table.TupleIn(payload, access.address);
  if (!tuple.ok()) return tuple.status();
  access.original.assign(*tuple, *tuple + table.schema().tuple_bytes());
  return absl::OkStatus();
}

absl::Status LatchWritePages(TxnState& txn, cc::LockOptions lock) {
  // Inline for a typical transaction's write pages: no allocation per commit.
  absl::InlinedVector<rdma::GlobalAddress, 32> pages;
  for (const auto& a : txn.accesses) {
    if (a->writes()) pages.push_back(a->address.gcl());
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  for (rdma::GlobalAddress page : pages) {
    auto guard = txn.latches.Exclusive(page, lock);
    if (!guard.ok()) return guard.status();
  }
  return absl::OkStatus();
}

namespace {

// The span [first, last) of `access.modified`'s columns (not the header)
// that differs from `original`; first == last if none does. Compares eight
// bytes at a time: it runs over every written tuple at commit (twice with a
// log), and a byte loop over 300-byte STOCK rows showed in profiles.
std::pair<size_t, size_t> ChangedSpan(const Access& access) {
  const uint8_t* before = access.original.data();
  const uint8_t* after = access.modified->data();
  const size_t bytes = access.original.size();
  auto word = [](const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  size_t first = sizeof(TupleHeader);
  while (first + 8 <= bytes && word(before + first) == word(after + first)) {
    first += 8;
  }
  while (first < bytes && before[first] == after[first]) ++first;
  if (first == bytes) return {bytes, bytes};
  size_t last = bytes;
  while (last >= first + 8 &&
         word(before + last - 8) == word(after + last - 8)) {
    last -= 8;
  }
  while (last > first && before[last - 1] == after[last - 1]) --last;
  return {first, last};
}

// Writes the bytes of `access.modified` that differ from `original` (the
// columns, not the header) into the latched page: only the changed span is
// marked dirty, so only it is written back.
void ApplyModification(const TxnState& txn, const Access& access,
                       cc::ExclusiveGuard& page) {
  const auto [first, last] = ChangedSpan(access);
  if (first == last) return;
  std::memcpy(page.MutableRange(TupleOffset(txn, access) + first,
                                static_cast<uint32_t>(last - first)),
              access.modified->data() + first, last - first);
}

std::string_view Bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The commit's redo ops (wal/redo_record.h), in the order recovery replays
// them: tuple inserts first (replay learns their new addresses), then index
// removes and inserts (as ApplyIndexWrites applies them: a key removed and
// added again by one commit), then updates and deletes. Returns false if
// the transaction wrote nothing.
bool BuildRedo(const TxnState& txn, wal::RedoBuilder& redo) {
  redo.Clear();
  for (const auto& a : txn.accesses) {
    if (!a->inserted) continue;
    const storage::TupleBuffer& tuple = *a->modified;
    redo.Insert(txn.table(a->table).table_id(), a->address.raw(), 0,
                Bytes(tuple.data(), tuple.size()));
  }
  for (const IndexWrite& w : txn.index_removes) {
    redo.IndexRemove(txn.db.index_catalog_ids[w.index], w.key, w.value.raw());
  }
  for (const IndexWrite& w : txn.index_inserts) {
    redo.IndexInsert(txn.db.index_catalog_ids[w.index], w.key, w.value.raw());
  }
  for (const auto& a : txn.accesses) {
    const uint32_t table = txn.table(a->table).table_id();
    if (a->deleted) {
      redo.Delete(table, a->address.raw(), 0);
    } else if (a->modified && !a->inserted) {
      const auto [first, last] = ChangedSpan(*a);
      if (first == last) continue;
      redo.Update(table, a->address.raw(), 0, static_cast<uint32_t>(first),
                  Bytes(a->modified->data() + first, last - first));
    }
  }
  return redo.op_count() > 0;
}

// One buffer per thread: a commit's redo is built and copied into the log
// buffer before the thread runs anything else.
wal::RedoBuilder& ThreadRedo() {
  thread_local wal::RedoBuilder redo;
  return redo;
}

// Appends the commit's record of `type`; its LSN becomes txn.commit_lsn. A
// failure is the transaction's error.
absl::StatusOr<wal::Lsn> AppendCommitRecord(TxnState& txn, wal::RecordType type,
                                            uint64_t txn_id,
                                            std::string_view payload) {
  auto lsn = txn.db.log->AppendRecord(type, txn_id, txn.commit_ts, payload);
  if (!lsn.ok()) {
    txn.abort_reason = AbortReason::kError;
    return lsn.status();
  }
  txn.commit_lsn = *lsn;
  if (txn.db.ring != nullptr) {
    txn.logged_type = type;
    txn.logged_txn_id = txn_id;
    txn.logged_payload.assign(payload);
  }
  return lsn;
}

// Appends the commit's record (see ApplyWrites).
absl::Status LogCommit(TxnState& txn) {
  wal::RedoBuilder& redo = ThreadRedo();
  if (!BuildRedo(txn, redo)) return absl::OkStatus();
  // The transaction id only labels the record; commit timestamps are
  // unique, so they serve.
  return AppendCommitRecord(txn, wal::RecordType::kCommit, txn.commit_ts,
                            redo.payload())
      .status();
}

template <typename Field>
void PutHeaderField(const TxnState& txn, const Access& access,
                    cc::ExclusiveGuard& page, size_t field_offset,
                    Field value) {
  std::memcpy(
      page.MutableRange(TupleOffset(txn, access) + field_offset, sizeof(Field)),
      &value, sizeof(Field));
}

}  // namespace

absl::Status ApplyWrites(TxnState& txn, std::optional<uint64_t> stamp) {
  // The last step that can fail is the append; the index and tuple writes
  // after it cannot (PrepareIndexWrites checked the index changes).
  if (txn.db.log != nullptr) {
    if (absl::Status s = LogCommit(txn); !s.ok()) {
      ReleaseIndexLeaves(txn);
      return s;
    }
  }
  return ApplyLoggedWrites(txn, stamp);
}

absl::StatusOr<wal::Lsn> LogBranch(TxnState& txn, wal::RecordType type,
                                   uint64_t txn_id, std::string_view prefix) {
  wal::RedoBuilder& redo = ThreadRedo();
  thread_local std::string payload;
  BuildRedo(txn, redo);
  payload.assign(prefix);
  payload.append(redo.payload());
  return AppendCommitRecord(txn, type, txn_id, payload);
}

namespace {

// ApplyLoggedWrites up to the write-through: into the latched lines only.
void ApplyToLines(TxnState& txn, std::optional<uint64_t> stamp) {
  ApplyIndexWrites(txn);
  for (const auto& a : txn.accesses) {
    if (!a->writes()) continue;
    cc::ExclusiveGuard* page = txn.latches.HeldExclusive(a->address.gcl());
    CHECK(page != nullptr) << "write page of " << a->address.ToString()
                           << " is not latched at commit";
    if (a->inserted && !a->deleted) {
      // The insert commits: the tuple becomes visible with these writes.
      const TupleHeader header = HeaderAt(txn, page->data(), *a);
      PutHeaderField<uint8_t>(txn, *a, *page, storage::kTupleFlagsOffset,
                              header.flags() & ~TupleHeader::kPending);
    }
    if (a->deleted) {
      const TupleHeader header = HeaderAt(txn, page->data(), *a);
      PutHeaderField<uint8_t>(txn, *a, *page, storage::kTupleFlagsOffset,
                              header.flags() | TupleHeader::kDeleted);
    } else if (a->modified) {
      ApplyModification(txn, *a, *page);
    }
    if (stamp) {
      // write_ts shares its word with the flags just written.
      TupleHeader header = HeaderAt(txn, page->data(), *a);
      header.set_write_ts(*stamp);
      PutHeaderField<uint64_t>(txn, *a, *page, storage::kTupleWriteWordOffset,
                               header.write_word());
    }
  }
}

}  // namespace

absl::Status ApplyLoggedWrites(TxnState& txn, std::optional<uint64_t> stamp) {
  ApplyToLines(txn, stamp);
  ReachFailurePoint(txn.db.manager->node_id(), FailurePoint::kCommitApplied);
  absl::Status written = WriteThroughCommit(txn);
  ReleaseIndexLeaves(txn);
  return written;
}

absl::Status RecordPrepared(TxnState& txn, wal::RecordType type,
                            uint64_t txn_id, std::string_view prefix) {
  if (txn.db.ring == nullptr || !txn.db.manager->options().write_through) {
    return absl::OkStatus();
  }
  // Every line the commit may write, as it is now: the transaction holds
  // them all exclusively, so nobody else sees them in between.
  thread_local std::vector<std::pair<cc::ExclusiveGuard*, std::string>> saved;
  saved.clear();
  auto save = [&](cc::ExclusiveGuard& g) {
    saved.emplace_back(
        &g, std::string(reinterpret_cast<const char*>(g.data()), g.size()));
  };
  txn.latches.ForEachExclusive(save);
  for (auto& [leaf, guard] : txn.index_leaves) save(guard);
  ApplyToLines(txn, std::nullopt);
  thread_local std::string payload;
  payload.clear();
  if (txn.db.log != nullptr) {
    // What LogBranch logs, for the reclaimer to log again (adoption).
    wal::RedoBuilder& redo = ThreadRedo();
    BuildRedo(txn, redo);
    payload.assign(prefix);
    payload.append(redo.payload());
  }
  absl::Status written = WritePreparedRecord(txn, {type, txn_id, payload});
  // Back as before: every byte the apply changed lies in its guard's dirty
  // range, which stays marked; the commit (or the abort's unlock) writes
  // it through either way, so the wider mark costs bytes, not correctness.
  for (auto& [g, bytes] : saved) {
    const uint32_t begin = g->dirty_begin(), end = g->dirty_end();
    if (begin < end) {
      std::memcpy(g->MutableRange(begin, end - begin), bytes.data() + begin,
                  end - begin);
    }
  }
  saved.clear();
  return written;
}

absl::StatusOr<uint64_t> TakeTimestamp(TxnState& txn) {
  absl::StatusOr<uint64_t> ts = txn.db.oracle->Next(txn.ctx);
  if (ts.ok() && txn.watermark_slot != nullptr) txn.watermark_slot->Hold(*ts);
  return ts;
}

absl::Status FinishCommit(TxnState& txn) {
  if (txn.db.log != nullptr && txn.db.watermark == nullptr &&
      txn.commit_lsn != 0) {
    // A log failure is final for the node (wal/log_writer.h): the writes
    // are in memory but the commit is not acknowledged; recovery decides.
    if (absl::Status s = txn.db.log->WaitDurable(txn.commit_lsn); !s.ok()) {
      txn.abort_reason = AbortReason::kError;
      (void)txn.latches.ReleaseAll();
      return s;
    }
  }
  return txn.latches.ReleaseAll();
}

}  // namespace strand::txn
