// Basic TO with buffered writes (concurrency_control.h). Reads raise the
// tuple's read_ts, so they need a short exclusive latch: the price of TO on
// a latch-based cache (every read is a write to the line).

#include "txn/timestamp_ordering.h"

#include "absl/strings/str_format.h"
#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

using storage::TupleHeader;

absl::Status TimestampOrdering::Begin(TxnState& txn) {
  auto ts = TakeTimestamp(txn);
  if (!ts.ok()) return ts.status();
  txn.start_ts = *ts;
  return absl::OkStatus();
}

absl::Status TimestampOrdering::Read(TxnState& txn, Access& access, bool) {
  auto page = txn.db.manager->XLock(txn.ctx, access.address.gcl());
  if (!page.ok()) return page.status();
  if (absl::Status s = CopyTuple(txn, page->data(), access); !s.ok()) {
    return s;
  }
  const TupleHeader header = HeaderAt(txn, page->data(), access);
  if (header.write_ts() > txn.start_ts) {
    return absl::AbortedError(absl::StrFormat(
        "TO: %s was written at %d, after this transaction's %d",
        access.address.ToString(), header.write_ts(), txn.start_ts));
  }
  if (header.read_ts() < txn.start_ts) {
    const uint64_t ts = txn.start_ts;
    std::memcpy(
        page->MutableRange(
            TupleOffset(txn, access) + storage::kTupleReadTsOffset, sizeof(ts)),
        &ts, sizeof(ts));
  }
  return page->Unlock();
}

absl::Status TimestampOrdering::Commit(TxnState& txn) {
  if (absl::Status s = LatchWritePages(txn, cc::LockOptions{}); !s.ok()) {
    return s;
  }
  // The TO write rule, checked for every write before any is applied.
  for (const auto& a : txn.accesses) {
    if (!a->writes() || a->inserted) continue;
    const TupleHeader header =
        HeaderAt(txn, txn.latches.HeldExclusive(a->address.gcl())->data(), *a);
    if (header.read_ts() > txn.start_ts || header.write_ts() > txn.start_ts ||
        !header.live()) {
      txn.abort_reason = AbortReason::kConflict;
      return absl::AbortedError(
          absl::StrFormat("TO: %s was read at %d or written at %d, after this "
                          "transaction's %d",
                          a->address.ToString(), header.read_ts(),
                          header.write_ts(), txn.start_ts));
    }
  }
  // The same rules for the index: a changed leaf must not have been read
  // or changed above start_ts, a read leaf not changed since it was read
  // (nor above start_ts) and its read_ts is raised.
  // Tuple reads are locked (2PL) or timestamp-checked (TO): only the
  // index reads can make a duplicate key a conflict.
  if (absl::Status s = PrepareIndexWritesOrConflict(
          txn, [](TxnState&) { return absl::OkStatus(); });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateIndexReads(txn); !s.ok()) return s;
  txn.commit_ts = txn.start_ts;
  if (absl::Status s = ApplyWrites(txn, txn.start_ts); !s.ok()) return s;
  return FinishCommit(txn);
}

}  // namespace strand::txn
