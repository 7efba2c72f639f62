// The cluster board (engine/cluster_board.h) on a loopback fabric with two
// compute nodes: each node's board stands for one process of a verbs
// deployment (tests/tpcc/tpcc_cluster_in_vm.sh runs real processes).

#include "engine/cluster_board.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "rdma/fabric_options.h"

namespace strand::engine {
namespace {

class ClusterBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rdma::FabricOptions options;
    options.compute_nodes = 2;
    options.pool_bytes = 16 * rdma::FabricOptions::kMiB;
    fabric_ = *rdma::CreateFabric(options);
  }

  static ClusterBoard::Options Fast() {
    ClusterBoard::Options o;
    o.heartbeat_interval = absl::Milliseconds(10);
    o.peer_timeout = absl::Milliseconds(300);
    o.describe = [](rdma::ComputeNodeId n) {
      return absl::StrCat("node ", n, " (test)");
    };
    return o;
  }

  // Waits up to 5 s for `board`'s failure callback, which must come once,
  // for its own access, naming `why`.
  static void ExpectUnreachable(const ClusterBoard& board,
                                const std::atomic<int>& callbacks,
                                absl::string_view why) {
    for (int i = 0; i < 500 && callbacks.load() == 0; ++i) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    EXPECT_EQ(callbacks.load(), 1);
    EXPECT_TRUE(board.unreachable());
    EXPECT_NE(board.failure().message().find(why), std::string::npos)
        << board.failure();
  }

  std::unique_ptr<rdma::Fabric> fabric_;
};

TEST_F(ClusterBoardTest, NodesMeetAtStepsAndReadWhatOthersPublished) {
  auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
  auto one = ClusterBoard::Open(*fabric_, 1, Fast());
  ASSERT_TRUE(zero.ok()) << zero.status();
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*zero)->nodes(), 2);
  EXPECT_TRUE(absl::IsNotFound((*zero)->Read(1).status()));

  std::atomic<bool> passed{false};
  std::thread waiter([&] {
    ASSERT_TRUE((*zero)->Arrive(1).ok());
    ASSERT_TRUE((*zero)->WaitForAll(1).ok());
    passed = true;
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(passed.load()) << "passed the step before node 1 reached it";
  const std::string big(100000, 'x');
  ASSERT_TRUE((*one)->Publish(big).ok());
  ASSERT_TRUE((*one)->Arrive(1).ok());
  waiter.join();
  EXPECT_TRUE(passed.load());
  auto read = (*zero)->Read(1);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, big);
  // A later publish replaces the bytes.
  ASSERT_TRUE((*one)->Publish("ok").ok());
  EXPECT_EQ(*(*zero)->Read(1), "ok");
  // Leaving counts as past every step, and is not a failure.
  ASSERT_TRUE((*one)->Leave().ok());
  one->reset();
  EXPECT_TRUE((*zero)->WaitFor(1, 7).ok());
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_TRUE((*zero)->failure().ok()) << (*zero)->failure();
}

