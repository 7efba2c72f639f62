#ifndef STRAND_TXN_CONCURRENCY_CONTROL_H_
#define STRAND_TXN_CONCURRENCY_CONTROL_H_

// The per-algorithm part of a transaction. Every algorithm buffers writes
// in the transaction (TxnState) and applies them at commit, so an aborted
// transaction never left anything in a shared tuple; the algorithms differ
// in how they latch, read and validate:
//
//   2PL no-wait   reads take shared, writes exclusive page latches (no-wait:
//                 a held latch aborts) and keep them to the end; commit
//                 applies under the latches it already holds. With
//                 Database::optimistic_tuple_reads, a read that is not for
//                 update takes no latch where the page is cached and is
//                 validated at commit instead (two_phase_locking.h).
//   TO            the transaction's timestamp ts comes from the oracle at
//                 begin. A read aborts if the tuple's write_ts > ts, else
//                 raises read_ts to ts (under a short exclusive latch).
//                 Commit latches the write pages in address order, aborts
//                 if any written tuple has read_ts > ts or write_ts > ts,
//                 then applies and stamps write_ts = ts.
//   OCC           reads copy the tuple and its version (write_ts) under a
//                 short shared latch, or with none where the page is cached
//                 (optimistic_tuple_reads). Commit latches the write pages in
//                 address order, checks every read tuple's version is
//                 unchanged, takes the commit timestamp, applies and stamps
//                 write_ts = commit timestamp.
//
// Commit timestamps order conflicting transactions as their serialization
// order (what the redo log needs): 2PL and OCC take theirs while holding
// every latch they conflict on; TO's serialization order is its timestamps.
//
// Index reads (index_writes.h). A Lookup (key found or absent), LookupBatch
// or Scan records every index leaf it read with the leaf's version; the
// leaves cover the key range read (index/blink_tree.h), and any entry
// added to or removed from that range changes one of their versions. A
// commit's index changes are write locks: PrepareIndexWrites latches their
// leaves exclusively before the validation below and keeps them until the
// changes are applied (after the redo append). Then per algorithm:
//   2PL   after its locks and its index leaves are held, the commit checks
//         that every leaf read still has its version (no_wait: a leaf
//         latched by another commit counts as changed) and only then takes
//         commit_ts. Serialization point s = that moment with every lock
//         held: each tuple read is locked; each leaf read is unchanged from
//         the read until its check, an interval that contains s (the reads
//         came before, the checks after all locks were taken and before
//         commit_ts). So every read, scans included, returns what it would
//         at s, and every write (tuple or index entry) is applied under a
//         latch held since before s: T is equivalent to running atomically
//         at s, and commit_ts order is s order for conflicting pairs. This
//         is optimistic for the index only; tuples stay locked, so "no-wait
//         never waits" still holds: no step waits for a latch another
//         transaction keeps to its commit (the bounded waits are listed in
//         index_writes.h and storage/heap_table.h).
//   OCC   the leaves are validated exactly like tuple versions, after every
//         write latch and index leaf is held (Silo's argument, with the
//         leaf as the record and its version as the TID): a leaf unchanged
//         from the read to its check after the write locks were all taken
//         was unchanged at that point, which is the serialization point,
//         and a committer that changes the leaf holds it latched from
//         before its own validation, so two transactions that each read a
//         range the other writes cannot both pass (the one validating
//         second finds the other's leaf latched or changed).
//   TO    a leaf carries read_ts and write_ts for its whole key range (a
//         split copies them to the new right node). The commit checks, per
//         leaf it read, that the version is unchanged and write_ts <=
//         start_ts, and raises read_ts to start_ts (a leaf latched by
//         another commit aborts: no_wait); per leaf it changes, that
//         read_ts and write_ts are <= start_ts, and stamps write_ts. So a
//         scan or lookup is ordered against every change of its range by
//         timestamp, as a tuple read is against tuple writes: a change with
//         a smaller timestamp that comes later finds read_ts above it and
//         aborts; one with a larger timestamp made before the check aborts
//         the reader (version or write_ts).
// A commit's own index changes are applied after its checks, so they never
// fail its own validation; a leaf it must split first (no room) does, and
// the retry finds room.
//
// Logging (Database::log; write_set.h). Every algorithm logs the same way:
// after its validation succeeded and its commit timestamp is taken, with
// every write page and index leaf latched exclusively, ApplyWrites appends
// ONE redo record {commit_ts, redo ops} to the node's log, then applies the
// index changes (releasing their leaves) and the tuple writes;
// FinishCommit waits until the record is durable and only then releases
// the page latches; Txn::Commit returns OK (the acknowledgement) after
// that. Why replaying all nodes' records in
// commit-timestamp order rebuilds the committed state, per algorithm:
//   2PL   T takes commit_ts while holding every lock (latch) it took; a
//         transaction U that conflicts with T on a tuple gets that page's
//         latch only after T released it, i.e. after T's commit_ts was
//         taken, and takes its own commit_ts later still (FAA is
//         linearizable): conflict order = commit_ts order. With a log, 2PL
//         also latches the pages of its inserted tuples at commit, so a
//         reader reaching them through the new index entries waits too.
//   TO    commit_ts = start_ts. A write to X commits only if X's read_ts and
//         write_ts are <= start_ts (checked under X's page latch), and a
//         read of X aborts if X's write_ts > start_ts; so every conflicting
//         pair on a tuple is ordered by start_ts, which is the order replay
//         uses. Inserted tuples are stamped with write_ts = start_ts, so a
//         reader with a smaller timestamp that finds one through the index
//         aborts.
//   OCC   commit_ts is taken after validation with every write latch held
//         and every read still current (Silo's argument): a writer U of a
//         tuple T read either committed before T validated (then U's
//         commit_ts, taken under U's latch before it released it, is smaller)
//         or T's validation would fail; a writer of a tuple T wrote waits for
//         T's latch and takes its commit_ts later.
// Durability at acknowledgement, synchronous commits (no watermark): the
// record is durable before the latches are released, so any transaction, on any compute node, that reads or
// overwrites these tuple writes does so after they are durable; its own
// record (later in its own log) can never survive a crash that loses this
// one. Records are appended before the tuple writes become visible, so
// within one node's log a dependent always has a larger LSN.
//   What latches do not cover: index leaves are released once the changes
//   are applied, before the record is durable (holding them through the
//   flush would make every reader of a hot leaf wait for the disk), so
//   index entries are visible from then on. A transaction that only
//   observes an entry's presence or absence (a scan that does not read the
//   tuple) on ANOTHER node could commit durably first. Tuple reads are
//   covered (the tuple's page is latched), which is what the TPC-C and
//   bank workloads do; on one compute node the LSN order covers it too.
// Early lock release and pipelined acknowledgement (Database::watermark,
// commit_watermark.h; the argument for every algorithm, SELCC, SEL and
// partitioned mode is docs/design/durable_acks.md): latches are released
// right after the append, and an outcome is acknowledged only once the
// cluster's durable watermark covers its timestamp. A dependent always has
// a larger timestamp than what it depends on (the orders above), so every
// commit it depends on, on any node, is durable by then, index-only
// observations included; Txn::Commit waits for it, Txn::CommitNoWait
// leaves the wait to its caller (engine/session.h, CallAsync). Recovery
// replays only up to the largest cluster watermark a log persisted.

