#ifndef STRAND_RDMA_VERBS_LISTENER_H_
#define STRAND_RDMA_VERBS_LISTENER_H_

// The accepting side of rdma_cm connections: listens on an address and port,
// and for every connect request asks its owner how to accept it (which CQ,
// whether to attach the new queue pair to a shared receive queue, what to
// reply). Accepted queue pairs are passive: their owner never posts sends on
// them, so after the accept nothing here runs per operation. A thread waits
// on the CM event channel (blocking, not spinning) to accept and to free
// queue pairs whose peer disconnected.
//
// Fencing (docs/design/node_failure.md): Fence(owner) moves every accepted
// queue pair of that compute node to the error state, so nothing it posts
// afterwards executes here, and from then on refuses the connections of
// every incarnation of it up to the fence: those it accepted and any that
// started before the fence by this host's clock. A later incarnation (the
// node restarted, or rejoined in its process) is accepted. So a paused
// incarnation that resumes never gets back in, and no one has to admit
// the next one. A control-plane action, not per-operation work.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "rdma/verbs/device.h"

namespace strand::rdma::verbs {

class Listener {
 public:
  struct Accept {
    ibv_cq* cq = nullptr;      // for the queue pair's (absent) completions
    ibv_srq* srq = nullptr;    // receives go here if set
    std::string reply;         // private data of the accept
    int owner = -1;            // the connecting compute node, if fenceable
    uint64_t incarnation = 0;  // which life of it (wire.h)
  };
  // Called on the listener thread with the request's private data; an error
  // rejects the connection.
  using OnRequest = std::function<absl::StatusOr<Accept>(absl::string_view)>;

  // Binds `address`:`port` (0 = any free port, see port()).
  static absl::StatusOr<std::unique_ptr<Listener>> Start(
      std::shared_ptr<Device> device, const std::string& address, uint16_t port,
      OnRequest on_request);
  // Stops accepting and destroys every accepted queue pair.
  ~Listener();

  uint16_t port() const { return port_; }

  // Moves `owner`'s accepted queue pairs to the error state and refuses the
  // connections of its incarnations up to now from now on; returns how
  // many queue pairs it stopped. Once it returns OK, no request those
  // incarnations post later is executed here.
  absl::StatusOr<int> Fence(int owner);

  // A handler thread's admission of a message that arrived on queue pair
  // `qp_num` (the contract of rdma/loopback/fence_gate.h, over verbs):
  // false if its sender's incarnation is fenced here (drop the message);
  // true otherwise, and ExitHandler(*owner) must follow once it is
  // handled. Fence waits for admitted handlers of the owner it fences, so
  // once it returns no handler here acts on a message of those
  // incarnations, not even one received before and handled after.
  bool EnterHandler(uint32_t qp_num, int* owner);
  void ExitHandler(int owner);

 private:
  Listener(std::shared_ptr<Device> device, OnRequest on_request)
      : device_(std::move(device)), on_request_(std::move(on_request)) {}
  void Loop();
  // False: the id is to be destroyed once its event is acked.
  bool HandleRequest(rdma_cm_id* id, const rdma_conn_param& request);
  // Fence's first part: the floor raised and the queue pairs stopped.
  absl::StatusOr<int> FenceQueuePairs(int owner);
  // Drops a disconnected id from accepted_; false if it was not there.
  bool Forget(rdma_cm_id* id);

  const std::shared_ptr<Device> device_;
  const OnRequest on_request_;
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* listen_id_ = nullptr;
  uint16_t port_ = 0;
  int stop_fd_ = -1;  // eventfd that wakes the thread to exit
  // Accepted ids and their owners: the thread adds and frees them, Fence
  // stops them from another thread.
  absl::Mutex mu_;
  absl::flat_hash_map<rdma_cm_id*, int> accepted_ ABSL_GUARDED_BY(mu_);
  // Per owner: the largest incarnation accepted, and the first one admitted
  // (Fence raises it).
  absl::flat_hash_map<int, uint64_t> latest_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<int, uint64_t> admitted_from_ ABSL_GUARDED_BY(mu_);
  // Per accepted queue pair number, its owner and incarnation; kept after
  // the queue pair is gone, as its messages may still wait in the ring.
  struct Sender {
    int owner;
    uint64_t incarnation;
  };
  absl::flat_hash_map<uint32_t, Sender> senders_ ABSL_GUARDED_BY(mu_);
  static constexpr int kOwners = 64;
  std::array<std::atomic<int>, kOwners> handlers_{};  // admitted, per owner
  std::thread thread_;
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_LISTENER_H_
