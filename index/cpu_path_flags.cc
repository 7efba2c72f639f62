#include "index/cpu_path_flags.h"

#include <gflags/gflags.h>

#include <string>

DEFINE_string(prefetch, "narrow",
              "What index searches prefetch: narrow (a leaf's header and the "
              "entries around where the key is expected) or full (whole "
              "leaves: the ablation). Tuples are prefetched whole either way "
              "(a read copies all of it)");
DEFINE_bool(index_leaf_hint, true,
            "Index inserts (and commit-time index changes) latch the leaf "
            "the thread last changed for the key's prefix (a district's "
            "ascending orders) when its fences cover the key, instead of "
            "descending from the root; false: always descend (the ablation)");
DEFINE_bool(optimistic_reads, true,
            "Index descents read the nodes above the leaves, and lookups "
            "and commit-time checks their leaves, with no latch and validate "
            "the read (a version in the cache frame's latch word), so "
            "threads reading the same nodes write no shared cache line; a "
            "node that changed or is not cached is latched. false: latch "
            "every node (the ablation)");
DEFINE_bool(index_word_search, true,
            "Node searches for keys of 4 or 8 bytes (TPC-C's item, "
            "warehouse, district, customer, order and stock keys) compare "
            "one big-endian word per probe and interpolate in integers; "
            "false: compare bytes, as other key widths do (the ablation)");
DEFINE_bool(index_leaf_walk, true,
            "A commit's index changes, sorted, take each leaf once: a key "
            "below the current leaf's high fence goes there with no lookup, "
            "searched from the previous change's position; false: each "
            "change finds its leaf and searches it from scratch (the "
            "ablation)");

DEFINE_bool(identity_frames, true,
            "SELCC caches a GCL, when it can, in the frame its address "
            "names, so a cache hit finds its frame from the address instead "
            "of loading the frame table's slot first (a cache miss of its "
            "own at random); false: every hit asks the frame table (the "
            "ablation)");

namespace strand::index {

absl::StatusOr<CpuPathSwitches> CpuPathSwitchesFromFlags() {
  auto prefetch = cc::ParsePrefetchScope(FLAGS_prefetch);
  if (!prefetch.ok()) return prefetch.status();
  CpuPathSwitches s;
  s.prefetch = *prefetch;
  s.identity_frames = FLAGS_identity_frames;
  s.tuning.leaf_hint = FLAGS_index_leaf_hint;
  s.tuning.optimistic_reads = FLAGS_optimistic_reads;
  s.tuning.word_search = FLAGS_index_word_search;
  s.tuning.leaf_walk = FLAGS_index_leaf_walk;
  return s;
}

}  // namespace strand::index