#include <memory>

#include "absl/status/status.h"
#include "txn/cc_algorithm.h"
#include "txn/txn_state.h"

namespace strand::txn {

class ConcurrencyControl {
 public:
  static std::unique_ptr<ConcurrencyControl> Create(CcAlgorithm algorithm);
  virtual ~ConcurrencyControl() = default;

  virtual absl::Status Begin(TxnState& txn) = 0;
  // Fills access.original with the tuple under the algorithm's rules.
  // `for_update`: the caller will write it (2PL takes the exclusive latch).
  virtual absl::Status Read(TxnState& txn, Access& access, bool for_update) = 0;
  // Prepares a write of an access already read (2PL: exclusive latch).
  virtual absl::Status PrepareWrite(TxnState& txn, Access& access) = 0;
  // Validates and applies everything; on failure nothing was applied and
  // txn.abort_reason says why. Latches are released either way.
  virtual absl::Status Commit(TxnState& txn) = 0;
  // Partitioned mode's first phase (txn/remote_branches.h): every step of
  // Commit that can fail, without applying anything; then txn.commit_ts is
  // `commit_ts`, or a new timestamp if 0. On failure txn.abort_reason says
  // why and the caller aborts. Only 2PL implements it (partitioned mode
  // refuses the others): its latches, held to the decision, are what make
  // a prepared branch unable to fail later.
  virtual absl::Status Prepare(TxnState& txn, uint64_t commit_ts);
};

}  // namespace strand::txn

#endif  // STRAND_TXN_CONCURRENCY_CONTROL_H_
