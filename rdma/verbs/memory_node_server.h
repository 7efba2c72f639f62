#ifndef STRAND_RDMA_VERBS_MEMORY_NODE_SERVER_H_
#define STRAND_RDMA_VERBS_MEMORY_NODE_SERVER_H_

// A memory node of the verbs fabric: one region, registered once for remote
// READ, WRITE and atomics, its header written by InitMemoryNodeRegion, and a
// listener that accepts compute nodes' queue pairs and tells them where the
// region is (wire.h). After an accept the server does nothing per operation:
// all traffic is one-sided. Its control plane fences a failed compute node
// when asked through the region's header (fence_control.h). strand_memnode
// runs one; tests run several in the same process.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/fence_control.h"
#include "rdma/verbs/listener.h"

namespace strand::rdma::verbs {

class MemoryNodeServer {
 public:
  // Maps and registers `region_bytes`, then listens on `address`:`port`
  // (0 = any free port).
  static absl::StatusOr<std::unique_ptr<MemoryNodeServer>> Start(
      std::shared_ptr<Device> device, const std::string& address, uint16_t port,
      uint64_t region_bytes, uint64_t chunk_bytes);
  ~MemoryNodeServer();

  uint16_t port() const { return listener_->port(); }
  uint64_t region_bytes() const { return region_bytes_; }

 private:
  MemoryNodeServer(std::shared_ptr<Device> device, void* base,
                   uint64_t region_bytes)
      : device_(std::move(device)), base_(base), region_bytes_(region_bytes) {}

  const std::shared_ptr<Device> device_;
  void* const base_;
  const uint64_t region_bytes_;
  MemoryRegion region_;
  ibv_cq* cq_ = nullptr;  // accepted queue pairs post nothing; it stays empty
  std::unique_ptr<Listener> listener_;  // destroyed early (owns the QPs)
  std::unique_ptr<FenceControlPlane> fence_control_;  // uses the listener
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_MEMORY_NODE_SERVER_H_
