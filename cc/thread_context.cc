#include "cc/thread_context.h"

#include <atomic>

#include "glog/logging.h"

namespace strand::cc {

ThreadContext::~ThreadContext() {
  for (LocalState& local : locals_) {
    if (local.state != nullptr) local.destroy(local.state);
  }
}

size_t ThreadContext::NewSlot() {
  static std::atomic<size_t> next{0};
  const size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  CHECK_LT(slot, kMaxLocals) << "more ThreadContext::Local types than "
                                "ThreadContext::kMaxLocals: raise it";
  return slot;
}

}  // namespace strand::cc
