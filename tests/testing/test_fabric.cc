#include "tests/testing/test_fabric.h"

#include "gtest/gtest.h"

namespace strand::testing {

rdma::FabricOptions TestFabricOptions(int memory_nodes, int compute_nodes) {
  rdma::FabricOptions options;
  options.memory_nodes = memory_nodes;
  options.compute_nodes = compute_nodes;
  options.pool_bytes = 64 * rdma::FabricOptions::kMiB;
  options.chunk_bytes = 256 * 1024;
  return options;
}

std::unique_ptr<rdma::Fabric> MakeTestFabric(
    const rdma::FabricOptions& options) {
  auto fabric = rdma::CreateFabric(options);
  EXPECT_TRUE(fabric.ok()) << fabric.status();
  if (!fabric.ok()) return nullptr;
  return *std::move(fabric);
}

}  // namespace strand::testing
