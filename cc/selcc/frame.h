#ifndef STRAND_CC_SELCC_FRAME_H_
#define STRAND_CC_SELCC_FRAME_H_

// A cache frame: one compute node's copy of one GCL (paper 4.2) and its state.
//
// Who may touch what:
//   gcl, clock links, in_map  the cache shard's lock (cache.h); gcl and
//                             in_map change only under the exclusive latch,
//                             so a latch (or pin) holder may read them too
//   referenced                atomic: set by hits, cleared by the clock
//   memo, dirty_*, data       the local latch: read shared, written exclusive
//   gcl, in_map, memo, data   also read unlatched by optimistic readers
//                             (GclManager::OptimisticRead), trusted only if
//                             the latch's version did not move (local_latch.h)
//   pins                      atomic; a pinned frame is never evicted
//   fairness counters         atomics, advisory (a lost update only shifts
//                             when a lease expires)
//
// Invariants (with the latch held):
//   memo == kModified  <=> the latch word names this node holder (or this
//                          node's handler, which holds the latch, is granting
//                          a handover away from it)
//   memo == kShared    <=> this node's reader bit is set
//   memo == kInvalid   =>  data means nothing; dirty range is empty
//   dirty range nonempty => memo == kModified and memory is stale there

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cc/selcc/local_latch.h"
#include "rdma/fabric.h"
#include "rdma/global_address.h"

namespace strand::cc::selcc {

// Ownership memo (paper 4.2): what this node holds globally.
enum class Memo : uint8_t { kInvalid, kShared, kModified };

inline const char* MemoName(Memo m) {
  switch (m) {
    case Memo::kInvalid:
      return "I";
    case Memo::kShared:
      return "S";
    case Memo::kModified:
      return "M";
  }
  return "?";
}

// Cache-line aligned, with what a hit and its unlock touch (data, gcl,
// latch, memo, map membership, lease flags) in the first 64 bytes: a hit
// on a cold frame then costs one cache miss for the frame, not two.
struct alignas(64) Frame {
  // Fixed at start-up: the payload copy lives in the registered arena, so
  // a peer can forward a GCL straight into it (4.4.1).
  uint8_t* data = nullptr;

  rdma::GlobalAddress gcl;
  LocalLatch latch;
  std::atomic<int> pins{0};
  // CLOCK reference bit (cache.h): a hit only sets it, so a hit writes
  // nothing outside its own frame.
  std::atomic<bool> referenced{false};
  // Sets the reference bit; tests first, so a hit on a frame already
  // referenced writes nothing (no cache-line ping-pong between readers).
  void MarkReferenced() {
    if (!referenced.load(std::memory_order_relaxed)) {
      referenced.store(true, std::memory_order_relaxed);
    }
  }
  Memo memo = Memo::kInvalid;
  bool in_map = false;  // in the shard's map and clock list
  // Lease (5.3.1): active once an invalidation was dropped because local
  // threads held the latch; counts local waits for the latch while active.
  std::atomic<bool> lease_active{false};
  uint32_t dirty_begin = 0;  // payload offsets, [begin, end); empty if equal
  uint32_t dirty_end = 0;
  // Highest priority among requests dropped because the latch was busy; a
  // starved peer (>= kLeaseBreakPriority) ends the lease at the next unlock.
  std::atomic<uint32_t> starved_priority{0};
  std::atomic<uint32_t> read_waits{0};
  std::atomic<uint32_t> write_waits{0};

  // Colder: the rest of the fairness state, the peer address and the
  // clock links.
  rdma::PeerAddress peer;  // of `data`
  // Spin-wait (5.3.2): global readers of this node wait until then (steady
  // clock ns) so a starved writer finds no reader in the way.
  std::atomic<int64_t> readers_hold_off_until_ns{0};
  // After a lease ends for a starved peer, this node's threads do not
  // re-acquire the line globally before then (steady clock ns), so the
  // peer's next retry finds the latch free instead of losing the race.
  std::atomic<int64_t> local_hold_off_until_ns{0};
  // Priority handover (5.3.2): the most urgent exclusive request this node
  // dropped while its latch was busy, packed by HandoverMemo (0 = none).
  // Written by handlers (max by priority), taken by whoever gives the line
  // up; one word so neither side needs a lock. Advisory: see
  // docs/design/selcc.md for why a stale memo is harmless.
  std::atomic<uint64_t> handover_memo{0};
  // The shard's clock list (newest and second-chanced frames at the head,
  // the hand at the tail).
  Frame* clock_prev = nullptr;
  Frame* clock_next = nullptr;
  // Where the frame sits in the cache's free list (its mutex guards it),
  // kNotFree while in use: a miss takes a particular free frame (its
  // GCL's identity frame, cache.h) without a search.
  static constexpr uint64_t kNotFree = ~uint64_t{0};
  uint64_t free_at = kNotFree;

  bool dirty() const { return dirty_begin != dirty_end; }
  void ClearDirty() { dirty_begin = dirty_end = 0; }
  void AddDirty(uint32_t begin, uint32_t end) {
    if (begin == end) return;
    if (!dirty()) {
      dirty_begin = begin;
      dirty_end = end;
    } else {
      dirty_begin = std::min(dirty_begin, begin);
      dirty_end = std::max(dirty_end, end);
    }
  }
  void ResetFairness() {
    lease_active.store(false, std::memory_order_relaxed);
    starved_priority.store(0, std::memory_order_relaxed);
    read_waits.store(0, std::memory_order_relaxed);
    write_waits.store(0, std::memory_order_relaxed);
    handover_memo.store(0, std::memory_order_relaxed);
  }
};

static_assert(offsetof(Frame, write_waits) + sizeof(Frame::write_waits) <= 64,
              "a hit's fields no longer fit the frame's first cache line");
static_assert(sizeof(Frame) == 128, "a frame no longer fits two cache lines");

// A remembered dropped request (Frame::handover_memo): the sender's node,
// its priority (N_r) and whether it wants the line exclusive. Only
// exclusive requests are remembered (docs/design/selcc.md says why).
struct HandoverMemo {
  int node = -1;  // -1: none
  uint32_t priority = 0;
  bool exclusive = false;

  static uint64_t Pack(int node, uint32_t priority, bool exclusive) {
    return uint64_t{priority} | (uint64_t(node + 1) & 0xff) << 32 |
           uint64_t{exclusive} << 40;
  }
  static HandoverMemo Unpack(uint64_t w) {
    HandoverMemo m;
    m.priority = static_cast<uint32_t>(w);
    m.node = static_cast<int>((w >> 32) & 0xff) - 1;
    m.exclusive = ((w >> 40) & 1) != 0;
    return m;
  }
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_FRAME_H_
