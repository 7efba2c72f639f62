#ifndef STRAND_TPCC_FAILURE_INJECTOR_H_
#define STRAND_TPCC_FAILURE_INJECTOR_H_

// A compute node's failure in a tpcc run (tpcc --fail_node=N@T
// --rejoin_after_s=S; docs/design/node_failure.md). A thread of its own
// fails node N (Engine::FailNode: as a kill -9 of that node alone) T
// seconds into the measured window, waits until the survivors reclaimed
// it, and S seconds after the failure, once every worker thread of the
// node closed its session, brings it back (Engine::RejoinNode).
//
// The driver's workers (tpcc/driver.cc) ask down(node) before each call: a
// worker whose node is down stops calling, delivers its pending outcomes
// (each failed), destroys its session, tells SessionClosed and waits in
// WaitUntilUp until the node is back (a new session then) or the run ends.
// The flag is raised before FailNode, so every call the failure makes fail
// finds it raised: the driver counts those apart from the run's errors.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "engine/engine.h"
#include "rdma/global_address.h"

namespace strand::tpcc {

struct FailurePlan {
  rdma::ComputeNodeId node = 0;
  absl::Duration at;  // into the measured window
  // After the failure; zero: it never rejoins.
  absl::Duration rejoin_after = absl::ZeroDuration();
};

// What happened, and when (absl::InfinitePast(): it did not).
struct FailureEvents {
  rdma::ComputeNodeId node = 0;
  absl::Time failed_at = absl::InfinitePast();       // FailNode called
  absl::Time declared_at = absl::InfinitePast();     // by a survivor
  absl::Time reclaimed_seen = absl::InfinitePast();  // WaitReclaimed returned
  absl::Time rejoin_started = absl::InfinitePast();  // RejoinNode called
  absl::Time rejoined_at = absl::InfinitePast();     // RejoinNode returned
  // Measured commits of each compute node (by id) at those moments.
  std::vector<uint64_t> commits_at_failure, commits_at_rejoin;
  // A step that failed or did not happen within the run; empty: none.
  std::string error;
};

class FailureInjector {
 public:
  // `commits_by_node`: the measured commits so far, by compute node id.
  FailureInjector(engine::Engine& engine, const FailurePlan& plan,
                  int threads_per_node,
                  std::function<std::vector<uint64_t>()> commits_by_node);
  ~FailureInjector();
  FailureInjector(const FailureInjector&) = delete;
  FailureInjector& operator=(const FailureInjector&) = delete;

  // Starts the schedule; the measured window opened at `window_start`.
  void Start(absl::Time window_start);
  // The run is over: a step not taken yet is not taken, a waiting worker
  // wakes up. Waits for a step under way (a rejoin) to end.
  void Stop();
  // After Stop.
  const FailureEvents& events() const { return events_; }

  // For the workers (any thread).
  bool down(rdma::ComputeNodeId node) const {
    return node == plan_.node && down_.load(std::memory_order_acquire);
  }
  // A worker of the failed node destroyed its session.
  void SessionClosed();
  // Blocks until the failed node is back (true) or the run ends (false).
  bool WaitUntilUp();

 private:
  void Run(absl::Time window_start);
  // Sleeps until `t` or Stop; false on Stop.
  bool SleepUntil(absl::Time t);
  void Fail();
  // Until the survivors reclaimed the node, or the run ends.
  void AwaitReclaim();
  void Rejoin();

  engine::Engine& engine_;
  const FailurePlan plan_;
  const int threads_per_node_;
  const std::function<std::vector<uint64_t>()> commits_by_node_;
  std::atomic<bool> down_{false};
  // std::mutex and std::condition_variable: TSan sees them (the
  // distribution's absl::Mutex it does not).
  std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;    // guarded by mu_
  bool up_ = true;           // guarded by mu_
  int sessions_closed_ = 0;  // guarded by mu_
  FailureEvents events_;     // written by the schedule's thread only
  std::thread thread_;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_FAILURE_INJECTOR_H_
