#ifndef STRAND_RDMA_VERBS_BOOTSTRAP_H_
#define STRAND_RDMA_VERBS_BOOTSTRAP_H_

// Start-up of a verbs deployment, over rdma_cm alone (no side channel):
//  - a compute node connects to every memory node, retrying while the node
//    is not up yet, and reads the node's header (region and chunk sizes);
//  - compute nodes meet at a barrier: each connects to every remote peer
//    (arrive) and waits until every peer has connected to it (wait). A node
//    connects only once it is ready, so when the wait ends, all are ready.
// Every wait is bounded; the error names the node that did not answer.

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "rdma/global_address.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/queue_pair.h"

namespace strand::rdma::verbs {

// What a compute node knows of a memory node after start-up.
struct RemoteMemoryNode {
  ClusterNode node;
  uint64_t address = 0;  // of the region in the memory node's process
  uint32_t rkey = 0;
  uint64_t bytes = 0;        // region size, from the header
  uint64_t chunk_bytes = 0;  // from the header
};

// Connects as incarnation `incarnation` of compute node `self`.
absl::StatusOr<RemoteMemoryNode> ProbeMemoryNode(const Device& device,
                                                 const ClusterNode& node,
                                                 ComputeNodeId self,
                                                 uint64_t incarnation,
                                                 absl::Time deadline);

// The arrive half of the barrier: a connection from compute node `self` to
// `peer`, kept open until the fabric goes away.
absl::StatusOr<std::unique_ptr<QueuePair>> ArriveAtPeer(
    const Device& device, ibv_cq* cq, ComputeNodeId self, uint64_t incarnation,
    const ClusterNode& peer, absl::Time deadline);

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_BOOTSTRAP_H_
