#ifndef STRAND_TXN_TXN_H_
#define STRAND_TXN_TXN_H_

// A transaction: runs entirely on one compute node, on one thread, under the
// algorithm of its Database (2PL no-wait, TO or OCC; see
// concurrency_control.h for how each reads, validates and commits).
//
//   Txn txn(db, ctx, cc);
//   STRAND_RETURN_IF_ERROR(txn.Begin());
//   STRAND_ASSIGN_OR_RETURN(TupleBuffer* d, txn.Modify(kDistrict, address));
//   d->SetInt(kNextOrderId, d->view().GetInt(kNextOrderId) + 1);
//   STRAND_RETURN_IF_ERROR(txn.Commit());
//
// Guarantees: writes are buffered in the transaction and applied at commit,
// so nothing of an aborted transaction is ever visible, index entries
// included (index_writes.h: a commit changes no index entry before it can
// no longer fail). Committed transactions are serializable: tuple reads,
// point lookups (a key found or absent) and range scans alike. Every index
// leaf a Lookup, LookupBatch or Scan read is validated at commit, which
// rules out phantoms (concurrency_control.h, "Index reads", argues it per
// algorithm).
//
// Errors: a conflict returns Aborted and sets abort_reason() (kConflict or
// kValidation); after any error the transaction is aborted and every later
// call fails with FailedPrecondition. A procedure decides to roll back with
// UserAbort(). Reads of a missing or deleted tuple return NotFound and do
// not abort. Dropping an active Txn aborts it.
//
// Inserted tuples go into the heap at Insert() marked pending (invisible to
// every reader and scan; their index entries are added at commit). Commit
// clears the mark; an abort leaves it, so an aborted insert needs no undo
// that could fail, and hands the slot back to the table
// (storage::HeapTable::ReleaseSlot): no index entry ever named it, so no
// reader can hold its address. Slots of deleted rows are reused too, but
// only once no transaction can still hold the address (epoch_manager.h):
// a reader may have found the row through the index before the delete
// committed and read the slot later (under OCC and TO without a latch held
// since the lookup), on any compute node. Every transaction announces the
// epoch it began in; a committed delete queues its slot with the epoch of
// its commit, and the slot goes back to the table once every active
// transaction began after that. So a reader that looked up key K reads
// the row that had K, or finds it deleted (NotFound; TO may abort), never
// a reused slot's new row, under 2PL, TO and OCC alike: the argument does
// not use the algorithm's latches on the tuple, only that the lookup read
// the entry before the delete's commit removed it (the leaf's latch
// orders the two), so the reader announced an epoch no later than the
// one the slot was queued with (epoch_manager.h argues it per
// algorithm). With compute nodes in separate processes (verbs, one
// process per node) the epochs are shared through the memory pool, so a
// reader in another process holds the slot back the same way. A delete
// must remove the row's index entries in the same transaction, and an
// address is good only within the transaction that found it (or while its
// row is known to live).
//
// Size limit: every page and index leaf a transaction holds latched needs
// a frame of its compute node's cache (SELCC), so a transaction touches at
// most cc.cache_bytes / cc.gcl_size GCLs at once (EngineOptions::cc,
// --cache_mb), less what other threads hold; past that it fails with
// ResourceExhausted naming both (2PL holds every page it read or wrote to
// commit; TO and OCC only their write pages and index leaves at commit).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/schema.h"
#include "storage/tuple_address.h"
#include "txn/concurrency_control.h"
#include "txn/database.h"
#include "txn/remote_branches.h"
#include "txn/txn_state.h"
#include "wal/log_format.h"

namespace strand::txn {

class Txn {
 public:
  Txn(const Database& db, cc::ThreadContext& ctx, ConcurrencyControl& cc)
      : state_(db, ctx), cc_(cc) {}
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  absl::Status Begin();

  // The tuple at `address` (this transaction's own version if it wrote
  // it). The view stays valid until the transaction ends.
  absl::StatusOr<storage::TupleView> Read(TableId table,
                                          storage::TupleAddress address);
  // A mutable copy of the tuple that becomes the new version at commit.
  absl::StatusOr<storage::TupleBuffer*> Modify(TableId table,
                                               storage::TupleAddress address);
  // Inserts a tuple; add its index entries with AddIndexEntry.
  absl::StatusOr<storage::TupleAddress> Insert(
      TableId table, const storage::TupleBuffer& tuple);
  absl::Status Delete(TableId table, storage::TupleAddress address);

