#include "base/coding.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace strand {
namespace {

TEST(CodingTest, FixedWidthValuesRoundTripLittleEndianAtAnyAlignment) {
  char buffer[32] = {};
  EncodeFixed<uint32_t>(buffer + 1, 0x04030201);
  EXPECT_EQ(buffer[1], 1);
  EXPECT_EQ(buffer[4], 4);
  EXPECT_EQ(DecodeFixed<uint32_t>(buffer + 1), 0x04030201u);
  EncodeFixed<int64_t>(buffer + 7, -5);
  EXPECT_EQ(DecodeFixed<int64_t>(buffer + 7), -5);
  EncodeFixed<double>(buffer + 17, 2.5);
  EXPECT_EQ(DecodeFixed<double>(buffer + 17), 2.5);
}

TEST(CodingTest, PutAppendsAndGetConsumesOrRefusesAShortInput) {
  std::string out = "x";
  PutFixed<uint16_t>(&out, 0xbeef);
  PutFixed<uint64_t>(&out, 42);
  ASSERT_EQ(out.size(), 1u + 2 + 8);
  std::string_view in = std::string_view(out).substr(1);
  uint16_t a = 0;
  uint64_t b = 0;
  ASSERT_TRUE(GetFixed(&in, &a));
  ASSERT_TRUE(GetFixed(&in, &b));
  EXPECT_EQ(a, 0xbeef);
  EXPECT_EQ(b, 42u);
  EXPECT_TRUE(in.empty());
  std::string_view shorter = "abc";
  uint32_t c = 7;
  EXPECT_FALSE(GetFixed(&shorter, &c));
  EXPECT_EQ(shorter, "abc");
  EXPECT_EQ(c, 7u);
}

}  // namespace
}  // namespace strand
