#ifndef STRAND_ENGINE_FAILURE_MONITOR_H_
#define STRAND_ENGINE_FAILURE_MONITOR_H_

// FailureMonitor: one per process, for the compute nodes it hosts
// (docs/design/node_failure.md). Every lease / 8 it
//   - beats for each attached node (txn/membership.h);
//   - reads the membership words, fences here every node that a reclaimer
//     fenced (fence_here: this process's listeners drop its messages),
//     hands every attached node's cache the fenced and stealable peers
//     (cc::GclManager::SetPeerStates), then acknowledges the epoch it
//     applied for each of them (a reclaimer waits for every member's);
//   - declares failed every expired member not attached here (one
//     survivor in the cluster wins) and reclaims those it won on a thread
//     of their own (node_reclaim.h) with the engine's `reclaim` callback;
//   - takes over a reclaim whose claimant failed too (once fenced), and
//     reruns its own that failed (docs/design/node_failure.md, "A
//     reclaimer that fails too").
// So a node that stops beating is declared failed after its lease plus at
// most lease / 8, and each stage of its reclaim reaches this process's
// caches at once (Refresh) and other processes' within lease / 8.

// A node attached here that finds itself declared failed (it paused past
// its lease) stops being beaten for; its operations fail (fenced). The
// monitor tells it once, when its Beat is refused or a view shows it
// fenced (Attach's `declared_failed`: its waits for an acknowledgement
// end); its cache's waits on peers end with the view (its own bit in
// GclManager::SetPeerStates). Thread-safe.

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "engine/node_reclaim.h"
#include "txn/membership.h"

namespace strand::engine {

class FailureMonitor {
 public:
  // Reclaims `failed` on behalf of attached node `reclaimer`.
  using Reclaim = std::function<absl::StatusOr<ReclaimReport>(
      rdma::ComputeNodeId reclaimer, rdma::ComputeNodeId failed)>;

  // Makes a node that another process fenced fenced in this one too, or
  // readmits it (rdma::Fabric::FenceHere, UnfenceHere).
  using FenceHere =
      std::function<absl::Status(rdma::ComputeNodeId node, bool fenced)>;

  FailureMonitor(const txn::Membership& membership, Reclaim reclaim,
                 FenceHere fence_here = nullptr);
  // Stops the thread and waits for reclaims under way.
  ~FailureMonitor();

  // Called once, on the monitor's thread, when an attached node learns it
  // was declared failed; `why` names it (Unavailable).
  using DeclaredFailed = std::function<void(const absl::Status& why)>;

  // Makes `node` (hosted here, its cache `manager`) a member and beats
  // for it; returns once every member acknowledged its joining (so no
  // survivor still steals from an earlier incarnation of it). `manager`
  // and what `declared_failed` uses must stay until Detach.
  absl::Status Attach(rdma::ComputeNodeId node, cc::GclManager& manager,
                      DeclaredFailed declared_failed = nullptr);
  // Stops beating for `node` and forgets its manager: injected failure
  // (the survivors declare it failed after its lease) or a paused node.
  void Detach(rdma::ComputeNodeId node);
  // Detach, and leave the membership in good order: nothing to reclaim.
  absl::Status Leave(rdma::ComputeNodeId node);
  // Stops beating for `node` but keeps applying views to its cache, for
  // a test of a node that pauses and resumes; Resume beats again.
  void Pause(rdma::ComputeNodeId node);
  void Resume(rdma::ComputeNodeId node);

  // One look now (the reclaimer calls it after each stage).
  void Refresh();

  // Blocks until no reclaim on behalf of hosted node `node` runs here (it
  // failed while reclaiming another: its runtime must outlive that
  // reclaim) or `timeout`; DeadlineExceeded then.
  absl::Status WaitReclaimsBy(rdma::ComputeNodeId node, absl::Duration timeout);
  // Blocks until `node` was reclaimed (by anyone, as the membership words
  // say) or `timeout`; DeadlineExceeded then.
  absl::Status WaitReclaimed(rdma::ComputeNodeId node, absl::Duration timeout);
  // The reclaims this process ran, oldest first.
  std::vector<ReclaimReport> reports() const;
  // When this process first saw each node declared failed, by itself or
  // (fenced) by another process (InfinitePast: never, or live again).
  absl::Time declared_at(rdma::ComputeNodeId node) const;
  // The last time it was, even if it is live again since.
  absl::Time last_declared_at(rdma::ComputeNodeId node) const;
  // When attached node `node` last renewed its lease (the start of its
  // last heartbeat that succeeded, or of its joining); InfiniteFuture if
  // it holds none here. A process stopped past its lease sees this fall
  // behind before any of its operations fails.
  absl::Time lease_renewed_at(rdma::ComputeNodeId node) const;

 private:
  struct Attached {
    rdma::ComputeNodeId node;
    cc::GclManager* manager;
    std::unique_ptr<cc::ThreadContext> ctx;
    DeclaredFailed declared_failed;
    bool paused = false;
    bool told = false;  // declared_failed was called
  };
  void Loop();
  // Beats, looks, applies, declares (see above). Holds look_mu_.
  void Look();
  // Fences here the nodes of `fenced` not fenced yet, readmits those no
  // longer in it; false if one failed (the look acknowledges nothing).
  bool ApplyFences(uint64_t fenced) ABSL_EXCLUSIVE_LOCKS_REQUIRED(look_mu_);
  // Calls a->declared_failed, once. Holds look_mu_.
  void TellDeclaredFailed(Attached& a);
  void MarkDeclared(int node, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartReclaim(rdma::ComputeNodeId reclaimer, rdma::ComputeNodeId failed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The orphans of `view` (see the top): reclaims nobody runs that this
  // process runs again or takes over through `observer`.
  void AdoptOrphans(const txn::Membership::View& view, Attached& observer,
                    const std::vector<Attached*>& nodes, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const txn::Membership membership_;
  const Reclaim reclaim_;
  const FenceHere fence_here_;

  absl::Mutex look_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one Look at a time
  txn::Membership::Tracker tracker_ ABSL_GUARDED_BY(look_mu_);
  uint64_t fenced_here_ ABSL_GUARDED_BY(look_mu_) = 0;  // bitmap

  mutable absl::Mutex mu_;
  absl::CondVar changed_;
  std::vector<std::unique_ptr<Attached>> attached_ ABSL_GUARDED_BY(mu_);
  uint64_t reclaimed_ ABSL_GUARDED_BY(mu_) = 0;  // bitmap, as last seen
  // Per failed node: who reclaims it in this process (-1: nobody), and
  // when a reclaim of it that failed here may run again (InfinitePast:
  // none failed).
  std::vector<int> reclaimer_of_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> retry_at_ ABSL_GUARDED_BY(mu_);
  std::vector<ReclaimReport> reports_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> declared_at_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Time> last_declared_at_ ABSL_GUARDED_BY(mu_);
  // lease_renewed_at, in Unix ns; 0: no lease held here. Read without mu_
  // (by a process's board, every heartbeat).
  std::vector<std::atomic<int64_t>> renewed_at_ns_;
  std::vector<std::thread> reclaimers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_FAILURE_MONITOR_H_
