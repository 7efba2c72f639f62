// FailureMonitor (engine/failure_monitor.h) as two processes would run it:
// two monitors over one membership, monitor 0 hosting nodes 0 and 2,
// monitor 1 hosting node 1. Node 2 stops beating; whichever monitor wins
// reclaims it with a stand-in reclaim that publishes the fence and waits
// for every member's acknowledgement, as ReclaimNode does. The other
// monitor must have fenced node 2 in its own process (its FenceHere) before
// that wait returns, even when its first tries fail; each monitor says when
// it saw node 2 declared failed, the loser too; and when node 2 joins again
// the other monitor readmits it.

#include "engine/failure_monitor.h"

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::engine {
namespace {

constexpr int kNodes = 3;
constexpr absl::Duration kLease = absl::Milliseconds(40);

// What one monitor's FenceHere was asked, and when it last succeeded.
struct FenceCalls {
  absl::Mutex mu;
  int failures_left ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::pair<rdma::ComputeNodeId, bool>> done ABSL_GUARDED_BY(mu);
  absl::Time fenced_at ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
};

class FailureMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cluster = testing::CcCluster::Create(kNodes, cc::CcOptions());
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    auto membership = txn::Membership::Open(kNodes, kLease);
    ASSERT_TRUE(membership.ok());
    membership_.emplace(*membership);
    for (int m = 0; m < 2; ++m) {
      monitors_[m] = std::make_unique<FailureMonitor>(
          *membership_,
          [this](rdma::ComputeNodeId reclaimer, rdma::ComputeNodeId failed) {
            return StandInReclaim(reclaimer, failed);
          },
          [this, m](rdma::ComputeNodeId node, bool fenced) {
            return FenceHere(m, node, fenced);
          });
    }
    ASSERT_TRUE(monitors_[0]->Attach(0, cluster_->manager(0)).ok());
    ASSERT_TRUE(monitors_[1]->Attach(1, cluster_->manager(1)).ok());
    ASSERT_TRUE(monitors_[0]->Attach(2, cluster_->manager(2)).ok());
  }
  void TearDown() override {
    for (auto& m : monitors_) m.reset();
  }

  static int MonitorOf(rdma::ComputeNodeId node) { return node == 1 ? 1 : 0; }

  absl::Status FenceHere(int monitor, rdma::ComputeNodeId node, bool fenced) {
    FenceCalls& calls = calls_[monitor];
    absl::MutexLock lock(&calls.mu);
    if (calls.failures_left > 0) {
      --calls.failures_left;
      return absl::UnavailableError("a listener could not be fenced yet");
    }
    calls.done.push_back({node, fenced});
    if (fenced && node == 2) calls.fenced_at = absl::Now();
    return absl::OkStatus();
  }

  // The fence's part of ReclaimNode: publish it, wait for every member.
  absl::StatusOr<ReclaimReport> StandInReclaim(rdma::ComputeNodeId reclaimer,
                                               rdma::ComputeNodeId failed) {
    auto ctx = cluster_->manager(reclaimer).NewThreadContext();
    if (!ctx.ok()) return ctx.status();
    rdma::Endpoint& ep = (*ctx)->endpoint();
    using Stage = txn::Membership::Stage;
    if (auto s = membership_->Publish(ep, failed, Stage::kFenced); !s.ok()) {
      return s;
    }
    monitors_[MonitorOf(reclaimer)]->Refresh();
    absl::Status waited =
        membership_->WaitAcknowledged(ep, absl::Now() + absl::Seconds(10));
    {
      absl::MutexLock lock(&mu_);
      reclaimer_ = reclaimer;
      acknowledged_at_ = absl::Now();
    }
    if (!waited.ok()) return waited;
    for (Stage stage : {Stage::kStealable, Stage::kReclaimed}) {
      if (auto s = membership_->Publish(ep, failed, stage); !s.ok()) return s;
    }
    ReclaimReport report;
    report.node = failed;
    report.reclaimer = reclaimer;
    return report;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  std::optional<txn::Membership> membership_;
  std::unique_ptr<FailureMonitor> monitors_[2];
  FenceCalls calls_[2];
  absl::Mutex mu_;
  int reclaimer_ ABSL_GUARDED_BY(mu_) = -1;
  absl::Time acknowledged_at_ ABSL_GUARDED_BY(mu_);
};

TEST_F(FailureMonitorTest, TheReclaimWaitsUntilEveryProcessFencedTheNode) {
  for (FenceCalls& c : calls_) {
    absl::MutexLock lock(&c.mu);
    c.failures_left = 3;  // each monitor's first fences fail
  }
  monitors_[0]->Detach(2);  // node 2 stops beating
  ASSERT_TRUE(monitors_[1]->WaitReclaimed(2, absl::Seconds(10)).ok());
  ASSERT_TRUE(monitors_[0]->WaitReclaimed(2, absl::Seconds(10)).ok());
  int reclaimer;
  absl::Time acknowledged_at;
  {
    absl::MutexLock lock(&mu_);
    reclaimer = reclaimer_;
    acknowledged_at = acknowledged_at_;
  }
  ASSERT_GE(reclaimer, 0);
  // The process that did not reclaim fenced node 2 before the reclaimer's
  // wait for acknowledgements ended.
  FenceCalls& other = calls_[1 - MonitorOf(reclaimer)];
  {
    absl::MutexLock lock(&other.mu);
    EXPECT_EQ(other.failures_left, 0) << "its failed fences were not retried";
    EXPECT_LE(other.fenced_at, acknowledged_at)
        << "a member acknowledged the fence before fencing the node";
  }
  // Both know when node 2 was declared failed, whoever declared it.
  for (auto& m : monitors_) EXPECT_NE(m->declared_at(2), absl::InfinitePast());

  // Node 2 joins again (its process restarted): monitor 1 readmits it.
  ASSERT_TRUE(monitors_[0]->Attach(2, cluster_->manager(2)).ok());
  {
    absl::MutexLock lock(&calls_[1].mu);
    ASSERT_FALSE(calls_[1].done.empty());
    EXPECT_EQ(calls_[1].done.back(),
              (std::pair<rdma::ComputeNodeId, bool>{2, false}));
  }
  EXPECT_EQ(monitors_[1]->declared_at(2), absl::InfinitePast());
}

// The lease a node renews: it stays within a fraction of a lease of now
// while the monitor beats for it, falls behind once it stops (as in a
// process that was stopped: tpcc then leaves as declared failed,
// ClusterBoard::Options::lease_lost), and is held by nobody after Detach.
TEST_F(FailureMonitorTest, ALeaseIsRenewedWhileBeatenAndFallsBehindOnceNot) {
  bool fresh = false;  // seen within half a lease of now, at some point
  for (const absl::Time deadline = absl::Now() + absl::Seconds(5);
       !fresh && absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(1))) {
    fresh = absl::Now() - monitors_[0]->lease_renewed_at(0) <= kLease / 2;
  }
  EXPECT_TRUE(fresh) << "the monitor renewed node 0's lease too seldom";
  EXPECT_EQ(monitors_[0]->lease_renewed_at(1), absl::InfiniteFuture())
      << "node 1 is attached to the other monitor";
  monitors_[0]->Pause(0);
  absl::SleepFor(3 * kLease);
  EXPECT_GT(absl::Now() - monitors_[0]->lease_renewed_at(0), 2 * kLease);
  monitors_[0]->Detach(0);
  EXPECT_EQ(monitors_[0]->lease_renewed_at(0), absl::InfiniteFuture());
}

}  // namespace
}  // namespace strand::engine
