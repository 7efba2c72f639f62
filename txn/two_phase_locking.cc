// 2PL no-wait over SELCC latches (concurrency_control.h): the page latches
// are the locks, taken with no_wait and held until the end.

#include "txn/two_phase_locking.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

namespace {

constexpr cc::LockOptions kNoWait{.no_wait = true};

// Every tuple read with no latch still reads what it read, now that every
// lock is held: its token still validates (no writer came in since the
// read), or else its bytes are unchanged under a latch this transaction
// holds, taken now (no-wait) if it held none. The second test spares an
// abort when the page changed in other tuples, was evicted and reloaded,
// or was latched by this transaction itself (a write or insert of its own
// after the read); it compares the value, which is what the read returned.
absl::Status ValidateUnlatchedReads(TxnState& txn) {
  for (const UnlatchedRead& read : txn.unlatched_reads) {
    if (cc::GclManager::Validate(read.token)) continue;
    const Access& a = *read.access;
    auto payload = txn.latches.Shared(a.address.gcl(), kNoWait);
    if (payload.ok()) {
      if (std::memcmp(*payload + TupleOffset(txn, a), a.original.data(),
                      a.original.size()) == 0) {
        continue;
      }
    } else if (!absl::IsAborted(payload.status())) {
      return payload.status();
    }
    txn.abort_reason = AbortReason::kValidation;
    return absl::AbortedError(
        absl::StrFormat("2PL: %s changed since it was read with no latch",
                        a.address.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TwoPhaseLocking::Read(TxnState& txn, Access& access,
                                   bool for_update) {
  const rdma::GlobalAddress page = access.address.gcl();
  if (for_update) {
    auto guard = txn.latches.Exclusive(page, kNoWait);
    if (!guard.ok()) return guard.status();
    return CopyTuple(txn, (*guard)->data(), access);
  }
  if (txn.db.optimistic_tuple_reads && !txn.latches.Holds(page)) {
    const cc::OptimisticToken token =
        txn.db.manager->OptimisticRead(txn.ctx, page);
    if (token.ok() &&
        txn.table(access.table)
            .CopyTupleUnlatched(token, access.address, access.original)) {
      txn.unlatched_reads.push_back({&access, token});
      return absl::OkStatus();
    }
  }
  auto payload = txn.latches.Shared(page, kNoWait);
  if (!payload.ok()) return payload.status();
  return CopyTuple(txn, *payload, access);
}

absl::Status TwoPhaseLocking::PrepareWrite(TxnState& txn, Access& access) {
  return txn.latches.Exclusive(access.address.gcl(), kNoWait).status();
}

absl::Status TwoPhaseLocking::Prepare(TxnState& txn, uint64_t commit_ts) {
  // Only the pages of inserted tuples are not latched yet (commit makes
  // them visible). No-wait, like every 2PL lock: waiting here while holding
  // the transaction's other locks could close a cycle.
  if (absl::Status s = LatchWritePages(txn, {.no_wait = true}); !s.ok()) {
    return s;
  }
  // A stale read makes a duplicate key a conflict: only the index reads
  // and the tuples read with no latch can be.
  if (absl::Status s =
          PrepareIndexWritesOrConflict(txn, ValidateUnlatchedReads);
      !s.ok()) {
    return s;
  }
  // The reads not held locked are checked now, with every lock and index
  // leaf held (docs/design/concurrency_control.md, "Index reads").
  if (absl::Status s = ValidateUnlatchedReads(txn); !s.ok()) return s;
  if (absl::Status s = ValidateIndexReads(txn); !s.ok()) return s;
  if (commit_ts != 0) {
    // A participant: the coordinator took it while this branch's locks
    // were held too (and after this branch's watermark slot was held).
    txn.commit_ts = commit_ts;
    if (txn.watermark_slot != nullptr) txn.watermark_slot->Hold(commit_ts);
    return absl::OkStatus();
  }
  // Every lock is held: the timestamp taken now orders this transaction
  // after everything it depends on.
  auto ts = TakeTimestamp(txn);
  if (!ts.ok()) return ts.status();
  txn.commit_ts = *ts;
  return absl::OkStatus();
}

absl::Status TwoPhaseLocking::Commit(TxnState& txn) {
  if (absl::Status s = Prepare(txn, 0); !s.ok()) return s;
  if (absl::Status s = ApplyWrites(txn, std::nullopt); !s.ok()) return s;
  return FinishCommit(txn);
}

}  // namespace strand::txn
