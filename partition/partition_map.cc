#include "partition/partition_map.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace strand::partition {

absl::StatusOr<PartitionMap> PartitionMap::Create(int64_t partitions,
                                                  int nodes) {
  if (nodes < 1 || partitions < nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "partitioned mode needs at least one partition per compute node: "
        "%d partitions for %d nodes",
        partitions, nodes));
  }
  return PartitionMap(partitions, nodes);
}

int64_t PartitionMap::First(rdma::ComputeNodeId node) const {
  const int64_t base = partitions_ / nodes_, extra = partitions_ % nodes_;
  return 1 + node * base + std::min<int64_t>(node, extra);
}

int64_t PartitionMap::Last(rdma::ComputeNodeId node) const {
  const int64_t extra = partitions_ % nodes_;
  return First(node) + partitions_ / nodes_ - 1 + (node < extra ? 1 : 0);
}

rdma::ComputeNodeId PartitionMap::Owner(int64_t p) const {
  p = std::clamp<int64_t>(p, 1, partitions_);
  const int64_t base = partitions_ / nodes_, extra = partitions_ % nodes_;
  // The first `extra` nodes own base + 1 partitions each.
  const int64_t big = extra * (base + 1);
  if (p <= big) return static_cast<rdma::ComputeNodeId>((p - 1) / (base + 1));
  return static_cast<rdma::ComputeNodeId>(extra + (p - 1 - big) / base);
}

std::string PartitionMap::ToString() const {
  std::vector<std::string> parts;
  for (int n = 0; n < nodes_; ++n) {
    const int64_t first = First(n), last = Last(n);
    parts.push_back(first == last
                        ? absl::StrFormat("node %d: %d", n, first)
                        : absl::StrFormat("node %d: %d-%d", n, first, last));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace strand::partition
