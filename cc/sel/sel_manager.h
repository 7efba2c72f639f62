#ifndef STRAND_CC_SEL_SEL_MANAGER_H_
#define STRAND_CC_SEL_SEL_MANAGER_H_

// SEL: the baseline protocol. No cache: every lock fetches the GCL with its
// latch in one round trip (atomic + READ batched) and every unlock writes the
// dirty range back and releases in one round trip (WRITE + FAA batched).
// The latch word is described in sel_latch.h.
//
// A lock that finds the latch taken retries with exponential back-off (from
// 1 to 64 round trips of pause) until lock_timeout; under no_wait it returns
// Aborted after the first conflicting attempt.

#include <atomic>
#include <memory>

#include "cc/gcl_manager.h"
#include "rdma/block_allocator.h"

namespace strand::cc::sel {

class SelManager : public GclManager {
 public:
  static absl::StatusOr<std::unique_ptr<GclManager>> Create(
      rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options);

  const CcOptions& options() const override { return options_; }
  rdma::ComputeNodeId node_id() const override { return node_; }
  absl::StatusOr<std::unique_ptr<ThreadContext>> NewThreadContext() override;
  absl::StatusOr<rdma::GlobalAddress> Allocate(ThreadContext& ctx) override;
  absl::Status Free(ThreadContext& ctx, rdma::GlobalAddress gcl) override;
  absl::StatusOr<SharedGuard> SLock(ThreadContext& ctx, rdma::GlobalAddress gcl,
                                    LockOptions lock) override;
  absl::StatusOr<ExclusiveGuard> XLock(ThreadContext& ctx,
                                       rdma::GlobalAddress gcl,
                                       LockOptions lock) override;
  absl::StatusOr<ExclusiveGuard> Upgrade(ThreadContext& ctx, SharedGuard& guard,
                                         LockOptions lock) override;
  CacheStats Stats() const override;

 protected:
  absl::Status UnlockShared(ThreadContext& ctx,
                            const LatchHandle& handle) override;
  absl::Status UnlockExclusive(ThreadContext& ctx, const LatchHandle& handle,
                               uint32_t dirty_begin,
                               uint32_t dirty_end) override;

 private:
  class SelThread;
  struct Counters {
    std::atomic<uint64_t> shared_locks{0}, exclusive_locks{0}, upgrades{0},
        lock_retries{0}, lock_timeouts{0}, no_wait_aborts{0}, flushes{0},
        flushed_bytes{0};
  };

  SelManager(rdma::ComputeNode* node, const CcOptions& options,
             std::unique_ptr<rdma::BlockAllocator> allocator);

  // Tries `attempt` (one round trip that returns true on success) until it
  // succeeds, the timeout passes, or under no_wait the first failure.
  template <typename Attempt>
  absl::Status Retry(const char* what, rdma::GlobalAddress gcl,
                     LockOptions lock, Attempt attempt);

  rdma::ComputeNode* const compute_node_;
  const rdma::ComputeNodeId node_;
  const CcOptions options_;
  const std::unique_ptr<rdma::BlockAllocator> allocator_;
  mutable Counters counters_;
};

}  // namespace strand::cc::sel

#endif  // STRAND_CC_SEL_SEL_MANAGER_H_
