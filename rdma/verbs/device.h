#ifndef STRAND_RDMA_VERBS_DEVICE_H_
#define STRAND_RDMA_VERBS_DEVICE_H_

// The RDMA device a process uses, found from an address of this machine
// (the node's address in the cluster file): rdma_cm maps the address to a
// device and port, so neither is ever named in code or flags. One protection
// domain per process holds every queue pair and memory region, so any region
// can be used on any queue pair.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace strand::rdma::verbs {

struct MemoryRegionDeleter {
  void operator()(ibv_mr* mr) const;
};
using MemoryRegion = std::unique_ptr<ibv_mr, MemoryRegionDeleter>;

class Device {
 public:
  // FailedPrecondition when the machine has no RDMA device at all, or when
  // `address` is not an address of one.
  static absl::StatusOr<std::shared_ptr<Device>> ForLocalAddress(
      const std::string& address);
  ~Device();

  ibv_context* context() const { return anchor_->verbs; }
  ibv_pd* pd() const { return pd_; }
  const ibv_device_attr& attr() const { return attr_; }
  std::string name() const;
  // Outstanding READs and atomics a queue pair may have in flight, on either
  // side (rdma_cm's initiator_depth / responder_resources).
  uint8_t rd_atomic_depth() const;

  // ibv_reg_mr, with a Status naming the size and the errno on failure
  // (usually RLIMIT_MEMLOCK: `ulimit -l`).
  absl::StatusOr<MemoryRegion> Register(void* base, uint64_t bytes,
                                        int access) const;

 private:
  Device(rdma_cm_id* anchor, ibv_pd* pd, const ibv_device_attr& attr)
      : anchor_(anchor), pd_(pd), attr_(attr) {}

  // Bound to the node's address and kept for the device's lifetime: it holds
  // librdmacm's reference on the device context every connection shares.
  rdma_cm_id* const anchor_;
  ibv_pd* const pd_;
  const ibv_device_attr attr_;
};

// errno as text, for Status messages.
std::string ErrnoText(int error);

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_DEVICE_H_
