#ifndef STRAND_INDEX_BLINK_TREE_THREAD_STATE_H_
#define STRAND_INDEX_BLINK_TREE_THREAD_STATE_H_

// What a thread keeps for every B-link tree it uses, on its context
// (cc::ThreadContext::Local): the rightmost-leaf hints
// (BLinkTreeTuning::leaf_hint) and the counters. Private to index/; inline,
// since descents reach it once per node.

#include <array>
#include <cstddef>
#include <cstdint>

#include "index/blink_tree.h"

namespace strand::index {

// One hint: direct-mapped by (tree, key prefix), so a slot lost to another
// (tree, prefix) only costs that key a descent.
struct LeafHintSlot {
  uint64_t tree = 0;  // BLinkTree::id_; 0: empty
  size_t prefix = 0;  // hash of (tree, key prefix)
  uint64_t leaf = 0;  // raw GlobalAddress
};

struct BLinkTree::ThreadState {
  static constexpr size_t kLeafHintSlots = 256;  // 6 KiB per thread
  std::array<LeafHintSlot, kLeafHintSlots> leaf_hints;
  LeafHintStats leaf_hint_stats;
  OptimisticReadStats optimistic_read_stats;
};

inline BLinkTree::ThreadState& BLinkTree::StateOf(cc::ThreadContext& ctx) {
  return ctx.Local<ThreadState>();
}

inline OptimisticReadStats& BLinkTree::MutableOptimisticReadStats(
    cc::ThreadContext& ctx) {
  return StateOf(ctx).optimistic_read_stats;
}

inline void BLinkTree::CountLeafHint(cc::ThreadContext& ctx, bool hit) {
  LeafHintStats& stats = StateOf(ctx).leaf_hint_stats;
  ++(hit ? stats.hits : stats.misses);
}

}  // namespace strand::index

#endif  // STRAND_INDEX_BLINK_TREE_THREAD_STATE_H_
