#ifndef STRAND_CC_GCL_MANAGER_H_
#define STRAND_CC_GCL_MANAGER_H_

// The coherence layer's API (paper Table 2), one GclManager per compute node.
// A Global Cache Line (GCL) is a fixed-size block of the memory pool,
// [8-byte global latch word][payload: gcl_size - 8 bytes], whose payload
// upper layers own (each puts its own header at its start) and reach only
// through latches:
//
//   auto ctx = manager.NewThreadContext();         // once per thread
//   STRAND_ASSIGN_OR_RETURN(ExclusiveGuard g, manager.XLock(*ctx, gcl));
//   std::memcpy(g.MutableRange(16, 8), &value, 8); // marks bytes 16..24 dirty
//   g.Unlock();                                    // or let it go out of scope
//
// Guarantees: a SharedGuard sees the payload as the last exclusive holder
// (on any node) left it; an ExclusiveGuard is the only holder on any node.
// Latch acquisitions are sequentially consistent (paper 6.2).
// Costs in round trips: SEL (no cache) 1 per lock (latch + READ batched) and
// 1 per unlock (WRITE of the dirty range + release); SELCC (cached) 0 per
// hit, 1 per miss, 0 per unlock (lazy release), plus invalidation messages
// on conflicts. Waits are bounded (LockOptions). Unlatched reads of cached
// payloads: optimistic_read.h. A ThreadContext belongs to one thread; guards
// are movable, not copyable, and release at most once.
// Design: docs/design/selcc.md.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cc/cache_stats.h"
#include "cc/optimistic_read.h"
#include "cc/options.h"
#include "cc/thread_context.h"
#include "rdma/fabric.h"
#include "rdma/global_address.h"

namespace strand::cc {

class GclManager;

// Waiting: a lock waits at most CcOptions::lock_timeout and then returns
// DeadlineExceeded. With no_wait it returns Aborted as soon as the latch is
// held in a conflicting mode by a running holder (2PL no-wait).
struct LockOptions {
  // Give up with Aborted instead of waiting for a running holder.
  bool no_wait = false;
};

// What a guard knows of the latch it holds; the manager's business.
struct LatchHandle {
  rdma::GlobalAddress gcl;
  uint8_t* payload = nullptr;
  void* frame = nullptr;  // protocol-specific (a cache frame, a buffer)
};

class SharedGuard {
 public:
  SharedGuard() = default;
  SharedGuard(GclManager* manager, ThreadContext* ctx, LatchHandle handle)
      : manager_(manager), ctx_(ctx), handle_(handle) {}
  // Moves are inline: a descent moves a guard through StatusOr and
  // coupling several times per node, and out-of-line calls showed.
  SharedGuard(SharedGuard&& other) noexcept
      : manager_(std::exchange(other.manager_, nullptr)),
        ctx_(std::exchange(other.ctx_, nullptr)),
        handle_(std::exchange(other.handle_, LatchHandle())) {}
  SharedGuard& operator=(SharedGuard&& other) noexcept {
    if (this != &other) {
      if (owns_lock()) (void)Unlock();
      manager_ = std::exchange(other.manager_, nullptr);
      ctx_ = std::exchange(other.ctx_, nullptr);
      handle_ = std::exchange(other.handle_, LatchHandle());
    }
    return *this;
  }
  ~SharedGuard();

  bool owns_lock() const { return manager_ != nullptr; }
  rdma::GlobalAddress gcl() const { return handle_.gcl; }
  const uint8_t* data() const { return handle_.payload; }

  // Releases the latch (paper: SELCC_SUnLock). A no-op on a guard that does
  // not own a latch.
  absl::Status Unlock();

