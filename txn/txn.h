#ifndef STRAND_TXN_TXN_H_
#define STRAND_TXN_TXN_H_

// A transaction: runs entirely on one compute node, on one thread, under the
// algorithm of its Database (2PL no-wait, TO or OCC: concurrency_control.h).
//
//   Txn txn(db, ctx, cc);
//   STRAND_RETURN_IF_ERROR(txn.Begin());
//   STRAND_ASSIGN_OR_RETURN(TupleBuffer* d, txn.Modify(kDistrict, address));
//   d->SetInt(kNextOrderId, d->view().GetInt(kNextOrderId) + 1);
//   STRAND_RETURN_IF_ERROR(txn.Commit());
//
// Guarantees: committed transactions are serializable, scans included (no
// phantoms). Writes, index entries too, are applied at commit, so an abort
// leaves no trace; reads see their own writes (own_writes.h), never others'
// uncommitted ones.
// Errors: a call the procedure got wrong (unknown table or index, key of
// the wrong width, row of another table, misused column: storage/schema.h,
// taken unique key, missing row) returns a Status naming it and did
// nothing; the transaction stays active. A conflict returns Aborted and
// sets abort_reason() (kConflict or kValidation); after it, or any other
// error from below, every later call fails with FailedPrecondition.
// UserAbort() rolls back; dropping an active Txn aborts it. Under SELCC,
// needing more than cc.cache_bytes / cc.gcl_size GCLs latched at once is
// ResourceExhausted. Design: docs/design/concurrency_control.md.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/optimization.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/schema.h"
#include "storage/tuple_address.h"
#include "txn/concurrency_control.h"
#include "txn/database.h"
#include "txn/index_iterator.h"
#include "txn/remote_branches.h"
#include "txn/txn_state.h"
#include "wal/log_format.h"

namespace strand::txn {

// An index range for Txn::NewIterator: user keys, inclusive; nullopt:
// unbounded.
struct IndexRange {
  std::optional<std::string> low;
  std::optional<std::string> high;
  bool forward = true;
};

class Txn {
 public:
  Txn(const Database& db, cc::ThreadContext& ctx, ConcurrencyControl& cc)
      : state_(db, ctx), cc_(cc) {}
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  absl::Status Begin();

  // --- Rows. A row is at an address an index gave (or Insert), good only
  // within the transaction that found it (or while its row is known to
  // live). Insert puts the tuple in the heap at once, marked pending
  // (invisible to every reader and scan; its index entries are added at
  // commit); commit clears the mark, an abort hands the slot back to the
  // table (storage::HeapTable::ReleaseSlot). A deleted row's slot is
  // reused only once no transaction, on any compute node, can still hold
  // its address (epoch_manager.h): a reader that looked up key K reads the
  // row that had K, or finds it deleted (NotFound; TO may abort), never a
  // reused slot's new row. Why: docs/design/slot_reuse.md.

