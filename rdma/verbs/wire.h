#ifndef STRAND_RDMA_VERBS_WIRE_H_
#define STRAND_RDMA_VERBS_WIRE_H_

// What connecting nodes tell each other in rdma_cm's private data (at most
// 56 bytes on a request, 196 on an accept over RoCE). Both ends run the same
// build; the magic catches a stray client on the port.

#include <cstdint>

namespace strand::rdma::verbs {

inline constexpr uint32_t kWireMagic = 0x53544e44;  // "STND"

// Sent by the connecting side.
struct ConnectRequest {
  enum Kind : uint16_t {
    kEndpoint = 1,   // an endpoint's queue pair (data path)
    kBootstrap = 2,  // a compute node arriving at the start-up barrier
  };
  uint32_t magic = kWireMagic;
  uint16_t kind = kEndpoint;
  uint16_t compute_node = 0;  // the connecting compute node
  // Which life of that node (VerbsFabric::incarnation): a fenced node's
  // later incarnations are admitted, its earlier ones never again.
  uint64_t incarnation = 0;
};

// A memory node's accept: where its region is and how to reach it.
struct MemoryNodeReply {
  uint32_t magic = kWireMagic;
  uint32_t rkey = 0;
  uint64_t region_address = 0;
  uint64_t region_bytes = 0;
};

static_assert(sizeof(ConnectRequest) <= 56);
static_assert(sizeof(MemoryNodeReply) <= 196);

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_WIRE_H_
