#ifndef STRAND_TXN_TWO_PHASE_LOCKING_H_
#define STRAND_TXN_TWO_PHASE_LOCKING_H_

// 2PL no-wait: see concurrency_control.h.
//
// No-wait: no step waits for a latch another transaction keeps to its
// commit. Tuple latches (read, write, the commit's latches on the pages of
// inserted tuples) and the index leaves a commit changes are taken with
// no_wait; an insert skips a busy page (storage/heap_table.h). The waits
// that remain are physical and bounded:
//   - index descents and leaf reads wait for tree latches, which tree
//     operations hold for one node edit or split, and commits hold from
//     PrepareIndexWrites to ApplyIndexWrites: no_wait validation, one
//     oracle FAA and the redo append in between (which waits only while
//     more than LogWriterOptions::max_unflushed_bytes await the disk);
//   - PrepareIndexWrites retries a busy leaf at most kPrepareAttempts
//     times with a back-off under 64 us (index_writes.h);
//   - a heap page allocation waits for the table root's latch, held for
//     one list update by another allocation;
//   - a prepared branch of partitioned mode (txn/remote_branches.h) holds
//     the index leaves it changes until its decision arrives, a message
//     round trip and a forced log write later;
//   - every latch wait is capped by CcOptions::lock_timeout (10 s), which
//     only a stalled node reaches.

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
