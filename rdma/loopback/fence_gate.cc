#include "rdma/loopback/fence_gate.h"

#include <thread>

namespace strand::rdma::loopback {

bool FenceGate::Close(std::atomic<bool>& flag) {
  if (!armed_) return false;
  flag.store(true, std::memory_order_seq_cst);
  absl::MutexLock lock(&mu_);
  for (Seat* seat : seats_) {
    while (seat->busy.load(std::memory_order_seq_cst)) {
      std::this_thread::yield();
    }
  }
  return true;
}

}  // namespace strand::rdma::loopback
