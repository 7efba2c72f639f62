#ifndef STRAND_CC_SELCC_CACHE_H_
#define STRAND_CC_SELCC_CACHE_H_

// The compute-side cache of SELCC (paper 5): a fixed pool of frames whose
// payload copies live in one arena registered with the fabric (so peers can
// forward GCLs straight into a frame), a sharded hash map GlobalAddress ->
// frame with one CLOCK list per shard, a free list, and per shard the set
// of GCLs whose eviction's release is still in flight. Two hints let a hit
// reach its frame with no lock, each checked under the frame's latch: the
// frame table (frame_table.h, LatchDirect) and, with
// CcOptions::identity_frames, frame i, which a GCL at grid position i
// (FrameTable::GridPosition) takes on a miss when it is free.
//
// Guarantees:
//   - at most one frame per GCL is in the map, and a GCL whose release is in
//     flight gets no frame until the release is done (EndInFlight), so a
//     node never re-acquires a latch word it has not finished releasing;
//   - a frame is never handed out as a victim while pinned or latched.
// Costs: every call but LatchDirect and LatchIfCaching takes one shard lock
// (or the free-list mutex) for a few hash and list operations, never a
// remote operation or a blocking latch wait (latches are only tried under
// the shard lock); LatchDirect takes no lock: one slot read and one latch
// attempt. Capacity is cache_bytes / gcl_size frames.
// Design: docs/design/selcc.md, "The cache".

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "base/huge_page_memory.h"
#include "cc/optimistic_read.h"
#include "cc/selcc/frame.h"
#include "cc/selcc/frame_table.h"
#include "rdma/fabric.h"

namespace strand::cc::selcc {

// The shard lock: held for a few hash and list operations only, so a
// test-and-test-and-set spinlock (yielding after a short spin, for machines
// with fewer cores than threads) beats a full mutex on the hit path.
class ABSL_LOCKABLE ShardLock {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    for (int i = 0;; ++i) {
      if (!locked_.load(std::memory_order_relaxed) &&
          !locked_.exchange(true, std::memory_order_acquire)) {
        return;
      }
      if (i < 64) {
        __builtin_ia32_pause();
      } else {
        std::this_thread::yield();
      }
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() {
    locked_.store(false, std::memory_order_release);
  }

 private:
  std::atomic<bool> locked_{false};
};

class ABSL_SCOPED_LOCKABLE ShardLockGuard {
 public:
  explicit ShardLockGuard(ShardLock* l) ABSL_EXCLUSIVE_LOCK_FUNCTION(l)
      : l_(l) {
    l_->Lock();
  }
  ~ShardLockGuard() ABSL_UNLOCK_FUNCTION() { l_->Unlock(); }

 private:
  ShardLock* const l_;
};

class Cache {
 public:
  static constexpr int kShards = 64;
  enum class Mode { kShared, kExclusive };
  enum class InsertResult { kInserted, kExists, kInFlight };

  // `frame_bytes` is the stride of a frame's copy in the arena (>= payload);
  // `pool` the memory the frame table covers (no memory nodes: none);
  // `identity_frames` as the header says.
  Cache(uint64_t cache_bytes, uint32_t frame_bytes,
        const FrameTable::Geometry& pool, bool identity_frames = false);
  ~Cache();  // unregisters the arena (the node outlives the cache)

  // Registers the arena with `node` so peers may forward into frames.
  absl::Status Register(rdma::ComputeNode& node);

  uint64_t capacity() const { return frames_count_; }
  uint64_t free_frames() const {
    return free_count_.load(std::memory_order_relaxed);
  }

  // For a lock timeout's message: what this cache holds of `gcl` (its
  // memo if the frame's latch is idle, the latch word, pins, lease and
  // handover state), or that it holds nothing. Latches nothing it cannot
  // take at once.
  std::string Describe(rdma::GlobalAddress gcl);

  // The frame caching `gcl`, or nullptr. When found, the latch is tried in
  // `mode` under the shard lock: on success *latched = true and the frame
  // is marked referenced; otherwise the frame is pinned (the caller waits
  // for the latch, then Unpin()s and checks frame->gcl, which a Free() may
  // have changed).
  Frame* Lookup(rdma::GlobalAddress gcl, Mode mode, bool* latched);
  static void Unpin(Frame* f) { f->pins.fetch_sub(1); }

