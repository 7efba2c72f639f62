#ifndef STRAND_TPCC_DEFERRED_DELIVERY_H_
#define STRAND_TPCC_DEFERRED_DELIVERY_H_

// Deferred Delivery (clause 2.7.2). A terminal's Delivery is queued and
// the terminal goes on at once (its response is the queueing); the queued
// business transaction is executed later by a deferred-execution path,
// and its result, the order delivered in each district or that the
// district was skipped, is recorded.
//
// In strand's in-process driver the deferred-execution path is the
// compute node's own worker threads: before dealing its next card a worker
// takes the oldest Delivery queued on its node, if any, and runs it.
// Why not a thread of its own: on the 2-core machines strand is measured
// on, an executor thread would take CPU from the terminals and change what
// a run measures (deliveries are ~4% of the cards but ~10% of the work);
// this way the work and the thread count are those of a synchronous run,
// only the order changes. The queue stays short: a worker queues at most
// one Delivery per card and runs one per card, and the workers empty it
// before the run ends. What is recorded: counters in the run's result
// (queued, executed, orders delivered, districts skipped, the time from
// queueing to completion; tpcc/driver.h) and, if asked for
// (tpcc --delivery_results=FILE), one line per executed Delivery in a
// result file (DeliveryResultFile).

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

#include "absl/time/time.h"
#include "tpcc/delivery.h"

namespace strand::tpcc {

struct QueuedDelivery {
  DeliveryInput input;
  absl::Time queued;
};

// One compute node's queue, oldest first. Thread-safe (a std::mutex, which
// TSan sees; the lock is held for a push or a pop only).
class DeliveryQueue {
 public:
  void Push(const QueuedDelivery& delivery);
  // The oldest queued Delivery, or nullopt if none is queued.
  std::optional<QueuedDelivery> Pop();

 private:
  std::mutex mu_;
  std::deque<QueuedDelivery> queue_;
  // queue_.size(), read without the lock: every worker polls once per
  // card, and most find nothing (no Delivery in the mix, or none queued),
  // which then costs a load of a line that stays shared between cores
  // instead of a lock and unlock that move it (0.7% of the CPU at 2
  // threads). A Push it misses is popped at the next card.
  std::atomic<size_t> size_{0};
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_DEFERRED_DELIVERY_H_
