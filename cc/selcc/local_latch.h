#ifndef STRAND_CC_SELCC_LOCAL_LATCH_H_
#define STRAND_CC_SELCC_LOCAL_LATCH_H_

// The local shared-exclusive latch of a cache frame (paper 4.2): it orders
// the threads of one compute node and the invalidation handler on the
// frame's copy and ownership memo.
//
// One 32-bit word: bit 31 = held exclusive, bit 30 = an exclusive waiter is
// queued (new shared holders then wait, so local writers are not starved by
// a stream of readers), bits 29..0 = number of shared holders.
//
// Costs: every uncontended call is one atomic on the word (~10-20 ns).
// Blocking calls spin briefly, then yield, then sleep in growing steps up to
// 50 us (the machine may have fewer cores than threads, and a holder may be
// waiting for a remote reply); they give up at the deadline and return
// false. No call waits without a bound. Handlers use TryLockIdle() only
// (paper 5.1.1: handlers never block behind local threads).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace strand::cc::selcc {

class LocalLatch {
 public:
  bool TryLock() {
    uint32_t s = state_.load(std::memory_order_relaxed);
    if ((s & ~kWriterWaiting) != 0) return false;
    return state_.compare_exchange_strong(s, kWriter,
                                          std::memory_order_acquire);
  }
  // Exclusive, only if nobody holds or waits for the latch: the handler's
  // try_lock, lower priority than any local thread.
  bool TryLockIdle() {
    uint32_t s = 0;
    return state_.compare_exchange_strong(s, kWriter,
                                          std::memory_order_acquire);
  }
  bool TryLockShared() {
    uint32_t s = state_.load(std::memory_order_relaxed);
    while ((s & (kWriter | kWriterWaiting)) == 0) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire)) {
        return true;
      }
    }
    return false;
  }
  // Shared -> exclusive, only when the caller is the only shared holder.
  bool TryUpgrade() {
    uint32_t s = state_.load(std::memory_order_relaxed);
    if ((s & kReaderMask) != 1 || (s & kWriter) != 0) return false;
    return state_.compare_exchange_strong(s, kWriter,
                                          std::memory_order_acquire);
  }
  // Exclusive -> shared, atomically (no writer can slip in).
  void Downgrade() { state_.store(1, std::memory_order_release); }

  void Unlock() { state_.store(0, std::memory_order_release); }
  void UnlockShared() { state_.fetch_sub(1, std::memory_order_release); }

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

  bool IsFree() const { return state_.load() == 0; }

 private:
  static constexpr uint32_t kWriter = 1u << 31;
  static constexpr uint32_t kWriterWaiting = 1u << 30;
  static constexpr uint32_t kReaderMask = kWriterWaiting - 1;
  static constexpr int kSpins = 64;

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

  std::atomic<uint32_t> state_{0};
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_LOCAL_LATCH_H_