 private:
  friend class GclManager;
  LatchHandle Release();  // gives up ownership without unlocking
  GclManager* manager_ = nullptr;
  ThreadContext* ctx_ = nullptr;
  LatchHandle handle_;
};

class ExclusiveGuard {
 public:
  ExclusiveGuard() = default;
  ExclusiveGuard(GclManager* manager, ThreadContext* ctx, LatchHandle handle,
                 uint32_t payload_bytes)
      : manager_(manager),
        ctx_(ctx),
        handle_(handle),
        payload_bytes_(payload_bytes) {}
  ExclusiveGuard(ExclusiveGuard&& other) noexcept
      : manager_(std::exchange(other.manager_, nullptr)),
        ctx_(std::exchange(other.ctx_, nullptr)),
        handle_(std::exchange(other.handle_, LatchHandle())),
        payload_bytes_(other.payload_bytes_),
        dirty_begin_(std::exchange(other.dirty_begin_, 0)),
        dirty_end_(std::exchange(other.dirty_end_, 0)) {}
  ExclusiveGuard& operator=(ExclusiveGuard&& other) noexcept {
    if (this != &other) {
      if (owns_lock()) (void)Unlock();
      manager_ = std::exchange(other.manager_, nullptr);
      ctx_ = std::exchange(other.ctx_, nullptr);
      handle_ = std::exchange(other.handle_, LatchHandle());
      payload_bytes_ = other.payload_bytes_;
      dirty_begin_ = std::exchange(other.dirty_begin_, 0);
      dirty_end_ = std::exchange(other.dirty_end_, 0);
    }
    return *this;
  }
  ~ExclusiveGuard();

  bool owns_lock() const { return manager_ != nullptr; }
  rdma::GlobalAddress gcl() const { return handle_.gcl; }
  const uint8_t* data() const { return handle_.payload; }
  uint32_t size() const { return payload_bytes_; }

  // The whole payload, all of it marked dirty.
  uint8_t* mutable_data() { return MutableRange(0, payload_bytes_); }
  // payload + offset, with [offset, offset + length) marked dirty: only
  // dirty bytes are written back (dirty bounds, paper 5.2.2). Inline: a
  // transaction calls it some 70 times.
  uint8_t* MutableRange(uint32_t offset, uint32_t length) {
    if (ABSL_PREDICT_FALSE(!owns_lock() ||
                           uint64_t{offset} + length > payload_bytes_)) {
      BadWrite(offset, length);
    }
    if (length > 0) {
      if (dirty_begin_ == dirty_end_) {
        dirty_begin_ = offset;
        dirty_end_ = offset + length;
      } else {
        dirty_begin_ = std::min(dirty_begin_, offset);
        dirty_end_ = std::max(dirty_end_, offset + length);
      }
    }
    return handle_.payload + offset;
  }

  // The dirty range so far as [begin, end); begin == end when clean.
  uint32_t dirty_begin() const { return dirty_begin_; }
  uint32_t dirty_end() const { return dirty_end_; }

  // Releases the latch (paper: SELCC_XUnLock). A no-op on a guard that does
  // not own a latch. With CcOptions::write_through it returns OK only once
  // memory holds what the line's writers wrote: a structure change
  // unlocks its new GCL before it writes the link to it (base/failure_point.h).
  absl::Status Unlock();

 private:
  friend class GclManager;
  // MutableRange's broken invariant: CHECK-fails, naming it.
  [[noreturn]] void BadWrite(uint32_t offset, uint32_t length) const;
  GclManager* manager_ = nullptr;
  ThreadContext* ctx_ = nullptr;
  LatchHandle handle_;
  uint32_t payload_bytes_ = 0;
  uint32_t dirty_begin_ = 0;
  uint32_t dirty_end_ = 0;
};

class GclManager {
 public:
  // Builds the protocol `options` name for compute node `node` of `fabric`.
  // The fabric must outlive the manager. Fails on bad options or a node id
  // the protocol's latch word cannot hold.
  static absl::StatusOr<std::unique_ptr<GclManager>> Create(
      rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options);

  virtual ~GclManager() = default;

  virtual const CcOptions& options() const = 0;
  virtual rdma::ComputeNodeId node_id() const = 0;
  uint32_t payload_bytes() const { return options().payload_bytes(); }

