#ifndef STRAND_RDMA_VERBS_VERBS_ENDPOINT_H_
#define STRAND_RDMA_VERBS_VERBS_ENDPOINT_H_

// A verbs endpoint: one thread's queue pairs, one RC QP per memory node and
// per peer compute node, connected on first use and all completing into the
// endpoint's own CQ, so the data path takes no lock. A batch becomes one
// linked chain of work requests posted with one doorbell, only the last one
// signalled, and one bounded wait.
//
// Local buffers: a buffer inside a region registered with
// ComputeNode::RegisterLocalMemory is used in place (zero copy); any other is
// staged through the endpoint's registered staging buffer, and one larger
// than that buffer is registered for the duration of the call.
//
// After a failed completion or a timeout the queue pair is in the error
// state or in doubt; it is dropped and the next call reconnects (refused
// while its node is fenced, fence_control.h).

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "rdma/fabric.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/queue_pair.h"

namespace strand::rdma::verbs {

class VerbsFabric;
class VerbsComputeNode;

class VerbsEndpoint : public Endpoint {
 public:
  static constexpr uint32_t kMaxChain = 64;  // work requests per doorbell
  static constexpr uint64_t kStagingBytes = 256 * 1024;
  // PostWriteToPeer's own staging; larger writes are not posted but waited
  // for (WriteToPeer).
  static constexpr uint64_t kPostedBytes = 64 * 1024;
  static constexpr absl::Duration kCompletionTimeout = absl::Seconds(10);
  static_assert(kStagingBytes >= kMaxChain * 8 + sizeof(Message),
                "staging must hold a full chain of atomic results");

  static absl::StatusOr<std::unique_ptr<VerbsEndpoint>> Create(
      VerbsFabric* fabric, VerbsComputeNode* node,
      std::shared_ptr<EndpointCounters> counters);
  ~VerbsEndpoint() override;

  ComputeNodeId node_id() const override;
  absl::Status Execute(const Batch& batch) override;
  absl::Status WriteToPeer(const PeerAddress& dst, const void* src,
                           uint32_t length) override;
  // Posts the WRITE unsignalled from a staging buffer of its own; the next
  // signalled request on that queue pair (the Send that follows) completes
  // it. A second post before then waits for the first.
  absl::Status PostWriteToPeer(const PeerAddress& dst, const void* src,
                               uint32_t length) override;
  absl::Status Send(ComputeNodeId dst, const Message& message) override;
  FabricCounters Counters() const override { return counters_->Snapshot(); }

  // Counts a message handled by the handler thread owning this endpoint.
  void CountReceived() { counters_->AddMessageReceived(); }

 private:
  VerbsEndpoint(VerbsFabric* fabric, VerbsComputeNode* node,
                std::shared_ptr<EndpointCounters> counters)
      : fabric_(fabric), node_(node), counters_(std::move(counters)) {}

  absl::Status Validate(const Batch& batch) const;
  // Fencing and crash injection (VerbsFabric::Fence, Crash): whether this
  // endpoint's node may still act, and whether `peer` may be reached
  // (*lost: it crashed, and what is sent to it vanishes).
  // Also drops the queue pairs a fence killed since the last call.
  absl::Status CheckNotBlocked();
  absl::Status CheckReachable(ComputeNodeId peer, bool* lost);
  // The queue pair to a memory node or peer, connected on first use.
  absl::StatusOr<QueuePair*> MemoryNodeQp(MemoryNodeId id);
  absl::StatusOr<QueuePair*> PeerQp(ComputeNodeId id);
  // Posts `first`'s chain (its last request signalled with `wr_id`) and
  // waits. On failure drops the queue pair held in `slot`. `peer`: the
  // compute node it goes to (-1: a memory node), whose fence ends the wait.
  absl::Status PostAndWait(std::unique_ptr<QueuePair>& slot, ibv_send_wr* first,
                           uint64_t wr_id, absl::string_view what,
                           int peer = -1);
  // Waits for the posted write still in flight, if any (a signalled empty
  // WRITE behind it on the same queue pair).
  absl::Status CompletePosted();
  // Checks a peer write's target before anything is posted.
  absl::Status CheckPeerWrite(const PeerAddress& dst, uint32_t length) const;
  // Runs batch[begin, end) as one chain; end - begin <= kMaxChain.
  absl::Status RunChain(const Batch& batch, size_t begin, size_t* end);

  VerbsFabric* const fabric_;
  VerbsComputeNode* const node_;
  const std::shared_ptr<EndpointCounters> counters_;
  ibv_cq* cq_ = nullptr;
  std::unique_ptr<uint8_t[]> staging_;
  MemoryRegion staging_mr_;
  std::vector<std::unique_ptr<QueuePair>> memory_qps_;  // by memory node id
  std::vector<std::unique_ptr<QueuePair>> peer_qps_;    // by compute node id
  // VerbsFabric::admission_count of each peer when its queue pair was made.
  std::vector<uint32_t> peer_admissions_seen_;
  uint64_t next_wr_id_ = 1;
  uint32_t fences_seen_ = 0;  // VerbsFabric::fence_count of its node
  // PostWriteToPeer: its staging, and the write in flight (node -1: none).
  std::unique_ptr<uint8_t[]> posted_;
  MemoryRegion posted_mr_;
  int posted_node_ = -1;
  PeerAddress posted_dst_;
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_VERBS_ENDPOINT_H_
