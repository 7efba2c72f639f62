#ifndef STRAND_TXN_CONCURRENCY_CONTROL_H_
#define STRAND_TXN_CONCURRENCY_CONTROL_H_

// The per-algorithm part of a transaction (Create lists how each algorithm
// latches, reads and validates). Every algorithm buffers writes in the
// transaction (TxnState) and applies them at commit, so an aborted one
// never left anything in a shared tuple.
//
// Commit timestamps order conflicting transactions as their serialization
// order (2PL and OCC take theirs holding every latch they conflict on; TO's
// are its timestamps). Index reads are validated at commit like tuples
// (index_writes.h). A commit appends one redo record under its write
// latches; it is acknowledged once durable, or with early lock release once
// the cluster's durable watermark covers it (commit_watermark.h).
// Design and argument: docs/design/concurrency_control.md, durable_acks.md.

#include <memory>

#include "absl/status/status.h"
#include "txn/cc_algorithm.h"
#include "txn/txn_state.h"

namespace strand::txn {

class ConcurrencyControl {
 public:
  // The implementation of `algorithm`:
  //   2PL no-wait  reads take shared, writes exclusive page latches
  //                (no-wait: a held latch aborts) and keep them to the end;
  //                commit applies under them. With
  //                Database::optimistic_tuple_reads a read not for update
  //                of a cached page takes no latch and is validated at
  //                commit instead (two_phase_locking.h).
  //   TO           ts from the oracle at begin. A read aborts if the
  //                tuple's write_ts > ts, else raises read_ts to ts (under
  //                a short exclusive latch). Commit latches the write pages
  //                in address order, aborts if a written tuple has read_ts
  //                or write_ts > ts, then applies and stamps write_ts = ts.
  //   OCC          reads copy the tuple and its version (write_ts) under a
  //                short shared latch, or with none where the page is
  //                cached (optimistic_tuple_reads). Commit latches the write
  //                pages in address order, checks every read tuple's
  //                version is unchanged, takes the commit timestamp,
  //                applies and stamps write_ts = commit timestamp.
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
