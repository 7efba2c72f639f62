#include "rdma/fabric_options.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using ::testing::HasSubstr;

void ExpectInvalid(const FabricOptions& options, const std::string& flag) {
  absl::Status s = options.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(flag));
  EXPECT_FALSE(CreateFabric(options).ok());
}

TEST(FabricOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(FabricOptions().Validate().ok());
}

TEST(FabricOptionsTest, ZeroPoolIsRejected) {
  FabricOptions o;
  o.pool_bytes = 0;
  ExpectInvalid(o, "--pool_mb");
}

TEST(FabricOptionsTest, AbsurdPoolIsRejected) {
  FabricOptions o;
  o.pool_bytes = uint64_t{1} << 50;  // beyond a global address
  ExpectInvalid(o, "--pool_mb");
  o.pool_bytes = uint64_t{1} << 44;  // 16 TiB: more than this machine has
  ExpectInvalid(o, "--pool_mb");
  o.pool_bytes = uint64_t{1} << 40;  // 1 TiB x 256 nodes overflows nothing
  o.memory_nodes = 256;              // but exceeds memory
  ExpectInvalid(o, "--pool_mb");
}

TEST(FabricOptionsTest, NodeCountsOutOfRangeAreRejected) {
  FabricOptions o;
  o.memory_nodes = 0;
  ExpectInvalid(o, "--memory_nodes");
  o.memory_nodes = FabricOptions::kMaxMemoryNodes + 1;
  ExpectInvalid(o, "--memory_nodes");
  o = FabricOptions();
  o.compute_nodes = 0;
  ExpectInvalid(o, "--compute_nodes");
  o.compute_nodes = -3;
  ExpectInvalid(o, "--compute_nodes");
  o.compute_nodes = FabricOptions::kMaxComputeNodes + 1;
  ExpectInvalid(o, "--compute_nodes");
}

TEST(FabricOptionsTest, BadChunkAndCostModelAreRejected) {
  FabricOptions o;
  o.chunk_bytes = 100000;  // not a power of two
  ExpectInvalid(o, "--chunk_kb");
  o = FabricOptions();
  o.rtt_ns = -1;
  ExpectInvalid(o, "--rtt_ns");
  o = FabricOptions();
  o.bandwidth_gbps = -5;
  ExpectInvalid(o, "--bandwidth_gbps");
}

TEST(FabricOptionsTest, FabricKindParses) {
  EXPECT_EQ(*ParseFabricKind("loopback"), FabricKind::kLoopback);
  EXPECT_EQ(*ParseFabricKind("verbs"), FabricKind::kVerbs);
  auto bad = ParseFabricKind("tcp");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--fabric=tcp"));
}

TEST(FabricOptionsTest, UnknownComputeNodeIsNotFound) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions(1, 2));
  ASSERT_NE(fabric, nullptr);
  EXPECT_TRUE(fabric->compute_node(1).ok());
  auto missing = fabric->compute_node(2);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strand::rdma
