#include "rdma/handler_threads.h"

#include "absl/strings/str_format.h"

namespace strand::rdma {
namespace {
thread_local bool on_handler_thread = false;
}  // namespace

bool OnMessageHandlerThread() { return on_handler_thread; }

absl::Status HandlerThreads::Start(ComputeNode& node, MessageHandler handler,
                                   int threads, NextMessage next,
                                   CountReceived count, Finished finished) {
  if (threads < 1) {
    return absl::InvalidArgumentError("a compute node needs >= 1 handler");
  }
  absl::MutexLock lock(&mu_);
  if (started_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "compute node %d already runs message handlers", node.id()));
  }
  started_ = true;
  handler_ = std::move(handler);
  next_ = std::move(next);
  count_ = std::move(count);
  finished_ = std::move(finished);
  for (int i = 0; i < threads; ++i) {
    auto endpoint = node.NewEndpoint();
    if (!endpoint.ok()) return endpoint.status();
    endpoints_.push_back(*std::move(endpoint));
  }
  for (auto& endpoint : endpoints_) {
    threads_.emplace_back([this, ep = endpoint.get()] {
      on_handler_thread = true;
      Message message;
      while (next_(&message)) {
        count_(*ep);
        handler_(message, *ep);
        if (finished_) finished_(message);
      }
    });
  }
  return absl::OkStatus();
}

void HandlerThreads::Join() {
  absl::MutexLock lock(&mu_);
  for (auto& t : threads_) t.join();
  threads_.clear();
  endpoints_.clear();
  started_ = false;  // a restarted node starts them again
}

}  // namespace strand::rdma