  // An empty row of `table` to fill for Insert, Update or Upsert.
  absl::StatusOr<storage::TupleBuffer> NewRow(TableId table) const;
  // The tuple at `address` (this transaction's own version if it wrote
  // it). The view stays valid until the transaction ends. NotFound if the
  // row is gone (deleted, by this transaction too).
  absl::StatusOr<storage::TupleView> Read(TableId table,
                                          storage::TupleAddress address);
  // A mutable copy of the tuple that becomes the new version at commit.
  // Declared indexes follow what is written into it (checked before the
  // table's indexes are next read, and at commit); Update says at once.
  absl::StatusOr<storage::TupleBuffer*> Modify(TableId table,
                                               storage::TupleAddress address);
  // Replaces the row at `address` with `row` (a row of `table`); its
  // declared index entries move with the key columns that changed.
  // AlreadyExists if a unique declared key is taken by another row.
  absl::Status Update(TableId table, storage::TupleAddress address,
                      const storage::TupleBuffer& row);
  // Inserts `row` and its entries in the table's declared indexes.
  // AlreadyExists if a unique declared key is taken; entries of indexes
  // declared by width are the procedure's (AddIndexEntry).
  absl::StatusOr<storage::TupleAddress> Insert(TableId table,
                                               const storage::TupleBuffer& row);
  // Insert, unless a unique declared key of `row` is taken: then nothing
  // is written, and `address` is the row that holds it.
  struct InsertOutcome {
    storage::TupleAddress address;
    bool inserted = false;
  };
  absl::StatusOr<InsertOutcome> InsertIfAbsent(TableId table,
                                               const storage::TupleBuffer& row);
  // Insert, or Update of the row with the same key in the table's first
  // unique declared index (its primary key): the row's address.
  // FailedPrecondition if the table has no unique declared index;
  // AlreadyExists if another unique declared key is taken.
  absl::StatusOr<storage::TupleAddress> Upsert(TableId table,
                                               const storage::TupleBuffer& row);
  // Deletes the row and its entries in the table's declared indexes.
  absl::Status Delete(TableId table, storage::TupleAddress address);

  // --- Indexes. Keys are the index's key width in bytes
  // (index/key_codec.h builds them); another width is InvalidArgument
  // naming the index and the key. A Lookup, LookupBatch, Scan or iterator
  // finds the keys this transaction added and not those it removed.
  //
  // Indexes declared with key columns (Engine::CreateIndex(name, table,
  // {"col", ...}, unique)) are kept by the transaction (declared_indexes.h):
  // Insert, Update, Upsert, InsertIfAbsent and Delete change their entries,
  // and so do changes made through Modify's buffer. Indexes declared by key
  // width are the procedure's: it builds their keys and calls AddIndexEntry
  // and RemoveIndexEntry (a deleted row's in the same transaction). A
  // unique declared key is checked when it is written: the statement fails
  // with AlreadyExists (naming the index and the key) and the transaction
  // goes on.

  // The value of `key` in unique index `index`; NotFound if absent.
  absl::StatusOr<storage::TupleAddress> Lookup(IndexId index,
                                               std::string_view key);
  // Lookup of several keys of unique index `index` at once: `addresses[i]`
  // is keys[i]'s value, or the null address if it is absent. Their index
  // leaves' cache misses overlap (BLinkTree::LookupBatch), which pays when
  // the keys are independent and cold (a TPC-C order's items and stock).
  // InvalidArgument (the transaction goes on) if the sizes differ, a key
  // has the wrong width or there is no such index.
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
  // returns true. The range read (to the last key visited) is validated
  // at commit: an entry added to or removed from it by another commit in
  // between aborts this transaction.
  using ScanVisitor = absl::FunctionRef<bool(std::string_view key,
                                             storage::TupleAddress value)>;
  absl::Status Scan(IndexId index, std::optional<std::string_view> low,
                    std::optional<std::string_view> high, bool forward,
                    uint64_t limit, ScanVisitor visit);
  // The same range, one entry at a time (index_iterator.h).
  IndexIterator NewIterator(IndexId index, IndexRange range = {});

  // Entries of an index declared by key width (declared indexes refuse
  // them: InvalidArgument), written at commit, removals before additions,
  // so a transaction may remove a unique key and add it again (in either
  // order of calls). They are checked at commit, not here: a unique key
  // another row has fails the commit (AlreadyExists), as does removing an
  // entry the index does not have (NotFound), both naming the index and
  // the key, abort reason kError (retrying would meet the same). To learn
  // at the statement, Lookup the key first (the lookup is validated at
  // commit), or declare the index with key columns. Bulk loads pay no
  // leaf read per entry this way.
  absl::Status AddIndexEntry(IndexId index, std::string_view key,
                             storage::TupleAddress value);
  absl::Status RemoveIndexEntry(IndexId index, std::string_view key,
                                storage::TupleAddress value);

