#include "rdma/block_allocator.h"

#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rdma/memory_node_layout.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma {
namespace {

using ::testing::HasSubstr;

TEST(BlockAllocatorTest, BlocksOfManyNodesAndThreadsNeverOverlap) {
  constexpr int kComputeNodes = 4;
  constexpr int kThreadsPerNode = 3;
  constexpr int kBlocksPerThread = 3000;
  constexpr uint64_t kBlockBytes = 256;
  auto options = testing::TestFabricOptions(2, kComputeNodes);
  options.chunk_bytes = 64 * 1024;  // many chunks, so FAA races happen
  auto fabric = testing::MakeTestFabric(options);
  ASSERT_NE(fabric, nullptr);

  std::vector<std::unique_ptr<BlockAllocator>> allocators;
  for (int n = 0; n < kComputeNodes; ++n) {
    allocators.push_back(*BlockAllocator::Create(*fabric, n, kBlockBytes));
  }
  // Each thread stamps its id over its whole block, then checks that no one
  // overwrote any of its blocks.
  std::vector<std::vector<GlobalAddress>> owned(kComputeNodes *
                                                kThreadsPerNode);
  std::vector<std::thread> threads;
  for (int n = 0; n < kComputeNodes; ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        const uint64_t owner = n * kThreadsPerNode + t + 1;
        auto ep = *(*fabric->compute_node(n))->NewEndpoint();
        std::vector<uint64_t> stamp(kBlockBytes / 8, owner);
        for (int i = 0; i < kBlocksPerThread; ++i) {
          auto block = allocators[n]->Allocate(*ep);
          ASSERT_TRUE(block.ok()) << block.status();
          ASSERT_TRUE(ep->Write(*block, stamp.data(), kBlockBytes).ok());
          owned[owner - 1].push_back(*block);
          if (i % 3 == 2) {  // free some and take them again later
            allocators[n]->Free(owned[owner - 1].back());
            owned[owner - 1].pop_back();
          }
        }
      });
    }
  }
  for (auto& t : threads) t.join();

  auto ep = *(*fabric->compute_node(0))->NewEndpoint();
  absl::flat_hash_set<GlobalAddress> all;
  std::vector<uint64_t> content(kBlockBytes / 8);
  for (size_t owner = 1; owner <= owned.size(); ++owner) {
    for (GlobalAddress block : owned[owner - 1]) {
      EXPECT_TRUE(all.insert(block).second) << block << " handed out twice";
      EXPECT_GE(block.offset(), kFirstChunkOffset);
      EXPECT_EQ((block.offset() - kFirstChunkOffset) % kBlockBytes, 0u);
      ASSERT_TRUE(ep->Read(block, content.data(), kBlockBytes).ok());
      for (uint64_t word : content) {
        ASSERT_EQ(word, owner) << block << " was written by another owner";
      }
    }
  }
  // Both memory nodes were used.
  absl::flat_hash_set<int> nodes;
  for (GlobalAddress a : all) nodes.insert(a.node());
  EXPECT_EQ(nodes.size(), 2u);
}

TEST(BlockAllocatorTest, FreedBlocksAreReused) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions());
  ASSERT_NE(fabric, nullptr);
  auto ep = *(*fabric->compute_node(0))->NewEndpoint();
  auto alloc = *BlockAllocator::Create(*fabric, 0, 1024);
  GlobalAddress a = *alloc->Allocate(*ep);
  const uint64_t free_after_first = alloc->free_blocks();
  alloc->Free(a);
  EXPECT_EQ(alloc->free_blocks(), free_after_first + 1);
  EXPECT_EQ(*alloc->Allocate(*ep), a);
  EXPECT_EQ(alloc->chunks_taken(), 1u);
}

TEST(BlockAllocatorTest, ExhaustionIsAnErrorNamingTheFlag) {
  auto options = testing::TestFabricOptions(2, 1);
  options.pool_bytes = 1 * FabricOptions::kMiB;
  options.chunk_bytes = 64 * 1024;
  auto fabric = testing::MakeTestFabric(options);
  ASSERT_NE(fabric, nullptr);
  auto ep = *(*fabric->compute_node(0))->NewEndpoint();
  auto alloc = *BlockAllocator::Create(*fabric, 0, 64 * 1024);
  // Each 1 MiB node holds (1 MiB - 64 KiB header) / 64 KiB = 15 chunks.
  int allocated = 0;
  absl::Status last;
  for (int i = 0; i < 100; ++i) {
    auto block = alloc->Allocate(*ep);
    if (!block.ok()) {
      last = block.status();
      break;
    }
    ++allocated;
  }
  EXPECT_EQ(allocated, 30);
  EXPECT_EQ(last.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(last.message()), HasSubstr("--pool_mb"));
  // Still exhausted, still no crash; a freed block can be had again.
  EXPECT_FALSE(alloc->Allocate(*ep).ok());
  alloc->Free(GlobalAddress(1, kFirstChunkOffset));
  EXPECT_TRUE(alloc->Allocate(*ep).ok());
}

TEST(BlockAllocatorTest, BadBlockSizesAreRejected) {
  auto fabric = testing::MakeTestFabric(testing::TestFabricOptions());
  ASSERT_NE(fabric, nullptr);
  EXPECT_FALSE(BlockAllocator::Create(*fabric, 0, 0).ok());
  EXPECT_FALSE(BlockAllocator::Create(*fabric, 0, 100).ok());
  EXPECT_FALSE(
      BlockAllocator::Create(*fabric, 0, fabric->chunk_bytes() * 2).ok());
}

}  // namespace
}  // namespace strand::rdma
