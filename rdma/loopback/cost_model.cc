#include "rdma/loopback/cost_model.h"

#include <algorithm>
#include <chrono>

#include "base/thread_ledger.h"

namespace strand::rdma::loopback {
namespace {

thread_local ChargeScope* innermost_scope = nullptr;

int64_t TransferNanos(uint64_t bytes, double gbps) {
  return gbps > 0
             ? static_cast<int64_t>(static_cast<double>(bytes) * 8.0 / gbps)
             : 0;
}

// What the open scopes of this thread have accrued: the thread's position
// in modeled time is NowNanos() plus this.
int64_t AccruedOnThisThread() {
  int64_t ns = 0;
  for (ChargeScope* s = innermost_scope; s != nullptr;) {
    ns += s->Peek();
    s = s->outer();
  }
  return ns;
}

}  // namespace

CostModel::CostModel(const CostModelOptions& options, int memory_nodes)
    : options_(options),
      free_(options.rtt_ns == 0 && options.bandwidth_gbps == 0 &&
            options.nic_op_ns == 0 && options.nic_gbps == 0),
      nic_model_(options.nic_op_ns > 0 || options.nic_gbps > 0),
      memory_nodes_(memory_nodes),
      nic_busy_until_(new std::atomic<int64_t>[std::max(memory_nodes, 1)]) {
  for (int i = 0; i < std::max(memory_nodes, 1); ++i) nic_busy_until_[i] = 0;
}

int64_t CostModel::RoundTripNanos(uint64_t payload_bytes) const {
  return options_.rtt_ns +
         TransferNanos(payload_bytes, options_.bandwidth_gbps);
}

int64_t CostModel::NicComplete(int node, int64_t arrive_ns,
                               int64_t service_ns) const {
  std::atomic<int64_t>& busy = nic_busy_until_[node % memory_nodes_];
  int64_t until = busy.load(std::memory_order_relaxed);
  int64_t done;
  do {
    done = std::max(until, arrive_ns) + service_ns;
  } while (!busy.compare_exchange_weak(until, done, std::memory_order_relaxed));
  return done;
}

void CostModel::PayMemoryRoundTrip(int memory_node, int ops,
                                   uint64_t payload_bytes) const {
  if (free_) return;
  int64_t ns = RoundTripNanos(payload_bytes);
  if (nic_model_) {
    const int64_t issue = NowNanos() + AccruedOnThisThread();
    const int64_t service = ops * options_.nic_op_ns +
                            TransferNanos(payload_bytes, options_.nic_gbps);
    const int64_t served =
        NicComplete(memory_node, issue + options_.rtt_ns / 2, service);
    // The request's own service was already counted in `ns` only through
    // the thread's link bandwidth; the NIC adds its queue and service.
    ns += served - (issue + options_.rtt_ns / 2);
  }
  Pay(ns);
}

void CostModel::PayPeerRoundTrip(uint64_t payload_bytes) const {
  if (free_) return;
  Pay(RoundTripNanos(payload_bytes));
}

void CostModel::PayTransfer(uint64_t payload_bytes) const {
  if (free_) return;
  Pay(TransferNanos(payload_bytes, options_.bandwidth_gbps));
}

void CostModel::PayOneWay() const {
  if (free_) return;
  Pay(OneWayNanos());
}

void CostModel::Pay(int64_t ns) {
  if (ns <= 0) return;
  if (innermost_scope != nullptr) {
    innermost_scope->accrued_ += ns;
    return;
  }
  ThreadLedger& ledger = ThreadLedger::Mine();
  ledger.ChargeFabricModel(ns);
  const int64_t start = NowNanos();
  SpinUntil(start + ns);
  ledger.ChargeFabricSpin(NowNanos() - start);
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

ChargeScope::ChargeScope() : outer_(innermost_scope) { innermost_scope = this; }

ChargeScope::~ChargeScope() {
  innermost_scope = outer_;
  CostModel::Pay(accrued_);
}

int64_t ChargeScope::Take() {
  const int64_t ns = accrued_;
  accrued_ = 0;
  return ns;
}

bool ChargeScope::Open() { return innermost_scope != nullptr; }

}  // namespace strand::rdma::loopback
