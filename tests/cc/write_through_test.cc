// SELCC with CcOptions::write_through (docs/design/node_failure.md): an
// exclusive unlock that wrote something puts the bytes in memory at once
// while the node keeps the line (memo M, clean), so memory holds every
// finished critical section; without it they stay in the cache (lazy
// release). A caller that writes a guard's bytes itself (a commit's batch)
// takes them from DirtyBytes, which joins what earlier unlocks left dirty,
// and after MarkWrittenThrough the unlock writes nothing.

#include <cstring>

#include "cc/gcl_manager.h"
#include "cc/selcc/selcc_manager.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc {
namespace {

CcOptions Options(bool write_through) {
  CcOptions o;
  o.protocol = Protocol::kSelcc;
  o.gcl_size = 256;
  o.cache_bytes = 256 * 64;
  o.write_through = write_through;
  return o;
}

class WriteThroughTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto cluster = testing::CcCluster::Create(2, Options(GetParam()));
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    ctx_ = *cluster_->manager(0).NewThreadContext();
    raw_ = *(*cluster_->fabric().compute_node(1))->NewEndpoint();
    gcl_ = *cluster_->manager(0).Allocate(*ctx_);
  }
  void TearDown() override {
    ctx_.reset();
    cluster_.reset();
  }
  SelccManager& node0() {
    return static_cast<SelccManager&>(cluster_->manager(0));
  }
  // The payload bytes [offset, offset + 8) as memory holds them.
  uint64_t InMemory(uint32_t offset) {
    uint64_t v = 0;
    EXPECT_TRUE(raw_->Read(gcl_ + 8 + offset, &v, 8).ok());
    return v;
  }
  void Put(ExclusiveGuard& g, uint32_t offset, uint64_t v) {
    std::memcpy(g.MutableRange(offset, 8), &v, 8);
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::unique_ptr<ThreadContext> ctx_;
  std::unique_ptr<rdma::Endpoint> raw_;
  rdma::GlobalAddress gcl_;
};

TEST_P(WriteThroughTest, AnUnlockLeavesMemoryCurrentAndKeepsTheLine) {
  const bool write_through = GetParam();
  auto g = cluster_->manager(0).XLock(*ctx_, gcl_);
  ASSERT_TRUE(g.ok()) << g.status();
  Put(*g, 40, 0x1234);
  ASSERT_TRUE(g->Unlock().ok());
  EXPECT_EQ(InMemory(40), write_through ? 0x1234u : 0u);
  const SelccManager::DebugFrame d = node0().DebugState(gcl_);
  ASSERT_TRUE(d.cached);
  EXPECT_EQ(d.memo, selcc::Memo::kModified);  // lazy release either way
  EXPECT_EQ(d.dirty_begin != d.dirty_end, !write_through);
  // A hit on the kept line costs no round trip.
  const uint64_t before = node0().Stats().hits;
  auto again = cluster_->manager(0).XLock(*ctx_, gcl_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(node0().Stats().hits, before + 1);
}

TEST_P(WriteThroughTest, DirtyBytesJoinsTheFramesAndTheGuardsRanges) {
  if (!GetParam()) {
    // Without write-through an earlier unlock leaves its range on the
    // frame: the next guard's DirtyBytes must include it.
    auto g = cluster_->manager(0).XLock(*ctx_, gcl_);
    Put(*g, 16, 7);
    ASSERT_TRUE(g->Unlock().ok());
  }
  auto g = cluster_->manager(0).XLock(*ctx_, gcl_);
  ASSERT_TRUE(g.ok());
  Put(*g, 96, 9);
  std::optional<GclManager::DirtyRange> range = node0().DirtyBytes(*g);
  ASSERT_TRUE(range.has_value());
  const uint32_t begin = GetParam() ? 96 : 16;
  EXPECT_EQ(range->remote, gcl_ + 8 + begin);
  EXPECT_EQ(range->bytes, 104 - begin);
  EXPECT_EQ(range->data, g->data() + begin);
  // The caller writes them, then the unlock has nothing left to write.
  ASSERT_TRUE(raw_->Write(range->remote, range->data, range->bytes).ok());
  node0().MarkWrittenThrough(*g);
  EXPECT_FALSE(node0().DirtyBytes(*g).has_value());
  const uint64_t flushes = node0().Stats().flushes;
  ASSERT_TRUE(g->Unlock().ok());
  EXPECT_EQ(node0().Stats().flushes, flushes);
  EXPECT_EQ(InMemory(96), 9u);
  EXPECT_FALSE(node0().DebugState(gcl_).dirty_begin !=
               node0().DebugState(gcl_).dirty_end);
}

TEST_P(WriteThroughTest, APeerReadsWhatTheUnlockWroteAfterAHandover) {
  auto g = cluster_->manager(0).XLock(*ctx_, gcl_);
  Put(*g, 0, 77);
  ASSERT_TRUE(g->Unlock().ok());
  auto ctx1 = *cluster_->manager(1).NewThreadContext();
  auto s = cluster_->manager(1).SLock(*ctx1, gcl_);
  ASSERT_TRUE(s.ok()) << s.status();
  uint64_t v = 0;
  std::memcpy(&v, s->data(), 8);
  EXPECT_EQ(v, 77u);
}

INSTANTIATE_TEST_SUITE_P(Both, WriteThroughTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "WriteThrough" : "LazyRelease";
                         });

}  // namespace
}  // namespace strand::cc
