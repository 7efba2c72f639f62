// The cluster file of the verbs backend, and how --fabric=verbs fails on a
// machine without RDMA (the host that builds and runs CI).

#include "rdma/verbs/cluster_config.h"

#include <infiniband/verbs.h>

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/fabric_options.h"

namespace strand::rdma::verbs {
namespace {

using ::testing::HasSubstr;

TEST(ClusterConfigTest, ParsesNodesCommentsAndBlankLines) {
  auto config = ClusterConfig::Parse(R"(
# role    id  address     port
memory    0   192.0.2.1   7000
compute   1   host-b      7101   # out of order is fine
compute   0   192.0.2.1   7100
)",
                                     "test");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->memory_nodes.size(), 1u);
  ASSERT_EQ(config->compute_nodes.size(), 2u);
  EXPECT_EQ(config->compute_nodes[1].address, "host-b");
  EXPECT_EQ(config->compute_nodes[1].port, 7101);
  EXPECT_EQ(config->memory_nodes[0].ToString(),
            "memory node 0 (192.0.2.1:7000)");
}

TEST(ClusterConfigTest, MistakesNameTheLine) {
  auto expect_bad = [](const char* text, const char* what) {
    auto config = ClusterConfig::Parse(text, "c.txt");
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
        << text;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(what))
        << text;
  };
  expect_bad("memory 0 a 1\ncompute 0 b\n", "c.txt:2");
  expect_bad("storage 0 a 1\ncompute 0 b 2\n", "unknown role");
  expect_bad("memory 0 a 0\ncompute 0 b 2\n", "bad port");
  expect_bad("memory 0 a 1\ncompute 1 b 2\n", "compute node 0 is missing");
  expect_bad("memory 0 a 1\nmemory 0 a 2\ncompute 0 b 2\n", "listed twice");
  expect_bad("compute 0 b 2\n", "at least one memory node");
}

TEST(ClusterConfigTest, MissingFileIsNotFound) {
  auto config = ClusterConfig::Load("/nonexistent/cluster.txt");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("--cluster"));
}

TEST(ClusterConfigTest, ExampleInTheRepositoryParses) {
  auto config =
      ClusterConfig::Load(STRAND_SOURCE_DIR "/config/cluster.example");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_GE(config->compute_nodes.size(), 2u);
}

// Without an RDMA device (the CI host), --fabric=verbs must fail with a
// Status that says so, not crash or hang.
TEST(VerbsFabricTest, NoDeviceIsAClearError) {
  int devices = 0;
  ibv_device** list = ibv_get_device_list(&devices);
  if (list != nullptr) ibv_free_device_list(list);
  if (devices > 0) GTEST_SKIP() << "this machine has an RDMA device";
  const std::string path = ::testing::TempDir() + "/cluster.txt";
  std::ofstream(path) << "memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n";
  FabricOptions options;
  options.kind = FabricKind::kVerbs;
  options.cluster_file = path;
  options.node_id = 0;
  auto fabric = CreateFabric(options);
  ASSERT_FALSE(fabric.ok());
  EXPECT_EQ(fabric.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(fabric.status().message()),
              HasSubstr("no RDMA device"));
  std::remove(path.c_str());
}

TEST(VerbsFabricTest, NodeIdMustBeAComputeNode) {
  const std::string path = ::testing::TempDir() + "/cluster2.txt";
  std::ofstream(path) << "memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n";
  FabricOptions options;
  options.kind = FabricKind::kVerbs;
  options.cluster_file = path;
  options.node_id = 3;
  auto fabric = CreateFabric(options);
  EXPECT_EQ(fabric.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fabric.status().message()), HasSubstr("--node_id=3"));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace strand::rdma::verbs
