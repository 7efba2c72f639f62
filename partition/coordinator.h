#ifndef STRAND_PARTITION_COORDINATOR_H_
#define STRAND_PARTITION_COORDINATOR_H_

// The coordinator of a session's transactions in partitioned mode: it
// ships fragment calls to the partitions' owners and commits with
// presumed-abort two-phase commit (txn/remote_branches.h is what Txn sees).
//
// Commit, when fragments ran on other nodes P1..Pk: the local branch takes
// its commit latches, checks what can fail (Txn::PrepareBranch) and takes
// commit_ts; PREPARE(commit_ts) goes to P1..Pk (at once, or one by one:
// parallel_prepare), each voting yes once its prepare record is durable,
// read-only if it wrote nothing (read_only_vote), no if it cannot commit
// or does not answer within reply_timeout. All yes or read-only: the
// decision record kDistributedCommit is forced to this node's log, the
// local writes apply and the local latches go (the commit may be
// acknowledged from here on), then COMMIT to the yes-voters. Else ABORT to
// every branch still there; nothing is logged. A transaction that touched
// no other node commits in one phase, as in shared mode (one_phase_local).
//
// Atomic and durable across crashes (presumed abort). Serializable by 2PL
// everywhere (partitioned mode refuses TO and OCC): every latch is held
// from first use to the decision.
// Design and argument: docs/design/partitioned.md.

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
  // Failover: the local branch's ring record, then the commit decision
  // in the slot's word (decision_board.h). Fails if it cannot commit.
  absl::Status PublishDecision(txn::Txn& local, absl::Span<const uint32_t> yes);
  // Ends the attempt: every branch rolled back, the local one too.
  absl::Status Fail(txn::Txn& local, absl::Status why);

  Node& node_;
  Slot* const slot_;
  std::unique_ptr<rdma::Endpoint> endpoint_;
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