  // Starts loading the first cache line of `f`'s payload copy without
  // touching `f` itself, so the miss on a cold frame and the miss on its
  // data overlap: the latch CAS that comes next is a full barrier, and
  // every caller reads the payload's header right after it.
  void PrefetchData(const Frame* f) const { __builtin_prefetch(CopyOf(f)); }

  // GclManager::PrefetchEntry and PrefetchLines for this cache: the frame
  // table's slot for `gcl`; then the frame the slot names (a guess: stale
  // names only waste the reads) and its payload copy's lines
  // [offset, offset + bytes), clipped to the frame.
  void PrefetchEntry(rdma::GlobalAddress gcl) const {
    if (const Frame* f = IdentityFrame(gcl); f != nullptr) {
      __builtin_prefetch(f);
    } else {
      table_.Prefetch(gcl);
    }
  }
  void PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                     uint32_t bytes) const;
  // LatchDirect's check: tries `f`'s latch in `mode` (no waiting), where
  // `f` is a frame that cached `gcl` when last seen (in the frame table).
  // True when `f` still caches `gcl`: then it is latched and marked
  // referenced, as by Lookup. False: nothing is held (the frame was busy,
  // evicted or reused meanwhile; use Lookup). The memo is the caller's to
  // check, under the latch, like after Lookup.
  static bool LatchIfCaching(Frame* f, rdma::GlobalAddress gcl, Mode mode) {
    const bool latched =
        mode == Mode::kShared ? f->latch.TryLockShared() : f->latch.TryLock();
    if (!latched) return false;
    // gcl and in_map change only under the exclusive latch (frame.h), so
    // under ours they are stable; a frame sitting free has in_map false.
    if (f->gcl != gcl || !f->in_map) {
      mode == Mode::kShared ? f->latch.UnlockShared() : f->latch.Unlock();
      return false;
    }
    f->MarkReferenced();
    return true;
  }

  // The hit path without the shard lock: the frame the table names for
  // `gcl`, latched in `mode` (no waiting) and marked referenced, when it
  // still caches `gcl`; else nullptr with nothing held (no frame named, or
  // it was busy, evicted or reused meanwhile: use Lookup). Like after
  // Lookup, the memo is the caller's to check under the latch.
  Frame* LatchDirect(rdma::GlobalAddress gcl, Mode mode) {
    Frame* f = FrameHint(gcl);
    if (f == nullptr) return nullptr;
    PrefetchData(f);
    return LatchIfCaching(f, gcl, mode) ? f : nullptr;
  }

  // The frame that cached `gcl` when last seen, or nullptr: a guess, as for
  // LatchDirect, for a caller that checks it by other means (an optimistic
  // read checks gcl and in_map under the latch's version instead of the
  // latch, SelccManager::OptimisticRead). Its identity frame when that
  // names `gcl` (read with no latch: a guess), else the frame table's.
  Frame* FrameHint(rdma::GlobalAddress gcl) const {
    Frame* f = IdentityFrame(gcl);
    if (f != nullptr && LoadRelaxed<uint64_t>(reinterpret_cast<const uint8_t*>(
                            &f->gcl)) == gcl.raw()) {
      return f;
    }
    return table_.Get(gcl);
  }
  // `gcl`'s identity frame (the header), or nullptr when identity frames
  // are off or its grid position is past the last frame. From the address
  // alone: no load.
  Frame* IdentityFrame(rdma::GlobalAddress gcl) const {
    if (!identity_frames_) return nullptr;
    const uint64_t i = table_.GridPosition(gcl);
    return i < frames_count_ ? &frames_[i] : nullptr;
  }

