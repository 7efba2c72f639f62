// 2PL no-wait over SELCC latches (concurrency_control.h): the page latches
// are the locks, taken with no_wait and held until the end.

#include "txn/two_phase_locking.h"

#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

namespace {
constexpr cc::LockOptions kNoWait{.no_wait = true};
}  // namespace

absl::Status TwoPhaseLocking::Read(TxnState& txn, Access& access,
                                   bool for_update) {
  const rdma::GlobalAddress page = access.address.gcl();
  if (for_update) {
    auto guard = txn.latches.Exclusive(page, kNoWait);
    if (!guard.ok()) return guard.status();
    return CopyTuple(txn, (*guard)->data(), access);
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
  // Tuple reads are locked: only the index reads can make a duplicate key
  // a conflict.
  if (absl::Status s = PrepareIndexWritesOrConflict(
          txn, [](TxnState&) { return absl::OkStatus(); });
      !s.ok()) {
    return s;
  }
  // The index reads are the only reads not held locked: checked now, with
  // every lock and index leaf held (concurrency_control.h, "Index reads").
  if (absl::Status s = ValidateIndexReads(txn); !s.ok()) return s;
  if (commit_ts != 0) {
    // A participant: the coordinator took it while this branch's locks
    // were held too.
    txn.commit_ts = commit_ts;
    return absl::OkStatus();
  }
  // Every lock is held: the timestamp taken now orders this transaction
  // after everything it depends on.
  auto ts = txn.db.oracle->Next(txn.ctx);
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
