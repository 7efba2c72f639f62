#include "txn/pool_epochs.h"

#include "absl/strings/str_format.h"
#include "cc/root_words.h"

namespace strand::txn {
namespace {

rdma::GlobalAddress EpochWord() {
  return cc::RootWordAddress(cc::RootWord::kReclaimEpoch);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PoolEpochs>> PoolEpochs::Open(
    rdma::Endpoint& endpoint, int compute_nodes) {
  const rdma::ComputeNodeId self = endpoint.node_id();
  absl::StatusOr<NodeWords> bounds = NodeWords::At(
      cc::kEpochBoundsOffset, cc::kEpochBoundsBytes, compute_nodes);
  if (!bounds.ok() || self >= compute_nodes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("epoch bounds for compute node %d of %d: out of range",
                        self, compute_nodes));
  }
  absl::StatusOr<uint64_t> bound = bounds->Read(endpoint, self);
  if (!bound.ok()) return bound.status();
  return std::unique_ptr<PoolEpochs>(new PoolEpochs(self, *bounds, *bound));
}

absl::StatusOr<uint64_t> PoolEpochs::Advance(rdma::Endpoint& endpoint) {
  return endpoint.FetchAndAdd(EpochWord(), 1);
}

absl::StatusOr<uint64_t> PoolEpochs::ReadEpoch(rdma::Endpoint& endpoint) {
  return endpoint.FetchAndAdd(EpochWord(), 0);
}

absl::Status PoolEpochs::Publish(rdma::Endpoint& endpoint, uint64_t bound) {
  absl::StatusOr<uint64_t> now = bounds_.RaiseTo(
      endpoint, self_, published_.load(std::memory_order_relaxed), bound);
  if (!now.ok()) return now.status();
  uint64_t known = published_.load(std::memory_order_relaxed);
  while (known < *now && !published_.compare_exchange_weak(
                             known, *now, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PoolEpochs::MinBound(rdma::Endpoint& endpoint) {
  return bounds_.Min(endpoint);
}

}  // namespace strand::txn