  // For invalidation handlers: the frame of `gcl` latched exclusive by
  // TryLockIdle(), or nullptr with *cached telling whether it was cached.
  // A cached frame whose latch is busy gets its lease started (5.3.1) and
  // remembers the request's `priority` if it is the highest so far, and
  // `memo` (a HandoverMemo::Pack, 0 = nothing to remember) if its priority
  // beats the frame's handover memo (5.3.2).
  Frame* LatchForHandler(rdma::GlobalAddress gcl, uint32_t priority,
                         uint64_t memo, bool* cached);
  // Marks `gcl` in flight if no frame caches it and no release of it is in
  // flight (the handler's orphan check: no local thread can start acquiring
  // it until EndInFlight).
  bool ClaimUncached(rdma::GlobalAddress gcl);

  // A free frame (latch free, not in the map), or nullptr if none is left;
  // for `gcl`, its identity frame when that is free.
  Frame* TakeFree();
  Frame* TakeFree(rdma::GlobalAddress gcl);
  void PutFree(Frame* f);

  // Publishes `fresh` (from TakeFree, latched exclusive by the caller, memo
  // kInvalid) as the frame of `gcl`, unless another frame got there first
  // or the GCL's release is in flight.
  InsertResult Insert(rdma::GlobalAddress gcl, Frame* fresh);

  // Appends up to `n` victims, unreferenced frames first (CLOCK): each
  // latched exclusive, out of the map, its GCL marked in flight. The caller
  // releases the GCL's ownership, then calls EndInFlight(gcl). Fewer than
  // `n` when the rest of the frames are pinned or latched, or (bounded
  // work per call) are still being referenced faster than the hand goes
  // round; the next call goes on from where the hand stopped.
  void TakeVictims(size_t n, std::vector<Frame*>* out);
  void EndInFlight(rdma::GlobalAddress gcl);
  bool InFlight(rdma::GlobalAddress gcl);

  // Takes a frame the caller holds exclusive out of the map (Free()).
  void Remove(Frame* f);

  // Calls `fn` on every frame in the map, under its shard lock (tests).
  void ForEach(absl::FunctionRef<void(const Frame&)> fn);

 private:
  struct alignas(64) Shard {
    ShardLock mu;
    absl::flat_hash_map<rdma::GlobalAddress, Frame*> map ABSL_GUARDED_BY(mu);
    absl::flat_hash_set<rdma::GlobalAddress> in_flight ABSL_GUARDED_BY(mu);
    Frame* clock_head ABSL_GUARDED_BY(mu) = nullptr;  // newest
    Frame* clock_tail ABSL_GUARDED_BY(mu) = nullptr;  // the hand
  };

  Shard& ShardOf(rdma::GlobalAddress gcl);
  // Where `f`'s payload copy sits, from the frame's index alone: reading
  // f->data would wait for the frame's (usually cold) line.
  const uint8_t* CopyOf(const Frame* f) const {
    return arena_ + static_cast<size_t>(f - frames_) * frame_bytes_;
  }
  // One visit of the clock hand to `s`: takes up to `n` victims; *swept
  // tells whether it cleared any reference bit.
  size_t SweepShard(Shard& s, size_t n, std::vector<Frame*>* out, bool* swept);
  static void LinkHead(Shard& s, Frame* f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static void Unlink(Shard& s, Frame* f) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Takes `f` off the free list; under free_mu_.
  void UnlistFree(Frame* f);

  const uint64_t frames_count_;
  const uint32_t frame_bytes_;
  const bool identity_frames_;
  HugePageMemory arena_memory_;
  HugePageMemory frame_memory_;
  uint8_t* const arena_;
  rdma::ComputeNode* registered_with_ = nullptr;  // by Register
  Frame* const frames_;
  std::unique_ptr<Shard[]> shards_;
  // Set and cleared under the shard lock of the GCL, read without it.
  FrameTable table_;
  std::atomic<uint32_t> next_victim_shard_{0};

  // std::mutex rather than absl::Mutex wherever threads hand data to each
  // other: the distribution's absl is not built with TSan, which then cannot
  // see absl::Mutex's happens-before.
  std::mutex free_mu_;
  // Each frame's place in it is its free_at (guarded by free_mu_).
  std::vector<Frame*> free_;  // guarded by free_mu_
  std::atomic<uint64_t> free_count_{0};
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_CACHE_H_
