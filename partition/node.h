#ifndef STRAND_PARTITION_NODE_H_
#define STRAND_PARTITION_NODE_H_

// Partitioned mode on one compute node: the node's mailboxes (protocol.h),
// its coordinator slots (one per session), and the participant side of
// two-phase commit: the branches other nodes' transactions keep here.
//
// Participant: kWork runs fragments in the branch of gtid (made on first
// use, with a pooled thread context of this node), under this node's
// latches, no-wait, and answers their outputs or the abort that ended the
// branch. kPrepare takes the commit latches and checks what can fail
// (Txn::PrepareBranch); it votes read-only at once if the branch wrote
// nothing (no log), else appends kPrepare and votes yes from the log's
// durability callback (a handler never waits for the log). kCommit
// applies, releases the latches, appends kParticipantCommit unforced and
// acknowledges; kAbort rolls back. Exclusive latches are held from kWork
// until kCommit or kAbort. A branch takes one message at a time; a kAbort
// that finds it busy marks it, and the running handler rolls it back.
//
// Threads: those four run on the node's participant thread, in arrival
// order (on the sender's thread when delivered inline), never on the
// message handler, which SELCC's invalidations share. Answers (kWorkReply,
// kVote, kAck) and kHello stay on the handler: they only wake the Slot of
// the session that sent the request.
// Design and argument: docs/design/partitioned.md.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "partition/fragment.h"
#include "partition/options.h"
#include "partition/partition_map.h"
#include "partition/protocol.h"
#include "rdma/fabric.h"
#include "txn/commit_watermark.h"
#include "txn/concurrency_control.h"
#include "txn/database.h"
#include "txn/txn.h"

namespace strand::partition {

// Where a coordinator's answers land, one per session. Owned by the Node.
class Slot {
 public:
  // One node's answer to the current round.
  struct Answer {
    bool arrived = false;
    Header header;
  };

  // Starts a round expecting one answer from each of `nodes`; its seq.
  uint32_t Begin(absl::Span<const rdma::ComputeNodeId> nodes);
  // Records an answer (dropped unless it is for the current round).
  void Deliver(rdma::ComputeNodeId from, const Header& header);
  // Waits for every expected answer, or the deadline (false).
  bool Wait(absl::Time deadline);
  // Node `n` failed: its answer to this round, if still expected, is an
  // Unavailable status and a no vote, so that the wait ends now.
  void Fail(rdma::ComputeNodeId n);
  // The answers of the finished round, by node id.
  const std::vector<Answer>& answers() const { return answers_; }
  int index() const { return index_; }
  // Failover: the yes-voters `nodes` of this slot's commit `gtid`, whose
  // decision is published, are to acknowledge COMMIT (Acked); WaitAcked
  // waits for every one, or for its failure (Fail), or the deadline
  // (false). decision_board.h says why.
  void ExpectAcks(uint64_t gtid, absl::Span<const rdma::ComputeNodeId> nodes);
  void Acked(rdma::ComputeNodeId from, uint64_t gtid);
  bool WaitAcked(absl::Time deadline);
  // The next sequence number of this slot's transactions (its
  // coordinator's only: one session holds the slot at a time).
  uint64_t NextSequence() { return ++sequence_; }

 private:
  friend class Node;
  void FailLocked(rdma::ComputeNodeId n);  // holds mu_
  int index_ = 0;
  uint64_t sequence_ = 0;
  // What this slot's decision word holds, as far as its coordinator knows
  // (decision_board.h's Publish); zeroed with the word at the node's start.
  uint64_t decision_ = 0;
  friend class Coordinator;
  const std::atomic<uint64_t>* failed_ = nullptr;  // the node's failed_
  std::mutex mu_;
  std::condition_variable done_;
  uint32_t seq_ = 0;             // guarded by mu_
  int outstanding_ = 0;          // guarded by mu_
  std::vector<Answer> answers_;  // guarded by mu_ while a round runs
  uint64_t unacked_gtid_ = 0;    // guarded by mu_
  uint64_t unacked_ = 0;         // guarded by mu_: bit n, node n
};

class Node {
 public:
  struct Config {
    rdma::Fabric* fabric = nullptr;
    rdma::ComputeNodeId id = 0;
    const txn::Database* db = nullptr;
    cc::GclManager* manager = nullptr;
    const FragmentRegistry* fragments = nullptr;
    const PartitionMap* map = nullptr;
    PartitionedOptions options;
    // Failover (EngineOptions::failover): coordinators publish their
    // decisions (decision_board.h), so that the survivors of this node
    // resolve its branches; the board's words of this node are zeroed.
    bool failover = false;
  };

