// Key encodings: memcmp order equals the order of the encoded values.

#include "index/key_codec.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace strand::index {
namespace {

TEST(KeyCodecTest, SignedIntegersOrderAsNumbers) {
  std::vector<int64_t> values = {INT64_MIN, -1000, -1,  0,
                                 1,         255,   256, INT64_MAX};
  for (size_t i = 1; i < values.size(); ++i) {
    const std::string a = KeyBuilder().Int64(values[i - 1]).Build(8);
    const std::string b = KeyBuilder().Int64(values[i]).Build(8);
    EXPECT_LT(a, b) << values[i - 1] << " vs " << values[i];
    EXPECT_EQ(DecodeInt64(b.data()), values[i]);
  }
  EXPECT_LT(KeyBuilder().Int32(-5).Build(4), KeyBuilder().Int32(3).Build(4));
  EXPECT_EQ(DecodeInt32(KeyBuilder().Int32(-5).Build(4).data()), -5);
  EXPECT_EQ(DecodeUint32(KeyBuilder().Uint32(7).Build(4).data()), 7u);
}

TEST(KeyCodecTest, IntegersAreBigEndianBytes) {
  EXPECT_EQ(KeyBuilder().Uint32(0x01020304).Build(4), "\x01\x02\x03\x04");
  EXPECT_EQ(KeyBuilder().Uint64(0x0102030405060708).Build(8),
            "\x01\x02\x03\x04\x05\x06\x07\x08");
  EXPECT_EQ(KeyBuilder().Int32(0).Uint32(0xa0b0c0d0).Build(10),
            std::string("\x80\x00\x00\x00\xa0\xb0\xc0\xd0\x00\x00", 10));
  EXPECT_EQ(
      DecodeUint64(KeyBuilder().Uint64(0xfedcba9876543210).Build(8).data()),
      0xfedcba9876543210u);
  // EncodeUint64 writes what KeyBuilder's Uint64 field holds.
  char encoded[8];
  EncodeUint64(encoded, 0x0102030405060708);
  EXPECT_EQ(std::string(encoded, 8),
            KeyBuilder().Uint64(0x0102030405060708).Build(8));
}

TEST(KeyCodecTest, CompositeKeysOrderLikeTuples) {
  std::mt19937_64 rng(1);
  std::vector<std::tuple<int32_t, int32_t, int64_t, std::string>> tuples;
  for (int i = 0; i < 2000; ++i) {
    tuples.emplace_back(static_cast<int32_t>(rng() % 5) - 2,
                        static_cast<int32_t>(rng() % 10),
                        static_cast<int64_t>(rng() % 100) - 50,
                        std::string(rng() % 4, 'a' + rng() % 3));
  }
  auto encode = [](const auto& t) {
    return KeyBuilder()
        .Int32(std::get<0>(t))
        .Int32(std::get<1>(t))
        .Int64(std::get<2>(t))
        .String(std::get<3>(t), 4)
        .Build(24);
  };
  for (size_t i = 1; i < tuples.size(); ++i) {
    const auto& a = tuples[i - 1];
    const auto& b = tuples[i];
    EXPECT_EQ(a < b, encode(a) < encode(b));
    EXPECT_EQ(a == b, encode(a) == encode(b));
  }
}

TEST(KeyCodecTest, StringsArePaddedAndTruncated) {
  EXPECT_EQ(KeyBuilder().String("ab", 4).Build(4), std::string("ab\0\0", 4));
  EXPECT_EQ(KeyBuilder().String("abcdef", 4).Build(6),
            std::string("abcd\0\0", 6));
  EXPECT_LT(KeyBuilder().String("ab", 4).Build(4),
            KeyBuilder().String("abc", 4).Build(4));
}

}  // namespace
}  // namespace strand::index
