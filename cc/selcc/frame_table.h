#ifndef STRAND_CC_SELCC_FRAME_TABLE_H_
#define STRAND_CC_SELCC_FRAME_TABLE_H_

// The cache's direct-mapped frame table: for every GCL the memory pool can
// hold, one slot naming the frame that caches it, indexed by the GCL's
// position in its memory node (offset / gcl_size), so a hit finds its frame
// with no lock (Cache::LatchDirect) instead of a shard lock and a map probe.
//
// The table is a hint shared by every thread of the node; the shard maps
// stay the authority. The cache sets and clears slots under the shard lock,
// but a slot may be stale by the time a reader latches its frame (evicted,
// reused for another GCL, freed): a reader trusts it only after checking
// gcl and in_map under the latch (frame.h), or under the latch's version
// for an optimistic reader (SelccManager::OptimisticRead).
//
// Slots are exact while GCLs sit on a gcl_size grid from offset 0
// (rdma/memory_node_layout.h). Off the grid two GCLs may share a slot: the
// last one published or looked up wins, Clear only clears a slot that still
// names the frame being removed, and the other GCL goes through the map.
//
// Cost: 8 bytes of virtual memory per GCL of pool, zero-filled on demand,
// on huge pages. Get is one division (a shift for a power-of-two gcl_size)
// and one load.
// Design: docs/design/selcc.md, "The cache".

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "base/huge_page_memory.h"
#include "cc/selcc/frame.h"
#include "glog/logging.h"
#include "rdma/global_address.h"

namespace strand::cc::selcc {

class FrameTable {
 public:
  // The pool the table covers: `memory_nodes` nodes of `memory_node_bytes`
  // each, carved into GCLs of `gcl_size` bytes. No memory nodes: an empty
  // table, every Get misses (for a Cache tested on its own).
  struct Geometry {
    int memory_nodes = 0;
    uint64_t memory_node_bytes = 0;
    uint32_t gcl_size = 0;
  };

  explicit FrameTable(const Geometry& g)
      : gcl_size_(g.gcl_size),
        gcl_shift_(g.gcl_size != 0 && (g.gcl_size & (g.gcl_size - 1)) == 0
                       ? __builtin_ctz(g.gcl_size)
                       : -1),
        memory_nodes_(g.gcl_size == 0 ? 0 : g.memory_nodes),
        slots_per_node_(g.gcl_size == 0 ? 0
                                        : g.memory_node_bytes / g.gcl_size + 1),
        memory_(std::max<uint64_t>(1, memory_nodes_ * slots_per_node_) *
                sizeof(Frame*)),
        slots_(reinterpret_cast<Frame**>(memory_.data())) {}

  FrameTable(const FrameTable&) = delete;
  FrameTable& operator=(const FrameTable&) = delete;

  // The frame last published for `gcl`'s slot, or nullptr: a guess until
  // latched and checked.
  Frame* Get(rdma::GlobalAddress gcl) const {
    Frame** s = Slot(gcl);
    return s == nullptr
               ? nullptr
               : std::atomic_ref<Frame*>(*s).load(std::memory_order_acquire);
  }
  // `gcl`'s place on the pool's grid of GCLs, the memory nodes
  // interleaved (position p of node n is p * memory_nodes + n), so the
  // lowest positions are the first GCLs allocated on every node;
  // kOffGrid past the table (an empty table: always).
  static constexpr uint64_t kOffGrid = ~uint64_t{0};
  uint64_t GridPosition(rdma::GlobalAddress gcl) const {
    if (gcl.node() >= memory_nodes_) return kOffGrid;
    const uint64_t i =
        gcl_shift_ >= 0 ? gcl.offset() >> gcl_shift_ : gcl.offset() / gcl_size_;
    return i < slots_per_node_ ? i * memory_nodes_ + gcl.node() : kOffGrid;
  }
  // Starts loading `gcl`'s slot (a hint for a Get soon after).
  void Prefetch(rdma::GlobalAddress gcl) const {
    if (Frame** s = Slot(gcl); s != nullptr) __builtin_prefetch(s);
  }
  // Names `f` in `gcl`'s slot (the cache, under gcl's shard lock).
  void Set(rdma::GlobalAddress gcl, Frame* f) {
    Frame** s = Slot(gcl);
    if (s == nullptr) return;
    std::atomic_ref<Frame*> slot(*s);
    // Test first: a hit's lookup re-publishes a frame the slot already
    // names, and a store would take the line away from other readers.
    if (slot.load(std::memory_order_relaxed) != f) {
      slot.store(f, std::memory_order_release);
    }
  }
  // Empties `gcl`'s slot if it names `f` (a slot shared with a GCL off the
  // grid may name that GCL's frame, published under another shard lock).
  void Clear(rdma::GlobalAddress gcl, Frame* f) {
    Frame** s = Slot(gcl);
    if (s == nullptr) return;
    std::atomic_ref<Frame*>(*s).compare_exchange_strong(
        f, nullptr, std::memory_order_release, std::memory_order_relaxed);
  }

 private:
  Frame** Slot(rdma::GlobalAddress gcl) const {
    if (gcl.node() >= memory_nodes_) return nullptr;
    const uint64_t i =
        gcl_shift_ >= 0 ? gcl.offset() >> gcl_shift_ : gcl.offset() / gcl_size_;
    if (i >= slots_per_node_) return nullptr;
    return &slots_[gcl.node() * slots_per_node_ + i];
  }

  const uint64_t gcl_size_;
  const int gcl_shift_;  // log2(gcl_size), or -1 when not a power of two
  const uint64_t memory_nodes_;
  const uint64_t slots_per_node_;
  const HugePageMemory memory_;
  // Plain pointers reached through std::atomic_ref: fresh pages are zero
  // (nullptr) and stay untouched until used, which an array of std::atomic
  // (constructed one by one) would not.
  Frame** const slots_;
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_FRAME_TABLE_H_
