#include "base/failure_point.h"

#include <atomic>

namespace strand {
namespace {

std::atomic<FailurePointHook> failure_point_hook{nullptr};

}  // namespace

const char* FailurePointName(FailurePoint point) {
  switch (point) {
    case FailurePoint::kSplitLink:
      return "split_link";
    case FailurePoint::kNewRootLink:
      return "new_root_link";
    case FailurePoint::kNewPageLink:
      return "new_page_link";
    case FailurePoint::kCommitApplied:
      return "commit_applied";
    case FailurePoint::kCommitPartlyWrittenThrough:
      return "commit_partly_written_through";
    case FailurePoint::kCommitWrittenThrough:
      return "commit_written_through";
    case FailurePoint::kLogFlushed:
      return "log_flushed";
    case FailurePoint::kInvalidationLatched:
      return "invalidation_latched";
    case FailurePoint::kInvalidationServed:
      return "invalidation_served";
    case FailurePoint::kEvictionStaged:
      return "eviction_staged";
  }
  return "unknown";
}

void SetFailurePointHookForTesting(FailurePointHook hook) {
  failure_point_hook.store(hook, std::memory_order_release);
}

void ReachFailurePoint(uint32_t node, FailurePoint point) {
  const FailurePointHook hook =
      failure_point_hook.load(std::memory_order_acquire);
  if (hook != nullptr) hook(node, point);
}

}  // namespace strand
