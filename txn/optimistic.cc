// OCC (concurrency_control.h). Validation takes read latches with no_wait
// while holding the write latches: a page another committer holds is
// treated as changed (as Silo treats a locked record), which also rules out
// two committers waiting for each other.

#include "txn/optimistic.h"

#include "absl/strings/str_format.h"
#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

absl::Status Optimistic::Read(TxnState& txn, Access& access, bool) {
  auto page = txn.db.manager->SLock(txn.ctx, access.address.gcl());
  if (!page.ok()) return page.status();
  if (absl::Status s = CopyTuple(txn, page->data(), access); !s.ok()) {
    return s;
  }
  return page->Unlock();
}

namespace {

// Every tuple read still has the version read (Silo's read-set check);
// the caller holds its write latches.
absl::Status ValidateTupleReads(TxnState& txn) {
  for (const auto& a : txn.accesses) {
    if (a->inserted) continue;
    storage::TupleHeader now;
    if (cc::ExclusiveGuard* held =
            txn.latches.HeldExclusive(a->address.gcl())) {
      now = HeaderAt(txn, held->data(), *a);
    } else {
      auto page =
          txn.db.manager->SLock(txn.ctx, a->address.gcl(), {.no_wait = true});
      if (!page.ok()) {
        if (!absl::IsAborted(page.status())) return page.status();
        txn.abort_reason = AbortReason::kValidation;
        return absl::AbortedError(
            absl::StrFormat("OCC: %s is being written by another transaction",
                            a->address.ToString()));
      }
      now = HeaderAt(txn, page->data(), *a);
    }
    if (now.write_ts() != a->version() || !now.live()) {
      txn.abort_reason = AbortReason::kValidation;
      return absl::AbortedError(absl::StrFormat(
          "OCC: %s changed since it was read (version %d, now %d)",
          a->address.ToString(), a->version(), now.write_ts()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Optimistic::Commit(TxnState& txn) {
  if (absl::Status s = LatchWritePages(txn, cc::LockOptions{}); !s.ok()) {
    return s;
  }
  // The index leaves are write locks too: held before any validation.
  if (absl::Status s = PrepareIndexWritesOrConflict(txn, ValidateTupleReads);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ValidateTupleReads(txn); !s.ok()) return s;
  if (absl::Status s = ValidateIndexReads(txn); !s.ok()) return s;
  // Every write latch is held and the reads are still current: this is the
  // serialization point, so the commit timestamp is taken now.
  auto ts = txn.db.oracle->Next(txn.ctx);
  if (!ts.ok()) return ts.status();
  txn.commit_ts = *ts;
  if (absl::Status s = ApplyWrites(txn, txn.commit_ts); !s.ok()) return s;
  return FinishCommit(txn);
}

}  // namespace strand::txn
