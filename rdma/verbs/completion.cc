#include "rdma/verbs/completion.h"

#include <sched.h>

#include "absl/strings/str_format.h"
#include "rdma/verbs/device.h"

namespace strand::rdma::verbs {

absl::Status AwaitCompletion(ibv_cq* cq, uint64_t wr_id, absl::Time deadline,
                             const std::function<bool()>& give_up) {
  // Spinning briefly catches a fast NIC's completion with no syscall; after
  // that, yielding lets a software device (rxe runs in the kernel) and the
  // other threads on a small machine make progress.
  constexpr int kSpinsBeforeYield = 256;
  for (int empty = 0;;) {
    ibv_wc wc[8];
    const int n = ibv_poll_cq(cq, 8, wc);
    if (n < 0) {
      return absl::UnavailableError(
          absl::StrFormat("ibv_poll_cq failed: %s", ErrnoText(-n)));
    }
    for (int i = 0; i < n; ++i) {
      // Another id is an earlier chain's, whose wait gave up (a fenced
      // peer, a timeout) and whose queue pair was dropped: its flushed
      // requests complete here late, and say nothing of this chain.
      if (wc[i].wr_id != wr_id) continue;
      if (wc[i].status == IBV_WC_SUCCESS) return absl::OkStatus();
      return absl::UnavailableError(absl::StrFormat(
          "work request failed: %s (vendor error 0x%x); the queue pair is in "
          "the error state",
          ibv_wc_status_str(wc[i].status), wc[i].vendor_err));
    }
    if (n > 0) continue;
    if (++empty < kSpinsBeforeYield) continue;
    if (give_up && give_up()) {
      return absl::UnavailableError(
          "no completion: the peer was fenced (declared failed) meanwhile");
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("no completion within the deadline");
    }
    sched_yield();
  }
}

}  // namespace strand::rdma::verbs
