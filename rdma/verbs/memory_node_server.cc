#include "rdma/verbs/memory_node_server.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "rdma/memory_node_layout.h"
#include "rdma/verbs/wire.h"

namespace strand::rdma::verbs {

absl::StatusOr<std::unique_ptr<MemoryNodeServer>> MemoryNodeServer::Start(
    std::shared_ptr<Device> device, const std::string& address, uint16_t port,
    uint64_t region_bytes, uint64_t chunk_bytes) {
  void* base = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot map a %d MiB memory node: %s; lower --pool_mb",
                        region_bytes >> 20, ErrnoText(errno)));
  }
  std::unique_ptr<MemoryNodeServer> server(
      new MemoryNodeServer(std::move(device), base, region_bytes));
  InitMemoryNodeRegion(base, region_bytes, chunk_bytes);
  auto region = server->device_->Register(
      base, region_bytes,
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
          IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
  if (!region.ok()) return region.status();
  server->region_ = *std::move(region);
  server->cq_ =
      ibv_create_cq(server->device_->context(), 1, nullptr, nullptr, 0);
  if (server->cq_ == nullptr) {
    return absl::UnavailableError(absl::StrFormat(
        "ibv_create_cq for a memory node failed: %s", ErrnoText(errno)));
  }
  MemoryNodeReply reply;
  reply.rkey = server->region_->rkey;
  reply.region_address = reinterpret_cast<uint64_t>(base);
  reply.region_bytes = region_bytes;
  const std::string reply_bytes(reinterpret_cast<const char*>(&reply),
                                sizeof(reply));
  ibv_cq* cq = server->cq_;
  auto listener = Listener::Start(
      server->device_, address, port,
      [cq, reply_bytes](
          absl::string_view request) -> absl::StatusOr<Listener::Accept> {
        ConnectRequest r;
        if (request.size() < sizeof(r)) {
          return absl::InvalidArgumentError("connect request too short");
        }
        std::memcpy(&r, request.data(), sizeof(r));
        if (r.magic != kWireMagic) {
          return absl::InvalidArgumentError("not a strand compute node");
        }
        return Listener::Accept{cq, nullptr, reply_bytes, r.compute_node,
                                r.incarnation};
      });
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  server->fence_control_ =
      std::make_unique<FenceControlPlane>(base, server->listener_.get());
  return server;
}

MemoryNodeServer::~MemoryNodeServer() {
  fence_control_.reset();
  listener_.reset();
  if (cq_ != nullptr && ibv_destroy_cq(cq_) != 0) {
    LOG(ERROR) << "ibv_destroy_cq: " << ErrnoText(errno);
  }
  region_.reset();
  munmap(base_, region_bytes_);
}

}  // namespace strand::rdma::verbs
