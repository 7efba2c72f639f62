#ifndef STRAND_TESTS_ENGINE_ANOMALY_TESTING_H_
#define STRAND_TESTS_ENGINE_ANOMALY_TESTING_H_

// What the files of the anomaly_test binary share: its deployments (every
// algorithm x protocol at two compute nodes), its engine options (faults
// injected into the coherence protocol) and the pause that makes racing
// transactions overlap.

#include <cstdint>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "engine/engine_options.h"
#include "tests/engine/txn_test_db.h"

namespace strand::testing {

inline constexpr int kAnomalyNodes = 2;

inline std::vector<TxnTestConfig> AnomalyConfigs() {
  std::vector<TxnTestConfig> configs;
  for (const TxnTestConfig& c :
       TxnTestConfigs({cc::Protocol::kSel, cc::Protocol::kSelcc})) {
    if (c.compute_nodes == kAnomalyNodes) configs.push_back(c);
  }
  return configs;
}

// TxnTestOptions with invalidations dropped (as if the holder were busy)
// and delayed, so the coherence protocol's slow paths run too; a cache of
// 256 lines (a transaction holds up to ~30), a pool of `pool_bytes`, and
// retries without end.
inline engine::EngineOptions AnomalyOptions(const TxnTestConfig& config,
                                            uint64_t pool_bytes) {
  engine::EngineOptions o = TxnTestOptions(config);
  o.cc.testing_faults.drop_probability = 0.05;
  o.cc.testing_faults.message_delay = absl::Microseconds(5);
  o.cc.cache_bytes = 256 * 256;
  o.fabric.pool_bytes = pool_bytes;
  o.retry.max_retries = 1000000;
  return o;
}

// Widens the window between a transaction's read and its write.
inline void Pause() {
  const absl::Time until = absl::Now() + absl::Microseconds(30);
  while (absl::Now() < until) std::this_thread::yield();
}

}  // namespace strand::testing

#endif  // STRAND_TESTS_ENGINE_ANOMALY_TESTING_H_
