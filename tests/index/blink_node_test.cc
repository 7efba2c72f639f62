// CompareKeys (blink_node.h) against std::string_view's compare, for every
// length a B-link key can have up to 40 bytes, so each of its word, tail
// and length steps is exercised where the first difference falls.

#include "index/blink_node.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

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
      // The same with b inside an unlatched node, at every alignment.
      alignas(8) uint8_t node[64];
      const size_t at = trial % 8;
      std::memcpy(node + at, b.data(), b.size());
      const UnlatchedKey ub{node + at, static_cast<uint32_t>(b.size())};
      ASSERT_EQ(Sign(CompareKeys(a, ub)), Sign(std::string_view(a).compare(b)))
          << "unlatched, length " << length << " trial " << trial;
      ASSERT_EQ(Sign(CompareKeys(ub, a)), Sign(std::string_view(b).compare(a)))
          << "unlatched, length " << length << " trial " << trial;
      for (size_t offset = 0; offset <= b.size(); ++offset) {
        ASSERT_EQ(KeyWindow(ub, offset), KeyWindow(std::string_view(b), offset))
            << "window at " << offset << ", length " << b.size();
      }
    }
  }
}

// KeyPrefix orders keys of one width as CompareKeys does, wherever their
// first 8 bytes differ, and is equal exactly when those bytes are.
TEST(BLinkNodeTest, KeyPrefixOrdersLikeTheFirstEightBytes) {
  std::mt19937 rng(12);
  for (size_t width = 1; width <= 20; ++width) {
    for (int trial = 0; trial < 2000; ++trial) {
      std::string a(width, '\0');
      for (char& c : a) c = static_cast<char>(rng());
      std::string b = a;
      for (size_t i = rng() % width; i < width; ++i) {
        if (rng() % 2 == 0) b[i] = static_cast<char>(rng());
      }
      const std::string_view a8 = std::string_view(a).substr(0, 8);
      const std::string_view b8 = std::string_view(b).substr(0, 8);
      ASSERT_EQ(KeyPrefix(a) == KeyPrefix(b), a8 == b8)
          << "width " << width << " trial " << trial;
      if (a8 != b8) {
        ASSERT_EQ(KeyPrefix(a) < KeyPrefix(b), CompareKeys(a, b) < 0)
            << "width " << width << " trial " << trial;
      }
    }
  }
}

// A node's fences in the tests below: infinite (LowerBound interpolates
// between the first and last key), tight around the keys, or loose (far
// below and above them), the last two finite (it interpolates between the
// fences).
enum class Fences { kInfinite, kTight, kLoose };

// A node image holding `keys` (sorted, each `width` bytes) within `fences`.
std::vector<uint8_t> NodeWith(const std::vector<std::string>& keys,
                              uint32_t width,
                              Fences fences = Fences::kInfinite) {
  std::vector<uint8_t> page(64 * 1024);
  std::string low(width, '\0');
  std::string high(width, '\xff');
  if (fences == Fences::kTight && !keys.empty()) {
    low = keys.front();
    high = keys.back();
    high.back() = static_cast<char>(high.back() + 1);  // just above
  }
  const bool infinite = fences == Fences::kInfinite;
  BLinkNode::Init(page.data(), width, 0, low, infinite, high, infinite, 0);
  const BLinkNode node(page.data(), width);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::memcpy(page.data() + node.EntryOffset(i), keys[i].data(), width);
  }
  const uint16_t count = keys.size();
  std::memcpy(page.data() + BLinkNode::kCountOffset, &count, 2);
  return page;
}

std::string BigEndian(uint64_t v, uint32_t width) {
  std::string k(width, '\0');
  for (uint32_t i = 0; i < width && i < 8; ++i) {
    k[width - 1 - i] = static_cast<char>(v >> (8 * i));
  }
  return k;
}

// LowerBound interpolates (between the fences, or the first and last key)
// and gallops; whatever the key distribution and the fences, it must
// answer exactly what std::lower_bound does, for stored keys, keys between
// and beyond them (and beyond the fences), and shorter keys (scan bounds
// of a non-unique index, whose stored keys carry an 8-byte value suffix).
class LowerBoundTest : public ::testing::TestWithParam<Fences> {};

