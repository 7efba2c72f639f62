// A compute node fails at a forced point of its work (base/failure_point.h)
// and the others keep committing (docs/design/node_failure.md): the
// shared-mode counterpart of the partitioned 2PC points
// (tests/partition/partition_failover_test.cc). The points: a commit
// holding its exclusive latches on lines it made dirty in its cache,
// before anything is written through (its log record appended, not
// durable); a commit written through on one memory node and not the other;
// a commit written through, latches still held; its log's batch durable
// but not yet acknowledged; serving a peer's invalidation, before and
// after acting on the line; evicting, with its releases staged and not
// sent.
//
// The bank of failover_bank.h runs on three compute nodes and two memory
// nodes (so a commit's lines span both, and the redo ring sits on one). In
// each of kCycles cycles one node is armed to fail the n-th time (n
// random) it reaches the point; once it did, the survivors must commit
// again within a bound, the failed node is reclaimed, the total is exact
// and no acknowledged transfer is lost; then it rejoins. With a log, a
// fresh pool recovered from the logs at the end holds exactly what the
// survivors saw: every balance and counter. ReclaimerFailureTest, below:
// the reclaimer fails too.

#include <atomic>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/failure_point.h"
#include "engine/node_reclaim.h"
#include "gtest/gtest.h"
#include "tests/engine/failover_bank.h"

