// ClearNodeFromLatchWords (cc/selcc/latch_scan.h), the last step of
// reclaiming a failed compute node: every latch word that names the node
// (holder field, reader bit, or both as a transient bit) loses exactly
// that part, every other word and every other node's part stays, skipped
// ranges are not touched, and the counts say what was found. Then the
// node can take the lines again as if it never held them.

#include "cc/selcc/latch_scan.h"

#include <vector>

#include "cc/selcc/latch_word.h"
#include "gtest/gtest.h"
#include "rdma/memory_node_layout.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc::selcc {
namespace {

constexpr int kNodes = 4;
constexpr int kFailed = 2;

class LatchScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CcOptions o;
    o.protocol = Protocol::kSelcc;
    o.gcl_size = 256;
    o.cache_bytes = 256 * 64;
    auto cluster = testing::CcCluster::Create(kNodes, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx_ = *cluster_->manager(0).NewThreadContext();
    raw_ = *(*cluster_->fabric().compute_node(0))->NewEndpoint();
    for (int i = 0; i < 300; ++i) {
      lines_.push_back(*cluster_->manager(0).Allocate(*ctx_));
    }
  }
  void Set(rdma::GlobalAddress gcl, uint64_t word) {
    ASSERT_TRUE(raw_->Write(gcl, &word, 8).ok());
  }
  uint64_t Get(rdma::GlobalAddress gcl) {
    uint64_t word = 0;
    EXPECT_TRUE(raw_->Read(gcl, &word, 8).ok());
    return word;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<ThreadContext> ctx_;
  std::unique_ptr<rdma::Endpoint> raw_;
  std::vector<rdma::GlobalAddress> lines_;
};

TEST_F(LatchScanTest, TakesOutExactlyTheFailedNodesPart) {
  using W = LatchWord;
  struct Case {
    uint64_t before, after;
  };
  const std::vector<Case> cases = {
      {W::Exclusive(kFailed), 0},
      {W::Exclusive(kFailed) | W::Reader(0), W::Reader(0)},  // transient
      {W::Reader(kFailed), 0},
      {W::Reader(kFailed) | W::Reader(1) | W::Reader(3),
       W::Reader(1) | W::Reader(3)},
      {W::Exclusive(1) | W::Reader(kFailed), W::Exclusive(1)},  // transient
      {W::Exclusive(1), W::Exclusive(1)},
      {W::Reader(0) | W::Reader(3), W::Reader(0) | W::Reader(3)},
      {0, 0},
  };
  for (size_t i = 0; i < cases.size(); ++i) Set(lines_[i * 7], cases[i].before);
  // A word in a skipped range that looks like a latch word naming it.
  const rdma::GlobalAddress skipped = lines_[200];
  Set(skipped, W::Exclusive(kFailed));
  const SkipRange skip[] = {{skipped, 256}};
  auto result =
      ClearNodeFromLatchWords(*raw_, cluster_->fabric(), kFailed, 256, skip);
  ASSERT_TRUE(result.ok()) << result.status();
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(Get(lines_[i * 7]), cases[i].after)
        << W::ToString(cases[i].before);
  }
  EXPECT_EQ(Get(skipped), W::Exclusive(kFailed));
  EXPECT_EQ(result->holder_fields, 2u);
  EXPECT_EQ(result->reader_bits, 3u);
  EXPECT_GE(result->lines, lines_.size() - 1);
}

TEST_F(LatchScanTest, TheNodeTakesItsLinesAgainAfterwards) {
  // Node 2 held line 0 exclusive and line 1 shared, then failed.
  Set(lines_[0], LatchWord::Exclusive(kFailed));
  Set(lines_[1], LatchWord::Reader(kFailed) | LatchWord::Reader(3));
  ASSERT_TRUE(
      ClearNodeFromLatchWords(*raw_, cluster_->fabric(), kFailed, 256, {})
          .ok());
  auto ctx2 = *cluster_->manager(kFailed).NewThreadContext();
  {
    auto s = cluster_->manager(kFailed).SLock(*ctx2, lines_[1]);
    ASSERT_TRUE(s.ok()) << s.status();
  }
  EXPECT_EQ(Get(lines_[1]), LatchWord::Reader(kFailed) | LatchWord::Reader(3))
      << "its own reader bit carried into a neighbour's";
  auto ctx1 = *cluster_->manager(1).NewThreadContext();
  auto x = cluster_->manager(1).XLock(*ctx1, lines_[0]);
  EXPECT_TRUE(x.ok()) << x.status();
}

}  // namespace
}  // namespace strand::cc::selcc
