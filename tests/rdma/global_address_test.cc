#include "rdma/global_address.h"

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"

namespace strand::rdma {
namespace {

TEST(GlobalAddressTest, EncodesNodeAndOffset) {
  GlobalAddress a(3, 0x123456789a);
  EXPECT_EQ(a.node(), 3);
  EXPECT_EQ(a.offset(), 0x123456789aU);
  EXPECT_EQ(GlobalAddress::FromRaw(a.raw()), a);
  GlobalAddress top(GlobalAddress::kMaxMemoryNodes - 1,
                    GlobalAddress::kMaxOffset);
  EXPECT_EQ(top.node(), GlobalAddress::kMaxMemoryNodes - 1);
  EXPECT_EQ(top.offset(), GlobalAddress::kMaxOffset);
}

TEST(GlobalAddressTest, DefaultIsNullAndPrintsSo) {
  GlobalAddress a;
  EXPECT_TRUE(a.is_null());
  EXPECT_EQ(a.ToString(), "null");
  EXPECT_FALSE(GlobalAddress(0, 8).is_null());
  EXPECT_EQ(GlobalAddress(2, 0x40).ToString(), "mn2:0x40");
}

TEST(GlobalAddressTest, OrdersByNodeThenOffset) {
  EXPECT_LT(GlobalAddress(0, 100), GlobalAddress(1, 0));
  EXPECT_LT(GlobalAddress(1, 0), GlobalAddress(1, 8));
  EXPECT_EQ(GlobalAddress(1, 8) + 8, GlobalAddress(1, 16));
}

TEST(GlobalAddressTest, HashesDistinctAddresses) {
  absl::flat_hash_set<GlobalAddress> set;
  for (int node = 0; node < 4; ++node) {
    for (uint64_t off = 0; off < 1000; off += 8) {
      set.insert(GlobalAddress(node, off));
    }
  }
  EXPECT_EQ(set.size(), 4u * 125u);
  EXPECT_TRUE(set.contains(GlobalAddress(2, 512)));
}

}  // namespace
}  // namespace strand::rdma
