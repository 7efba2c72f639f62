// CompareKeys (blink_node.h) against std::string_view's compare, for every
// length a B-link key can have up to 40 bytes, so each of its word, tail
// and length steps is exercised where the first difference falls.

#include "index/blink_node.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace strand::index {
namespace {

int Sign(int v) { return (v > 0) - (v < 0); }

TEST(BLinkNodeTest, CompareKeysOrdersLikeStringViewCompare) {
  std::mt19937 rng(11);
  for (size_t length = 0; length <= 40; ++length) {
    for (int trial = 0; trial < 2000; ++trial) {
      std::string a(length, '\0');
      for (char& c : a) c = static_cast<char>(rng());
      std::string b = a;
      // Share a prefix, then differ in every byte after it (several bytes
      // of one word then differ, so a word compared in the wrong byte
      // order shows), bytes above and below 0x80 so signed-char mistakes
      // show; sometimes equal, sometimes of another length.
      if (length > 0 && trial % 5 != 0) {
        for (size_t i = rng() % length; i < length; ++i) {
          b[i] = static_cast<char>(rng());
        }
      }
      if (trial % 7 == 0) b.resize(rng() % (length + 2), '\x01');
      ASSERT_EQ(Sign(CompareKeys(a, b)), Sign(std::string_view(a).compare(b)))
          << "length " << length << " trial " << trial;
      ASSERT_EQ(Sign(CompareKeys(b, a)), Sign(std::string_view(b).compare(a)))
          << "length " << length << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace strand::index
