#include "tests/testing/cc_cluster.h"

#include "tests/testing/test_fabric.h"

namespace strand::testing {

absl::StatusOr<std::unique_ptr<CcCluster>> CcCluster::Create(
    int compute_nodes, const cc::CcOptions& options,
    rdma::FabricOptions fabric_options) {
  fabric_options.compute_nodes = compute_nodes;
  auto fabric = rdma::CreateFabric(fabric_options);
  if (!fabric.ok()) return fabric.status();
  auto cluster = std::unique_ptr<CcCluster>(new CcCluster());
  cluster->fabric_ = *std::move(fabric);
  cc::CcOptions o = options;
  if (TestCpuPathAblation()) {
    o.prefetch = cc::PrefetchScope::kFull;
    o.identity_frames = false;
  }
  for (int i = 0; i < compute_nodes; ++i) {
    auto manager = cc::GclManager::Create(*cluster->fabric_, i, o);
    if (!manager.ok()) return manager.status();
    cluster->managers_.push_back(*std::move(manager));
  }
  return cluster;
}

absl::StatusOr<std::unique_ptr<CcCluster>> CcCluster::Create(
    int compute_nodes, const cc::CcOptions& options) {
  return Create(compute_nodes, options, TestFabricOptions(1, compute_nodes));
}

CcCluster::~CcCluster() {
  // Managers first: their handler threads use the fabric.
  managers_.clear();
  fabric_.reset();
}

}  // namespace strand::testing
