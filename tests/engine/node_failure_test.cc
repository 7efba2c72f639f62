// A compute node fails and the others keep committing
// (docs/design/node_failure.md), in one process (Engine::FailNode).
//
// Bank transfers run on three compute nodes (failover_bank.h); each
// transfer also adds one to its node's counter row. In each of kCycles
// cycles one node is failed at a random moment (holding latches on dirty
// lines, committing, being asked for a line, evicting: whatever it was
// doing), the survivors must commit again within a bound, and then:
//   - the money in the balances and counters is exact (no transfer is
//     partly visible);
//   - every node's counter is at least the number of its acknowledged
//     transfers (every acknowledged one is visible, the failed node's
//     included);
// then the node rejoins with an empty cache and takes work again. With a
// log, the reclaimer logs the failed node's undurable commits again.
// A paused node (heartbeats stop, threads go on) is declared failed and
// fenced, changes nothing after that, and its commits fail promptly.

#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/engine_internals.h"
#include "engine/node_reclaim.h"
#include "gtest/gtest.h"
#include "tests/engine/failover_bank.h"

namespace strand::engine {
namespace {

constexpr int kCycles = 20;

class NodeFailureTest : public FailoverBank,
                        public ::testing::WithParamInterface<FailoverConfig> {
 protected:
  void SetUp() override { Open(GetParam()); }
};

TEST_P(NodeFailureTest, SurvivorsCommitAndNothingAcknowledgedIsLost) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(42);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
    const int victim = static_cast<int>(rng() % kNodes);
    ASSERT_TRUE(engine_->FailNode(victim).ok());
    SurviveAndRejoin(victim);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  const std::vector<ReclaimReport> reports = engine_->ReclaimReports();
  EXPECT_EQ(reports.size(), static_cast<size_t>(kCycles));
  uint64_t relogged = 0, held = 0;
  for (const ReclaimReport& r : reports) {
    relogged += r.records_relogged;
    held += r.latches.holder_fields + r.latches.reader_bits;
  }
  if (GetParam().log) {
    EXPECT_GT(relogged, 0u);
  }
  EXPECT_GT(held + engine_->CacheStats().failed_peer_steals, 0u)
      << "no failed node ever held a line a survivor took over";
}

// Two of the three nodes fail at the same moment: the one survivor
// reclaims both (each lease expires on its own; whoever wins a
// declaration reclaims that node), commits alone, and both rejoin. With a
// log, a fresh pool recovered at the end holds what the survivors saw.
TEST_P(NodeFailureTest, TwoNodesFailTogether) {
  if (GetParam().log) TakeCheckpoint();
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(11);
  constexpr int kPairCycles = 10;
  for (int cycle = 0; cycle < kPairCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
    const int survivor = static_cast<int>(rng() % kNodes);
    std::vector<int> victims;
    for (int n = 0; n < kNodes; ++n) {
      if (n != survivor) victims.push_back(n);
    }
    std::vector<std::thread> failing;
    for (int v : victims) {
      failing.emplace_back(
          [this, v] { EXPECT_TRUE(engine_->FailNode(v).ok()); });
    }
    for (std::thread& t : failing) t.join();
    for (int v : victims) stop_[v] = true;
    ExpectProgress({survivor}, {acked_[survivor].load()});
    for (int v : victims) {
      ASSERT_TRUE(engine_->WaitReclaimed(v, absl::Seconds(10)).ok());
    }
    Check(survivor);
    for (int v : victims) {
      Rejoin(v);
      if (HasFatalFailure()) return;
    }
  }
  StopAll();
  Check(0);
  EXPECT_EQ(engine_->ReclaimReports().size(), 2u * kPairCycles);
  if (GetParam().log) ExpectRecoveredAsSeen();
}

// A deleted row's slot waits in the epoch manager with the handle of the
// table it goes back to, and one manager serves every node hosted here; a
// failed node's runtime goes when it rejoins. Node 1 deletes rows, fails
// and rejoins; then node 0, on the same thread (so its transactions take
// the same epoch record), deletes enough rows that the queued batches,
// node 1's slots among them, are sealed and handed back. Node 1's old
// table handles must still be there to take them: before, the rejoin
// freed them, and the hand-back wrote freed memory (ASan: a use after
// free; in a Release tpcc run, once a new table sat there, a slot of one
// table handed to another's insert, past the end of a GCL).
TEST_P(NodeFailureTest, ARejoinKeepsTheHandlesQueuedSlotsGoBackTo) {
  constexpr int64_t kVictimDeletes = 20;
  const txn::EpochManager* epochs = EngineInternals::epochs(*engine_, 1);
  ASSERT_NE(epochs, nullptr);
  {
    auto victim = engine_->NewSession(1);
    ASSERT_TRUE(victim.ok()) << victim.status();
    for (int64_t id = 0; id < kVictimDeletes; ++id) {
      for (int round = 0; round < 2; ++round) {  // insert, then delete
        auto r = (*victim)->Call(churn_, id);
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(*r, round == 0);
      }
    }
  }
  ASSERT_TRUE(engine_->FailNode(1).ok());
  ASSERT_TRUE(engine_->WaitReclaimed(1, absl::Seconds(10)).ok());
  ASSERT_TRUE(engine_->RejoinNode(1).ok());
  auto survivor = engine_->NewSession(0);
  ASSERT_TRUE(survivor.ok()) << survivor.status();
  constexpr int64_t kSurvivorDeletes = 4 * 64;
  for (int64_t id = 100; id < 100 + kSurvivorDeletes; ++id) {
    for (int round = 0; round < 2; ++round) {
      auto r = (*survivor)->Call(churn_, id);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }
  // Node 1's slots were in the first batch sealed: handed back.
  EXPECT_GE(epochs->reclaimed(), static_cast<uint64_t>(kVictimDeletes + 64))
      << "the test did not reach the hand-back of node 1's slots";
  // Both nodes insert and delete again, reusing what was handed back.
  auto rejoined = engine_->NewSession(1);
  ASSERT_TRUE(rejoined.ok()) << rejoined.status();
  for (int64_t id = 1000; id < 1100; ++id) {
    for (auto* s : {&*survivor, &*rejoined}) {
      auto r = (*s)->Call(churn_, id);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }
  Check(0);
}

TEST_P(NodeFailureTest, APausedNodeChangesNothingOnceDeclaredFailed) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  auto paused = engine_->NewSession(1);
  ASSERT_TRUE(paused.ok()) << paused.status();
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(engine_->PauseHeartbeats(1).ok());
  ASSERT_TRUE(engine_->WaitReclaimed(1, absl::Seconds(10)).ok());
  // Its threads go on trying; from here on nothing of theirs lands.
  auto session = engine_->NewSession(0);
  ASSERT_TRUE(session.ok());
  auto seen = ReadAll(**session, [] {});
  ASSERT_TRUE(seen.ok()) << seen.status();
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(engine_->ResumeHeartbeats(1).ok());
  absl::SleepFor(absl::Milliseconds(100));
  auto later = ReadAll(**session, [] {});
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ((*later)[2], (*seen)[2]) << "the fenced node changed its counter";
  EXPECT_EQ(Total(*later), kAccounts * kInitialBalance);
  EXPECT_GT((*later)[1], (*seen)[1]) << "node 0 stopped committing";
  // Its commits fail as soon as its monitor tells it it was declared
  // failed, not after wal.ack_timeout (30 s): its workers stop promptly,
  // and so does a call of its own, which changes nothing.
  const absl::Time stopping = absl::Now();
  StopNode(1);
  EXPECT_LT(absl::Now() - stopping, kRecoveryBound)
      << "a worker of the fenced node kept waiting";
  const absl::Time calling = absl::Now();
  auto call = (*paused)->Call(transfer_, int64_t{0}, int64_t{1}, int64_t{1});
  EXPECT_LT(absl::Now() - calling, 25 * kLease);
  EXPECT_EQ(call.status().code(), absl::StatusCode::kUnavailable)
      << call.status();
  paused->reset();
  auto last = ReadAll(**session, [] {});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)[2], (*seen)[2]) << "the fenced node changed its counter";
  EXPECT_EQ(Total(*last), kAccounts * kInitialBalance);
  // It can come back as any failed node does.
  ASSERT_TRUE(engine_->FailNode(1).ok());
  ASSERT_TRUE(engine_->RejoinNode(1).ok());
  StartNode(1);
  ExpectProgress({1}, {acked_[1].load()});
  StopAll();
  Check(0);
}

