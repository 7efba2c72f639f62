#ifndef STRAND_ENGINE_EPOCH_TICKER_H_
#define STRAND_ENGINE_EPOCH_TICKER_H_

// The engine's thread that keeps the pool's epoch bounds of its hosted
// compute nodes moving when epochs are shared through the pool
// (docs/design/slot_reuse.md, "Across processes"): every kInterval each
// node's manager refreshes its cached epoch and publishes its bound
// (EpochManager::Tick). A batch of deleted slots goes back only once every
// compute node's bound passed it, so a node with no transaction to seal a
// batch (idle, or only reading) must still publish, or it would hold back
// every other node's reclamation. Costs two round trips per node per tick
// (one when its bound does not grow); the thread sleeps in between.
// Internal to engine/.

#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "txn/epoch_manager.h"

namespace strand::engine {

class EpochTicker {
 public:
  static constexpr absl::Duration kInterval = absl::Milliseconds(2);

  struct Node {
    txn::EpochManager* epochs;
    cc::GclManager* manager;  // the thread's endpoint to the pool
  };
  // Ticks each of `nodes` now and then every kInterval. The managers must
  // outlive the ticker.
  static absl::StatusOr<std::unique_ptr<EpochTicker>> Start(
      const std::vector<Node>& nodes);
  // Stops the thread, then ticks a last time: a closing engine leaves
  // bounds that let through every batch sealed so far.
  ~EpochTicker();

 private:
  EpochTicker() = default;
  void TickAll();

  struct Ticked {
    txn::EpochManager* epochs;
    std::unique_ptr<cc::ThreadContext> ctx;
  };
  std::vector<Ticked> nodes_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_EPOCH_TICKER_H_