INSTANTIATE_TEST_SUITE_P(AllFences, LowerBoundTest,
                         ::testing::Values(Fences::kInfinite, Fences::kTight,
                                           Fences::kLoose));

TEST_P(LowerBoundTest, MatchesStdLowerBound) {
  std::mt19937_64 rng(5);
  enum class Spread { kDense, kUniform, kSkewed, kClustered, kSharedPrefix };
  for (uint32_t width : {4u, 6u, 8u, 12u, 24u, 40u}) {
    for (Spread spread : {Spread::kDense, Spread::kUniform, Spread::kSkewed,
                          Spread::kClustered, Spread::kSharedPrefix}) {
      for (uint32_t n : {0u, 1u, 2u, 15u, 16u, 17u, 100u, 255u}) {
        std::vector<std::string> keys;
        const uint64_t base = rng() >> 8;
        for (uint32_t i = 0; keys.size() < n && i < 100 * n; ++i) {
          uint64_t v = 0;
          switch (spread) {
            case Spread::kDense:
              v = base + i;
              break;
            case Spread::kUniform:
              v = rng();
              break;
            case Spread::kSkewed:
              v = uint64_t{1} << (rng() % 60) | (rng() % 7);
              break;
            case Spread::kClustered:
              v = (rng() % 3) * (uint64_t{1} << 50) + rng() % 40;
              break;
            case Spread::kSharedPrefix:
              v = rng() % 1000;
              break;
          }
          std::string k(width, 'p');
          // Shared-prefix keys put their number at the end of a long
          // common prefix; others at the front (then random tail bytes).
          const std::string number = BigEndian(v, std::min(width, 8u));
          if (spread == Spread::kSharedPrefix) {
            k.replace(width - number.size(), number.size(), number);
          } else {
            k.replace(0, number.size(), number);
            for (size_t j = number.size(); j < width; ++j) {
              k[j] = static_cast<char>(rng() % 3);
            }
          }
          keys.push_back(k);
          std::sort(keys.begin(), keys.end());
          keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        }
        std::vector<uint8_t> page = NodeWith(keys, width, GetParam());
        // Word searches (4- and 8-byte keys) and their ablation, byte
        // compares, answer alike.
        const bool word_search = rng() % 2 == 0;
        const BLinkNode node(page.data(), width, word_search);
        // The optimistic view of an intact node searches the same way.
        const UnlatchedBLinkNode unlatched(
            page.data(), page.size(), width,
            BLinkNode::Capacity(page.size(), width), word_search);
        std::vector<std::string> queries = keys;
        for (int q = 0; q < 200; ++q) {
          std::string k = keys.empty() ? std::string(width, '\0')
                                       : keys[rng() % keys.size()];
          // Nudge a byte up or down (between keys, or beyond both ends).
          const size_t at = rng() % width;
          k[at] = static_cast<char>(k[at] + (rng() % 2 ? 1 : -1));
          queries.push_back(k);
          if (width > 8) queries.push_back(k.substr(0, width - 8));
        }
        queries.push_back(std::string(width, '\0'));
        queries.push_back(std::string(width, '\xff'));
        for (const std::string& q : queries) {
          const auto expected =
              std::lower_bound(keys.begin(), keys.end(), q) - keys.begin();
          ASSERT_EQ(node.LowerBound(q), expected)
              << "width " << width << " spread " << static_cast<int>(spread)
              << " n " << keys.size() << " word_search " << word_search;
          ASSERT_EQ(unlatched.LowerBound(q), expected)
              << "unlatched, width " << width << " n " << keys.size();
          ASSERT_EQ(unlatched.ChildFor(q), node.ChildFor(q));
          ASSERT_EQ(unlatched.BelowHigh(q), node.BelowHigh(q));
          // With the node's last insert anywhere (right after it is the
          // first guess), beyond the entries included.
          for (const uint32_t last :
               {0u, static_cast<uint32_t>(expected),
                static_cast<uint32_t>(expected + 1),
                static_cast<uint32_t>(rng() % (keys.size() + 2))}) {
            BLinkNode::SetLastInsert(page.data(), last);
            ASSERT_EQ(node.LowerBoundAfterLastInsert(q), expected)
                << "last insert " << last << " width " << width << " n "
                << keys.size();
          }
          // With a start known to be at or before the answer (an ascending
          // batch's next key).
          for (uint32_t from : {static_cast<uint32_t>(expected),
                                static_cast<uint32_t>(expected / 2),
                                static_cast<uint32_t>(expected > 0)}) {
            ASSERT_EQ(node.LowerBound(q, from), expected)
                << "from " << from << " width " << width << " n "
                << keys.size();
            ASSERT_EQ(unlatched.LowerBound(q, from), expected)
                << "unlatched, from " << from << " width " << width << " n "
                << keys.size();
          }
        }
      }
    }
  }
}