  // Commits and returns once the commit may be acknowledged (with a log:
  // it is durable, and so is every commit it may depend on; see
  // docs/design/concurrency_control.md, "Logging"). With db().watermark a
  // wait that outlasts its bound is Unavailable: committed, not
  // acknowledged.
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
  //     waiting for it; a failure aborts it, unless `abort_on_failure` is
  //     false (a coordinator whose decision is published already).
  //   CommitPrepared: applies the writes (logged already, if at all) and
  //     releases every latch. Durability is the caller's: it waited for
  //     the decision, or a watermark acknowledges it. Log everything the
  //     branch logs before: it releases the watermark slot.
  absl::Status CommitOnePhase();
  absl::Status PrepareBranch(uint64_t commit_ts);
  bool writes_anything() const;
  absl::StatusOr<wal::Lsn> LogBranch(wal::RecordType type, uint64_t txn_id,
                                     std::string_view prefix,
                                     bool abort_on_failure = true);
  absl::Status CommitPrepared();
  // Failover (docs/design/node_failure.md, "Partitioned mode"): puts the
  // prepared transaction's ring record (redo_ring.h), the after-images of
  // every line its commit will write plus `prefix` and its redo as a
  // record of `type` and `txn_id`, in memory now, not done, so that if
  // this node fails the reclaimer can redo it as its coordinator decides.
  // Memory keeps the lines' before-images until CommitPrepared; Abort
  // marks the record done, except a kDistributedCommit one, which stays
  // undecided unless its decision word names it (decision_board.h).
  // Nothing without a ring.
  absl::Status RecordPrepared(wal::RecordType type, uint64_t txn_id,
                              std::string_view prefix);

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
  friend class IndexIterator;

  absl::Status CheckTable(TableId table) const {
    if (ABSL_PREDICT_TRUE(table < state_.db.tables.size())) {
      return absl::OkStatus();
    }
    return NoSuchTable(table);
  }
  absl::Status NoSuchTable(TableId table) const;
  absl::Status CheckIndex(IndexId index) const;
  // Why a Lookup of `key` in `index` was refused by the tree: the key's
  // width or the index's kind.
  absl::Status LookupMisuse(IndexId index, std::string_view key) const;
  // CheckIndex, and that `key` has the index's width.
  absl::Status CheckKey(IndexId index, std::string_view key) const;
  // That `row` is a well-formed row of `table` (its schema, no misuse).
  absl::Status CheckRow(TableId table, const storage::TupleBuffer& row) const;
  // Before reading `index`: the rows of its table changed through Modify
  // are synced with its entries (declared_indexes.h). A failure fails the
  // transaction.
  absl::Status SyncIndex(IndexId index) {
    if (state_.tracked.empty()) return absl::OkStatus();
    return SyncTrackedOf(index);
  }
  absl::Status SyncTrackedOf(IndexId index);
  // Insert and InsertIfAbsent: a unique conflict is an error unless
  // `holder` is given, then it is set and no row inserted.
  absl::StatusOr<storage::TupleAddress> InsertRow(
      TableId table, const storage::TupleBuffer& row,
      storage::TupleAddress* holder);
  // What a commit checks first: every tracked row synced, no misuse of a
  // row or a view.
  absl::Status FinishStatements();
  // The access for `address`, reading it first if new.
  absl::StatusOr<Access*> Touch(TableId table, storage::TupleAddress address,
                                bool for_update);
  // After an abort: hands the slots of this transaction's inserts back to
  // their tables (storage::HeapTable::ReleaseSlot).
  void ReleaseInsertedSlots();
  // Withdraws the transaction's epoch announcement (epoch_manager.h); a
  // commit first queues the slots of the rows it deleted for reuse.
  void LeaveEpoch(bool committed);
  // Turns a failed step into an abort with the right reason.
  absl::Status Fail(absl::Status status);

  TxnState state_;
  ConcurrencyControl& cc_;
  RemoteBranches* remote_ = nullptr;
  Phase phase_ = Phase::kIdle;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TXN_H_
