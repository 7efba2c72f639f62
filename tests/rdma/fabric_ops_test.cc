// One-sided operations, batches and counters of the fabric.

#include <cstring>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "rdma/memory_node_layout.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using ::testing::HasSubstr;

class FabricOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric_ = testing::MakeTestFabric(testing::TestFabricOptions(2, 2));
    ASSERT_NE(fabric_, nullptr);
    node_ = *fabric_->compute_node(0);
    auto ep = node_->NewEndpoint();
    ASSERT_TRUE(ep.ok()) << ep.status();
    ep_ = *std::move(ep);
    auto alloc = BlockAllocator::Create(*fabric_, 0, 4096);
    ASSERT_TRUE(alloc.ok()) << alloc.status();
    alloc_ = *std::move(alloc);
  }

  GlobalAddress NewBlock() {
    auto block = alloc_->Allocate(*ep_);
    EXPECT_TRUE(block.ok()) << block.status();
    return block.ok() ? *block : GlobalAddress();
  }

  std::unique_ptr<Fabric> fabric_;
  ComputeNode* node_ = nullptr;
  std::unique_ptr<Endpoint> ep_;
  std::unique_ptr<BlockAllocator> alloc_;
};

TEST_F(FabricOpsTest, WriteThenReadRoundTrips) {
  GlobalAddress a = NewBlock();
  const char text[] = "strand over disaggregated memory";
  ASSERT_TRUE(ep_->Write(a + 16, text, sizeof(text)).ok());
  char back[sizeof(text)] = {};
  ASSERT_TRUE(ep_->Read(a + 16, back, sizeof(back)).ok());
  EXPECT_STREQ(back, text);
}

TEST_F(FabricOpsTest, CompareAndSwapReturnsOldValueOnSuccessAndFailure) {
  GlobalAddress word = NewBlock();
  auto old = ep_->CompareAndSwap(word, 0, 42);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, 0u);  // success: old value == expected
  old = ep_->CompareAndSwap(word, 0, 99);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old, 42u);  // failure: the value that was there
  uint64_t now = 0;
  ASSERT_TRUE(ep_->Read(word, &now, 8).ok());
  EXPECT_EQ(now, 42u);  // the failed CAS changed nothing
}

TEST_F(FabricOpsTest, FetchAndAddReturnsOldValueAndWraps) {
  GlobalAddress word = NewBlock();
  EXPECT_EQ(*ep_->FetchAndAdd(word, 5), 0u);
  EXPECT_EQ(*ep_->FetchAndAdd(word, 7), 5u);
  EXPECT_EQ(*ep_->FetchAndAdd(word, static_cast<uint64_t>(-12)), 12u);
  EXPECT_EQ(*ep_->FetchAndAdd(word, 0), 0u);
}