  // Registers the mailboxes and routes the protocol's messages here.
  static absl::StatusOr<std::unique_ptr<Node>> Start(const Config& config);
  // Turns later messages away, waits for running handlers, and rolls back
  // the branches still here. The node's log must be closed first (its
  // durability callbacks call into this node).
  ~Node();
  // Announces this node's mailboxes to every other node but the failed
  // ones (kHello; a node that was not up yet, or failed, answers with its
  // own when it greets). Call once
  // every hosted node has Started, so none of them drops a greeting.
  absl::Status Greet();

  rdma::ComputeNodeId id() const { return config_.id; }
  const PartitionMap& map() const { return *config_.map; }
  const PartitionedOptions& options() const { return config_.options; }
  const txn::Database& db() const { return *config_.db; }
  rdma::ComputeNode& compute_node() { return *compute_node_; }

  // A free coordinator slot, or ResourceExhausted naming slots_per_node.
  absl::StatusOr<Slot*> AcquireSlot();
  void ReleaseSlot(Slot* slot);

  // Where to write a body for node `to`: its inbox for (this node, slot),
  // or its reply mailbox for (slot) from this node. Waits (bounded) for
  // `to`'s kHello.
  absl::StatusOr<rdma::PeerAddress> InboxAt(rdma::ComputeNodeId to, int slot);
  absl::StatusOr<rdma::PeerAddress> ReplyBoxAt(rdma::ComputeNodeId to,
                                               int slot);
  // This node's own mailboxes (bodies others wrote for it).
  const uint8_t* Inbox(rdma::ComputeNodeId from, int slot) const;
  const uint8_t* ReplyBox(int slot, rdma::ComputeNodeId from) const;

  // Fault injection: draws against a probability.
  bool Inject(double probability);
  // Runs the test's hook at `point` (PartitionFaults::at_point), if any.
  void At(TwoPhasePoint point);

  // Failover (docs/design/node_failure.md, "Partitioned mode"). Node `n`
  // was declared failed and fenced: waits for its answers end now, later
  // calls to its partitions fail (PeerUnavailable) until PeerRejoined,
  // and its mailboxes are forgotten (a rejoined node greets anew).
  void PeerFailed(rdma::ComputeNodeId n);
  void PeerRejoined(rdma::ComputeNodeId n);
  // This incarnation crashed (Engine::FailNode): to it every peer is
  // failed, so its sessions' waits end and their calls fail at once.
  void Crashed();
  bool peer_failed(rdma::ComputeNodeId n) const {
    return (failed_.load(std::memory_order_acquire) >> n) & 1;
  }
  // The status of a call that needs failed node `n`.
  absl::Status PeerUnavailable(rdma::ComputeNodeId n) const;
  // Ends this node's branches of transactions that fenced node
  // `coordinator` coordinated: a prepared one commits iff its decision is
  // on the board (decision_board.h), every other one aborts (presumed
  // abort). Waits for a branch's running handler. How many committed and
  // aborted go to *committed and *aborted.
  absl::Status ResolveBranchesOf(rdma::ComputeNodeId coordinator,
                                 int* committed, int* aborted);
  bool publishes_decisions() const { return config_.failover; }
  rdma::Fabric& fabric() const { return *config_.fabric; }

  // Counters of this node (its coordinators' and its participant side).
  PartitionStats Stats() const;
  void AddStats(const PartitionStats& s);
  // Counts a message of `kind` sent from this node.
  void Count(Kind kind);

