// The SELCC latch word: encoding round trips, node-id limits, and every
// transition of latch_word.h applied as the FAA/CAS arithmetic the protocol
// uses, checking that no carry or borrow ever leaves a legal value.

#include <random>

#include "cc/selcc/latch_word.h"
#include "gtest/gtest.h"

namespace strand::cc::selcc {
namespace {

TEST(LatchWordTest, EncodingRoundTripsForEveryNode) {
  for (int n = 0; n < LatchWord::kMaxNodes; ++n) {
    EXPECT_EQ(LatchWord::Holder(LatchWord::Exclusive(n)), n);
    EXPECT_EQ(LatchWord::Readers(LatchWord::Exclusive(n)), 0u);
    EXPECT_EQ(LatchWord::Holder(LatchWord::Reader(n)), -1);
    EXPECT_TRUE(LatchWord::HasReader(LatchWord::Reader(n), n));
    EXPECT_TRUE(LatchWord::IsLegal(LatchWord::Exclusive(n)));
    EXPECT_TRUE(LatchWord::IsLegal(LatchWord::Reader(n)));
    // The holder's own transient bit: a priority handover named it while
    // its shared FAA was on the way.
    EXPECT_TRUE(
        LatchWord::IsLegal(LatchWord::Exclusive(n) | LatchWord::Reader(n)));
  }
  EXPECT_EQ(LatchWord::Holder(0), -1);
  EXPECT_EQ(LatchWord::ToString(0), "(free)");
  EXPECT_EQ(LatchWord::ToString(LatchWord::Exclusive(3) | LatchWord::Reader(0) |
                                LatchWord::Reader(5)),
            "(holder=3 readers={0,5})");
  // Holder values 59..63 are never written.
  EXPECT_FALSE(LatchWord::IsLegal(uint64_t{59} << LatchWord::kHolderShift));
  EXPECT_FALSE(LatchWord::IsLegal(~uint64_t{0}));
}

TEST(LatchWordTest, NodeIdsThatDoNotFitAreRejectedWithAClearMessage) {
  EXPECT_TRUE(LatchWord::CheckNodeId(0).ok());
  EXPECT_TRUE(LatchWord::CheckNodeId(57).ok());
  absl::Status s = LatchWord::CheckNodeId(58);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("from 0 to 57"), std::string::npos) << s;
  EXPECT_FALSE(LatchWord::CheckNodeId(-1).ok());
}

TEST(LatchWordTest, EachTransitionOfTheHeader) {
  const uint64_t free = 0;
  // exclusive acquire: CAS (0,{}) -> (n,{})
  uint64_t w = LatchWord::Exclusive(4);
  EXPECT_EQ(LatchWord::Holder(w), 4);
  // a reader's transient bit on top, then its undo
  w += LatchWord::Reader(9);
  EXPECT_TRUE(LatchWord::IsLegal(w));
  // a handover 4 -> 2 keeps reader 9's transient bit
  w += LatchWord::Handover(4, 2);
  EXPECT_EQ(LatchWord::Holder(w), 2);
  EXPECT_EQ(LatchWord::Readers(w), LatchWord::Reader(9));
  w += LatchWord::ReleaseShared(9);  // the reader undoes
  EXPECT_EQ(w, LatchWord::Exclusive(2));
  // handover downwards and upwards across the whole range wraps exactly
  w += LatchWord::Handover(2, 57);
  EXPECT_EQ(w, LatchWord::Exclusive(57));
  w += LatchWord::Handover(57, 0);
  EXPECT_EQ(w, LatchWord::Exclusive(0));
  // downgrade: (0,{}) holder 0 -> shared by 0 and 7
  w += LatchWord::Downgrade(0, 7);
  EXPECT_EQ(w, LatchWord::Reader(0) | LatchWord::Reader(7));
  // shared release of both
  w += LatchWord::ReleaseShared(0);
  w += LatchWord::ReleaseShared(7);
  EXPECT_EQ(w, free);
  // exclusive release keeps transient bits
  w = LatchWord::Exclusive(57) + LatchWord::Reader(56);
  w += LatchWord::ReleaseExclusive(57);
  EXPECT_EQ(w, LatchWord::Reader(56));
}

// Random walks over the legal transitions, with several nodes and their
// transient bits, never produce an illegal word (no carry, no borrow).
TEST(LatchWordTest, RandomLegalTransitionsStayLegal) {
  std::mt19937_64 rng(7);
  constexpr int kNodes = LatchWord::kMaxNodes;
  for (int walk = 0; walk < 200; ++walk) {
    uint64_t w = 0;
    // What each node holds: 0 none, 1 shared, 2 transient bit, 3 holder,
    // 4 holder by a handover that found its shared FAA on the way (its own
    // bit transient).
    std::vector<int> has(kNodes, 0);
    std::vector<bool> handed(kNodes, false);  // holder by a handover
    for (int step = 0; step < 2000; ++step) {
      const int n = rng() % kNodes;
      const int holder = LatchWord::Holder(w);
      switch (has[n]) {
        case 0:
          if (holder < 0 && LatchWord::Readers(w) == 0 && rng() % 2) {
            w = LatchWord::Exclusive(n);  // CAS succeeded
            has[n] = 3;
          } else {
            const uint64_t old = w;
            w += LatchWord::Reader(n);  // FAA
            has[n] = LatchWord::Holder(old) < 0 ? 1 : 2;
          }
          break;
        case 1:
          if (LatchWord::Readers(w) == LatchWord::Reader(n) && rng() % 2) {
            w = LatchWord::Exclusive(n);  // upgrade CAS
          } else {
            w += LatchWord::ReleaseShared(n);
            has[n] = 0;
            break;
          }
          has[n] = 3;
          break;
        case 2:
          w += LatchWord::ReleaseShared(n);  // undo the transient bit
          has[n] = 0;
          break;
        case 3: {
          const int to = rng() % kNodes;
          const int choice = rng() % 4;
          if (handed[n] && choice == 3) {
            w += LatchWord::Reader(n);  // its own shared FAA finds it holder
            has[n] = 4;
            handed[n] = false;
          } else if (choice == 0) {
            w += LatchWord::ReleaseExclusive(n);
            has[n] = 0;
          } else if (to != n && has[to] == 0 && choice == 1) {
            w += LatchWord::Handover(n, to);
            has[n] = 0;
            has[to] = 3;
            handed[to] = true;
          } else if (to != n && has[to] == 0) {
            w += LatchWord::Downgrade(n, to);
            has[n] = 1;
            has[to] = 1;
          }
          break;
        }
        case 4:
          w += LatchWord::ReleaseShared(n);  // the undoing FAA
          has[n] = 3;
          break;
      }
      if (has[n] != 3) handed[n] = false;
      ASSERT_TRUE(LatchWord::IsLegal(w)) << LatchWord::ToString(w);
      for (int i = 0; i < kNodes; ++i) {
        ASSERT_EQ(LatchWord::HasReader(w, i),
                  has[i] == 1 || has[i] == 2 || has[i] == 4)
            << "node " << i << " in " << LatchWord::ToString(w);
        ASSERT_EQ(LatchWord::Holder(w) == i, has[i] == 3 || has[i] == 4);
      }
    }
  }
}

}  // namespace
}  // namespace strand::cc::selcc
