#ifndef STRAND_RDMA_VERBS_FENCE_CONTROL_H_
#define STRAND_RDMA_VERBS_FENCE_CONTROL_H_

// Fencing a compute node at the memory nodes over verbs
// (docs/design/node_failure.md, "Fencing"). A memory node does no work per
// operation, but its process owns the queue pairs it accepted: moving a
// compute node's queue pairs to the error state makes the node unable to
// write, even if it only paused and resumes not knowing it was fenced.
//
// The request travels through the memory node's header
// (memory_node_layout.h), by the one-sided operations compute nodes have:
//   - a compute node moves the fenced node's `fence_requested` word to the
//     next odd generation (fence) or even one (its next incarnation
//     rejoined: it may be fenced again) by CAS, and waits until
//     `fence_applied` reaches it;
//   - the memory node's FenceControlPlane reads the words every
//     kPollInterval and applies a new odd generation (Listener::Fence),
//     then stores it in `fence_applied`.
// Once RequestFence returns OK, nothing the fenced incarnation posts to
// that memory node executes (the responder drops it) and its
// reconnections are refused; a later incarnation is admitted
// (listener.h). When nothing fails, the cost is the poll of 64 local words
// every kPollInterval on the control plane's own thread.

#include <cstdint>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "rdma/fabric.h"
#include "rdma/verbs/listener.h"

namespace strand::rdma::verbs {

// The memory node's side: a thread that applies requested fences to
// `listener`'s queue pairs. `region` is the memory node's region (its
// header holds the words); both outlive the control plane.
class FenceControlPlane {
 public:
  static constexpr absl::Duration kPollInterval = absl::Microseconds(500);

  FenceControlPlane(void* region, Listener* listener);
  ~FenceControlPlane();  // stops the thread

  FenceControlPlane(const FenceControlPlane&) = delete;
  FenceControlPlane& operator=(const FenceControlPlane&) = delete;

 private:
  void Loop();
  // Applies a changed request of `node` and acknowledges it; one it could
  // not apply stays unacknowledged and is tried again at the next poll.
  void Apply(int node, uint64_t generation);

  uint64_t* const requested_;
  uint64_t* const applied_;
  Listener* const listener_;
  absl::Notification stop_;
  std::thread thread_;
};

// The compute node's side, through `endpoint` (of a node other than
// `node`): asks memory node `memory_node` to fence `node` (fenced) or to
// admit it again (!fenced) and waits until it did. DeadlineExceeded names
// the memory node if its control plane did not answer by `deadline`.
absl::Status RequestFence(Endpoint& endpoint, MemoryNodeId memory_node,
                          ComputeNodeId node, bool fenced, absl::Time deadline);

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_FENCE_CONTROL_H_