  virtual absl::StatusOr<std::unique_ptr<ThreadContext>> NewThreadContext() = 0;

  // A GCL no one else holds, with an all-zero payload. ResourceExhausted
  // when the pool is full (the message names --pool_mb).
  virtual absl::StatusOr<rdma::GlobalAddress> Allocate(ThreadContext& ctx) = 0;
  // Returns a GCL to the pool. The caller must not hold its latch and no
  // thread on any node may use it afterwards (upper layers guarantee that
  // nothing points to it any more).
  virtual absl::Status Free(ThreadContext& ctx, rdma::GlobalAddress gcl) = 0;

  virtual absl::StatusOr<SharedGuard> SLock(ThreadContext& ctx,
                                            rdma::GlobalAddress gcl,
                                            LockOptions lock = {}) = 0;
  virtual absl::StatusOr<ExclusiveGuard> XLock(ThreadContext& ctx,
                                               rdma::GlobalAddress gcl,
                                               LockOptions lock = {}) = 0;
  // Shared -> exclusive. On success `guard` is consumed. On failure the
  // shared latch may have been released (`guard` no longer owns it); the
  // payload may have changed in between, so callers re-read.
  virtual absl::StatusOr<ExclusiveGuard> Upgrade(ThreadContext& ctx,
                                                 SharedGuard& guard,
                                                 LockOptions lock = {}) = 0;

  // An optimistic read of `gcl` (the rules in optimistic_read.h): its
  // payload as this node's cached copy holds it, with no latch taken and
  // nothing written that another core reads; valid if Validate says so
  // afterwards. Not available (!ok()) when the GCL is not cached here, its
  // copy is not valid (this node holds no global latch on it), a local
  // thread or the invalidation handler holds it exclusively, or the
  // protocol has no cache (SEL: always): then latch as usual. Never waits,
  // never makes a round trip. A validated read sees the payload as a
  // SharedGuard taken at some moment between this call and Validate would
  // have: a copy this node holds S or M, which no peer can change without
  // first invalidating it here (under the frame's exclusive latch, which
  // Validate notices).
  virtual OptimisticToken OptimisticRead(ThreadContext& ctx,
                                         rdma::GlobalAddress gcl) {
    return OptimisticToken();
  }
  // Whether every read of `token`'s payload since OptimisticRead saw one
  // unchanged copy. Call it after the reads the caller's next step depends
  // on; false once means the token is spent (read again, or latch). Two
  // plain loads and a compiler fence on x86-64.
  static bool Validate(const OptimisticToken& token) {
    if (!token.ok()) return false;
#if !defined(__SANITIZE_THREAD__)
    // The seqlock reader's acquire fence (docs/design/selcc.md): the reads
    // above may not drift below the re-read of the word. TSan models no
    // standalone fence and ignores those reads (optimistic_read.h).
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
    return (token.word_->load(std::memory_order_relaxed) & token.mask_) ==
           token.seen_;
  }

  // Global atomics on any 8-byte aligned word outside GCL payloads, e.g. a
  // root word (root_words.h): timestamps and counters. One round trip each.
  virtual absl::StatusOr<uint64_t> FetchAndAdd(ThreadContext& ctx,
                                               rdma::GlobalAddress word,
                                               uint64_t delta);
  virtual absl::StatusOr<uint64_t> CompareAndSwap(ThreadContext& ctx,
                                                  rdma::GlobalAddress word,
                                                  uint64_t expected,
                                                  uint64_t desired);

  // Prefetch hints, for a caller about to latch several GCLs it already
  // knows (the leaves of a batch of index lookups, the pages of a batch of
  // tuples), one after the other: their cache misses then overlap instead
  // of queueing. Call PrefetchEntry for every GCL of the batch, then
  // PrefetchLines for every GCL, then latch them: each pass starts the
  // memory reads the next one needs (this node's bookkeeping for the GCL,
  // then its latch and the payload lines [offset, offset + bytes)).
  // Hints only: they take no latch, make no round trip, and change no
  // result; a GCL this node does not cache is skipped, and any address is
  // safe. Protocols without a cache (SEL) ignore them.
  virtual void PrefetchEntry(rdma::GlobalAddress gcl) const {}
  virtual void PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                             uint32_t bytes) const {}

