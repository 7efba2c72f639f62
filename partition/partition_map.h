#ifndef STRAND_PARTITION_PARTITION_MAP_H_
#define STRAND_PARTITION_PARTITION_MAP_H_

// Which compute node owns which partition in partitioned mode. Partitions
// are numbered 1..P (TPC-C: the warehouse ids); node n owns one contiguous
// range, the ranges as even as P allows (the first P mod N nodes own one
// more). Every node builds the same map from (P, N), so no exchange is
// needed to agree on it.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "rdma/global_address.h"

namespace strand::partition {

class PartitionMap {
 public:
  // InvalidArgument unless 1 <= nodes <= partitions.
  static absl::StatusOr<PartitionMap> Create(int64_t partitions, int nodes);

  int64_t partitions() const { return partitions_; }
  int nodes() const { return nodes_; }
  // The owner of partition `p` (1 <= p <= partitions()); out-of-range
  // partitions map to the nearest end.
  rdma::ComputeNodeId Owner(int64_t p) const;
  // The first and last partition of `node`.
  int64_t First(rdma::ComputeNodeId node) const;
  int64_t Last(rdma::ComputeNodeId node) const;
  // "node 0: 1-2, node 1: 3-4".
  std::string ToString() const;

 private:
  PartitionMap(int64_t partitions, int nodes)
      : partitions_(partitions), nodes_(nodes) {}

  int64_t partitions_;
  int nodes_;
};

}  // namespace strand::partition

#endif  // STRAND_PARTITION_PARTITION_MAP_H_
