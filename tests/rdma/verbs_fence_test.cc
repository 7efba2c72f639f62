// Fencing over verbs (rdma/verbs/fence_control.h, VerbsFabric::Fence),
// below what tests/rdma/fence_test.cc checks on every backend: the memory
// node's control plane moves the node's queue pairs to the error state and
// refuses its new connections, so a node that does not know it was fenced
// (it paused, its process has none of the fabric's flags) changes nothing;
// its next incarnation connects again. Runs with
// STRAND_TEST_FABRIC=verbs on a machine with an RDMA device (the Soft-RoCE
// VM, tests/rdma/verbs_in_vm.sh); skipped otherwise.

#include <atomic>

#include "absl/time/clock.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "rdma/verbs/fence_control.h"
#include "rdma/verbs/verbs_compute_node.h"
#include "rdma/verbs/verbs_fabric.h"
#include "tests/testing/test_fabric.h"

namespace strand::rdma::verbs {
namespace {

struct Node {
  ComputeNode* node = nullptr;
  std::unique_ptr<Endpoint> ep;
};

class VerbsFenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::TestFabricKind() != FabricKind::kVerbs) {
      GTEST_SKIP() << "needs STRAND_TEST_FABRIC=verbs";
    }
    FabricOptions options = testing::TestFabricOptions(
        /*memory_nodes=*/2, /*compute_nodes=*/2);
    options.pool_bytes = 16 << 20;
    fabric_ = testing::MakeTestFabric(options);
    ASSERT_NE(fabric_, nullptr);
    a_ = Open(0);
    b_ = Open(1);
    auto alloc0 = BlockAllocator::Create(*fabric_, 0, 4096);
    auto alloc1 = BlockAllocator::Create(*fabric_, 1, 4096);
    ASSERT_TRUE(alloc0.ok() && alloc1.ok());
    words_[0] = *(*alloc0)->Allocate(*a_.ep);
    words_[1] = *(*alloc1)->Allocate(*a_.ep);
  }

  Node Open(ComputeNodeId id) {
    Node n;
    n.node = *fabric_->compute_node(id);
    n.ep = *n.node->NewEndpoint();
    return n;
  }

  VerbsFabric& verbs() { return static_cast<VerbsFabric&>(*fabric_); }

  // The word's value as node 0 reads it.
  uint64_t Value(int memory_node) {
    auto value = a_.ep->FetchAndAdd(words_[memory_node], 0);
    EXPECT_TRUE(value.ok()) << value.status();
    return value.ok() ? *value : ~uint64_t{0};
  }

  std::unique_ptr<Fabric> fabric_;
  Node a_, b_;
  GlobalAddress words_[2];
};

// What makes a paused node harmless: nothing in its own process stops it
// (the fabric's flags are not set here), only the memory nodes' control
// plane, which moves its queue pairs to the error state and refuses its
// reconnections, and a peer's listener, which does the same for messages.
TEST_F(VerbsFenceTest, TheMemoryNodesStopANodeThatDoesNotKnowItIsFenced) {
  ASSERT_TRUE(a_.node->StartHandlers([](const Message&, Endpoint&) {}, 1).ok());
  for (int cycle = 0; cycle < 3; ++cycle) {
    SCOPED_TRACE(cycle);
    // A new endpoint of node 1 each cycle, its queue pairs to both memory
    // nodes and to node 0 open.
    auto paused = b_.node->NewEndpoint();
    ASSERT_TRUE(paused.ok());
    Endpoint& ep = **paused;
    ASSERT_TRUE(ep.FetchAndAdd(words_[0], 1).ok());
    ASSERT_TRUE(ep.FetchAndAdd(words_[1], 1).ok());
    ASSERT_TRUE(ep.Send(0, Message{}).ok());
    const uint64_t before[2] = {Value(0), Value(1)};

    const absl::Time start = absl::Now();
    for (MemoryNodeId mn = 0; mn < 2; ++mn) {
      ASSERT_TRUE(RequestFence(*a_.ep, mn, 1, /*fenced=*/true,
                               start + absl::Seconds(10))
                      .ok());
    }
    LOG(INFO) << "both memory nodes fenced node 1 in " << absl::Now() - start;
    ASSERT_TRUE(verbs().hosted(0)->FenceIncoming(1).ok());
    EXPECT_FALSE(verbs().blocked(1)) << "the fabric's own flag is not the test";

    if (cycle == 0) {
      // On a queue pair that was open: the request is dropped, and the
      // requester gives up after its completion timeout (10 s each, so
      // once).
      EXPECT_FALSE(ep.FetchAndAdd(words_[0], 100).ok());
      EXPECT_FALSE(ep.Send(0, Message{}).ok());
    }
    // A connection made after the fence is refused, everywhere.
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto fresh = b_.node->NewEndpoint();
      ASSERT_TRUE(fresh.ok());
      EXPECT_FALSE((*fresh)->FetchAndAdd(words_[0], 100).ok());
      EXPECT_FALSE((*fresh)->Write(words_[1], "z", 1).ok());
      EXPECT_FALSE((*fresh)->Send(0, Message{}).ok());
    }
    EXPECT_EQ(Value(0), before[0]) << "a fenced operation took effect";
    EXPECT_EQ(Value(1), before[1]) << "a fenced operation took effect";

    // Readmitted as a new incarnation (as a restarted process would be,
    // or a node rejoining in its process): a new endpoint connects again.
    const uint64_t fenced_incarnation = verbs().incarnation(1);
    ASSERT_TRUE(fabric_->Unfence(1).ok());
    EXPECT_GT(verbs().incarnation(1), fenced_incarnation);
    auto readmitted = b_.node->NewEndpoint();
    ASSERT_TRUE(readmitted.ok());
    absl::StatusOr<uint64_t> again = (*readmitted)->FetchAndAdd(words_[0], 1);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(*again, before[0]);
    EXPECT_TRUE((*readmitted)->FetchAndAdd(words_[1], 1).ok());
    EXPECT_TRUE((*readmitted)->Send(0, Message{}).ok());
  }
  a_.node->StopHandlers();
}

TEST_F(VerbsFenceTest, FencingNeedsAnotherHostedNodeAndAKnownNode) {
  EXPECT_EQ(fabric_->Fence(7).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RequestFence(*a_.ep, 0, 64, true, absl::Now()).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(fabric_->Fence(1).ok());
  // With node 1 fenced, node 0 is the only one left to fence from.
  absl::Status self = fabric_->Fence(0);
  EXPECT_EQ(self.code(), absl::StatusCode::kFailedPrecondition) << self;
  ASSERT_TRUE(fabric_->Unfence(1).ok());
}

}  // namespace
}  // namespace strand::rdma::verbs
