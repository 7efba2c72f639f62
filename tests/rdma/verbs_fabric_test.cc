// What only the verbs backend has: start-up against nodes that are missing.
// Runs with STRAND_TEST_FABRIC=verbs on a machine with an RDMA device (the
// Soft-RoCE VM, tests/rdma/verbs_in_vm.sh); skipped otherwise.

#include "rdma/verbs/verbs_fabric.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/verbs/memory_node_server.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma::verbs {
namespace {

using ::testing::HasSubstr;

class VerbsFabricTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::TestFabricKind() != FabricKind::kVerbs) {
      GTEST_SKIP() << "needs STRAND_TEST_FABRIC=verbs";
    }
    const char* address = std::getenv("STRAND_TEST_RDMA_ADDRESS");
    if (address == nullptr) address = std::getenv("RDMA_VM_IP");
    ASSERT_NE(address, nullptr) << "set STRAND_TEST_RDMA_ADDRESS";
    address_ = address;
  }

  FabricOptions WithCluster(const std::string& text, int node_id) {
    const std::string path = ::testing::TempDir() + "/verbs_cluster.txt";
    std::ofstream(path) << text;
    FabricOptions options;
    options.kind = FabricKind::kVerbs;
    options.cluster_file = path;
    options.node_id = node_id;
    return options;
  }

  std::string address_;
};

TEST_F(VerbsFabricTest, MissingMemoryNodeIsNamedAndTheWaitIsBounded) {
  auto options =
      WithCluster(absl::StrFormat("memory 0 %s 7990\ncompute 0 %s 7991\n",
                                  address_, address_),
                  0);
  const absl::Time start = absl::Now();
  auto fabric = VerbsFabric::Create(options, absl::Seconds(1));
  ASSERT_FALSE(fabric.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  EXPECT_EQ(fabric.status().code(), absl::StatusCode::kDeadlineExceeded)
      << fabric.status();
  EXPECT_THAT(std::string(fabric.status().message()),
              HasSubstr(absl::StrFormat("memory node 0 (%s:7990) did not "
                                        "answer",
                                        address_)));
  EXPECT_THAT(std::string(fabric.status().message()),
              HasSubstr("connection refused"));
}

TEST_F(VerbsFabricTest, ComputeNodeMissingAtTheBarrierIsNamed) {
  auto device = Device::ForLocalAddress(address_);
  ASSERT_TRUE(device.ok()) << device.status();
  auto server =
      MemoryNodeServer::Start(*device, address_, 0, 4 << 20, 256 << 10);
  ASSERT_TRUE(server.ok()) << server.status();
  auto options = WithCluster(
      absl::StrFormat("memory 0 %s %d\ncompute 0 %s 7992\ncompute 1 %s 7993\n",
                      address_, (*server)->port(), address_, address_),
      0);
  auto fabric = VerbsFabric::Create(options, absl::Seconds(1));
  ASSERT_FALSE(fabric.ok());
  EXPECT_THAT(std::string(fabric.status().message()),
              HasSubstr(absl::StrFormat("compute node 1 (%s:7993) did not "
                                        "answer",
                                        address_)));
}

TEST_F(VerbsFabricTest, SingleComputeNodeProcessUsesItsMemoryNode) {
  auto device = Device::ForLocalAddress(address_);
  ASSERT_TRUE(device.ok()) << device.status();
  auto server =
      MemoryNodeServer::Start(*device, address_, 0, 4 << 20, 256 << 10);
  ASSERT_TRUE(server.ok()) << server.status();
  auto options =
      WithCluster(absl::StrFormat("memory 0 %s %d\ncompute 0 %s "
                                  "7994\n",
                                  address_, (*server)->port(), address_),
                  0);
  auto fabric = CreateFabric(options);
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  EXPECT_EQ((*fabric)->memory_node_bytes(), uint64_t{4} << 20);
  EXPECT_EQ((*fabric)->chunk_bytes(), uint64_t{256} << 10);
  auto ep = (*(*fabric)->compute_node(0))->NewEndpoint();
  ASSERT_TRUE(ep.ok());
  auto old = (*ep)->FetchAndAdd(GlobalAddress(0, 8192), 5);
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(*old, 0u);
  // A large unregistered buffer is registered for the call, not staged.
  std::vector<uint8_t> big(1 << 20, 0x5a), back(1 << 20, 0);
  ASSERT_TRUE(
      (*ep)->Write(GlobalAddress(0, 1 << 20), big.data(), big.size()).ok());
  ASSERT_TRUE(
      (*ep)->Read(GlobalAddress(0, 1 << 20), back.data(), back.size()).ok());
  EXPECT_EQ(back, big);
  EXPECT_EQ((*fabric)->compute_node(1).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strand::rdma::verbs