// The guess from a node's fences (also used before the node is latched,
// from its parent's separators) stays within the entries and follows the
// key: dense keys land on their own position.
TEST(BLinkNodeTest, GuessBetweenFencesFollowsDenseKeys) {
  const std::string low = BigEndian(1000, 8);
  const std::string high = BigEndian(1256, 8);
  for (uint64_t v = 1000; v < 1256; ++v) {
    EXPECT_EQ(BLinkNode::GuessBetween(BigEndian(v, 8), low, high, 256),
              v - 1000);
  }
  EXPECT_EQ(BLinkNode::GuessBetween(BigEndian(5, 8), low, high, 256), 0u);
  EXPECT_EQ(BLinkNode::GuessBetween(BigEndian(9999, 8), low, high, 256), 255u);
  EXPECT_EQ(BLinkNode::GuessBetween(BigEndian(1100, 8), low, high, 1), 0u);
}

// An optimistic read may see a node mid-change: any bytes at all. The
// unlatched view must then still terminate and never read outside the
// payload (the buffers here are exactly the payload, so ASan reports any
// byte past it), whatever the count, fences and keys say. Its answers are
// garbage, which the caller's validation throws away.
TEST(BLinkNodeTest, UnlatchedViewOfGarbageStaysInsideThePayload) {
  std::mt19937_64 rng(11);
  for (uint32_t payload : {120u, 248u, 1016u, 4088u}) {
    for (uint32_t width : {4u, 8u, 12u, 20u, 263u}) {
      if (BLinkNode::Capacity(payload, width) == 0) continue;
      for (int trial = 0; trial < 200; ++trial) {
        auto page = std::make_unique<uint8_t[]>(payload);
        for (uint32_t i = 0; i < payload; ++i) {
          page[i] = static_cast<uint8_t>(rng());
        }
        if (trial % 2 == 0) {
          // A plausible header with a wild count: the interpolating paths.
          const uint16_t count = static_cast<uint16_t>(rng());
          const uint16_t flags = static_cast<uint16_t>(rng() % 4);
          std::memcpy(page.get() + BLinkNode::kCountOffset, &count, 2);
          std::memcpy(page.get() + 10, &flags, 2);
        }
        const UnlatchedBLinkNode n(page.get(), payload, width);
        EXPECT_LE(n.count(), BLinkNode::Capacity(payload, width));
        std::string key(width, '\0');
        for (char& ch : key) ch = static_cast<char>(rng());
        const uint32_t c = n.ChildFor(key);
        EXPECT_LE(c, std::max<uint32_t>(n.count(), 1) - 1);
        (void)n.value(c);
        (void)n.ChildBefore(key);
        (void)n.LowerBound(key, static_cast<uint32_t>(rng() % 70000));
        (void)n.BelowHigh(key);
        (void)n.right();
        // Indices past the capacity too (a count read before a shrink).
        (void)n.key(static_cast<uint32_t>(rng() % 70000));
        (void)n.value(static_cast<uint32_t>(rng() % 70000));
      }
    }
  }
}

}  // namespace
}  // namespace strand::index
