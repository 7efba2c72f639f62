#include "txn/pool_epochs.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "cc/root_words.h"
#include "rdma/batch.h"
#include "rdma/fabric_options.h"

namespace strand::txn {
namespace {

static_assert(8 * rdma::FabricOptions::kMaxComputeNodes <=
                  cc::kEpochBoundsBytes,
              "a bound word for every compute node");

rdma::GlobalAddress EpochWord() {
  return cc::RootWordAddress(cc::RootWord::kReclaimEpoch);
}

rdma::GlobalAddress BoundWord(rdma::ComputeNodeId node) {
  return rdma::GlobalAddress(0, cc::kEpochBoundsOffset + 8 * uint64_t{node});
}

}  // namespace

absl::StatusOr<std::unique_ptr<PoolEpochs>> PoolEpochs::Open(
    rdma::Endpoint& endpoint, int compute_nodes) {
  const rdma::ComputeNodeId self = endpoint.node_id();
  if (compute_nodes < 1 ||
      compute_nodes > rdma::FabricOptions::kMaxComputeNodes ||
      self >= compute_nodes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("epoch bounds for compute node %d of %d: out of range",
                        self, compute_nodes));
  }
  absl::StatusOr<uint64_t> bound = endpoint.FetchAndAdd(BoundWord(self), 0);
  if (!bound.ok()) return bound.status();
  return std::unique_ptr<PoolEpochs>(
      new PoolEpochs(self, compute_nodes, *bound));
}

absl::StatusOr<uint64_t> PoolEpochs::Advance(rdma::Endpoint& endpoint) {
  return endpoint.FetchAndAdd(EpochWord(), 1);
}

absl::StatusOr<uint64_t> PoolEpochs::ReadEpoch(rdma::Endpoint& endpoint) {
  return endpoint.FetchAndAdd(EpochWord(), 0);
}

absl::Status PoolEpochs::Publish(rdma::Endpoint& endpoint, uint64_t bound) {
  uint64_t expected = published_.load(std::memory_order_relaxed);
  // A max, not a store: two threads of this node may publish at once (a
  // sealing transaction and the engine's ticker), and a smaller bound
  // computed earlier must not overwrite a larger one.
  while (bound > expected) {
    absl::StatusOr<uint64_t> old =
        endpoint.CompareAndSwap(BoundWord(self_), expected, bound);
    if (!old.ok()) return old.status();
    if (*old == expected) {
      expected = bound;
      break;
    }
    expected = *old;
  }
  uint64_t known = published_.load(std::memory_order_relaxed);
  while (known < expected && !published_.compare_exchange_weak(
                                 known, expected, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PoolEpochs::MinBound(rdma::Endpoint& endpoint) {
  std::vector<uint64_t> bounds(compute_nodes_);
  rdma::Batch batch;
  for (int node = 0; node < compute_nodes_; ++node) {
    batch.FetchAndAdd(BoundWord(static_cast<rdma::ComputeNodeId>(node)), 0,
                      &bounds[node]);
  }
  if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  return *std::min_element(bounds.begin(), bounds.end());
}

}  // namespace strand::txn
