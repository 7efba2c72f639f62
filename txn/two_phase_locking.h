#ifndef STRAND_TXN_TWO_PHASE_LOCKING_H_
#define STRAND_TXN_TWO_PHASE_LOCKING_H_

// 2PL no-wait (concurrency_control.h): reads take shared, writes exclusive
// page latches, kept to the end of the transaction. No step waits for a
// latch another transaction keeps to its commit: tuple latches and the
// index leaves a commit changes are taken with no_wait (a held one aborts),
// and an insert skips a busy page (storage/heap_table.h). The waits that
// remain are physical and bounded (tree latches, held for a node edit or
// split or through a commit's index changes; a heap page allocation; a
// prepared branch's leaves), each capped by CcOptions::lock_timeout (10 s).
//
// Unlatched reads (Database::optimistic_tuple_reads): a read that is not
// for update, of a page this transaction has not latched, copies the tuple
// with no latch (GclManager::OptimisticRead) and keeps the token; it falls
// back to the shared latch when the page is not cached or a writer holds
// it. Commit checks each such read after every lock and index leaf is
// held: its token still validates, or its bytes equal the copy under a
// latch the transaction holds (taken then, no-wait, if it held none); else
// Aborted (kValidation). Reads for update and writes take the exclusive
// latch as before.
//
// Why unlatched reads stay serializable and durable, and every bounded
// wait: docs/design/concurrency_control.md, "2PL: unlatched reads" and
// "2PL: what no-wait still waits for".

#include "txn/concurrency_control.h"

namespace strand::txn {

class TwoPhaseLocking : public ConcurrencyControl {
 public:
  absl::Status Begin(TxnState&) override { return absl::OkStatus(); }
  absl::Status Read(TxnState& txn, Access& access, bool for_update) override;
  absl::Status PrepareWrite(TxnState& txn, Access& access) override;
  absl::Status Commit(TxnState& txn) override;
  absl::Status Prepare(TxnState& txn, uint64_t commit_ts) override;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TWO_PHASE_LOCKING_H_
