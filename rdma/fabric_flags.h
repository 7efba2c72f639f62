#ifndef STRAND_RDMA_FABRIC_FLAGS_H_
#define STRAND_RDMA_FABRIC_FLAGS_H_

// The fabric flags every strand binary shares (README.md, "Flags every
// binary shares"): --fabric --memory_nodes --compute_nodes --pool_mb
// --chunk_kb --populate_memory --rtt_ns --bandwidth_gbps --nic_op_ns
// --nic_gbps --message_delivery --cluster --node_id.
// Link strand_rdma_flags into a binary to get them.

#include "absl/status/statusor.h"
#include "rdma/fabric_options.h"

namespace strand::rdma {

// FabricOptions from the flags, validated, for a compute process (any
// binary that opens a fabric): a flag the chosen fabric ignores is an error
// (--cluster without --fabric=verbs, --rtt_ns with it). strand_memnode
// defines the four flags a memory node takes itself.
absl::StatusOr<FabricOptions> FabricOptionsFromFlags();

}  // namespace strand::rdma

#endif  // STRAND_RDMA_FABRIC_FLAGS_H_
