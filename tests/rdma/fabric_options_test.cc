#include "rdma/fabric_options.h"

#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/loopback/loopback_fabric.h"
#include "rdma/loopback/memory_populator.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using loopback::LoopbackFabric;
using loopback::MemoryPopulator;
using loopback::PopulateMemory;

using ::testing::HasSubstr;
using ::testing::Not;

// The options are refused; a program reads the field it set, a user of a
// binary the flag.
void ExpectInvalid(const FabricOptions& options, const std::string& field,
                   const std::string& flag) {
  absl::Status s = options.Validate();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("FabricOptions::" + field));
  EXPECT_THAT(std::string(s.message()), Not(HasSubstr("--")));
  absl::Status f = options.Validate(OptionNaming::Flags("FabricOptions::"));
  EXPECT_EQ(f.code(), absl::StatusCode::kInvalidArgument) << f;
  EXPECT_THAT(std::string(f.message()), HasSubstr("--" + flag));
  EXPECT_FALSE(CreateFabric(options).ok());
}

TEST(FabricOptionsTest, DefaultsAreValid) {
  EXPECT_TRUE(FabricOptions().Validate().ok());
}

TEST(FabricOptionsTest, ZeroPoolIsRejected) {
  FabricOptions o;
  o.pool_bytes = 0;
  ExpectInvalid(o, "pool_bytes", "pool_mb");
}

TEST(FabricOptionsTest, AbsurdPoolIsRejected) {
  FabricOptions o;
  o.pool_bytes = uint64_t{1} << 50;  // beyond a global address
  ExpectInvalid(o, "pool_bytes", "pool_mb");
  o.pool_bytes = uint64_t{1} << 44;  // 16 TiB: more than this machine has
  ExpectInvalid(o, "pool_bytes", "pool_mb");
  o.pool_bytes = uint64_t{1} << 40;  // 1 TiB x 256 nodes overflows nothing
  o.memory_nodes = 256;              // but exceeds memory
  ExpectInvalid(o, "pool_bytes", "pool_mb");
}

TEST(FabricOptionsTest, NodeCountsOutOfRangeAreRejected) {
  FabricOptions o;
  o.memory_nodes = 0;
  ExpectInvalid(o, "memory_nodes", "memory_nodes");
  o.memory_nodes = FabricOptions::kMaxMemoryNodes + 1;
  ExpectInvalid(o, "memory_nodes", "memory_nodes");
  o = FabricOptions();
  o.compute_nodes = 0;
  ExpectInvalid(o, "compute_nodes", "compute_nodes");
  o.compute_nodes = -3;
  ExpectInvalid(o, "compute_nodes", "compute_nodes");
  o.compute_nodes = FabricOptions::kMaxComputeNodes + 1;
  ExpectInvalid(o, "compute_nodes", "compute_nodes");
}

TEST(FabricOptionsTest, BadChunkAndCostModelAreRejected) {
  FabricOptions o;
  o.chunk_bytes = 100000;  // not a power of two
  ExpectInvalid(o, "chunk_bytes", "chunk_kb");
  o = FabricOptions();
  o.rtt_ns = -1;
  ExpectInvalid(o, "rtt_ns", "rtt_ns");
  o = FabricOptions();
  o.bandwidth_gbps = -5;
  ExpectInvalid(o, "bandwidth_gbps", "bandwidth_gbps");
  o = FabricOptions();
  o.nic_op_ns = -1;
  ExpectInvalid(o, "nic_op_ns", "nic_op_ns");
  o = FabricOptions();
  o.nic_gbps = -1;
  ExpectInvalid(o, "nic_gbps", "nic_gbps");
}

TEST(FabricOptionsTest, MessagesSpeakInTheUnitsOfTheirReader) {
  FabricOptions o;
  o.compute_nodes = 0;
  EXPECT_EQ(o.Validate().message(),
            "FabricOptions::compute_nodes=0 is out of range: use 1 to 58");
  EXPECT_EQ(o.Validate(OptionNaming::Flags("FabricOptions::")).message(),
            "--compute_nodes=0 is out of range: use 1 to 58");
  o = FabricOptions();
  o.chunk_bytes = 100 * 1024;  // --chunk_kb=100: not a power of two
  EXPECT_EQ(o.Validate().message(),
            "FabricOptions::chunk_bytes=102400 is not valid: use a power of "
            "two from 65536 to 1073741824");
  EXPECT_EQ(o.Validate(OptionNaming::Flags("FabricOptions::")).message(),
            "--chunk_kb=100 is not valid: use a power of two from 64 to "
            "1048576");
  o = FabricOptions();
  o.kind = FabricKind::kVerbs;
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("FabricOptions::kind=verbs needs "
                        "FabricOptions::cluster_file"));
  EXPECT_THAT(
      std::string(o.Validate(OptionNaming::Flags("FabricOptions::")).message()),
      HasSubstr("--fabric=verbs needs --cluster"));
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

constexpr size_t kPage = 4096;

// Pages of [base, base + bytes) that are resident, per mincore(2).
size_t ResidentPages(const void* base, size_t bytes) {
  std::vector<unsigned char> v(bytes / kPage);
  EXPECT_EQ(mincore(const_cast<void*>(base), bytes, v.data()), 0);
  size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

// An anonymous mapping: untouched pages are not resident.
struct Mapping {
  explicit Mapping(size_t bytes)
      : bytes(bytes),
        base(static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))) {
    CHECK(base != MAP_FAILED);
    // No transparent huge page: one touch would make 512 pages resident.
    madvise(base, bytes, MADV_NOHUGEPAGE);
  }
  ~Mapping() { munmap(base, bytes); }
  const size_t bytes;
  uint8_t* const base;
};

