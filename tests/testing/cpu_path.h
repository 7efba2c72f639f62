#ifndef STRAND_TESTS_TESTING_CPU_PATH_H_
#define STRAND_TESTS_TESTING_CPU_PATH_H_

// The CPU-path switches (each optimization's ablation switch) as a test
// run wants them: their
// defaults, or all of them off with STRAND_TEST_CPU_PATH=ablation
// (test_fabric.h), so the suites that use them pass both ways. CcCluster
// applies the coherence layer's (CcOptions::prefetch, identity_frames)
// itself; suites that
// open trees or engines apply the rest with these.

#include "cc/options.h"
#include "index/blink_tree.h"
#include "storage/heap_table_tuning.h"
#include "tests/testing/test_fabric.h"

namespace strand::testing {

inline index::BLinkTreeTuning TestTreeTuning() {
  index::BLinkTreeTuning tuning;
  if (TestCpuPathAblation()) {
    tuning.leaf_hint = false;
    tuning.optimistic_reads = false;
    tuning.word_search = false;
    tuning.leaf_walk = false;
  }
  return tuning;
}

inline storage::HeapTableTuning TestHeapTuning() {
  storage::HeapTableTuning tuning;
  tuning.unlocked_inserts = !TestCpuPathAblation();
  return tuning;
}

inline void ApplyTestCpuPath(cc::CcOptions& options) {
  if (TestCpuPathAblation()) {
    options.prefetch = cc::PrefetchScope::kFull;
    options.identity_frames = false;
  }
}

// For engine::EngineOptions (a template, so index/ tests need not see
// engine/).
template <typename EngineOptions>
void ApplyTestCpuPathToEngine(EngineOptions& options) {
  ApplyTestCpuPath(options.cc);
  options.index = TestTreeTuning();
  options.optimistic_tuple_reads = !TestCpuPathAblation();
  options.heap = TestHeapTuning();
}

}  // namespace strand::testing

#endif  // STRAND_TESTS_TESTING_CPU_PATH_H_