 private:
  struct Branch;
  explicit Node(const Config& config);

  void Handle(const rdma::Message& m, rdma::Endpoint& endpoint);
  void OnHello(const rdma::Message& m, rdma::Endpoint& endpoint);
  absl::StatusOr<rdma::PeerAddress> PeerRegion(rdma::ComputeNodeId to);
  void OnWork(const Header& h, rdma::ComputeNodeId from,
              rdma::Endpoint& endpoint);
  void OnPrepare(const Header& h, rdma::ComputeNodeId from,
                 rdma::Endpoint& endpoint);
  void OnCommit(const Header& h, rdma::ComputeNodeId from,
                rdma::Endpoint& endpoint);
  void OnAbort(const Header& h);
  void OnAnswer(Kind kind, const Header& h, rdma::ComputeNodeId from);

  // The branch of gtid, made if `create` (an error then goes to *error);
  // null if absent.
  std::shared_ptr<Branch> FindBranch(uint64_t gtid, bool create,
                                     absl::Status* error);
  // Rolls back what is left of a branch whose lock the caller holds and
  // forgets it.
  void EndBranch(Branch& b);
  // Commits a prepared branch whose lock the caller holds (kCommit, or
  // the decision of its failed coordinator), and forgets it.
  void CommitBranch(Branch& b, uint64_t commit_ts);
  // Sends (counting it), unless fault injection drops a droppable one.
  absl::Status Send(rdma::Endpoint& endpoint, rdma::ComputeNodeId to, Kind kind,
                    const Header& h, bool droppable);
  // A vote from the log's flusher thread (no handler endpoint there).
  void SendVoteLater(rdma::ComputeNodeId to, const Header& h);

  // Lets the destructor wait out handlers inside this node and turns later
  // messages away (the route outlives the node: rdma/message_router.h).
  struct Gate {
    std::atomic<int> inside{0};
    std::atomic<bool> closed{false};
  };

  const Config config_;
  const std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  rdma::ComputeNode* compute_node_ = nullptr;
  const int nodes_;
  const int slots_;

  std::unique_ptr<uint8_t[]> region_;
  rdma::LocalRegion local_;

  std::mutex peers_mu_;
  std::condition_variable peers_cv_;
  std::vector<rdma::PeerAddress> peers_;  // by node; key 0 until kHello
  std::vector<bool> greeted_;             // guarded by peers_mu_

  // Failover: bit n, node n failed (PeerFailed, Crashed).
  std::atomic<uint64_t> failed_{0};

  std::vector<std::unique_ptr<Slot>> slots_all_;
  std::mutex slots_mu_;
  std::vector<Slot*> free_slots_;  // guarded by slots_mu_

  std::mutex branches_mu_;
  absl::flat_hash_map<uint64_t, std::shared_ptr<Branch>> branches_;
  std::vector<std::unique_ptr<cc::ThreadContext>> free_contexts_;
  std::vector<txn::CommitWatermark::Slot*> free_watermark_slots_;

  std::mutex vote_mu_;  // the flusher's endpoint
  std::unique_ptr<rdma::Endpoint> vote_endpoint_;

  // The participant thread and the messages it has yet to handle.
  void RunParticipant();
  // kWork, kPrepare, kCommit or kAbort, on the thread that calls it.
  void HandleParticipant(const rdma::Message& m, rdma::Endpoint& endpoint);
  std::mutex participant_mu_;
  std::condition_variable participant_cv_;
  std::deque<rdma::Message> participant_queue_;  // guarded by participant_mu_
  bool participant_stop_ = false;                // guarded by participant_mu_
  std::unique_ptr<rdma::Endpoint> participant_endpoint_;
  std::thread participant_;

  std::mutex rng_mu_;
  std::mt19937_64 rng_{0x2c0};

  mutable std::mutex stats_mu_;
  PartitionStats stats_;  // guarded by stats_mu_
};

}  // namespace strand::partition

#endif  // STRAND_PARTITION_NODE_H_
