#ifndef STRAND_CC_SELCC_SELCC_MANAGER_H_
#define STRAND_CC_SELCC_SELCC_MANAGER_H_

// SELCC (the paper's protocol) behind the GclManager API. Frames hold the
// GCL payload only; the latch word lives in remote memory.
//
// Access paths (paper Table 1; costs in round trips of the calling thread):
//   SLock, memo S or M     hit: local shared latch only, 0
//   XLock, memo M          hit: local exclusive latch only, 0
//   SLock, memo I / miss   FAA +Reader batched with the READ, 1
//   XLock, memo I / miss   CAS 0 -> Exclusive batched with the READ, 1
//   XLock, memo S          upgrade: CAS (0,{me}) -> Exclusive, 1; after
//                          kUpgradeAttempts failures: release the share and
//                          take the latch from scratch
//   OptimisticRead         0, no latch and no shared write (a hit on a
//                          frame with memo S or M; else not available)
//   Unlock                 0 (lazy release: the global latch stays until a
//                          peer asks for it or the frame is evicted), except
//                          when the frame's lease expired (5.3.1): 1, and
//                          the line goes to the most urgent writer dropped
//                          meanwhile (priority handover, invalidation.h)
// A conflicting latch word adds invalidation messages (invalidation.h) and,
// unless the holder hands the line over, a back-off before the retry.
// Every wait is bounded (see SLock). Design and argument:
// docs/design/selcc.md.

#include <atomic>
#include <memory>

#include "absl/strings/string_view.h"
#include "cc/gcl_manager.h"
#include "cc/selcc/evictor.h"
#include "cc/selcc/frame.h"
#include "cc/selcc/invalidation.h"
#include "cc/selcc/node_state.h"
#include "rdma/block_allocator.h"

namespace strand::cc {

class SelccManager final : public GclManager {
 public:
  static constexpr int kUpgradeAttempts = 4;
  // Failed attempts after which a no_wait request gives up even if no
  // holder was found busy (the holders keep changing under it).
  static constexpr int kNoWaitAttempts = 4;
  // C of the back-off T = C * RTT / N_r.
  static constexpr int kBackOffRtts = 8;
  static constexpr absl::Duration kReplyGrace = absl::Seconds(30);

  static absl::StatusOr<std::unique_ptr<GclManager>> Create(
      rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options);
  // Stops the handlers and the evictor, then writes every dirty line back
  // and releases every latch this node holds.
  ~SelccManager() override;

  const CcOptions& options() const override { return state_->options; }
  rdma::ComputeNodeId node_id() const override { return node_; }
  // A context works only with the manager that made it (its endpoint's node
  // is the requester the peers' handlers grant lines to); another node's
  // context gets FailedPrecondition, see OwnThread().
  absl::StatusOr<std::unique_ptr<ThreadContext>> NewThreadContext() override;
  absl::StatusOr<rdma::GlobalAddress> Allocate(ThreadContext& ctx) override;
  absl::Status Free(ThreadContext& ctx, rdma::GlobalAddress gcl) override;
  // Bounded waits: latch waits end at CcOptions::lock_timeout with
  // DeadlineExceeded; with LockOptions::no_wait a conflict with a running
  // holder (a busy local latch here, or a peer whose handler found its latch
  // busy) returns Aborted at once. A requester always collects the replies
  // to the messages it sent before it gives up; a peer that stops answering
  // for kReplyGrace is reported as Unavailable.
  absl::StatusOr<SharedGuard> SLock(ThreadContext& ctx, rdma::GlobalAddress gcl,
                                    LockOptions lock) override;
  absl::StatusOr<ExclusiveGuard> XLock(ThreadContext& ctx,
                                       rdma::GlobalAddress gcl,
                                       LockOptions lock) override;
  absl::StatusOr<ExclusiveGuard> Upgrade(ThreadContext& ctx, SharedGuard& guard,
                                         LockOptions lock) override;
  // A frame with memo S or M that no one holds exclusively, read as
  // local_latch.h's seqlock: see GclManager::OptimisticRead.
  OptimisticToken OptimisticRead(ThreadContext& ctx,
                                 rdma::GlobalAddress gcl) override;
  void PrefetchEntry(rdma::GlobalAddress gcl) const override;
  void PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                     uint32_t bytes) const override;
  CacheStats Stats() const override;
  absl::Status WriteBackAll() override;
  // The frame's dirty range joined with the guard's (the frame is latched
  // exclusive by the guard, so both are stable).
  std::optional<DirtyRange> DirtyBytes(
      const ExclusiveGuard& guard) const override;
  void MarkWrittenThrough(ExclusiveGuard& guard) override;
  void SetPeerStates(uint64_t fenced, uint64_t stealable) override;

  // Test-only introspection of this node's copy of `gcl`.
  struct DebugFrame {
    bool cached = false;
    selcc::Memo memo = selcc::Memo::kInvalid;
    uint32_t dirty_begin = 0, dirty_end = 0;
    bool lease_active = false;
  };
  DebugFrame DebugState(rdma::GlobalAddress gcl);
  // This node's handover memo for `gcl` (node -1: none or not cached);
  // read without the latch, so callable while a thread holds the line.
  selcc::HandoverMemo DebugHandoverMemo(rdma::GlobalAddress gcl);
  // Frames of the cache, and of them free.
  uint64_t cache_frames() const { return state_->cache.capacity(); }
  uint64_t free_frames() const { return state_->cache.free_frames(); }