TEST_F(ClusterBoardTest, APeerThatStopsBeatingIsNamedWithinTheTimeout) {
  auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
  auto one = ClusterBoard::Open(*fabric_, 1, Fast());
  ASSERT_TRUE(zero.ok() && one.ok());
  std::atomic<int> callbacks{0};
  std::string seen;
  (*zero)->OnFailure([&](const absl::Status& s) {
    seen = std::string(s.message());
    ++callbacks;
  });
  one->reset();  // the process died: no Leave, no more heartbeats
  const absl::Time start = absl::Now();
  const absl::Status s = (*zero)->WaitForAll(1);
  const absl::Duration waited = absl::Now() - start;
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_NE(s.message().find("node 1 (test) stopped"), std::string::npos) << s;
  EXPECT_LT(waited, absl::Seconds(5));
  // The wait may see the failure before the callback has run.
  for (int i = 0; i < 500 && callbacks.load() == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_EQ(callbacks.load(), 1);
  EXPECT_NE(seen.find("node 1 (test)"), std::string::npos) << seen;
  EXPECT_FALSE((*zero)->unreachable()) << "node 0 itself reached the board";
}

// A node fenced while it ran (it paused past its lease and was declared
// failed) finds its own heartbeat failing: its board says so apart from a
// peer's silence (tpcc then stops with kExitDeclaredFailed).
TEST_F(ClusterBoardTest, AFencedNodesOwnBoardReportsItUnreachable) {
  rdma::FabricOptions options;
  options.compute_nodes = 2;
  options.pool_bytes = 16 * rdma::FabricOptions::kMiB;
  options.fencing = true;
  fabric_ = *rdma::CreateFabric(options);
  auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
  auto one = ClusterBoard::Open(*fabric_, 1, Fast());
  ASSERT_TRUE(zero.ok() && one.ok());
  std::atomic<int> callbacks{0};
  (*one)->OnFailure([&](const absl::Status&) { ++callbacks; });
  ASSERT_TRUE(fabric_->Fence(1).ok());
  ExpectUnreachable(**one, callbacks, "is unreachable");
  // Node 1's board went first, before node 0's timeout could name it.
  EXPECT_FALSE((*zero)->unreachable());
}

// A node whose lease ran out while its process was stopped stops at its
// board's next beat, before any operation of it fails (which over verbs
// takes the endpoint's completion timeout).
TEST_F(ClusterBoardTest, ANodeWhoseLeaseRanOutReportsItUnreachableAtOnce) {
  std::atomic<bool> lost{false};
  ClusterBoard::Options options = Fast();
  options.lease_lost = [&] { return lost.load(); };
  auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
  auto one = ClusterBoard::Open(*fabric_, 1, options);
  ASSERT_TRUE(zero.ok() && one.ok());
  std::atomic<int> callbacks{0};
  (*one)->OnFailure([&](const absl::Status&) { ++callbacks; });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(callbacks.load(), 0) << "failed with its lease held";
  lost = true;
  ExpectUnreachable(**one, callbacks, "lease ran out");
}

TEST_F(ClusterBoardTest, APeerThatAbortsFailsTheWaitAtOnce) {
  ClusterBoard::Options slow = Fast();
  slow.peer_timeout = absl::Seconds(60);
  auto zero = ClusterBoard::Open(*fabric_, 0, slow);
  auto one = ClusterBoard::Open(*fabric_, 1, slow);
  ASSERT_TRUE(zero.ok() && one.ok());
  ASSERT_TRUE((*one)->Abort().ok());
  const absl::Time start = absl::Now();
  const absl::Status s = (*zero)->WaitFor(1, 1);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_NE(s.message().find("node 1 (test) gave up"), std::string::npos) << s;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(ClusterBoardTest, AnEarlierRunsBoardIsRefused) {
  {
    auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
    ASSERT_TRUE(zero.ok());
    ASSERT_TRUE((*zero)->Arrive(2).ok());
  }
  auto again = ClusterBoard::Open(*fabric_, 0, Fast());
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_NE(again.status().message().find("earlier run"), std::string::npos);
}

// With failover: a node declared failed is excused while it is out; its
// process restarts, takes its slot over (Options::rejoin) and comes back.
// The others must not count the silence of its earlier incarnation against
// it, and wait for its later steps.
TEST_F(ClusterBoardTest, AnExcusedNodeRejoinsWithAFreshTimeout) {
  std::atomic<bool> out{false};
  ClusterBoard::Options watching = Fast();
  watching.excused = [&](rdma::ComputeNodeId n) { return n == 1 && out; };
  auto zero = ClusterBoard::Open(*fabric_, 0, watching);
  ASSERT_TRUE(zero.ok());
  {
    auto one = ClusterBoard::Open(*fabric_, 1, Fast());
    ASSERT_TRUE(one.ok());
    ASSERT_TRUE((*one)->Arrive(2).ok());
  }  // its process died: no Leave
  // Node 0 sees its last beat, still within the timeout, then it is
  // declared failed.
  absl::SleepFor(watching.peer_timeout / 3);
  ASSERT_TRUE((*zero)->failure().ok()) << (*zero)->failure();
  out = true;
  // Out for longer than the timeout.
  absl::SleepFor(3 * watching.peer_timeout);
  EXPECT_TRUE((*zero)->failure().ok()) << (*zero)->failure();
  ASSERT_TRUE((*zero)->Arrive(5).ok());
  EXPECT_TRUE((*zero)->WaitForAll(5).ok()) << "an excused node was waited for";
  // Without rejoin, the slot is an earlier run's.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      ClusterBoard::Open(*fabric_, 1, Fast()).status()));
  // It is a member again (its engine joined) a moment before its board
  // beats again.
  out = false;
  absl::SleepFor(watching.peer_timeout / 3);
  ClusterBoard::Options rejoining = Fast();
  rejoining.rejoin = true;
  auto again = ClusterBoard::Open(*fabric_, 1, rejoining);
  ASSERT_TRUE(again.ok()) << again.status();
  absl::SleepFor(2 * watching.peer_timeout);
  EXPECT_TRUE((*zero)->failure().ok())
      << "the rejoined node was timed from its earlier incarnation's last "
         "beat: "
      << (*zero)->failure();
  std::atomic<bool> passed{false};
  std::thread waiter([&] {
    EXPECT_TRUE((*zero)->WaitFor(1, 5).ok());
    passed = true;
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(passed.load()) << "the rejoined node's step was not awaited";
  ASSERT_TRUE((*again)->Arrive(5).ok());
  waiter.join();
}

TEST_F(ClusterBoardTest, PublishingMoreThanAChunkIsRefused) {
  auto zero = ClusterBoard::Open(*fabric_, 0, Fast());
  ASSERT_TRUE(zero.ok());
  const std::string huge(fabric_->chunk_bytes() + 1, 'x');
  EXPECT_TRUE(absl::IsInvalidArgument((*zero)->Publish(huge)));
}

}  // namespace
}  // namespace strand::engine
