#include "base/failure_point.h"

#include <atomic>

namespace strand {
namespace failure_point_internal {

std::atomic<FailurePointHook> hook{nullptr};

}  // namespace failure_point_internal

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
    case FailurePoint::kReclaimFenced:
      return "reclaim_fenced";
    case FailurePoint::kReclaimStealable:
      return "reclaim_stealable";
  }
  return "unknown";
}

void SetFailurePointHookForTesting(FailurePointHook hook) {
  failure_point_internal::hook.store(hook, std::memory_order_release);
}

}  // namespace strand
