#ifndef STRAND_CC_SELCC_FRAME_HINTS_H_
#define STRAND_CC_SELCC_FRAME_HINTS_H_

// One thread's memory of which cache frame held which GCL when the thread
// last latched it: a small direct-mapped table, private to the thread, so
// a hit can go straight to the frame instead of through the cache's shard
// lock and hash map (cache.h).
//
// A hint is only a guess and is never invalidated: since it was stored the
// frame may have been evicted, reused for another GCL, or had its copy
// invalidated by a peer. Cache::LatchHinted checks all of that under the
// frame's latch before the hit counts (a frame's gcl and in_map change only
// while its latch is held exclusive, frame.h), so a stale hint costs one
// failed check and the ordinary lookup, never a wrong frame.
//
// Costs: Get and Put are a multiply, a shift and one 16-byte slot; the
// table is kSlots * 16 bytes per thread context.

#include <array>
#include <cstddef>
#include <cstdint>

#include "cc/selcc/frame.h"
#include "rdma/global_address.h"

namespace strand::cc::selcc {

class FrameHints {
 public:
  static constexpr int kSlotBits = 12;
  static constexpr size_t kSlots = size_t{1} << kSlotBits;

  // The frame last seen caching `gcl`, or nullptr if none is remembered.
  Frame* Get(rdma::GlobalAddress gcl) const {
    const Slot& s = slots_[Index(gcl)];
    return s.gcl == gcl.raw() ? s.frame : nullptr;
  }
  // Remembers that `f` caches `gcl` (replacing whatever shared the slot).
  void Put(rdma::GlobalAddress gcl, Frame* f) {
    slots_[Index(gcl)] = Slot{gcl.raw(), f};
  }

 private:
  struct Slot {
    uint64_t gcl = 0;  // raw GlobalAddress; 0 (null) matches no GCL
    Frame* frame = nullptr;
  };
  // Fibonacci hashing: GCL addresses are multiples of gcl_size, so their
  // low bits alone would fill a fraction of the slots.
  static size_t Index(rdma::GlobalAddress gcl) {
    return static_cast<size_t>((gcl.raw() * 0x9e3779b97f4a7c15ull) >>
                               (64 - kSlotBits));
  }

  std::array<Slot, kSlots> slots_{};
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_FRAME_HINTS_H_
