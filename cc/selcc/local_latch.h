#ifndef STRAND_CC_SELCC_LOCAL_LATCH_H_
#define STRAND_CC_SELCC_LOCAL_LATCH_H_

// The local shared-exclusive latch of a cache frame (paper 4.2): it orders
// the threads of one compute node and the invalidation handler on the
// frame's copy and ownership memo.
//
// One 64-bit word:
//   bits 63..32  version: +1 at every release of the exclusive latch
//                (Unlock, Downgrade)
//   bit 31       held exclusive
//   bit 30       an exclusive waiter is queued (new shared holders then
//                wait, so a stream of readers does not starve local writers)
//   bits 29..0   number of shared holders
// The version makes the latch a seqlock too (GclManager::OptimisticRead): a
// reader that finds the same version with bit 31 clear before and after
// reading the guarded state unlatched (OptimisticBegin / OptimisticValid)
// read one consistent state.
//
// Costs: an uncontended call is one atomic on the word (~10-20 ns);
// OptimisticBegin and OptimisticValid are plain loads. Blocking calls spin,
// yield, then sleep in steps up to 50 us, and return false at the deadline.
// Handlers use TryLockIdle() only: they never block behind local threads
// (paper 5.1.1).
// Design: docs/design/selcc.md, "The local latch as a seqlock".

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace strand::cc::selcc {

class LocalLatch {
 public:
  // What a seqlock reader compares (OptimisticValid): the version and the
  // exclusive bit.
  static constexpr uint64_t kVersionMask = ~uint64_t{0} << 32;
  static constexpr uint64_t kExclusive = uint64_t{1} << 31;
  static constexpr uint64_t kValidationMask = kVersionMask | kExclusive;

  bool TryLock() {
    uint64_t s = state_.load(std::memory_order_relaxed);
    if ((s & (kWriter | kReaderMask)) != 0) return false;
    // Clears a queued waiter's bit, as before the version existed: the
    // waiter sets it again on its next round.
    if (!state_.compare_exchange_strong(s, (s & kVersionMask) | kWriter,
                                        std::memory_order_acquire)) {
      return false;
    }
    WriterFence();
    return true;
  }
  // Exclusive, only if nobody holds or waits for the latch: the handler's
  // try_lock, lower priority than any local thread.
  bool TryLockIdle() {
    uint64_t s = state_.load(std::memory_order_relaxed);
    if ((s & kStateMask) != 0) return false;
    if (!state_.compare_exchange_strong(s, s | kWriter,
                                        std::memory_order_acquire)) {
      return false;
    }
    WriterFence();
    return true;
  }
  bool TryLockShared() {
    uint64_t s = state_.load(std::memory_order_relaxed);
    while ((s & (kWriter | kWriterWaiting)) == 0) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) {
        return true;
      }
    }
    return false;
  }
  // Shared -> exclusive, only when the caller is the only shared holder.
  bool TryUpgrade() {
    uint64_t s = state_.load(std::memory_order_relaxed);
    if ((s & kReaderMask) != 1 || (s & kWriter) != 0) return false;
    if (!state_.compare_exchange_strong(s, (s & kVersionMask) | kWriter,
                                        std::memory_order_acquire)) {
      return false;
    }
    WriterFence();
    return true;
  }
  // Exclusive -> shared, atomically (no writer can slip in). Only the
  // exclusive holder changes the version, so it can be read and stored
  // back without an RMW; a waiter's bit set meanwhile is dropped, as an
  // Unlock drops it.
  void Downgrade() {
    state_.store(NextVersion() | 1, std::memory_order_release);
  }

  void Unlock() { state_.store(NextVersion(), std::memory_order_release); }
  void UnlockShared() { state_.fetch_sub(1, std::memory_order_release); }

  // Seqlock reads (see the top of the file). OptimisticBegin: the word to
  // validate against, or nullopt while an exclusive holder is in.
  // OptimisticValid: whether the word still has `begin`'s version and no
  // exclusive holder; call it after the last read of the guarded state.
  std::optional<uint64_t> OptimisticBegin() const {
    const uint64_t s = state_.load(std::memory_order_acquire);
    if ((s & kWriter) != 0) return std::nullopt;
    return s & kValidationMask;
  }
  bool OptimisticValid(uint64_t begin) const {
    ReaderFence();
    return (state_.load(std::memory_order_relaxed) & kValidationMask) == begin;
  }
  // The word itself, for a validation that does not know this class
  // (GclManager::Validate).
  const std::atomic<uint64_t>& word() const { return state_; }

  // The acquire fence of a seqlock reader, between its reads of the
  // guarded state and its re-read of the word. TSan does not model
  // standalone fences (GCC warns with -Wtsan); under TSan the reads of the
  // guarded state are ignored anyway (cc/optimistic_read.h), so the fence
  // is left out there.
  static void ReaderFence() {
#if !defined(__SANITIZE_THREAD__)
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
  }

  // Blocking forms; false when `deadline` passed first.
  bool LockUntil(absl::Time deadline) {
    for (int i = 0;; ++i) {
      if (TryLock()) return true;
      // Announce the wait (again: a winner's Unlock clears the bit), so new
      // shared holders queue behind us.
      if (i >= kSpins &&
          (state_.load(std::memory_order_relaxed) & kWriterWaiting) == 0) {
        state_.fetch_or(kWriterWaiting, std::memory_order_relaxed);
      }
      if (!Pause(i, deadline)) {
        // Withdraw, or readers would queue behind nobody. Another waiter
        // whose bit this clears sets it again on its next round.
        state_.fetch_and(~kWriterWaiting, std::memory_order_relaxed);
        return false;
      }
    }
  }
  bool LockSharedUntil(absl::Time deadline) {
    for (int i = 0;; ++i) {
      if (TryLockShared()) return true;
      if (!Pause(i, deadline)) return false;
    }
  }

  bool IsFree() const { return (state_.load() & kStateMask) == 0; }
  // The version (tests).
  uint32_t version() const {
    return static_cast<uint32_t>(state_.load(std::memory_order_relaxed) >> 32);
  }

 private:
  static constexpr uint64_t kWriter = kExclusive;
  static constexpr uint64_t kWriterWaiting = uint64_t{1} << 30;
  static constexpr uint64_t kReaderMask = kWriterWaiting - 1;
  static constexpr uint64_t kStateMask = ~kVersionMask;
  static constexpr int kSpins = 64;

  // The exclusive holder's next word: version + 1, nothing held.
  uint64_t NextVersion() const {
    return (state_.load(std::memory_order_relaxed) & kVersionMask) +
           (uint64_t{1} << 32);
  }
  // After an exclusive acquisition: the seqlock writer's release fence
  // (docs/design/selcc.md, memory order). A compiler barrier on x86-64;
  // left out under TSan like ReaderFence.
  static void WriterFence() {
#if !defined(__SANITIZE_THREAD__)
    std::atomic_thread_fence(std::memory_order_release);
#endif
  }

  // The i-th wait; false once past the deadline (checked every so often so
  // the fast spins read no clock).
  static bool Pause(int i, absl::Time deadline) {
    if (i < kSpins) {
      __builtin_ia32_pause();
      return true;
    }
    if ((i & 7) == 0 && absl::Now() > deadline) return false;
    if (i < kSpins + 32) {
      std::this_thread::yield();
    } else {
      absl::SleepFor(absl::Microseconds(std::min(50, (i - kSpins - 31))));
    }
    return true;
  }

  std::atomic<uint64_t> state_{0};
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_LOCAL_LATCH_H_
