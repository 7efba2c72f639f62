#ifndef STRAND_TXN_WRITE_THROUGH_H_
#define STRAND_TXN_WRITE_THROUGH_H_

// A commit's write-through (cc::CcOptions::write_through;
// docs/design/node_failure.md): once its writes are applied under its
// latches, every line it holds exclusively (write pages and index leaves)
// goes to memory in one batch per memory node, behind the commit's record
// in the node's redo ring (db.ring, redo_ring.h) and ahead of the
// record's done word, before any latch is released. A prepared branch
// of partitioned mode with failover puts its record there earlier, alone
// (WritePreparedRecord), and its commit then writes only the data and the
// done word. Internal to txn/.
//
// Cost: one round trip when every line and the ring are on one memory
// node; otherwise one per memory node, plus one for the done word.

#include "absl/status/status.h"
#include "txn/txn_state.h"

namespace strand::txn {

// Nothing to do unless the node's manager writes through. On error (the
// fabric's: this node was fenced) the lines stay dirty and the commit is
// not acknowledged; whoever reclaims the node finishes it from its ring.
// A commit with a prepared record (txn.prepared_record) writes no record
// of its own: the data, then that record's done word.
absl::Status WriteThroughCommit(TxnState& txn);

// The ring record of a prepared transaction whose writes are applied to
// its latched lines (write_set.h's RecordPrepared): the record alone, not
// done, kept in txn.prepared_record. Nothing if memory lacks no bytes.
absl::Status WritePreparedRecord(TxnState& txn, const RedoRing::Logged& logged);
// A prepared transaction with a prepared record aborts, before its
// latches go: the record's done word if `mark_done`, and its room back.
void ForgetPreparedRecord(TxnState& txn, bool mark_done);

}  // namespace strand::txn

#endif  // STRAND_TXN_WRITE_THROUGH_H_