  // The value of `key` in unique index `index`; NotFound if absent. Sees
  // committed entries only (not this transaction's AddIndexEntry).
  absl::StatusOr<storage::TupleAddress> Lookup(IndexId index,
                                               std::string_view key);
  // Lookup of several keys of unique index `index` at once: `addresses[i]`
  // is keys[i]'s value, or the null address if it is absent. Their index
  // leaves' cache misses overlap (BLinkTree::LookupBatch), which pays when
  // the keys are independent and cold (a TPC-C order's items and stock).
  // InvalidArgument (the transaction goes on) if the sizes differ or there
  // is no such index; any other error, such as a key of the wrong width,
  // aborts it, as Lookup's do.
  absl::Status LookupBatch(IndexId index,
                           absl::Span<const std::string_view> keys,
                           absl::Span<storage::TupleAddress> addresses);
  // A hint before reading or modifying the tuples at `addresses` of
  // `table` one after another: starts their memory reads together, so
  // their cache misses overlap. Changes nothing else: no latch, no
  // conflict, no error (a bad or null address is skipped).
  void Prefetch(TableId table,
                absl::Span<const storage::TupleAddress> addresses) const;
  // Visits entries of `index` with low <= key <= high (nullopt: unbounded)
  // in key order (backward if !forward), at most `limit`, while `visit`
  // returns true. Committed entries only. The range read (to the last key
  // visited) is validated at commit: an entry added to or removed from it
  // by another commit in between aborts this transaction.
  using ScanVisitor = absl::FunctionRef<bool(std::string_view key,
                                             storage::TupleAddress value)>;
  absl::Status Scan(IndexId index, std::optional<std::string_view> low,
                    std::optional<std::string_view> high, bool forward,
                    uint64_t limit, ScanVisitor visit);

  // Index entries written at commit, removals before additions, so a
  // transaction may remove a unique key and add it again (in either order
  // of calls). A duplicate key in a unique index aborts the commit
  // (AlreadyExists), as does removing an absent entry (NotFound), abort
  // reason kError: retrying would meet the same key. Nothing of a failed
  // commit is visible.
  void AddIndexEntry(IndexId index, std::string_view key,
                     storage::TupleAddress value);
  void RemoveIndexEntry(IndexId index, std::string_view key,
                        storage::TupleAddress value);
  // The index entries of the tuple at `value` of `table`, for every index
  // of the table declared with key columns (txn/index_key.h), their keys
  // built from the tuple; indexes without key columns are left to the
  // caller (AddIndexEntry). InvalidArgument if there is no such table (the
  // transaction goes on).
  //   STRAND_ASSIGN_OR_RETURN(TupleAddress at, txn.Insert(orders, row));
  //   STRAND_RETURN_IF_ERROR(txn.AddIndexEntries(orders, row.view(), at));
  // After an insert, and before a delete:
  absl::Status AddIndexEntries(TableId table, const storage::TupleView& tuple,
                               storage::TupleAddress value);
  absl::Status RemoveIndexEntries(TableId table,
                                  const storage::TupleView& tuple,
                                  storage::TupleAddress value);
  // After an update from `before` to `after`: moves the entries whose key
  // changed (an unchanged key keeps its entry).
  absl::Status UpdateIndexEntries(TableId table,
                                  const storage::TupleView& before,
                                  const storage::TupleView& after,
                                  storage::TupleAddress value);

  // Commits and returns once the commit may be acknowledged (with a log:
  // it is durable, and so is every commit it may depend on; see
  // concurrency_control.h, "Logging"). With db().watermark a wait that
  // outlasts its bound is Unavailable: committed, not acknowledged.
  absl::Status Commit();
  // Commits without waiting to acknowledge: OK means committed in memory
  // with every latch released, but NOT yet acknowledgeable; the caller
  // reports it only once the node's watermark acknowledged AckTimestamp()
  // (engine/session.h, CallAsync). Without db().watermark the commit held
  // its latches until its record was durable, so this is Commit().
  absl::Status CommitNoWait();
  // Once the transaction ended (committed or not): the timestamp the
  // node's CommitWatermark must acknowledge before its outcome is reported
  // (0: at once, without a watermark). A committed transaction's commit
  // timestamp; otherwise the oracle's value now (one round trip), since
  // the procedure's decision may rest on reads of any commit before it.
  absl::StatusOr<uint64_t> AckTimestamp();
  // With db().marks (any node with a log), every transaction needs a slot
  // of it (CommitWatermark::NewSlot), set before Begin; the caller keeps
  // it for the next transaction.
  void set_watermark_slot(CommitWatermark::Slot* slot) {
    state_.watermark_slot = slot;
  }
  // Rolls back (idempotent). Counts as `reason`.
  void Abort(AbortReason reason);
  // Rolls back at the procedure's request; returns the Aborted status the
  // procedure should return, which carries AbortReason::kUser
  // (AbortReasonOf, abort_reason.h).
  absl::Status UserAbort(std::string_view why);

