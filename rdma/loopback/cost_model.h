#ifndef STRAND_RDMA_LOOPBACK_COST_MODEL_H_
#define STRAND_RDMA_LOOPBACK_COST_MODEL_H_

// Makes a loopback round trip cost what a real one would: the calling thread
// spins (not sleeps: sleeps are far coarser than a microsecond) for
// rtt_ns + payload_bits / bandwidth. A one-way message is delayed by half a
// round trip at the receiver. With rtt_ns = 0 and bandwidth 0 it costs
// nothing and reads no clock.

#include <cstdint>

namespace strand::rdma {

class CostModel {
 public:
  CostModel(int64_t rtt_ns, double bandwidth_gbps)
      : rtt_ns_(rtt_ns), bandwidth_gbps_(bandwidth_gbps) {}

  bool is_free() const { return rtt_ns_ == 0 && bandwidth_gbps_ == 0; }
  int64_t rtt_ns() const { return rtt_ns_; }

  // Nanoseconds one round trip moving `payload_bytes` costs.
  int64_t RoundTripNanos(uint64_t payload_bytes) const;
  // Nanoseconds after sending at which a message may be handled.
  int64_t OneWayNanos() const { return rtt_ns_ / 2; }

  // Spins the calling thread for one round trip carrying `payload_bytes`.
  void PayRoundTrip(uint64_t payload_bytes) const;

  static int64_t NowNanos();
  // Spins until NowNanos() >= deadline_ns.
  static void SpinUntil(int64_t deadline_ns);

 private:
  const int64_t rtt_ns_;
  const double bandwidth_gbps_;
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_LOOPBACK_COST_MODEL_H_
