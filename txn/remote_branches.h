#ifndef STRAND_TXN_REMOTE_BRANCHES_H_
#define STRAND_TXN_REMOTE_BRANCHES_H_

// A transaction's work on other compute nodes, in partitioned mode
// (partition/coordinator.h implements it; shared mode has none). The engine
// hands one to each Txn it runs; procedures reach it through fragments
// (partition/fragment.h), and Txn routes its commit and abort through it
// once the transaction has branches elsewhere:
//
//   procedure  ->  FragmentBatch  ->  StartCalls / FinishCalls  (requests
//                                     to the partitions' owners, which run
//                                     the fragments under their own latches)
//   Txn::Commit  ->  Commit(txn)      (two-phase commit, or one phase when
//                                     no other node was touched)
//   Txn::Abort   ->  Abort()          (every branch rolled back)
//
// Fragment calls carry bytes: the typed wrappers of partition/fragment.h
// encode and decode them.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "rdma/global_address.h"

namespace strand::txn {

class Txn;

class RemoteBranches {
 public:
  // One fragment call on another node.
  struct Call {
    rdma::ComputeNodeId node = 0;
    uint32_t fragment = 0;
    std::string_view input;  // must stay valid until FinishCalls returns
    std::string output;      // filled by FinishCalls when `status` is OK
    absl::Status status;     // the fragment's own outcome (e.g. NotFound)
  };

  virtual ~RemoteBranches() = default;

  // The node this transaction runs on, and the owner of `partition`.
  virtual rdma::ComputeNodeId self() const = 0;
  virtual rdma::ComputeNodeId OwnerOf(int64_t partition) const = 0;

  // Sends `calls` (none on self()): one request per node, to every node at
  // once. FinishCalls waits for the answers and fills each call's output
  // and status. Either returns an error when the transaction can no longer
  // commit (a branch aborted on a conflict: Aborted; no answer within the
  // bound: Unavailable); the caller then aborts it. The span must stay
  // valid from StartCalls to FinishCalls; one round at a time.
  virtual absl::Status StartCalls(absl::Span<Call> calls) = 0;
  virtual absl::Status FinishCalls() = 0;

  // Commits `local` (this node's branch, still active) together with every
  // remote branch: OK once the commit may be acknowledged. On failure
  // everything was rolled back and `local` is aborted.
  virtual absl::Status Commit(Txn& local) = 0;
  // Rolls back every remote branch; idempotent.
  virtual void Abort() = 0;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_REMOTE_BRANCHES_H_
