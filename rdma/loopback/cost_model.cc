#include "rdma/loopback/cost_model.h"

#include <chrono>

#include "absl/base/internal/spinlock_wait.h"

namespace strand::rdma {

int64_t CostModel::RoundTripNanos(uint64_t payload_bytes) const {
  int64_t ns = rtt_ns_;
  if (bandwidth_gbps_ > 0) {
    ns += static_cast<int64_t>(static_cast<double>(payload_bytes) * 8.0 /
                               bandwidth_gbps_);
  }
  return ns;
}

void CostModel::PayRoundTrip(uint64_t payload_bytes) const {
  if (is_free()) return;
  SpinUntil(NowNanos() + RoundTripNanos(payload_bytes));
}

int64_t CostModel::NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void CostModel::SpinUntil(int64_t deadline_ns) {
  while (NowNanos() < deadline_ns) {
    __builtin_ia32_pause();
  }
}

}  // namespace strand::rdma
