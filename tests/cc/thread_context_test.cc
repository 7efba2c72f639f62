// Per-thread state of the layers above cc/, kept on the ThreadContext.

#include "cc/thread_context.h"

#include <memory>

#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc {
namespace {

struct Counter {
  int value = 0;
};

// Counts live instances, so a test sees the context destroy its state.
struct Tracked {
  static inline int live = 0;
  Tracked() { ++live; }
  ~Tracked() { --live; }
};

class ThreadContextTest : public ::testing::TestWithParam<Protocol> {
 protected:
  void SetUp() override {
    CcOptions o;
    o.protocol = GetParam();
    o.gcl_size = 512;
    auto cluster = testing::CcCluster::Create(2, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  std::unique_ptr<ThreadContext> NewContext(int node) {
    auto ctx = cluster_->manager(node).NewThreadContext();
    EXPECT_TRUE(ctx.ok()) << ctx.status();
    return *std::move(ctx);
  }
  std::unique_ptr<testing::CcCluster> cluster_;
};

TEST_P(ThreadContextTest, EachContextHasItsOwnState) {
  auto a = NewContext(0);
  auto b = NewContext(0);  // a second context on the same thread
  a->Local<Counter>().value = 7;
  EXPECT_EQ(a->Local<Counter>().value, 7);
  EXPECT_EQ(b->Local<Counter>().value, 0);
  b->Local<Counter>().value = 3;
  EXPECT_EQ(a->Local<Counter>().value, 7);
  EXPECT_EQ(&a->Local<Counter>(), &a->Local<Counter>());
}

TEST_P(ThreadContextTest, StateIsMadeOnFirstUseAndGoesWithTheContext) {
  const int before = Tracked::live;
  auto ctx = NewContext(1);
  EXPECT_EQ(Tracked::live, before);
  ctx->Local<Tracked>();
  ctx->Local<Tracked>();
  EXPECT_EQ(Tracked::live, before + 1);
  ctx.reset();
  EXPECT_EQ(Tracked::live, before);
}

TEST_P(ThreadContextTest, OwnerIsTheManagerThatMadeIt) {
  auto a = NewContext(0);
  auto b = NewContext(1);
  EXPECT_EQ(a->owner(), &cluster_->manager(0));
  EXPECT_EQ(b->owner(), &cluster_->manager(1));
}

INSTANTIATE_TEST_SUITE_P(Protocols, ThreadContextTest,
                         ::testing::Values(Protocol::kSel, Protocol::kSelcc),
                         [](const auto& info) {
                           return std::string(
                               info.param == Protocol::kSel ? "sel" : "selcc");
                         });

}  // namespace
}  // namespace strand::cc
