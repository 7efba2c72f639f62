#include "rdma/verbs/device.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace strand::rdma::verbs {

void MemoryRegionDeleter::operator()(ibv_mr* mr) const {
  if (mr != nullptr && ibv_dereg_mr(mr) != 0) {
    LOG(ERROR) << "ibv_dereg_mr failed: " << ErrnoText(errno);
  }
}

std::string ErrnoText(int error) {
  return absl::StrFormat("%s (errno %d)", std::strerror(error), error);
}

absl::StatusOr<std::shared_ptr<Device>> Device::ForLocalAddress(
    const std::string& address) {
  int devices = 0;
  ibv_device** list = ibv_get_device_list(&devices);
  if (list != nullptr) ibv_free_device_list(list);
  if (devices == 0) {
    return absl::FailedPreconditionError(
        "--fabric=verbs: this machine has no RDMA device (ibv_get_device_list "
        "found none); use an RDMA NIC or Soft-RoCE (`rdma link add rxe0 type "
        "rxe netdev <netdev>`), or --fabric=loopback");
  }
  rdma_addrinfo hints{};
  hints.ai_flags = RAI_PASSIVE;
  hints.ai_port_space = RDMA_PS_TCP;
  rdma_addrinfo* info = nullptr;
  if (rdma_getaddrinfo(address.c_str(), nullptr, &hints, &info) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot resolve RDMA address \"%s\": %s", address, ErrnoText(errno)));
  }
  rdma_cm_id* anchor = nullptr;
  int rc = rdma_create_id(nullptr, &anchor, nullptr, RDMA_PS_TCP);
  if (rc == 0) rc = rdma_bind_addr(anchor, info->ai_src_addr);
  const int bind_errno = errno;
  rdma_freeaddrinfo(info);
  if (rc != 0 || anchor->verbs == nullptr) {
    if (anchor != nullptr) rdma_destroy_id(anchor);
    return absl::FailedPreconditionError(absl::StrFormat(
        "address %s is not on an RDMA device of this machine (%s): check the "
        "node's address in --cluster and `rdma link`",
        address, rc != 0 ? ErrnoText(bind_errno) : "no device bound"));
  }
  ibv_device_attr attr{};
  if (ibv_query_device(anchor->verbs, &attr) != 0) {
    const int e = errno;
    rdma_destroy_id(anchor);
    return absl::UnavailableError(
        absl::StrFormat("ibv_query_device on the device of %s failed: %s",
                        address, ErrnoText(e)));
  }
  ibv_pd* pd = ibv_alloc_pd(anchor->verbs);
  if (pd == nullptr) {
    const int e = errno;
    rdma_destroy_id(anchor);
    return absl::UnavailableError(absl::StrFormat(
        "ibv_alloc_pd on the device of %s failed: %s", address, ErrnoText(e)));
  }
  auto device = std::shared_ptr<Device>(new Device(anchor, pd, attr));
  VLOG(1) << "verbs: " << address << " is on device " << device->name();
  return device;
}

Device::~Device() {
  if (ibv_dealloc_pd(pd_) != 0) {
    LOG(ERROR) << "ibv_dealloc_pd failed (a queue pair or region outlived "
                  "the device): "
               << ErrnoText(errno);
  }
  rdma_destroy_id(anchor_);
}

std::string Device::name() const {
  return ibv_get_device_name(context()->device);
}

uint8_t Device::rd_atomic_depth() const {
  // 16 covers a batch's READs/atomics in flight; more only costs NIC state.
  return static_cast<uint8_t>(std::max(
      1, std::min({attr_.max_qp_rd_atom, attr_.max_qp_init_rd_atom, 16})));
}

absl::StatusOr<MemoryRegion> Device::Register(void* base, uint64_t bytes,
                                              int access) const {
  ibv_mr* mr = ibv_reg_mr(pd_, base, bytes, access);
  if (mr == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cannot register %d bytes with %s: %s (raise `ulimit -l`?)", bytes,
        name(), ErrnoText(errno)));
  }
  return MemoryRegion(mr);
}

}  // namespace strand::rdma::verbs
