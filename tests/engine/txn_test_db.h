#ifndef STRAND_TESTS_ENGINE_TXN_TEST_DB_H_
#define STRAND_TESTS_ENGINE_TXN_TEST_DB_H_

// A small engine for transaction tests: an "accounts" table (id, balance)
// with a unique index on id, under a given algorithm, protocol and number of
// compute nodes, with a cache smaller than the data.

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "index/key_codec.h"
#include "tests/testing/cpu_path.h"
#include "tests/testing/test_fabric.h"

namespace strand::testing {

struct TxnTestConfig {
  txn::CcAlgorithm algorithm;
  cc::Protocol protocol;
  int compute_nodes;
};

inline void PrintTo(const TxnTestConfig& c, std::ostream* os) {
  *os << txn::CcAlgorithmName(c.algorithm) << "/"
      << cc::ProtocolName(c.protocol) << "/" << c.compute_nodes << " nodes";
}

inline std::string TxnTestName(
    const ::testing::TestParamInfo<TxnTestConfig>& info) {
  return std::string(txn::CcAlgorithmName(info.param.algorithm)) + "_" +
         cc::ProtocolName(info.param.protocol) + "_" +
         std::to_string(info.param.compute_nodes) + "nodes";
}

inline std::vector<TxnTestConfig> TxnTestConfigs(
    const std::vector<cc::Protocol>& protocols) {
  std::vector<TxnTestConfig> configs;
  for (auto algorithm :
       {txn::CcAlgorithm::kTwoPhaseLocking,
        txn::CcAlgorithm::kTimestampOrdering, txn::CcAlgorithm::kOptimistic}) {
    for (cc::Protocol protocol : protocols) {
      for (int nodes : {1, 2, 4})
        configs.push_back({algorithm, protocol, nodes});
    }
  }
  return configs;
}

inline engine::EngineOptions TxnTestOptions(const TxnTestConfig& config) {
  engine::EngineOptions o;
  o.fabric = TestFabricOptions(1, config.compute_nodes);
  o.cc.protocol = config.protocol;
  o.cc.gcl_size = 256;          // few tuples per line: real conflicts
  o.cc.cache_bytes = 256 * 16;  // 16 lines: smaller than the data
  o.algorithm = config.algorithm;
  o.retry.max_retries = 100000;
  ApplyTestCpuPathToEngine(o);
  return o;
}

// Failover on (EngineOptions::failover) with `lease` and a 1 MiB redo
// ring per node: the failure tests' deployment.
inline void EnableTestFailover(engine::EngineOptions& o, absl::Duration lease) {
  o.failover.enabled = true;
  o.failover.node_lease = lease;
  o.failover.redo_ring_bytes = 1 << 20;
}

inline std::string AccountKey(int64_t id) {
  return index::KeyBuilder().Int64(id).Build(8);
}

}  // namespace strand::testing

#endif  // STRAND_TESTS_ENGINE_TXN_TEST_DB_H_
