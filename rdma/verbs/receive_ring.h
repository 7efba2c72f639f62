#ifndef STRAND_RDMA_VERBS_RECEIVE_RING_H_
#define STRAND_RDMA_VERBS_RECEIVE_RING_H_

// A compute node's receive ring: a shared receive queue (SRQ) that every
// incoming queue pair from peers' endpoints attaches to, pre-posted with
// fixed 64-byte slots, and the CQ its receive completions land in. Handler
// threads sleep on the CQ's completion channel when the ring is empty
// (poll() on the channel's fd and a stop eventfd): an idle node burns no CPU.
//
// Flow control: when every slot is taken, a sender's SEND gets
// receiver-not-ready and retries until a handler reposts a slot, so a
// message is never dropped; the sender's completion wait is bounded.

#include <infiniband/verbs.h>

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "rdma/message.h"
#include "rdma/verbs/device.h"

namespace strand::rdma::verbs {

class ReceiveRing {
 public:
  static constexpr int kSlots = 1024;

  static absl::StatusOr<std::unique_ptr<ReceiveRing>> Create(
      std::shared_ptr<Device> device);
  // Queue pairs attached to srq() must be destroyed first.
  ~ReceiveRing();

  ibv_srq* srq() const { return srq_; }
  ibv_cq* cq() const { return cq_; }

  // Blocks until a message arrives (true) or Stop() is called (false);
  // `*qp_num`: the queue pair it came on. Thread-safe: several handler
  // threads share the ring.
  bool Next(Message* message, uint32_t* qp_num);
  // Wakes every thread blocked in Next(); later calls return false.
  void Stop();
  // After Stop, once no thread is in Next(): discards the messages that
  // arrived meanwhile (returns how many) and makes Next() wait again.
  int Restart();

 private:
  explicit ReceiveRing(std::shared_ptr<Device> device)
      : device_(std::move(device)) {}
  absl::Status PostSlot(uint64_t slot);
  // One completion, if any: 1 = a message in *message, 0 = none, -1 = a
  // failed receive (already logged).
  int PollOne(Message* message, uint32_t* qp_num);

  const std::shared_ptr<Device> device_;
  std::unique_ptr<Message[]> slots_;
  MemoryRegion slots_mr_;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_srq* srq_ = nullptr;
  int stop_fd_ = -1;
  std::atomic<bool> stopped_{false};
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_RECEIVE_RING_H_
