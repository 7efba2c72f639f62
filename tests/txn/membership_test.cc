// Membership (txn/membership.h) on three compute nodes of one fabric:
// beating members never expire; one that stops expires after a lease, by
// every observer's clock; of two survivors declaring it failed exactly one
// succeeds; the declared node learns it on its next beat; it can rejoin;
// every change advances the epoch; a reclaim's claim moves only from the
// claimant named.
// Runs on the backend of STRAND_TEST_FABRIC (tests/testing/test_fabric.h).

#include "txn/membership.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_fabric.h"

namespace strand::txn {
namespace {

constexpr int kNodes = 3;

class MembershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fabric_ = testing::MakeTestFabric(testing::TestFabricOptions(1, kNodes));
    ASSERT_NE(fabric_, nullptr);
    for (int n = 0; n < kNodes; ++n) {
      ep_.push_back(*(*fabric_->compute_node(n))->NewEndpoint());
    }
    auto m = Membership::Open(kNodes, kLease);
    ASSERT_TRUE(m.ok()) << m.status();
    membership_.emplace(*m);
    for (int n = 0; n < kNodes; ++n) {
      ASSERT_TRUE(membership_->Join(*ep_[n], n).ok());
    }
  }

  static constexpr absl::Duration kLease = absl::Milliseconds(100);
  std::unique_ptr<rdma::Fabric> fabric_;
  std::vector<std::unique_ptr<rdma::Endpoint>> ep_;
  std::optional<Membership> membership_;
};

TEST_F(MembershipTest, AStoppedNodeExpiresAndIsDeclaredFailedOnce) {
  Membership::Tracker t0, t1;
  const absl::Time start = absl::Now();
  auto v = membership_->Scan(*ep_[0], t0, start);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->live, 0b111u);
  const uint64_t epoch = v->epoch;
  ASSERT_TRUE(membership_->Scan(*ep_[1], t1, start).ok());
  // Nodes 0 and 1 beat; node 2 stopped. Observers use their own clocks.
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(membership_->Beat(*ep_[0], 0).ok());
    ASSERT_TRUE(membership_->Beat(*ep_[1], 1).ok());
    const absl::Time now = start + i * kLease / 2;
    auto seen0 = membership_->Scan(*ep_[0], t0, now);
    auto seen1 = membership_->Scan(*ep_[1], t1, now);
    ASSERT_TRUE(seen0.ok() && seen1.ok());
    if (i == 1) {
      EXPECT_TRUE(seen0->expired.empty()) << "expired before its lease";
    } else {
      EXPECT_EQ(seen0->expired, std::vector<rdma::ComputeNodeId>{2});
      EXPECT_EQ(seen1->expired, std::vector<rdma::ComputeNodeId>{2});
    }
  }
  // Both survivors declare it at once: exactly one wins.
  std::atomic<int> won{0};
  std::thread other([&] {
    auto r = membership_->DeclareFailed(*ep_[1], 2, 1);
    ASSERT_TRUE(r.ok());
    if (*r) ++won;
  });
  auto r = membership_->DeclareFailed(*ep_[0], 2, 0);
  other.join();
  ASSERT_TRUE(r.ok());
  if (*r) ++won;
  EXPECT_EQ(won.load(), 1);
  auto after = membership_->Scan(*ep_[0], t0, absl::Now());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->live, 0b011u);
  EXPECT_TRUE(after->expired.empty()) << "a non-member expires";
  EXPECT_EQ(after->epoch, epoch + 1);
  // The declared node, resuming, learns it is out.
  EXPECT_EQ(membership_->Beat(*ep_[2], 2).code(),
            absl::StatusCode::kFailedPrecondition);
  // It rejoins.
  ASSERT_TRUE(membership_->Join(*ep_[2], 2).ok());
  EXPECT_TRUE(membership_->Beat(*ep_[2], 2).ok());
  auto back = membership_->Scan(*ep_[0], t0, absl::Now());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->live, 0b111u);
  EXPECT_EQ(back->epoch, epoch + 2);
}

TEST_F(MembershipTest, ALeavingNodeNeverExpires) {
  Membership::Tracker t;
  const absl::Time start = absl::Now();
  ASSERT_TRUE(membership_->Scan(*ep_[0], t, start).ok());
  ASSERT_TRUE(membership_->Leave(*ep_[1], 1).ok());
  for (int n : {0, 2}) ASSERT_TRUE(membership_->Beat(*ep_[n], n).ok());
  auto v = membership_->Scan(*ep_[0], t, start + 3 * kLease);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->live, 0b101u);
  EXPECT_TRUE(v->expired.empty());
  auto again = membership_->DeclareFailed(*ep_[0], 1, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  v = membership_->Scan(*ep_[0], t, start + 3 * kLease);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->reclaimer[1], -1) << "a claim on a node that left stayed";
}

