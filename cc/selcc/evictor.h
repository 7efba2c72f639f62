#ifndef STRAND_CC_SELCC_EVICTOR_H_
#define STRAND_CC_SELCC_EVICTOR_H_

// Cache eviction (paper 5.2). Evicting a frame = releasing its global
// ownership (M: WRITE of the dirty range + FAA -Exclusive; S: FAA -Reader;
// I: nothing) and returning the frame to the free list.
//
// Batched (CcOptions::batched_eviction, 5.2.1): a background thread keeps
// at least low_watermark() frames free. When fewer are, it takes
// low_watermark - free victims from the CLOCK tails (at most kRingSlots per
// pass), copies each dirty range into a slot of its staging ring, returns
// the frame to the free list AT ONCE, and then releases all of them with
// one batch per memory node: one round trip per memory node per pass
// instead of one per victim. The ring bounds the releases in flight; a GCL
// whose release is in flight gets no new frame until it is done (cache.h),
// so nobody re-acquires a latch word this node has not yet released.
// Off: every eviction is done by the thread that needs a frame, one round
// trip per victim (EvictOne).
//
// Dirty bounds (5.2.2) are applied by NodeState::AppendRelease: only the
// dirty range is written. No remote operation is issued under a cache
// shard lock. The thread blocks when there is nothing to do.

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cc/selcc/node_state.h"
#include "rdma/fabric.h"

namespace strand::cc::selcc {

class Evictor {
 public:
  static constexpr size_t kRingSlots = 64;  // L_out: releases in flight

  Evictor(NodeState* state, rdma::ComputeNode* node);
  ~Evictor() { Stop(); }

  // Starts the background thread (only with batched eviction).
  absl::Status Start();
  void Stop();

  // Free frames below which the background thread evicts (L of 5.2.1),
  // and up to which it then evicts (twice that: hysteresis, so passes are
  // big batches rather than one victim per kick).
  size_t low_watermark() const { return low_watermark_; }
  size_t high_watermark() const { return 2 * low_watermark_; }

  // Called after a miss took a free frame: wakes the thread if the free
  // list ran low. Cheap when it did not (one relaxed load).
  void MaybeKick();

  // Evicts one victim with the caller's endpoint (one round trip if it
  // held ownership): the fallback of a miss that found no free frame even
  // after letting the background thread run. False if every frame is in
  // use.
  absl::StatusOr<bool> EvictOne(rdma::Endpoint& endpoint);

 private:
  void Loop();
  // One batched pass; how many frames it freed.
  absl::StatusOr<size_t> RunPass();

  NodeState* const state_;
  rdma::ComputeNode* const node_;
  const size_t low_watermark_;
  std::unique_ptr<rdma::Endpoint> endpoint_;  // the thread's
  std::vector<uint8_t> ring_;                 // kRingSlots payload copies
  std::thread thread_;

  std::mutex mu_;  // std::mutex: TSan sees it (see cache.h)
  std::condition_variable wake_;
  bool kicked_ = false;  // guarded by mu_
  bool stop_ = false;    // guarded by mu_
  std::atomic<bool> kick_pending_{false};
  std::atomic<bool> running_{false};
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_EVICTOR_H_
