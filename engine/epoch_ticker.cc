#include "engine/epoch_ticker.h"

#include "glog/logging.h"

namespace strand::engine {

absl::StatusOr<std::unique_ptr<EpochTicker>> EpochTicker::Start(
    const std::vector<Node>& nodes) {
  std::unique_ptr<EpochTicker> ticker(new EpochTicker());
  for (const Node& node : nodes) {
    auto ctx = node.manager->NewThreadContext();
    if (!ctx.ok()) return ctx.status();
    ticker->nodes_.push_back({node.epochs, *std::move(ctx)});
  }
  // A first bound before any session: the other nodes need not wait a
  // whole interval for this one.
  ticker->TickAll();
  ticker->thread_ = std::thread([t = ticker.get()] {
    while (!t->stop_.WaitForNotificationWithTimeout(kInterval)) t->TickAll();
  });
  return ticker;
}

EpochTicker::~EpochTicker() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
  TickAll();
}

void EpochTicker::TickAll() {
  for (Ticked& node : nodes_) {
    if (absl::Status s = node.epochs->Tick(node.ctx->endpoint()); !s.ok()) {
      // The pool is unreachable: the bound stays, deleted slots wait.
      LOG_EVERY_N(WARNING, 500) << "publishing the epoch bound of compute node "
                                << node.ctx->endpoint().node_id() << ": " << s;
    }
  }
}

}  // namespace strand::engine
