#include "partition/partition_map.h"

#include "gtest/gtest.h"

namespace strand::partition {
namespace {

TEST(PartitionMapTest, ContiguousRangesAsEvenAsPossible) {
  auto map = PartitionMap::Create(10, 4);
  ASSERT_TRUE(map.ok());
  // 10 = 3 + 3 + 2 + 2.
  EXPECT_EQ(map->ToString(),
            "node 0: 1-3, node 1: 4-6, node 2: 7-8, node 3: 9-10");
  for (int n = 0; n < 4; ++n) {
    for (int64_t p = map->First(n); p <= map->Last(n); ++p) {
      EXPECT_EQ(map->Owner(p), n) << "partition " << p;
    }
  }
  EXPECT_EQ(map->First(0), 1);
  EXPECT_EQ(map->Last(3), 10);
}

TEST(PartitionMapTest, EveryPartitionHasExactlyOneOwner) {
  for (int nodes = 1; nodes <= 7; ++nodes) {
    for (int64_t partitions = nodes; partitions <= 40; ++partitions) {
      auto map = PartitionMap::Create(partitions, nodes);
      ASSERT_TRUE(map.ok());
      int64_t covered = 0;
      for (int n = 0; n < nodes; ++n) {
        ASSERT_LE(map->First(n), map->Last(n));
        if (n > 0) {
          EXPECT_EQ(map->First(n), map->Last(n - 1) + 1);
        }
        covered += map->Last(n) - map->First(n) + 1;
        EXPECT_LE(map->Last(n) - map->First(n) + 1, partitions / nodes + 1);
      }
      EXPECT_EQ(covered, partitions);
      for (int64_t p = 1; p <= partitions; ++p) {
        const int owner = map->Owner(p);
        ASSERT_GE(p, map->First(owner));
        ASSERT_LE(p, map->Last(owner));
      }
    }
  }
}

TEST(PartitionMapTest, NeedsAPartitionPerNode) {
  EXPECT_EQ(PartitionMap::Create(1, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PartitionMap::Create(4, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto one = PartitionMap::Create(2, 2);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->ToString(), "node 0: 1, node 1: 2");
}

}  // namespace
}  // namespace strand::partition
