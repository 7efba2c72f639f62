#ifndef STRAND_TESTS_TESTING_CC_CLUSTER_H_
#define STRAND_TESTS_TESTING_CC_CLUSTER_H_

// A fabric plus one GclManager per compute node: the deployment most tests
// above rdma/ need.
//
//   auto cluster = testing::CcCluster::Create(/*compute_nodes=*/4, options);
//   cc::GclManager& node0 = cluster->manager(0);

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"
#include "rdma/fabric.h"
#include "rdma/fabric_options.h"

namespace strand::testing {

class CcCluster {
 public:
  static absl::StatusOr<std::unique_ptr<CcCluster>> Create(
      int compute_nodes, const cc::CcOptions& options,
      rdma::FabricOptions fabric_options);
  // With TestFabricOptions(1 memory node, compute_nodes).
  static absl::StatusOr<std::unique_ptr<CcCluster>> Create(
      int compute_nodes, const cc::CcOptions& options);

  ~CcCluster();

  int size() const { return static_cast<int>(managers_.size()); }
  cc::GclManager& manager(int node) { return *managers_[node]; }
  rdma::Fabric& fabric() { return *fabric_; }

 private:
  std::unique_ptr<rdma::Fabric> fabric_;
  std::vector<std::unique_ptr<cc::GclManager>> managers_;
};

}  // namespace strand::testing

#endif  // STRAND_TESTS_TESTING_CC_CLUSTER_H_
