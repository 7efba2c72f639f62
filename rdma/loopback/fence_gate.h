#ifndef STRAND_RDMA_LOOPBACK_FENCE_GATE_H_
#define STRAND_RDMA_LOOPBACK_FENCE_GATE_H_

// The loopback's fencing of a compute node (rdma/fabric.h, Fabric::Fence):
// what a memory node's NIC does when the node's queue pairs go to the error
// state. Each of the node's endpoints brackets every operation with Enter
// and Leave; Fence sets the flag, then waits until no endpoint is inside,
// so when Fence returns no operation of the node can reach memory or a peer
// any more, a paused thread that resumes included.
//
// Kill is failure injection (Fabric::Crash): the node's own operations
// fail as when fenced, but what others send it is lost silently, as to a
// process that died, until someone fences it.
//
// Enter stores the endpoint's own busy flag, then reads the fence flag;
// Fence stores the fence flag, then reads every busy flag, both sequentially
// consistent: either the endpoint sees the fence, or Fence sees it busy and
// waits for its Leave.
//
// A peer's handler serving this node's message (handler threads) counts
// too (EnterHandler; verbs: rdma/verbs/listener.h): admitted only if the
// message was sent in the current generation, which Fence and Kill
// advance, and they wait for admitted handlers. Costs nothing unless armed
// (FabricOptions::fencing): a deployment in which no node can fail needs
// no gate.

#include <atomic>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace strand::rdma::loopback {

class FenceGate {
 public:
  // One endpoint's place at the gate.
  struct Seat {
    alignas(64) std::atomic<bool> busy{false};
  };

  explicit FenceGate(bool armed) : armed_(armed) {}

  bool armed() const { return armed_; }

  // Shared: Close may still be looking at a seat whose endpoint left.
  std::shared_ptr<Seat> Sit() {
    auto seat = std::make_shared<Seat>();
    absl::MutexLock lock(&mu_);
    seats_.push_back(seat);
    return seat;
  }
  void Leave(const std::shared_ptr<Seat>& seat) {
    absl::MutexLock lock(&mu_);
    std::erase(seats_, seat);
  }

  // False: fenced, stay out (no Exit). Inline: it is on every operation.
  bool Enter(Seat& seat) {
    if (!armed_) return true;
    seat.busy.store(true, std::memory_order_seq_cst);
    if (fenced_.load(std::memory_order_seq_cst) ||
        killed_.load(std::memory_order_seq_cst)) {
      seat.busy.store(false, std::memory_order_release);
      return false;
    }
    return true;
  }
  void Exit(Seat& seat) {
    if (armed_) seat.busy.store(false, std::memory_order_release);
  }

  // The generation a message sent now is stamped with.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }
  // False: drop the message (sent by a fenced or killed incarnation); true:
  // handle it, then ExitHandler.
  bool EnterHandler(uint64_t sent_in_generation) {
    if (!armed_) return true;
    handlers_.fetch_add(1, std::memory_order_seq_cst);
    if (fenced_.load(std::memory_order_seq_cst) ||
        killed_.load(std::memory_order_seq_cst) ||
        generation_.load(std::memory_order_seq_cst) != sent_in_generation) {
      handlers_.fetch_sub(1, std::memory_order_release);
      return false;
    }
    return true;
  }
  void ExitHandler() {
    if (armed_) handlers_.fetch_sub(1, std::memory_order_release);
  }

  bool fenced() const { return fenced_.load(std::memory_order_acquire); }
  bool killed() const { return killed_.load(std::memory_order_acquire); }
  // Return once no operation is inside; false if the gate is not armed.
  bool Fence() { return Close(fenced_); }
  bool Kill() { return Close(killed_); }
  // Readmits the node (fenced or killed).
  void Unfence() {
    killed_.store(false, std::memory_order_seq_cst);
    fenced_.store(false, std::memory_order_seq_cst);
  }

 private:
  bool Close(std::atomic<bool>& flag);

  const bool armed_;
  std::atomic<bool> fenced_{false};
  std::atomic<bool> killed_{false};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> handlers_{0};  // admitted by EnterHandler
  absl::Mutex mu_;
  std::vector<std::shared_ptr<Seat>> seats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_FENCE_GATE_H_
