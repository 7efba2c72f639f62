#ifndef STRAND_PARTITION_COORDINATOR_H_
#define STRAND_PARTITION_COORDINATOR_H_

// The coordinator of a session's transactions in partitioned mode: it
// ships fragment calls to the partitions' owners and commits with
// presumed-abort two-phase commit (txn/remote_branches.h is what Txn sees).
//
// Commit of a transaction whose fragments ran on other nodes P1..Pk:
//   1. the local branch takes its commit latches and checks what can fail
//      (Txn::PrepareBranch), and the commit timestamp: every latch of the
//      transaction is held here and at the participants, so it orders the
//      transaction after everything it depends on;
//   2. PREPARE(commit_ts) to P1..Pk at once (or one by one: the
//      parallel_prepare switch); each votes yes once its prepare record is
//      durable, read-only if it wrote nothing (read_only_vote), no if it
//      cannot commit. No answer within reply_timeout counts as no;
//   3. all yes or read-only: the decision record kDistributedCommit
//      (participants + the local redo) is forced to this node's log; then
//      the local writes apply and the local latches go (the commit may be
//      acknowledged from here on); then COMMIT to the yes-voters, which
//      apply, release and log their marker unforced;
//   4. else ABORT to every branch still there; nothing is logged.
// A transaction that touched no other node commits in one phase, exactly
// as in shared mode (one_phase_local; off: it forces a prepare record,
// then its decision).
//
// Why it is atomic and durable across crashes: a participant's writes
// become visible only after the decision is durable (exclusive latches are
// held until COMMIT arrives), and recovery replays a prepared branch iff
// its decision (or a participant's marker, written after it) is in a log
// (wal/log_merger.h); the client hears "committed" only after the decision
// is durable. Without a decision nothing was acknowledged: presumed abort.
//
// Serializability: 2PL everywhere (partitioned mode refuses TO and OCC);
// every latch is held from first use to the decision, and commit_ts is
// taken while all are held, as for a local 2PL commit.

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "partition/node.h"
#include "partition/options.h"
#include "txn/remote_branches.h"

namespace strand::partition {

class Coordinator : public txn::RemoteBranches {
 public:
  // Takes a slot of `node` for the session's lifetime.
  static absl::StatusOr<std::unique_ptr<Coordinator>> Create(Node& node);
  ~Coordinator() override;

  // A new transaction (every attempt of a call is one).
  void Begin();

  rdma::ComputeNodeId self() const override { return node_.id(); }
  rdma::ComputeNodeId OwnerOf(int64_t partition) const override {
    return node_.map().Owner(partition);
  }
  absl::Status StartCalls(absl::Span<Call> calls) override;
  absl::Status FinishCalls() override;
  absl::Status Commit(txn::Txn& local) override;
  void Abort() override;

 private:
  // Adds this transaction's counters to the node's.
  void Publish();
  explicit Coordinator(Node& node, Slot* slot) : node_(node), slot_(slot) {}

  // Sends a header-only message of `kind` to each of `to`; one round.
  void SendRound(Kind kind, absl::Span<const rdma::ComputeNodeId> to,
                 const Header& header);
  // Collects the votes of `to` to PREPARE(commit_ts): false if any voted
  // no (or did not answer). Yes-voters go to *yes.
  bool Prepare(uint64_t commit_ts, absl::Span<const rdma::ComputeNodeId> to,
               std::vector<uint32_t>* yes);
  absl::Status CommitLocalOnly(txn::Txn& local);
  absl::Status CommitDistributed(txn::Txn& local);
  // Ends the attempt: every branch rolled back, the local one too.
  absl::Status Fail(txn::Txn& local, absl::Status why);

  Node& node_;
  Slot* const slot_;
  std::unique_ptr<rdma::Endpoint> endpoint_;
  uint64_t next_sequence_ = 0;
  uint64_t gtid_ = 0;
  absl::Time begin_;
  std::vector<rdma::ComputeNodeId> branches_;  // nodes with a branch
  // The round in flight (StartCalls to FinishCalls).
  absl::Span<Call> calls_;
  std::vector<rdma::ComputeNodeId> round_nodes_;
  PartitionStats stats_;
};

}  // namespace strand::partition

#endif  // STRAND_PARTITION_COORDINATOR_H_
