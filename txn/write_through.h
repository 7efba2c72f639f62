#ifndef STRAND_TXN_WRITE_THROUGH_H_
#define STRAND_TXN_WRITE_THROUGH_H_

// A commit's write-through (cc::CcOptions::write_through;
// docs/design/node_failure.md): once its writes are applied under its
// latches, every line it holds exclusively (write pages and index leaves)
// goes to memory in one batch per memory node, behind the commit's record
// in the node's redo ring (db.ring, redo_ring.h) and ahead of the
// record's done word, before any latch is released. A partitioned-mode
// coordinator's decision word (txn_state.h) rides in the first batch,
// after the ring record, alone if the commit has nothing of its own to
// write. Internal to txn/.
//
// Cost: one round trip when every line and the ring are on one memory
// node; otherwise one per memory node, plus one for the done word.

#include "absl/status/status.h"
#include "txn/txn_state.h"

namespace strand::txn {

// Nothing to do unless the node's manager writes through. On error (the
// fabric's: this node was fenced) the lines stay dirty and the commit is
// not acknowledged; whoever reclaims the node finishes it from its ring.
absl::Status WriteThroughCommit(TxnState& txn);

}  // namespace strand::txn

#endif  // STRAND_TXN_WRITE_THROUGH_H_