  // Write-through (CcOptions::write_through). The bytes of `guard`'s line
  // that memory lacks (the guard's writes and what earlier unlocks of this
  // node left dirty) as one range, or nullopt when memory is current. A
  // caller that writes them itself, several lines in one batch (a commit,
  // txn/write_set.h), then calls MarkWrittenThrough and the unlock writes
  // nothing. `remote` is where `bytes` bytes from `data` belong.
  struct DirtyRange {
    rdma::GlobalAddress remote;
    const uint8_t* data = nullptr;
    uint32_t bytes = 0;
  };
  virtual std::optional<DirtyRange> DirtyBytes(
      const ExclusiveGuard& guard) const;
  virtual void MarkWrittenThrough(ExclusiveGuard& guard);

  // Failed peers (docs/design/node_failure.md), a bit per compute node,
  // as this node's failure monitor learns them (txn/membership.h):
  //   fenced     declared failed and unable to write: sent no more
  //              messages, and no reply of theirs is waited for (an
  //              invalidation waiting only on them is over, as if they
  //              had answered kOutdated); nothing is handed over to them
  //   stealable  their unfinished commits are complete in memory: a
  //              latch word naming them (holder field, reader bit) loses
  //              that part to whoever meets it, by CAS
  // This node's own bit in `fenced` (it was declared failed and fenced)
  // ends every wait of its own on a peer, as if all of them were fenced,
  // from then on: their answers cannot reach it any more.
  // Returns once no thread of this node can still steal from a node that
  // is no longer stealable (a node that rejoins). Protocols without a
  // directory of holders (SEL) cannot reclaim: they ignore it.
  virtual void SetPeerStates(uint64_t fenced, uint64_t stealable) {}

  // Counters since creation, summed over all threads of this node.
  virtual CacheStats Stats() const = 0;

  // Writes back every dirty line this node caches and gives up every
  // cached line with its global latch, leaving the memory nodes holding the
  // database as this node saw it, as if every line had been evicted; the
  // node stays up (a pool image taken while the compute processes of a
  // cluster keep running: engine/image.h). No thread of this node may hold
  // a latch or be acquiring one. FailedPrecondition when one did (a line
  // stayed latched or pinned), or the fabric's error when a write-back
  // failed. Protocols without a cache (SEL) have nothing to write back.
  virtual absl::Status WriteBackAll() { return absl::OkStatus(); }

 protected:
  friend class SharedGuard;
  friend class ExclusiveGuard;
  // Called by guards; `handle` is what the lock call put in the guard.
  virtual absl::Status UnlockShared(ThreadContext& ctx,
                                    const LatchHandle& handle) = 0;
  virtual absl::Status UnlockExclusive(ThreadContext& ctx,
                                       const LatchHandle& handle,
                                       uint32_t dirty_begin,
                                       uint32_t dirty_end) = 0;

  // For Upgrade implementations: takes the handle out of a shared guard
  // without unlocking it.
  static LatchHandle TakeHandle(SharedGuard& guard) { return guard.Release(); }
  // For write-through implementations: what a guard holds and wrote.
  static const LatchHandle& HandleOf(const ExclusiveGuard& guard) {
    return guard.handle_;
  }
  static std::pair<uint32_t, uint32_t> GuardDirty(const ExclusiveGuard& g) {
    return {g.dirty_begin_, g.dirty_end_};
  }
  static void ClearGuardDirty(ExclusiveGuard& guard) {
    guard.dirty_begin_ = guard.dirty_end_ = 0;
  }
};

}  // namespace strand::cc

#endif  // STRAND_CC_GCL_MANAGER_H_