TEST_F(MembershipTest, ARejoinedNodesLeaseStartsAtItsJoin) {
  Membership::Tracker t;
  const absl::Time start = absl::Now();
  ASSERT_TRUE(membership_->Scan(*ep_[0], t, start).ok());
  auto declared = membership_->DeclareFailed(*ep_[0], 2, 0);
  ASSERT_TRUE(declared.ok() && *declared);
  // Out for several leases, its heartbeat unchanged all along.
  ASSERT_TRUE(membership_->Scan(*ep_[0], t, start + 3 * kLease).ok());
  ASSERT_TRUE(membership_->Join(*ep_[2], 2).ok());
  for (int n : {0, 1}) ASSERT_TRUE(membership_->Beat(*ep_[n], n).ok());
  auto rejoined =
      membership_->Scan(*ep_[0], t, start + 3 * kLease + kLease / 2);
  ASSERT_TRUE(rejoined.ok());
  EXPECT_EQ(rejoined->live, 0b111u);
  EXPECT_TRUE(rejoined->expired.empty())
      << "a rejoined node expired by the beat of its earlier incarnation";
  // It does not beat: it expires a lease after it was first seen back.
  for (int n : {0, 1}) ASSERT_TRUE(membership_->Beat(*ep_[n], n).ok());
  auto later = membership_->Scan(*ep_[0], t, start + 5 * kLease);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->expired, std::vector<rdma::ComputeNodeId>{2});
}

// The winner of DeclareFailed is named the reclaimer; another survivor
// takes the claim over only from the claimant it names (one that failed
// too), and a rejoin clears it.
TEST_F(MembershipTest, AReclaimIsClaimedByOneSurvivorAtATime) {
  Membership::Tracker t;
  auto won = membership_->DeclareFailed(*ep_[1], 2, 1);
  ASSERT_TRUE(won.ok() && *won);
  auto v = membership_->Scan(*ep_[0], t, absl::Now());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->reclaimer, (std::vector<int>{-1, -1, 1}));
  // Node 0 believes nobody claimed it, or node 0 did: both lose.
  for (int from : {-1, 0}) {
    auto stolen = membership_->Claim(*ep_[0], 2, from, 0);
    ASSERT_TRUE(stolen.ok());
    EXPECT_FALSE(*stolen) << "claimed from " << from;
  }
  // From node 1 (say it failed too), once.
  auto taken = membership_->Claim(*ep_[0], 2, 1, 0);
  ASSERT_TRUE(taken.ok() && *taken);
  auto again = membership_->Claim(*ep_[1], 2, 1, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  v = membership_->Scan(*ep_[0], t, absl::Now());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->reclaimer[2], 0);
  ASSERT_TRUE(membership_->Join(*ep_[2], 2).ok());
  v = membership_->Scan(*ep_[0], t, absl::Now());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->reclaimer[2], -1);
}

// A reclaimer's WaitAcknowledged returns once every member applied the
// epoch it read, and not before; a member that never does stops counting
// once it is declared failed; with one that neither acknowledges nor is
// declared, it fails by its deadline, naming it.
TEST_F(MembershipTest, WaitAcknowledgedWaitsForEveryMemberOrItsFailure) {
  Membership::Tracker tracker;
  auto v = membership_->Scan(*ep_[0], tracker, absl::Now());
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(membership_->Acknowledge(*ep_[0], 0, v->epoch).ok());
  ASSERT_TRUE(membership_->Acknowledge(*ep_[1], 1, v->epoch).ok());
  // Node 2 has not acknowledged: a short wait fails and names it.
  absl::Status s =
      membership_->WaitAcknowledged(*ep_[0], absl::Now() + kLease / 2);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("compute node(s) 2,"), std::string::npos) << s;
  // It acknowledges while the reclaimer waits.
  std::thread late([&] {
    absl::SleepFor(kLease / 2);
    ASSERT_TRUE(membership_->Acknowledge(*ep_[2], 2, v->epoch).ok());
  });
  const absl::Time start = absl::Now();
  EXPECT_TRUE(
      membership_->WaitAcknowledged(*ep_[0], absl::Now() + absl::Seconds(10))
          .ok());
  EXPECT_GE(absl::Now() - start, kLease / 2 - absl::Milliseconds(5));
  late.join();
  // A new epoch (node 1 declared failed): node 1 never acknowledges it,
  // but it is no member; 0 and 2 are enough.
  auto won = membership_->DeclareFailed(*ep_[0], 1, 0);
  ASSERT_TRUE(won.ok() && *won);
  auto after = membership_->Scan(*ep_[0], tracker, absl::Now());
  ASSERT_TRUE(after.ok());
  EXPECT_GT(after->epoch, v->epoch);
  ASSERT_TRUE(membership_->Acknowledge(*ep_[0], 0, after->epoch).ok());
  ASSERT_TRUE(membership_->Acknowledge(*ep_[2], 2, after->epoch).ok());
  EXPECT_TRUE(
      membership_->WaitAcknowledged(*ep_[0], absl::Now() + absl::Seconds(10))
          .ok());
}

}  // namespace
}  // namespace strand::txn