namespace strand::engine {
namespace {

constexpr int kCycles = 20;
constexpr int kMemoryNodes = 2;
// The armed node fails at its n-th pass, n below this: not always its
// first commit or invalidation after the arming. Its first eviction: the
// bank nearly fits the cache, so a node evicts about once a second.
int MaxSkip(FailurePoint point) {
  return point == FailurePoint::kEvictionStaged ? 1 : 8;
}
// A point that is never reached in this long is a test failure.
constexpr absl::Duration kReachBound = absl::Seconds(20);

// The hook (a plain function: base/failure_point.h): fails `armed_node`
// at its `skip`-th pass through `armed_point`, on the thread there.
std::atomic<Engine*> hook_engine{nullptr};
std::atomic<FailurePoint> armed_point{FailurePoint::kCommitApplied};
std::atomic<int> armed_node{-1};
std::atomic<int> skip{0};
std::atomic<bool> fired{false};
// A second arm, for ReclaimerFailureTest: whichever node reaches
// `reclaim_point` first (the reclaimer, which the test cannot name ahead).
std::atomic<FailurePoint> reclaim_point{FailurePoint::kReclaimFenced};
std::atomic<bool> reclaim_armed{false};
std::atomic<int> reclaimer_failed{-1};

void FailHere(uint32_t node, FailurePoint point) {
  if (point == reclaim_point.load() && reclaim_armed.exchange(false)) {
    EXPECT_TRUE(hook_engine.load()->FailNode(node).ok());
    reclaimer_failed = static_cast<int>(node);
    return;
  }
  if (point != armed_point.load() ||
      static_cast<int>(node) != armed_node.load()) {
    return;
  }
  if (skip.fetch_sub(1) > 0) return;
  int expected = static_cast<int>(node);
  if (!armed_node.compare_exchange_strong(expected, -1)) return;
  // As if the process died here: nothing it does from now on lands.
  EXPECT_TRUE(hook_engine.load()->FailNode(node).ok());
  fired = true;
}

struct ForcedCase {
  FailurePoint point;
  FailoverConfig config;
};

std::string ForcedCaseName(const ::testing::TestParamInfo<ForcedCase>& info) {
  return absl::StrCat(FailurePointName(info.param.point), "_",
                      FailoverConfigLabel(info.param.config));
}

class ForcedFailureTest : public FailoverBank,
                          public ::testing::WithParamInterface<ForcedCase> {
 protected:
  void SetUp() override {
    Open(GetParam().config, kMemoryNodes);
    if (HasFatalFailure()) return;
    hook_engine = engine_.get();
    SetFailurePointHookForTesting(&FailHere);
  }
  void TearDown() override {
    SetFailurePointHookForTesting(nullptr);
    armed_node = -1;
    FailoverBank::TearDown();
    hook_engine = nullptr;
  }

  // Arms `victim` and waits until it failed at `point`.
  void FailAtPoint(int victim, int passes) {
    FailAtPoint(victim, passes, GetParam().point);
  }
  void FailAtPoint(int victim, int passes, FailurePoint point) {
    fired = false;
    skip = passes;
    armed_point = point;
    armed_node = victim;
    const absl::Time deadline = absl::Now() + kReachBound;
    while (!fired.load() && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    if (!fired.load()) {
      armed_node = -1;
      // Disarmed, but the hook may have been on its way: wait it out.
      absl::SleepFor(absl::Milliseconds(100));
    }
    ASSERT_TRUE(fired.load())
        << "compute node " << victim << " did not reach "
        << FailurePointName(point) << " within " << kReachBound;
  }
};

TEST_P(ForcedFailureTest, SurvivorsRecoverEverythingAcknowledged) {
  if (GetParam().config.log) TakeCheckpoint();
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam().point) * 131 +
                      static_cast<uint64_t>(GetParam().config.algorithm));
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    const int victim = static_cast<int>(rng() % kNodes);
    FailAtPoint(victim, static_cast<int>(rng() % MaxSkip(GetParam().point)));
    if (HasFatalFailure()) return;
    SurviveAndRejoin(victim);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  EXPECT_EQ(engine_->ReclaimReports().size(), static_cast<size_t>(kCycles));
  if (GetParam().config.log) ExpectRecoveredAsSeen();
}

using ReclaimerFailureTest = ForcedFailureTest;

// ReclaimerFailureTest: the survivor reclaiming a failed node fails too, at
// a point of that reclaim (fenced, nothing redone; redone and stealable,
// latches not scanned); the last survivor must reclaim both, taking the
// first reclaim over where it stopped, and go on committing.
// The victim fails half-way through writing a commit through, so its ring
// holds a record to redo; its reclaimer fails at the point. Past
// kStealable the survivor may write the victim's lines at once, so a
// takeover that redid that record again would overwrite its writes.
TEST_P(ReclaimerFailureTest, TheLastSurvivorReclaimsBoth) {
  if (GetParam().config.log) TakeCheckpoint();
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(static_cast<uint64_t>(GetParam().point) * 7 +
                      GetParam().config.log);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    const int victim = static_cast<int>(rng() % kNodes);
    reclaimer_failed = -1;
    reclaim_point = GetParam().point;
    reclaim_armed = true;
    const absl::Time failed = absl::Now();
    FailAtPoint(victim, static_cast<int>(rng() % 8),
                FailurePoint::kCommitPartlyWrittenThrough);
    stop_[victim] = true;  // joined by Rejoin
    if (HasFatalFailure()) return;
    while (reclaimer_failed.load() < 0 && absl::Now() < failed + kReachBound) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    reclaim_armed = false;
    const int reclaimer = reclaimer_failed.load();
    ASSERT_GE(reclaimer, 0) << "no reclaimer reached the point";
    ASSERT_NE(reclaimer, victim);
    stop_[reclaimer] = true;
    const int survivor = kNodes - victim - reclaimer;
    ExpectProgress({survivor}, {acked_[survivor].load()});
    for (int node : {victim, reclaimer}) {
      absl::Status reclaimed = engine_->WaitReclaimed(node, absl::Seconds(10));
      ASSERT_TRUE(reclaimed.ok()) << "node " << node << ": " << reclaimed;
    }
    EXPECT_LT(absl::Now() - failed, kRecoveryBound);
    Check(survivor);
    Rejoin(victim);
    Rejoin(reclaimer);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  if (GetParam().config.log) ExpectRecoveredAsSeen();
}

constexpr FailoverConfig k2plNoLog{txn::CcAlgorithm::kTwoPhaseLocking, false};
constexpr FailoverConfig k2plLog{txn::CcAlgorithm::kTwoPhaseLocking, true};
constexpr FailoverConfig kOccLog{txn::CcAlgorithm::kOptimistic, true};
constexpr FailoverConfig kToLog{txn::CcAlgorithm::kTimestampOrdering, true};

// A commit's points under every algorithm, the log's under those that log,
// the cache's under 2PL with and without a log (the algorithm does not
// reach them: they serve every line alike).
INSTANTIATE_TEST_SUITE_P(
    Points, ForcedFailureTest,
    ::testing::Values(
        ForcedCase{FailurePoint::kCommitApplied, k2plNoLog},
        ForcedCase{FailurePoint::kCommitApplied, k2plLog},
        ForcedCase{FailurePoint::kCommitApplied, kOccLog},
        ForcedCase{FailurePoint::kCommitApplied, kToLog},
        ForcedCase{FailurePoint::kCommitPartlyWrittenThrough, k2plNoLog},
        ForcedCase{FailurePoint::kCommitPartlyWrittenThrough, k2plLog},
        ForcedCase{FailurePoint::kCommitPartlyWrittenThrough, kOccLog},
        ForcedCase{FailurePoint::kCommitPartlyWrittenThrough, kToLog},
        ForcedCase{FailurePoint::kCommitWrittenThrough, k2plNoLog},
        ForcedCase{FailurePoint::kCommitWrittenThrough, k2plLog},
        ForcedCase{FailurePoint::kCommitWrittenThrough, kOccLog},
        ForcedCase{FailurePoint::kCommitWrittenThrough, kToLog},
        ForcedCase{FailurePoint::kLogFlushed, k2plLog},
        ForcedCase{FailurePoint::kLogFlushed, kOccLog},
        ForcedCase{FailurePoint::kLogFlushed, kToLog},
        ForcedCase{FailurePoint::kInvalidationLatched, k2plNoLog},
        ForcedCase{FailurePoint::kInvalidationLatched, k2plLog},
        ForcedCase{FailurePoint::kInvalidationServed, k2plNoLog},
        ForcedCase{FailurePoint::kInvalidationServed, k2plLog},
        ForcedCase{FailurePoint::kEvictionStaged, k2plNoLog},
        ForcedCase{FailurePoint::kEvictionStaged, k2plLog}),
    ForcedCaseName);

INSTANTIATE_TEST_SUITE_P(
    Points, ReclaimerFailureTest,
    ::testing::Values(ForcedCase{FailurePoint::kReclaimFenced, k2plNoLog},
                      ForcedCase{FailurePoint::kReclaimFenced, k2plLog},
                      ForcedCase{FailurePoint::kReclaimStealable, k2plNoLog},
                      ForcedCase{FailurePoint::kReclaimStealable, k2plLog}),
    ForcedCaseName);

}  // namespace
}  // namespace strand::engine
