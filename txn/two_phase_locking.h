#ifndef STRAND_TXN_TWO_PHASE_LOCKING_H_
#define STRAND_TXN_TWO_PHASE_LOCKING_H_

// 2PL no-wait: see concurrency_control.h.
//
// Unlatched reads (Database::optimistic_tuple_reads). A shared latch on a
// cached page is two atomic writes to the frame's latch word, which every
// core reading the page also writes (TPC-C's ITEM rows, read by every
// New-Order on every thread). So a read that is not for update, of a page
// this transaction has not latched, copies the tuple with no latch
// (GclManager::OptimisticRead) and keeps the token; it falls back to the
// shared latch when the page is not cached or a writer holds it. Commit
// checks each such read after every lock and index leaf is held: its
// token still validates (nobody held the page exclusive since the read),
// or its bytes equal the copy under a latch the transaction holds (taken
// then, no-wait, if it held none); else Aborted (kValidation). Why this
// stays serializable: the check happens at the serialization point s of
// "Index reads" (concurrency_control.h), so the value read is the value
// at s, like the locked reads' and the index reads'. A writer that
// commits between the read and s makes the check fail (it held the page
// exclusive and changed the tuple); one that holds the page at s (before
// applying) does not let the token validate, and the latch taken to
// compare fails no-wait. Writes are unaffected: a read for update, or a
// later write of a tuple read unlatched, takes the exclusive latch as
// before, and the commit compares what was read with the page under it,
// so a write computed from a stale read aborts. The durability argument
// ("Logging") holds too: a writer releases its page only once its record
// is durable, and until then no unlatched read of that page validates.
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