  // Partitioned mode (txn/remote_branches.h). The engine hands the
  // transaction its coordinator; once set, Commit and CommitNoWait commit
  // through it (one phase if no other node was touched, else two-phase
  // commit) and Abort rolls back the remote branches too.
  void set_remote(RemoteBranches* remote) { remote_ = remote; }
  RemoteBranches* remote() const { return remote_; }
  // What the coordinator and the participants call (2PL only):
  //   CommitOnePhase: Commit as in shared mode, not through remote().
  //   PrepareBranch: every step of the commit that can fail (the write
  //     pages' latches, the index changes' leaves, the index reads'
  //     validation) without applying anything; commit_ts() becomes
  //     `commit_ts`, or a new timestamp if 0. The transaction is then
  //     prepared: no more reads or writes; it ends with CommitPrepared or
  //     Abort. A failure aborts it.
  //   writes_anything: it changed a tuple or an index entry.
  //   LogBranch: appends its redo after `prefix` as a record of `type`
  //     (wal/two_phase_records.h) and returns the record's LSN, not
  //     waiting for it; a failure aborts it.
  //   CommitPrepared: applies the writes (logged already, if at all) and
  //     releases every latch. Durability is the caller's: it waited for
  //     the decision, or a watermark acknowledges it. Log everything the
  //     branch logs before: it releases the watermark slot.
  absl::Status CommitOnePhase();
  absl::Status PrepareBranch(uint64_t commit_ts);
  bool writes_anything() const;
  absl::StatusOr<wal::Lsn> LogBranch(wal::RecordType type, uint64_t txn_id,
                                     std::string_view prefix);
  absl::Status CommitPrepared();

  bool active() const { return phase_ == Phase::kActive; }
  AbortReason abort_reason() const { return state_.abort_reason; }
  uint64_t commit_ts() const { return state_.commit_ts; }
  const Database& db() const { return state_.db; }
  cc::ThreadContext& thread() { return state_.ctx; }

 private:
  enum class Phase { kIdle, kActive, kPrepared, kCommitted, kAborted };

  absl::Status CheckActive() const;
  absl::Status CommitImpl();
  // With db().watermark: blocks until AckTimestamp() is acknowledged.
  absl::Status WaitAcknowledged();
  // The transaction will log nothing more (commit_watermark.h).
  void ReleaseWatermarkSlot();
  // Ends a commit that failed (the transaction active or prepared):
  // aborted with `status`'s reason, unless one was set already.
  absl::Status FailCommit(absl::Status status);
  absl::Status CheckIndex(IndexId index) const;
  // For each index of `table` declared with key columns: removes the
  // entry of `before` and adds that of `after` (either may be null), when
  // their keys differ.
  absl::Status WriteDeclaredIndexes(TableId table,
                                    const storage::TupleView* before,
                                    const storage::TupleView* after,
                                    storage::TupleAddress value);
  // The access for `address`, reading it first if new.
  absl::StatusOr<Access*> Touch(TableId table, storage::TupleAddress address,
                                bool for_update);
  // After an abort: hands the slots of this transaction's inserts back to
  // their tables (storage::HeapTable::ReleaseSlot).
  void ReleaseInsertedSlots();
  // Withdraws the transaction's epoch announcement (epoch_manager.h); a
  // commit first queues the slots of the rows it deleted for reuse.
  void LeaveEpoch(bool committed);
  // Appends the leaves of state_.leaf_scratch (one index read's) to the
  // leaves validated at commit.
  void RecordLeafReads(IndexId index);
  // Turns a failed step into an abort with the right reason.
  absl::Status Fail(absl::Status status);

  TxnState state_;
  ConcurrencyControl& cc_;
  RemoteBranches* remote_ = nullptr;
  Phase phase_ = Phase::kIdle;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TXN_H_
