#include "txn/node_words.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "rdma/batch.h"

namespace strand::txn {

absl::StatusOr<NodeWords> NodeWords::At(uint64_t offset, uint64_t bytes,
                                        int compute_nodes) {
  if (compute_nodes < 1 || 8 * uint64_t(compute_nodes) > bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d compute nodes: a word each does not fit in %d "
                        "bytes at offset %d of memory node 0",
                        compute_nodes, bytes, offset));
  }
  return NodeWords(offset, compute_nodes);
}

absl::StatusOr<uint64_t> NodeWords::Read(rdma::Endpoint& endpoint,
                                         rdma::ComputeNodeId node) const {
  return endpoint.FetchAndAdd(word(node), 0);
}

absl::Status NodeWords::ReadAll(rdma::Endpoint& endpoint,
                                absl::Span<uint64_t> out) const {
  if (out.size() != static_cast<size_t>(compute_nodes_)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReadAll into %d words; there are %d", out.size(), compute_nodes_));
  }
  rdma::Batch batch;
  for (int node = 0; node < compute_nodes_; ++node) {
    batch.FetchAndAdd(word(static_cast<rdma::ComputeNodeId>(node)), 0,
                      &out[node]);
  }
  return endpoint.Execute(batch);
}

absl::StatusOr<uint64_t> NodeWords::Min(rdma::Endpoint& endpoint) const {
  std::vector<uint64_t> words(compute_nodes_);
  if (absl::Status s = ReadAll(endpoint, absl::MakeSpan(words)); !s.ok()) {
    return s;
  }
  return *std::min_element(words.begin(), words.end());
}

absl::StatusOr<uint64_t> NodeWords::RaiseTo(rdma::Endpoint& endpoint,
                                            rdma::ComputeNodeId node,
                                            uint64_t expected,
                                            uint64_t value) const {
  // A max, not a store: two threads of a node may raise it at once, and a
  // smaller value computed earlier must not overwrite a larger one.
  while (value > expected) {
    absl::StatusOr<uint64_t> old =
        endpoint.CompareAndSwap(word(node), expected, value);
    if (!old.ok()) return old.status();
    if (*old == expected) return value;
    expected = *old;
  }
  return expected;
}

absl::Status NodeWords::Set(rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
                            uint64_t value) const {
  absl::StatusOr<uint64_t> seen = Read(endpoint, node);
  while (seen.ok() && *seen != value) {
    absl::StatusOr<uint64_t> old =
        endpoint.CompareAndSwap(word(node), *seen, value);
    if (!old.ok()) return old.status();
    if (*old == *seen) return absl::OkStatus();
    seen = *old;
  }
  return seen.status();
}

}  // namespace strand::txn
