#ifndef STRAND_ENGINE_PARALLEL_H_
#define STRAND_ENGINE_PARALLEL_H_

// Runs independent jobs on a few threads, each thread with a thread
// context of its own (recovery's load and replay). Internal to engine/.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "cc/gcl_manager.h"

namespace strand::engine {

// Calls fn(job, context) for every job of `jobs`, taken in order by up to
// `threads` threads; the first error stops every thread before its next
// job and is returned.
template <typename Job, typename Fn>
absl::Status RunParallel(cc::GclManager& manager, int threads,
                         std::vector<Job>& jobs, Fn fn) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  absl::Status failure;
  auto failed = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return !failure.ok();
  };
  auto fail = [&](absl::Status s) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.ok()) failure = std::move(s);
  };
  auto work = [&] {
    auto ctx = manager.NewThreadContext();
    if (!ctx.ok()) return fail(ctx.status());
    for (;;) {
      const size_t i = next.fetch_add(1);
      if (i >= jobs.size() || failed()) return;
      if (absl::Status s = fn(jobs[i], **ctx); !s.ok()) return fail(s);
    }
  };
  const size_t n =
      std::min(jobs.size(), static_cast<size_t>(std::max(1, threads)));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < n; ++t) workers.emplace_back(work);
  if (n > 0) work();
  for (std::thread& t : workers) t.join();
  return failure;
}

}  // namespace strand::engine

#endif  // STRAND_ENGINE_PARALLEL_H_