TEST_F(FabricOpsTest, ConcurrentFetchAndAddsSumExactly) {
  constexpr int kThreads = 8;
  constexpr int kAddsPerThread = 20000;
  GlobalAddress word = NewBlock();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Threads of both compute nodes, each with its own endpoint.
      auto node = fabric_->compute_node(t % 2);
      auto ep = (*node)->NewEndpoint();
      ASSERT_TRUE(ep.ok());
      for (int i = 0; i < kAddsPerThread; ++i) {
        ASSERT_TRUE((*ep)->FetchAndAdd(word, 1).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  uint64_t sum = 0;
  ASSERT_TRUE(ep_->Read(word, &sum, 8).ok());
  EXPECT_EQ(sum, uint64_t{kThreads} * kAddsPerThread);
}

TEST_F(FabricOpsTest, ConcurrentCasIncrementsNeverLoseAnUpdate) {
  constexpr int kThreads = 4;
  constexpr int kIncrements = 5000;
  GlobalAddress word = NewBlock();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto ep = node_->NewEndpoint();
      ASSERT_TRUE(ep.ok());
      for (int i = 0; i < kIncrements; ++i) {
        uint64_t seen = 0;
        for (;;) {
          auto old = (*ep)->CompareAndSwap(word, seen, seen + 1);
          ASSERT_TRUE(old.ok());
          if (*old == seen) break;
          seen = *old;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  uint64_t total = 0;
  ASSERT_TRUE(ep_->Read(word, &total, 8).ok());
  EXPECT_EQ(total, uint64_t{kThreads} * kIncrements);
}

TEST_F(FabricOpsTest, BatchIsOneRoundTripAndRunsInOrder) {
  GlobalAddress gcl = NewBlock();
  const uint64_t payload[4] = {1, 2, 3, 4};
  ASSERT_TRUE(ep_->Write(gcl + 8, payload, sizeof(payload)).ok());
  const FabricCounters before = ep_->Counters();

  // The SELCC miss: CAS on the latch word + READ of the data.
  uint64_t old_latch = 99;
  uint64_t data[4] = {};
  Batch miss;
  miss.CompareAndSwap(gcl, 0, 7, &old_latch).Read(gcl + 8, data, sizeof(data));
  ASSERT_TRUE(ep_->Execute(miss).ok());
  EXPECT_EQ(old_latch, 0u);
  EXPECT_EQ(data[3], 4u);

  // The SELCC release: WRITE back + FAA on the latch, in order.
  const uint64_t updated[4] = {5, 6, 7, 8};
  uint64_t latch_before_release = 0;
  Batch release;
  release.Write(gcl + 8, updated, sizeof(updated))
      .FetchAndAdd(gcl, static_cast<uint64_t>(-7), &latch_before_release);
  ASSERT_TRUE(ep_->Execute(release).ok());
  EXPECT_EQ(latch_before_release, 7u);

  const FabricCounters delta = ep_->Counters() - before;
  EXPECT_EQ(delta.round_trips, 2u);
  EXPECT_EQ(delta.cas, 1u);
  EXPECT_EQ(delta.reads, 1u);
  EXPECT_EQ(delta.writes, 1u);
  EXPECT_EQ(delta.faa, 1u);
  EXPECT_EQ(delta.bytes_read, sizeof(data));
  EXPECT_EQ(delta.bytes_written, sizeof(updated));

  uint64_t check[5] = {};
  ASSERT_TRUE(ep_->Read(gcl, check, sizeof(check)).ok());
  EXPECT_EQ(check[0], 0u);  // latch released
  EXPECT_EQ(check[4], 8u);
}

TEST_F(FabricOpsTest, EmptyBatchCostsNothing) {
  const FabricCounters before = ep_->Counters();
  ASSERT_TRUE(ep_->Execute(Batch()).ok());
  EXPECT_EQ(ep_->Counters(), before);
}

TEST_F(FabricOpsTest, CountersAddUpAcrossEndpointsAndNodes) {
  GlobalAddress a = NewBlock();
  auto other = (*fabric_->compute_node(1))->NewEndpoint();
  ASSERT_TRUE(other.ok());
  const FabricCounters node0_before = node_->Counters();
  const FabricCounters total_before = fabric_->Counters();
  uint64_t v = 1;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(ep_->Write(a, &v, 8).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*other)->Read(a, &v, 8).ok());
  {
    // A destroyed endpoint still counts in its node's totals.
    auto temp = node_->NewEndpoint();
    ASSERT_TRUE((*temp)->FetchAndAdd(a, 1).ok());
  }
  const FabricCounters node0 = node_->Counters() - node0_before;
  EXPECT_EQ(node0.writes, 10u);
  EXPECT_EQ(node0.faa, 1u);
  EXPECT_EQ(node0.round_trips, 11u);
  EXPECT_EQ(node0.reads, 0u);
  const FabricCounters total = fabric_->Counters() - total_before;
  EXPECT_EQ(total.round_trips, 16u);
  EXPECT_EQ(total.reads, 5u);
  EXPECT_EQ(total.bytes_written, 80u);
  EXPECT_EQ(total.ops(), 16u);
}

TEST_F(FabricOpsTest, BadAddressesAreErrorsNotCrashes) {
  uint64_t v = 0;
  // Unknown memory node.
  absl::Status s = ep_->Read(GlobalAddress(7, 4096), &v, 8);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("memory node 7"));
  // Past the end of the region.
  s = ep_->Read(GlobalAddress(0, fabric_->memory_node_bytes() - 4), &v, 8);
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  // Misaligned atomic.
  EXPECT_EQ(ep_->FetchAndAdd(GlobalAddress(0, kRootAreaOffset + 4), 1)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // A batch spanning memory nodes.
  Batch b;
  b.Read(GlobalAddress(0, kRootAreaOffset), &v, 8)
      .Read(GlobalAddress(1, kRootAreaOffset), &v, 8);
  EXPECT_EQ(ep_->Execute(b).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(FabricOpsTest, FailedBatchChangesNothing) {
  GlobalAddress word = NewBlock();
  uint64_t old = 0;
  Batch b;
  b.FetchAndAdd(word, 1, &old)
      .Read(GlobalAddress(0, fabric_->memory_node_bytes()), &old, 8);
  EXPECT_FALSE(ep_->Execute(b).ok());
  uint64_t value = 123;
  ASSERT_TRUE(ep_->Read(word, &value, 8).ok());
  EXPECT_EQ(value, 0u);
}

TEST_F(FabricOpsTest, WriteToPeerLandsInRegisteredMemory) {
  std::vector<char> buffer(4096, 0);
  ComputeNode* peer = *fabric_->compute_node(1);
  auto region = peer->RegisterLocalMemory(buffer.data(), buffer.size());
  ASSERT_TRUE(region.ok()) << region.status();
  const char line[] = "forwarded GCL";
  ASSERT_TRUE(ep_->WriteToPeer(region->At(100), line, sizeof(line)).ok());
  EXPECT_STREQ(buffer.data() + 100, line);
  EXPECT_EQ(ep_->Counters().peer_writes, 1u);

  // Outside the region, or an unknown region: errors.
  EXPECT_EQ(ep_->WriteToPeer(region->At(4090), line, sizeof(line)).code(),
            absl::StatusCode::kOutOfRange);
  PeerAddress bogus = region->At(0);
  bogus.key = 42;
  EXPECT_EQ(ep_->WriteToPeer(bogus, line, 4).code(),
            absl::StatusCode::kInvalidArgument);
  bogus = region->At(0);
  bogus.node = 9;
  EXPECT_EQ(ep_->WriteToPeer(bogus, line, 4).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FabricOpsTest, MemoryNodeHeaderDescribesTheRegion) {
  MemoryNodeHeader header{};
  ASSERT_TRUE(
      ep_->Read(GlobalAddress(1, kHeaderOffset), &header, sizeof(header)).ok());
  EXPECT_EQ(header.magic, MemoryNodeHeader::kMagic);
  EXPECT_EQ(header.region_bytes, fabric_->memory_node_bytes());
  EXPECT_EQ(header.chunk_bytes, fabric_->chunk_bytes());
  EXPECT_GE(header.next_chunk_offset, kFirstChunkOffset);
}

}  // namespace
}  // namespace strand::rdma