// With a log: failures, one of them while a checkpoint is being taken (its
// start timestamp then falls in the range the failed node's reclaimer
// excludes), then the engine closes and a fresh pool recovers from that
// checkpoint and the logs: the reclaimers' adopted records replayed, the
// failed nodes' excluded ones dropped, every acknowledged transfer there
// and the total exact.
TEST_P(NodeFailureTest, RecoveryAfterFailuresLosesNothingAcknowledged) {
  if (!GetParam().log) GTEST_SKIP() << "recovery needs a log";
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(7);
  constexpr int kRecoveryCycles = 6;
  for (int cycle = 0; cycle < kRecoveryCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
    const bool checkpoint = cycle == kRecoveryCycles / 2;
    // Compute node 0 takes the checkpoints: not the victim then.
    const int victim = static_cast<int>(checkpoint ? 1 + rng() % (kNodes - 1)
                                                   : rng() % kNodes);
    ASSERT_TRUE(engine_->FailNode(victim).ok());
    stop_[victim] = true;
    if (checkpoint) {
      // Waits for the cluster's durable mark, which the failed node holds
      // back until it is reclaimed.
      auto taken = engine_->Checkpoint();
      ASSERT_TRUE(taken.ok()) << taken.status();
    }
    ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
    Rejoin(victim);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  Recover();
  if (HasFatalFailure()) return;
  EXPECT_EQ(engine_->recovery_report()->base_kind, "checkpoint");
  Check(0);
}

// A conflict on a failed node may never clear (a latch that its aborted
// transaction could not release once fenced): its sessions' calls fail
// Unavailable at the first conflict instead of retrying. Here the latch is
// held by a transaction of the node that stays open across the failure.
TEST_P(NodeFailureTest, AFailedNodesCallsStopAtTheirFirstConflict) {
  if (GetParam().algorithm != txn::CcAlgorithm::kTwoPhaseLocking) {
    GTEST_SKIP() << "2PL's latches conflict at once";
  }
  constexpr int kVictim = 1;
  {
    auto holder = engine_->NewSession(kVictim);
    auto other = engine_->NewSession(kVictim);
    ASSERT_TRUE(holder.ok() && other.ok());
    std::thread holding_thread([&] { (void)(*holder)->Call(hold_); });
    holding_.WaitForNotification();
    ASSERT_TRUE(engine_->FailNode(kVictim).ok());
    const absl::Time start = absl::Now();
    auto r =
        (*other)->Call(transfer_, int64_t{0}, int64_t{1}, int64_t{kVictim});
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
    EXPECT_LT(absl::Now() - start, absl::Seconds(2));
    release_.Notify();
    holding_thread.join();
  }
  ASSERT_TRUE(engine_->RejoinNode(kVictim).ok());
  Check(0);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, NodeFailureTest,
    ::testing::Values(FailoverConfig{txn::CcAlgorithm::kTwoPhaseLocking, false},
                      FailoverConfig{txn::CcAlgorithm::kTwoPhaseLocking, true},
                      FailoverConfig{txn::CcAlgorithm::kOptimistic, true},
                      FailoverConfig{txn::CcAlgorithm::kTimestampOrdering,
                                     true}),
    FailoverConfigName);

}  // namespace
}  // namespace strand::engine
