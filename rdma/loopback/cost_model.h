#ifndef STRAND_RDMA_LOOPBACK_COST_MODEL_H_
#define STRAND_RDMA_LOOPBACK_COST_MODEL_H_

// Makes the loopback fabric cost what a real one would (docs/method.md).
//
// Charges, to the calling thread:
//   round trip to a memory node   rtt_ns + payload_bits / bandwidth_gbps,
//                                 plus the memory node's NIC queue when the
//                                 NIC model is on (below)
//   round trip to a peer          rtt_ns + payload_bits / bandwidth_gbps
//   one-way message               rtt_ns / 2
// A charge is paid by spinning (sleeps are far coarser than a microsecond),
// unless a ChargeScope is open on the thread: then it accrues, and the
// outermost scope pays the total when it closes. The loopback opens one
// around every inline handler (loopback_compute_node.h), so a sender pays a
// whole exchange once, and a multicast pays its slowest branch, not the sum.
//
// NIC model (off unless nic_op_ns or nic_gbps is set): each memory node's
// NIC serves its ops one after another, each taking nic_op_ns plus its
// payload at nic_gbps; a round trip waits for the ops queued ahead of it.
//
// Every charge also goes to the thread's ledger (base/thread_ledger.h):
// modeled nanoseconds and the wall time spent spinning for them. With every
// setting 0 the model is free: it reads no clock and charges nothing.

#include <atomic>
#include <cstdint>
#include <memory>

namespace strand::rdma::loopback {

struct CostModelOptions {
  int64_t rtt_ns = 0;
  double bandwidth_gbps = 0;  // per thread's link; 0 = unlimited
  int64_t nic_op_ns = 0;      // NIC model: service time per op
  double nic_gbps = 0;        // NIC model: bandwidth of a memory node's port
};

class CostModel {
 public:
  CostModel(const CostModelOptions& options, int memory_nodes);

  bool is_free() const { return free_; }
  bool nic_model() const { return nic_model_; }
  int64_t rtt_ns() const { return options_.rtt_ns; }
  int64_t OneWayNanos() const { return options_.rtt_ns / 2; }

  // Nanoseconds one round trip moving `payload_bytes` costs without
  // queueing.
  int64_t RoundTripNanos(uint64_t payload_bytes) const;

  // Charges a round trip of `ops` ops moving `payload_bytes` to memory node
  // `memory_node` (its NIC queue included).
  void PayMemoryRoundTrip(int memory_node, int ops,
                          uint64_t payload_bytes) const;
  // Charges a round trip to another compute node (WriteToPeer).
  void PayPeerRoundTrip(uint64_t payload_bytes) const;
  // Charges a message's one-way delay.
  void PayOneWay() const;
  // Charges moving `payload_bytes` at the thread's link bandwidth, no
  // latency (a write posted ahead of a message).
  void PayTransfer(uint64_t payload_bytes) const;
  // Charges `ns`: accrues to the innermost open scope, else spins.
  static void Pay(int64_t ns);

  static int64_t NowNanos();
  // Spins until NowNanos() >= deadline_ns.
  static void SpinUntil(int64_t deadline_ns);

 private:
  // The NIC's queue of memory node `node`: when a request arriving at
  // `arrive_ns` that needs `service_ns` completes.
  int64_t NicComplete(int node, int64_t arrive_ns, int64_t service_ns) const;

  const CostModelOptions options_;
  const bool free_;
  const bool nic_model_;
  const int memory_nodes_;
  // Per memory node: the time its NIC is busy until.
  const std::unique_ptr<std::atomic<int64_t>[]> nic_busy_until_;
};

// While open on a thread, cost-model charges on that thread accrue here
// instead of being spun. Closing pays what accrued to the enclosing scope,
// or spins for it if this was the outermost. Nest strictly (RAII).
class ChargeScope {
 public:
  ChargeScope();
  ~ChargeScope();
  ChargeScope(const ChargeScope&) = delete;
  ChargeScope& operator=(const ChargeScope&) = delete;

  // Takes what accrued so far, so closing pays nothing for it (a multicast
  // branch: the caller pays the slowest branch itself).
  int64_t Take();
  // True while some scope is open on this thread.
  static bool Open();
  // What accrued so far, and the enclosing scope (null: outermost).
  int64_t Peek() const { return accrued_; }
  ChargeScope* outer() const { return outer_; }

 private:
  friend class CostModel;
  int64_t accrued_ = 0;
  ChargeScope* const outer_;
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_COST_MODEL_H_
