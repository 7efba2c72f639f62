#include "wal/crc32c.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace strand::wal {
namespace {

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c("a"), 0xC1D04330u);
  // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of 0xff, ascending.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  const std::string data = "The quick brown fox jumps over the lazy dog";
  for (size_t cut = 0; cut <= data.size(); ++cut) {
    EXPECT_EQ(Crc32cExtend(Crc32c(data.substr(0, cut)), data.substr(cut)),
              Crc32c(data))
        << "cut at " << cut;
  }
}

TEST(Crc32cTest, PortableAndHardwareAgree) {
  std::mt19937_64 rng(42);
  std::string data(4099, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  EXPECT_EQ(crc32c_internal::ExtendPortable(0, "123456789", 9), 0xE3069283u);
  if (!crc32c_internal::HardwareAvailable()) {
    GTEST_SKIP() << "no SSE4.2 on this CPU; the portable path was checked";
  }
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t size : {0, 1, 7, 8, 9, 63, 64, 1000, 4090}) {
      const char* p = data.data() + offset;
      EXPECT_EQ(crc32c_internal::ExtendPortable(0x1234, p, size),
                crc32c_internal::ExtendHardware(0x1234, p, size))
          << "offset " << offset << " size " << size;
    }
  }
}

TEST(Crc32cTest, DetectsEveryFlippedBit) {
  std::string data = "redo record payload with some bytes";
  const uint32_t good = Crc32c(data);
  for (size_t i = 0; i < data.size() * 8; ++i) {
    data[i / 8] ^= static_cast<char>(1 << (i % 8));
    EXPECT_NE(Crc32c(data), good) << "bit " << i;
    data[i / 8] ^= static_cast<char>(1 << (i % 8));
  }
}

}  // namespace
}  // namespace strand::wal
