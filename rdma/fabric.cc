#include "rdma/fabric.h"

namespace strand::rdma {

absl::Status Endpoint::Read(GlobalAddress src, void* dst, uint32_t length) {
  Batch b;
  b.Read(src, dst, length);
  return Execute(b);
}

absl::Status Endpoint::Write(GlobalAddress dst, const void* src,
                             uint32_t length) {
  Batch b;
  b.Write(dst, src, length);
  return Execute(b);
}

absl::StatusOr<uint64_t> Endpoint::CompareAndSwap(GlobalAddress addr,
                                                  uint64_t expected,
                                                  uint64_t desired) {
  uint64_t old = 0;
  Batch b;
  b.CompareAndSwap(addr, expected, desired, &old);
  if (absl::Status s = Execute(b); !s.ok()) return s;
  return old;
}

absl::StatusOr<uint64_t> Endpoint::FetchAndAdd(GlobalAddress addr,
                                               uint64_t delta) {
  uint64_t old = 0;
  Batch b;
  b.FetchAndAdd(addr, delta, &old);
  if (absl::Status s = Execute(b); !s.ok()) return s;
  return old;
}

void Endpoint::Multicast(absl::Span<const ComputeNodeId> dsts,
                         const Message& message,
                         absl::Span<absl::Status> results) {
  for (size_t i = 0; i < dsts.size(); ++i) results[i] = Send(dsts[i], message);
}

FabricCounters Fabric::Counters() {
  FabricCounters sum;
  for (ComputeNodeId id : local_compute_nodes()) {
    auto node = compute_node(id);
    if (node.ok()) sum += (*node)->Counters();
  }
  return sum;
}

}  // namespace strand::rdma
