#include "tests/testing/test_fabric.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "rdma/fabric_options.h"

namespace strand::testing {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

rdma::FabricKind TestFabricKind() {
  const std::string name = Env("STRAND_TEST_FABRIC");
  if (name.empty()) return rdma::FabricKind::kLoopback;
  auto kind = rdma::ParseFabricKind(name);
  // A typo must not silently test loopback instead.
  if (!kind.ok()) {
    ADD_FAILURE() << "STRAND_TEST_FABRIC: " << kind.status().message();
    return rdma::FabricKind::kLoopback;
  }
  return *kind;
}

rdma::MessageDelivery TestMessageDelivery() {
  const std::string name = Env("STRAND_TEST_MESSAGE_DELIVERY");
  if (name.empty()) return rdma::MessageDelivery::kInline;
  auto delivery = rdma::ParseMessageDelivery(name);
  if (!delivery.ok()) {
    ADD_FAILURE() << "STRAND_TEST_MESSAGE_DELIVERY: "
                  << delivery.status().message();
    return rdma::MessageDelivery::kInline;
  }
  return *delivery;
}

bool TestCpuPathAblation() {
  const std::string name = Env("STRAND_TEST_CPU_PATH");
  if (name.empty() || name == "default") return false;
  if (name != "ablation") {
    ADD_FAILURE() << "STRAND_TEST_CPU_PATH: " << name
                  << " is not default or ablation";
  }
  return true;
}

rdma::FabricOptions TestFabricOptions(int memory_nodes, int compute_nodes) {
  rdma::FabricOptions options;
  options.kind = TestFabricKind();
  options.message_delivery = TestMessageDelivery();
  options.memory_nodes = memory_nodes;
  options.compute_nodes = compute_nodes;
  options.pool_bytes = 64 * rdma::FabricOptions::kMiB;
  options.chunk_bytes = 256 * 1024;
  if (options.kind == rdma::FabricKind::kVerbs) {
    options.in_process_address = Env("STRAND_TEST_RDMA_ADDRESS");
    if (options.in_process_address.empty()) {
      options.in_process_address = Env("RDMA_VM_IP");
    }
    if (options.in_process_address.empty()) {
      ADD_FAILURE() << "STRAND_TEST_FABRIC=verbs needs "
                       "STRAND_TEST_RDMA_ADDRESS, an address of this machine "
                       "on an RDMA device";
    }
  }
  return options;
}

std::unique_ptr<rdma::Fabric> MakeTestFabric(
    const rdma::FabricOptions& options) {
  absl::StatusOr<std::unique_ptr<rdma::Fabric>> fabric =
      rdma::CreateFabric(options);
  EXPECT_TRUE(fabric.ok()) << fabric.status();
  if (!fabric.ok()) return nullptr;
  return *std::move(fabric);
}

}  // namespace strand::testing
