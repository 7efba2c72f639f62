#ifndef STRAND_TXN_NODE_WORDS_H_
#define STRAND_TXN_NODE_WORDS_H_

// One 8-byte word per compute node, by node id, in memory node 0's root
// area (cc/root_words.h names where each set lives), so every process
// finds them without asking anyone. Each node writes only its own word;
// every node reads them all. Every access is an RDMA atomic (a read is
// FAA 0), executed by the memory node's NIC, so a word is never seen torn
// whichever process wrote it.
//
// Cost in round trips: Read 1, ReadAll 1 (one FAA per node, one batch),
// Set 1 per attempt, RaiseTo 0 when the word does not grow and 1
// otherwise (one more per race lost to another writer of the same word).
//
// Thread-safe: each call uses the endpoint it is given.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rdma/fabric.h"

namespace strand::txn {

class NodeWords {
 public:
  // The words at `offset` of memory node 0, `bytes` of room for them.
  // InvalidArgument if `compute_nodes` words do not fit.
  static absl::StatusOr<NodeWords> At(uint64_t offset, uint64_t bytes,
                                      int compute_nodes);

  int compute_nodes() const { return compute_nodes_; }
  rdma::GlobalAddress word(rdma::ComputeNodeId node) const {
    return rdma::GlobalAddress(0, offset_ + 8 * uint64_t{node});
  }

  absl::StatusOr<uint64_t> Read(rdma::Endpoint& endpoint,
                                rdma::ComputeNodeId node) const;
  // Every node's word, by node id, into `out` (compute_nodes() entries).
  absl::Status ReadAll(rdma::Endpoint& endpoint,
                       absl::Span<uint64_t> out) const;
  absl::StatusOr<uint64_t> Min(rdma::Endpoint& endpoint) const;
  // Raises `node`'s word to `value` unless it holds more already;
  // `expected` is the caller's guess of its value (the CAS's first
  // expectation). Returns the word's value afterwards (>= value).
  absl::StatusOr<uint64_t> RaiseTo(rdma::Endpoint& endpoint,
                                   rdma::ComputeNodeId node, uint64_t expected,
                                   uint64_t value) const;
  // Makes `node`'s word `value`, whatever it held.
  absl::Status Set(rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
                   uint64_t value) const;

 private:
  NodeWords(uint64_t offset, int compute_nodes)
      : offset_(offset), compute_nodes_(compute_nodes) {}

  uint64_t offset_;
  int compute_nodes_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_NODE_WORDS_H_
