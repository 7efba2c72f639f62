// OCC (concurrency_control.h). Validation takes read latches with no_wait
// while holding the write latches: a page another committer holds is
// treated as changed (as Silo treats a locked record), which also rules out
// two committers waiting for each other.

#include "txn/optimistic.h"

#include <optional>

#include "absl/strings/str_format.h"
#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

absl::Status Optimistic::Read(TxnState& txn, Access& access, bool) {
  // With no latch where the page is cached: validation compares the
  // version read with the version at commit either way, and a copy that
  // validates is one a short shared latch could have taken.
  if (txn.db.optimistic_tuple_reads) {
    const cc::OptimisticToken token =
        txn.db.manager->OptimisticRead(txn.ctx, access.address.gcl());
    if (token.ok() &&
        txn.table(access.table)
            .CopyTupleUnlatched(token, access.address, access.original)) {
      return absl::OkStatus();
    }
  }
  auto page = txn.db.manager->SLock(txn.ctx, access.address.gcl());
  if (!page.ok()) return page.status();
  if (absl::Status s = CopyTuple(txn, page->data(), access); !s.ok()) {
    return s;
  }
  return page->Unlock();
}

namespace {

// The header of `a`'s tuple as it is now, read with no latch, or nullopt
// when that is not possible at once (the page is not cached, or a writer
// is in or came in during the read).
std::optional<storage::TupleHeader> HeaderUnlatched(TxnState& txn,
                                                    const Access& a) {
  if (!txn.db.optimistic_tuple_reads) return std::nullopt;
  const cc::OptimisticToken token =
      txn.db.manager->OptimisticRead(txn.ctx, a.address.gcl());
  if (!token.ok()) return std::nullopt;
  uint8_t bytes[storage::kTupleHeaderBytes];
  cc::CopyRelaxed(bytes, token.data() + TupleOffset(txn, a), sizeof(bytes));
  if (!cc::GclManager::Validate(token)) return std::nullopt;
  return storage::TupleHeader::From(bytes);
}

// Every tuple read still has the version read (Silo's read-set check);
// the caller holds its write latches. A page another committer holds
// exclusive cannot be read unlatched, so it takes the no-wait latch below
// and counts as changed, as before.
absl::Status ValidateTupleReads(TxnState& txn) {
  for (const auto& a : txn.accesses) {
    if (a->inserted) continue;
    storage::TupleHeader now;
    if (cc::ExclusiveGuard* held =
            txn.latches.HeldExclusive(a->address.gcl())) {
      now = HeaderAt(txn, held->data(), *a);
    } else if (std::optional<storage::TupleHeader> unlatched =
                   HeaderUnlatched(txn, *a)) {
      now = *unlatched;
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
  auto ts = TakeTimestamp(txn);
  if (!ts.ok()) return ts.status();
  txn.commit_ts = *ts;
  if (absl::Status s = ApplyWrites(txn, txn.commit_ts); !s.ok()) return s;
  return FinishCommit(txn);
}

}  // namespace strand::txn
