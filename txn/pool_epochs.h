#ifndef STRAND_TXN_POOL_EPOCHS_H_
#define STRAND_TXN_POOL_EPOCHS_H_

// The memory pool's words through which the compute nodes of separate
// processes agree when a deleted row's slot may be reused
// (docs/design/slot_reuse.md, "Across processes", argues the protocol).
// They live on memory node 0 at fixed offsets (cc/root_words.h), so every
// process finds them without asking anyone, and they start at zero in a
// fresh pool:
//   epoch      the global epoch E (RootWord::kReclaimEpoch); a seal of a
//              batch of deleted slots advances it by one.
//   bound[n]   per compute node n (kEpochBoundsOffset + 8 n): the bound
//              n's process published last. It only grows; 0 until n
//              first publishes, which holds back every batch.
// Every access is an RDMA atomic (a read is FAA 0), executed by the memory
// node's NIC, so a word is never seen torn whichever process wrote it, and
// the words' history is one order that every process agrees with.
//
// Cost in round trips: Advance 1, ReadEpoch 1, Publish 0 when the bound
// does not grow and 1 otherwise (one more per race lost to another thread
// of this node), MinBound 1 (one FAA per compute node, in one batch).
//
// Thread-safe: each call uses the endpoint of the calling thread.

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rdma/fabric.h"
#include "txn/node_words.h"

namespace strand::txn {

class PoolEpochs {
 public:
  // For the compute node of `endpoint` in a deployment of `compute_nodes`
  // nodes. Reads the node's bound: what an earlier incarnation of the node
  // left there stays a correct bound (epoch_manager.h), so it is kept.
  static absl::StatusOr<std::unique_ptr<PoolEpochs>> Open(
      rdma::Endpoint& endpoint, int compute_nodes);

  PoolEpochs(const PoolEpochs&) = delete;
  PoolEpochs& operator=(const PoolEpochs&) = delete;

  rdma::ComputeNodeId self() const { return self_; }
  // E before it advanced by one: the epoch of the batch being sealed.
  absl::StatusOr<uint64_t> Advance(rdma::Endpoint& endpoint);
  absl::StatusOr<uint64_t> ReadEpoch(rdma::Endpoint& endpoint);
  // Raises this node's bound to `bound` if it is lower.
  absl::Status Publish(rdma::Endpoint& endpoint, uint64_t bound);
  // The smallest bound of all compute nodes.
  absl::StatusOr<uint64_t> MinBound(rdma::Endpoint& endpoint);
  // This node's bound as this process last published or read it.
  uint64_t published() const {
    return published_.load(std::memory_order_relaxed);
  }

 private:
  PoolEpochs(rdma::ComputeNodeId self, NodeWords bounds, uint64_t published)
      : self_(self), bounds_(bounds), published_(published) {}

  const rdma::ComputeNodeId self_;
  const NodeWords bounds_;
  // The CAS's expected value: Publish costs nothing when the bound does not
  // grow, and one CAS when it does.
  std::atomic<uint64_t> published_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_POOL_EPOCHS_H_
