#ifndef STRAND_INDEX_CPU_PATH_FLAGS_H_
#define STRAND_INDEX_CPU_PATH_FLAGS_H_

// The CPU-path switches of the binaries that search indexes (tpcc,
// ycsb_bench), one runtime switch per optimization for the ablation:
//   --prefetch=narrow|full   what an index search prefetches
//                            (cc::CcOptions::prefetch)
//   --index_leaf_hint        BLinkTreeTuning::leaf_hint
//   --optimistic_reads       BLinkTreeTuning::optimistic_reads
//   --index_word_search      BLinkTreeTuning::word_search
//   --index_leaf_walk        BLinkTreeTuning::leaf_walk
//   --identity_frames        cc::CcOptions::identity_frames
// Link strand_index_flags into a binary to get them.

#include "absl/status/statusor.h"
#include "cc/options.h"
#include "index/blink_tree.h"

namespace strand::index {

struct CpuPathSwitches {
  cc::PrefetchScope prefetch = cc::PrefetchScope::kNarrow;
  bool identity_frames = true;
  BLinkTreeTuning tuning;
};

// The switches from the flags; InvalidArgument naming --prefetch when its
// value is not a scope (the caller exits with a usage error).
absl::StatusOr<CpuPathSwitches> CpuPathSwitchesFromFlags();

}  // namespace strand::index

#endif  // STRAND_INDEX_CPU_PATH_FLAGS_H_
