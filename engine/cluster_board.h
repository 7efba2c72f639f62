#ifndef STRAND_ENGINE_CLUSTER_BOARD_H_
#define STRAND_ENGINE_CLUSTER_BOARD_H_

// Where the compute processes of a deployment that spans processes (verbs:
// one compute node per process) meet: on memory node 0 (cc/root_words.h,
// kClusterBoardOffset) like every shared state in strand, so there is no
// side channel and no coordinator process. Each compute node owns a slot:
//   heartbeat  advanced by the node's board thread every heartbeat_interval
//   step       the last step the node reached (Arrive); kLeft once it left
//   result     address and length of the bytes it published (Publish)
// A node waits for the others at a step (WaitForAll), reads what they
// published (Read), and learns within `peer_timeout` that one stopped (its
// heartbeat did not move and it had not left), so no wait rests on a guess
// at how long the others' work takes. Errors name the node
// (Options::describe), or memory node 0 when it stops answering.
//
//   auto board = ClusterBoard::Open(fabric, self, options);
//   board->Arrive(kLoaded);
//   board->WaitForAll(kLoaded);        // everyone loaded, or who stopped
//   board->Publish(bytes); board->Arrive(kRan);
//   if (self == 0) { board->WaitForAll(kRan); board->Read(1); ... }
//   board->Leave();
//
// A board belongs to one run on fresh memory nodes: Open refuses a slot
// that an earlier run left behind. Thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "rdma/fabric.h"

namespace strand::engine {

class ClusterBoard {
 public:
  // The step of a node that left (past every step: its silence is not a
  // failure), and of one that gave up (Abort: waiting for it fails at once).
  static constexpr uint64_t kLeft = ~uint64_t{0};
  static constexpr uint64_t kAborted = kLeft - 1;

  struct Options {
    absl::Duration heartbeat_interval = absl::Milliseconds(200);
    // A peer whose heartbeat has not moved for this long has failed.
    absl::Duration peer_timeout = absl::Seconds(10);
    // A node the deployment goes on without (with failover, one declared
    // failed): its silence is no failure, and waits do not wait for it.
    // Empty: none.
    std::function<bool(rdma::ComputeNodeId)> excused;
    // With failover: whether this node's lease ran out (its process was
    // stopped or starved past it). Checked before each heartbeat: the
    // board then fails as unreachable at once, not after its first
    // operation's timeout.
    std::function<bool()> lease_lost;
    // This node restarts after its process died (its node was declared
    // failed and reclaimed, and it rejoins): it takes over the slot its
    // earlier incarnation left, step and all.
    bool rejoin = false;
    // Names a node in errors ("compute node 1 (192.0.2.2:7100)"); empty:
    // "compute node 1".
    std::function<std::string(rdma::ComputeNodeId)> describe;
  };

  // Joins the board as compute node `self` (hosted by this process) and
  // starts its heartbeat. FailedPrecondition if the slot holds an earlier
  // run's state, unless Options::rejoin.
  static absl::StatusOr<std::unique_ptr<ClusterBoard>> Open(
      rdma::Fabric& fabric, rdma::ComputeNodeId self, Options options);
  // Stops the heartbeat; does not Leave (peers then see this node fail).
  ~ClusterBoard();

  // This node reached `step` (steps only grow; kLeft is Leave's).
  absl::Status Arrive(uint64_t step);
  // Waits until every compute node (this one too) reached `step`, or `node`
  // did; an excused node counts as there. Unavailable naming the node if one
  // stops or aborts first, the board's error if it fails.
  absl::Status WaitForAll(uint64_t step);
  absl::Status WaitFor(rdma::ComputeNodeId node, uint64_t step);
  // Publishes `bytes` for the others to Read (at most the fabric's chunk
  // size); a later Publish replaces them.
  absl::Status Publish(std::string_view bytes);
  // What `node` published last; NotFound if nothing yet.
  absl::StatusOr<std::string> Read(rdma::ComputeNodeId node);
  // The last step `node` reached.
  absl::StatusOr<uint64_t> Step(rdma::ComputeNodeId node);
  // Leaves the board: peers no longer expect heartbeats from this node.
  absl::Status Leave();
  // Gives up (this process is about to exit on an error): peers waiting
  // for this node fail at once instead of after `peer_timeout`.
  absl::Status Abort();

  // Calls `callback` once, from the board's thread, with the first failure
  // it sees (a peer that stopped, or the board unreachable): for a process
  // that cannot go on without its peers (a TPC-C run) and must not wait
  // for its next WaitForAll to learn it.
  void OnFailure(std::function<void(const absl::Status&)> callback);
  // The first failure seen so far (OK if none).
  absl::Status failure() const;
  // Whether that failure was this node's own access to the board failing
  // (memory node 0 unreachable, or this node fenced: with failover, it was
  // declared failed, or will be once its lease runs out).
  bool unreachable() const;

  int nodes() const { return nodes_; }
  std::string Describe(rdma::ComputeNodeId node) const;
  bool Excused(rdma::ComputeNodeId node) const;

 private:
  struct Slot {
    uint64_t heartbeat;
    uint64_t step;
    uint64_t result_address;  // GlobalAddress::raw()
    uint64_t result_bytes;
  };

  ClusterBoard(rdma::Fabric& fabric, rdma::ComputeNodeId self, Options options);
  static rdma::GlobalAddress SlotAddress(rdma::ComputeNodeId node);
  absl::Status ReadSlots(rdma::Endpoint& endpoint, std::vector<Slot>& slots);
  // Waits until node `only_node` (every node if -1) reached `step`.
  absl::Status WaitUntil(uint64_t step, int only_node);
  void Beat();
  // `unreachable`: this node's own access failed (ClusterBoard::unreachable).
  void Fail(const absl::Status& status, bool unreachable = false);

  rdma::Fabric& fabric_;
  const rdma::ComputeNodeId self_;
  const Options options_;
  const int nodes_;

  // std::mutex, not absl::Mutex: Debian's abseil is not built for
  // ThreadSanitizer, which then misses absl::Mutex's ordering and reports
  // races that are not; the board's threads are checked under TSan.
  std::mutex mu_;  // guards endpoint_ (the callers' endpoint)
  std::unique_ptr<rdma::Endpoint> endpoint_;

  mutable std::mutex failure_mu_;  // guards the four below
  absl::Status failure_;
  bool unreachable_ = false;
  std::function<void(const absl::Status&)> on_failure_;
  bool reported_ = false;

  std::unique_ptr<rdma::Endpoint> heartbeat_endpoint_;  // the thread's
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CLUSTER_BOARD_H_