TEST(PopulateMemoryTest, FaultsInEveryPageAndKeepsTheContents) {
  Mapping m(64 * kPage);
  std::memcpy(m.base + 3 * kPage + 100, "strand", 6);
  ASSERT_LT(ResidentPages(m.base, m.bytes), size_t{8});
  PopulateMemory(m.base, m.bytes);
  EXPECT_EQ(ResidentPages(m.base, m.bytes), size_t{64});
  EXPECT_EQ(std::memcmp(m.base + 3 * kPage + 100, "strand", 6), 0);
  EXPECT_EQ(m.base[10 * kPage], 0);
}

TEST(PopulateMemoryTest, PopulatorFaultsInQueuedRegionsAndKeepsTheContents) {
  // Regions larger than the populator's step, one not page-aligned.
  Mapping a(3000 * kPage);
  Mapping b(1500 * kPage);
  std::memcpy(a.base + 2049 * kPage + 7, "strand", 6);
  MemoryPopulator populator;
  populator.Add(a.base, a.bytes);
  populator.Add(b.base + 100, b.bytes - 100);  // its first page only partly
  populator.WaitUntilIdle();
  EXPECT_EQ(ResidentPages(a.base, a.bytes), size_t{3000});
  EXPECT_EQ(ResidentPages(b.base + kPage, b.bytes - kPage), size_t{1499});
  EXPECT_EQ(std::memcmp(a.base + 2049 * kPage + 7, "strand", 6), 0);
}

TEST(PopulateMemoryTest, StoppedPopulatorIgnoresNewRegions) {
  Mapping m(64 * kPage);
  MemoryPopulator populator;
  populator.Stop();
  populator.Add(m.base, m.bytes);
  populator.WaitUntilIdle();  // returns: stopped
  EXPECT_LT(ResidentPages(m.base, m.bytes), size_t{8});
}

TEST(PopulateMemoryTest, StopAbandonsTheRestOfARegion) {
  // 1 GiB takes well over 100 ms to zero-fill on any machine.
  Mapping big(size_t{1} << 30);
  MemoryPopulator populator;
  populator.Add(big.base, big.bytes);
  absl::SleepFor(absl::Milliseconds(5));
  const absl::Time start = absl::Now();
  populator.Stop();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_LT(ResidentPages(big.base, big.bytes), big.bytes / kPage);
}

TEST(PopulateMemoryTest, FabricStopsItsPopulatorWhenDestroyed) {
  // Destroyed while its pool is still being populated: no hang, no wait
  // for the whole pool.
  FabricOptions options;
  options.kind = FabricKind::kLoopback;
  options.pool_bytes = uint64_t{1} << 30;
  options.populate_memory = PopulateMode::kInBackground;
  const absl::Time start = absl::Now();
  for (int i = 0; i < 5; ++i) {
    auto fabric = CreateFabric(options);
    ASSERT_TRUE(fabric.ok()) << fabric.status();
    absl::SleepFor(absl::Milliseconds(20));  // the thread is mid-pool
  }
  // Populating 1 GiB takes well over 300 ms; five stops take milliseconds.
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(1500));
}

TEST(PopulateModeTest, ParsesItsNamesAndRejectsOthers) {
  for (PopulateMode mode :
       {PopulateMode::kOnFirstTouch, PopulateMode::kInBackground,
        PopulateMode::kAtStart}) {
    auto parsed = ParsePopulateMode(PopulateModeName(mode));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, mode);
  }
  auto bad = ParsePopulateMode("yes");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              ::testing::HasSubstr("--populate_memory"));
}

TEST(PopulateMemoryTest, LoopbackPopulatesPoolAndRegisteredRegionsAsAsked) {
  for (PopulateMode mode :
       {PopulateMode::kOnFirstTouch, PopulateMode::kInBackground,
        PopulateMode::kAtStart}) {
    SCOPED_TRACE(PopulateModeName(mode));
    const bool populates = mode != PopulateMode::kOnFirstTouch;
    // Loopback whatever STRAND_TEST_FABRIC says: verbs always pins.
    FabricOptions options;
    options.kind = FabricKind::kLoopback;
    options.pool_bytes = 8 << 20;
    options.populate_memory = mode;
    auto created = CreateFabric(options);
    ASSERT_TRUE(created.ok()) << created.status();
    std::unique_ptr<Fabric> fabric = *std::move(created);
    auto& loopback = static_cast<LoopbackFabric&>(*fabric);
    auto pool = loopback.Translate(GlobalAddress(0, 0), options.pool_bytes);
    ASSERT_TRUE(pool.ok()) << pool.status();

    Mapping m(32 * kPage);
    std::memcpy(m.base + 5 * kPage, "cache", 5);
    auto node = fabric->compute_node(0);
    ASSERT_TRUE(node.ok());
    ASSERT_TRUE((*node)->RegisterLocalMemory(m.base, m.bytes).ok());
    fabric->WaitUntilPopulated();  // returns at once unless kInBackground
    const size_t pool_pages = options.pool_bytes / kPage;
    if (populates) {
      EXPECT_EQ(ResidentPages(*pool, options.pool_bytes), pool_pages);
    } else {
      EXPECT_LT(ResidentPages(*pool, options.pool_bytes), pool_pages / 2);
    }
    EXPECT_EQ(ResidentPages(m.base, m.bytes) == 32, populates);
    EXPECT_EQ(std::memcmp(m.base + 5 * kPage, "cache", 5), 0);
  }
}

}  // namespace
}  // namespace strand::rdma
