#include "rdma/loopback/fence_gate.h"

#include <thread>

namespace strand::rdma::loopback {

bool FenceGate::Close(std::atomic<bool>& flag) {
  if (!armed_) return false;
  flag.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  // The seats taken before the flag; one taken after it never gets in
  // (Enter reads the flag). The wait runs outside mu_: a thread inside the
  // gate may need to Sit before it leaves (an inline handler answering
  // this node opens an endpoint of it), and would wait for mu_ forever.
  std::vector<std::shared_ptr<Seat>> seats;
  {
    absl::MutexLock lock(&mu_);
    seats = seats_;
  }
  for (const std::shared_ptr<Seat>& seat : seats) {
    while (seat->busy.load(std::memory_order_seq_cst)) {
      std::this_thread::yield();
    }
  }
  // Handlers never wait (rdma/fabric.h): this ends within one's run.
  while (handlers_.load(std::memory_order_seq_cst) > 0) {
    std::this_thread::yield();
  }
  return true;
}

}  // namespace strand::rdma::loopback
