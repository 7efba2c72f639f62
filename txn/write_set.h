#ifndef STRAND_TXN_WRITE_SET_H_
#define STRAND_TXN_WRITE_SET_H_

// Commit steps every algorithm shares: reading a tuple out of a latched
// page, latching the pages a transaction writes in one global order, and
// applying its buffered writes under those latches. Internal to txn/.

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/tuple_header.h"
#include "txn/txn_state.h"
#include "wal/log_format.h"

namespace strand::txn {

// Copies the tuple at `access.address` out of its page's latched payload
// into access.original. NotFound if the slot is free or deleted;
// InvalidArgument if the address is not a slot of this table's pages.
absl::Status CopyTuple(const TxnState& txn, const uint8_t* page_payload,
                       Access& access);

// The tuple header inside a latched page payload.
storage::TupleHeader HeaderAt(const TxnState& txn, const uint8_t* payload,
                              const Access& access);
// Offset of the tuple's slot in its page payload.
uint32_t TupleOffset(const TxnState& txn, const Access& access);

// Takes exclusive latches on every page the transaction writes, its
// inserted tuples' pages included (commit clears their kPending flag), in
// address order. `lock` says whether to wait (bounded) or give up at once.
absl::Status LatchWritePages(TxnState& txn, cc::LockOptions lock);

// Applies the prepared index changes (index_writes.h: PrepareIndexWrites
// latched their leaves and checked them; the leaves are released here) and
// the buffered writes; the write pages must be latched exclusively.
// Inserted tuples become visible (kPending cleared). With `stamp`, every
// written and inserted tuple's write_ts becomes *stamp.
//
// With a log (txn.db.log), the commit's redo record (table/index catalog
// ids, tuple addresses, after-images of the changed bytes, whole inserted
// tuples, deletes, index entries) is appended first, with txn.commit_ts,
// while every write latch and index leaf is held; txn.commit_lsn names it.
// If the append fails nothing was applied. After the append only the
// write-through can fail (ApplyLoggedWrites).
absl::Status ApplyWrites(TxnState& txn, std::optional<uint64_t> stamp);
// ApplyWrites without the append: for a branch of partitioned mode whose
// writes a two-phase record already logged (LogBranch). Then writes the
// lines through (write_through.h) and releases the index leaves. Fails
// only if the write-through does (this node was fenced): the writes are
// applied in its cache, and whoever reclaims it finishes the commit.
absl::Status ApplyLoggedWrites(TxnState& txn, std::optional<uint64_t> stamp);

// Partitioned mode: appends a record of `type` labelled `txn_id`, with
// txn.commit_ts, whose payload is `prefix` followed by the transaction's
// redo ops (wal/two_phase_records.h); appended even if the transaction
// wrote nothing (a decision). txn.commit_lsn names it.
absl::StatusOr<wal::Lsn> LogBranch(TxnState& txn, wal::RecordType type,
                                   uint64_t txn_id, std::string_view prefix);
// Txn::RecordPrepared: applies the writes to the latched lines, writes
// the lines' after-images as a ring record (WritePreparedRecord), and puts
// the lines' bytes back as they were, so the prepared transaction is
// unchanged and its commit applies the same writes again.
absl::Status RecordPrepared(TxnState& txn, wal::RecordType type,
                            uint64_t txn_id, std::string_view prefix);

// A new timestamp from the oracle (a transaction's start or commit
// timestamp): the transaction's watermark slot, if any, holds it from now
// on (commit_watermark.h).
absl::StatusOr<uint64_t> TakeTimestamp(TxnState& txn);

// The last step of every algorithm's successful commit: releases the
// latches. With a log acknowledged record by record (no db.watermark) it
// first waits until the commit's record is durable, so no other
// transaction (on any compute node) can read this commit's tuple writes
// before they are durable. With a watermark it releases them at once.
absl::Status FinishCommit(TxnState& txn);

}  // namespace strand::txn

#endif  // STRAND_TXN_WRITE_SET_H_