 protected:
  absl::Status UnlockShared(ThreadContext& ctx,
                            const LatchHandle& handle) override;
  absl::Status UnlockExclusive(ThreadContext& ctx, const LatchHandle& handle,
                               uint32_t dirty_begin,
                               uint32_t dirty_end) override;

 private:
  class SelccThread;
  using Frame = selcc::Frame;

  SelccManager(rdma::Fabric& fabric, rdma::ComputeNode* node,
               const CcOptions& options,
               std::unique_ptr<rdma::BlockAllocator> allocator);
  absl::Status Start();
  // The SELCC state behind `ctx`, or null when `ctx` came from another
  // node's manager (or another protocol): then WrongContext says so.
  SelccThread* OwnThread(ThreadContext& ctx);
  absl::Status WrongContext(ThreadContext& ctx) const;

  // The hit path: the frame of `gcl` with its latch tried in `mode` (no
  // waiting), through the cache's frame table (Cache::LatchDirect), else
  // Cache::Lookup, whose contract for *latched and the pin it follows.
  Frame* TryHit(SelccThread& t, rdma::GlobalAddress gcl,
                selcc::Cache::Mode mode, bool* latched);
  // The frame of `gcl` latched in `mode`, or a new frame latched EXCLUSIVE
  // with memo kInvalid (*exclusive tells which). Never waits past
  // `deadline`, and not at all for a busy latch under no_wait.
  absl::StatusOr<Frame*> LatchFrame(SelccThread& t, rdma::GlobalAddress gcl,
                                    selcc::Cache::Mode mode, LockOptions lock,
                                    absl::Time deadline, bool* exclusive);
  // Global acquisitions; `f` is latched exclusive and keeps its latch.
  absl::Status AcquireShared(SelccThread& t, Frame* f, LockOptions lock,
                             absl::Time deadline);
  // After an invalidation a failed holder never answered: whether its
  // downgrade gave us the line before it failed (our reader bit is in the
  // word). Reads the line into `f` too.
  absl::StatusOr<bool> HasShare(SelccThread& t, Frame* f);
  absl::Status AcquireExclusive(SelccThread& t, Frame* f, LockOptions lock,
                                absl::Time deadline);
  // Sends an invalidation to every node in `targets` (a reader bitmap) and
  // waits for all replies. `flags`: selcc::kRequest* bits.
  absl::StatusOr<selcc::ReplySlot::Outcome> Invalidate(SelccThread& t, Frame* f,
                                                       uint64_t targets,
                                                       selcc::Want want,
                                                       uint32_t priority,
                                                       uint8_t flags);
  // Waits T = C * RTT / attempt after a failed attempt; DeadlineExceeded
  // past the deadline.
  absl::Status BackOff(SelccThread& t, uint32_t attempt, absl::Time deadline,
                       const char* what, rdma::GlobalAddress gcl);
  absl::Status Execute(SelccThread& t, const rdma::Batch& b);
  // Yields until the steady clock passes `until_ns` (a fairness hold-off,
  // which `waiting` names for TimedOut).
  absl::Status WaitUntil(SelccThread& t, const std::atomic<int64_t>& until_ns,
                         absl::Time deadline, const char* what,
                         rdma::GlobalAddress gcl, absl::string_view waiting);
  // Lease of 5.3.1: true when local threads kept the line long enough while
  // a peer was asking for it.
  bool LeaseExpired(const Frame& f) const;
  // Writes back and releases every cached line that no thread latches or
  // pins (the destructor's and WriteBackAll's). Returns the first error;
  // a frame whose write-back failed is dropped all the same.
  absl::Status ReleaseEverything(rdma::Endpoint& endpoint);
  static void NoWaitAccess(Frame* f);
  // Gives up the global ownership of `f` (latched exclusive): to the node
  // of its handover memo when it holds M and priority_matching is on
  // (5.3.2, invalidation.h), otherwise a release.
  absl::Status ReleaseGlobal(SelccThread& t, Frame* f);
  // `word` is what the latch word of `gcl` held last: if it names a
  // stealable peer (SetPeerStates), takes that part out with one CAS and
  // returns true (the caller retries at once); false otherwise.
  bool StealFromFailedPeers(SelccThread& t, rdma::GlobalAddress gcl,
                            uint64_t word);
  // CcOptions::write_through: writes `f`'s dirty range (latched
  // exclusive) to memory, one round trip, and marks it clean.
  absl::Status WriteThrough(SelccThread& t, Frame* f);
  absl::Status Aborted(SelccThread& t, const char* what,
                       rdma::GlobalAddress gcl);
  // `waiting` says for what the deadline passed ("for this node's own
  // threads", ...): a timeout is rare and its message is all the evidence.
  absl::Status TimedOut(SelccThread& t, const char* what,
                        rdma::GlobalAddress gcl, absl::string_view waiting);

  rdma::Fabric& fabric_;
  rdma::ComputeNode* const compute_node_;
  const rdma::ComputeNodeId node_;
  const std::unique_ptr<rdma::BlockAllocator> allocator_;
  const std::unique_ptr<selcc::NodeState> state_;
  selcc::ReplySlots slots_;
  selcc::InvalidationHandler handler_;
  selcc::Evictor evictor_;
};

}  // namespace strand::cc

#endif  // STRAND_CC_SELCC_SELCC_MANAGER_H_
