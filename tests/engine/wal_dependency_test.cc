// Acknowledgement across compute nodes (txn/commit_watermark.h,
// docs/design/durable_acks.md), per algorithm, with early lock release on
// two compute nodes: node B commits a transfer that read what node A
// committed but has not made durable (A's log cannot write). B's own
// record is durable, yet B's transaction must not be acknowledged, and a
// crash at that moment (the logs as they are on disk) must recover
// neither: B's record without A's would replay a balance A's lost write
// paid for. Once A's log moves, both are acknowledged and recovered.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_format.h"

namespace strand::engine {
namespace {

using testing::kWalBankInitialBalance;
using testing::WalBank;
using wal::testing::FaultInjectingLogFileFactory;

class WalDependencyTest : public testing::WalBankTest {
 protected:
  void SetUp() override {
    testing::WalBankTest::SetUp();
    compute_nodes_ = 2;
  }

  // Waits (bounded) until `done` holds.
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  // The balances and history of the bank recovered from `wal_dir`.
  void ExpectRecovered(const std::string& wal_dir,
                       const std::vector<int64_t>& balances,
                       size_t history_rows, const std::string& when) {
    auto engine = Recover(wal_dir);
    ASSERT_TRUE(engine.ok()) << when << ": " << engine.status();
    auto bank = WalBank::Define(**engine, false);
    ASSERT_TRUE(bank.ok());
    auto session = (*engine)->NewSession(0);
    ASSERT_TRUE(session.ok());
    EXPECT_EQ(bank->CheckConsistent(**session), "") << when;
    auto got = bank->Balances(**session);
    ASSERT_TRUE(got.ok()) << got.status();
    for (size_t i = 0; i < balances.size(); ++i) {
      EXPECT_EQ((*got)[i], balances[i]) << when << ": account " << i;
    }
    auto history = bank->History(**session);
    ASSERT_TRUE(history.ok());
    EXPECT_EQ(history->size(), history_rows) << when;
  }
};

TEST_P(WalDependencyTest, ADependentOnAnUndurableCommitWaitsAndIsCutWithIt) {
  FaultInjectingLogFileFactory files;
  auto engine =
      Engine::Open(LoggedOptions(&files, /*early_lock_release=*/true));
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto bank = WalBank::Define(**engine, false);
  ASSERT_TRUE(bank.ok());
  auto a = (*engine)->NewSession(0);
  auto b = (*engine)->NewSession(1);
  ASSERT_TRUE(a.ok() && b.ok());

  // Node A's log stops writing: its commit stays in memory only. (Let it
  // go before the engine closes, whatever fails first.)
  files.HoldWrites("/node-0/");
  absl::Cleanup release = [&files] { files.ReleaseWrites(); };
  absl::Mutex mu;
  std::vector<std::string> outcomes;  // in delivery order
  auto note = [&](std::string who) {
    return [&, who](absl::StatusOr<bool> r) {
      absl::MutexLock lock(&mu);
      outcomes.push_back(
          r.ok() ? who : who + " failed: " + std::string(r.status().message()));
    };
  };
  // A: 1 -> 2, 100. B: 2 -> 3, 1050, which only A's 100 makes possible.
  (*a)->CallAsync<bool>(bank->transfer, note("A"), int64_t{1}, int64_t{2},
                        int64_t{100}, int64_t{1});
  (*b)->CallAsync<bool>(bank->transfer, note("B"), int64_t{2}, int64_t{3},
                        kWalBankInitialBalance + 50, int64_t{2});
  ASSERT_EQ((*b)->unacknowledged(), 1u)
      << "B's outcome came at once: "
      << (outcomes.empty() ? "none" : outcomes.back());
  // B's record reaches B's disk.
  wal::LogWriter& log_b = *EngineInternals::log(**engine, 1);
  ASSERT_TRUE(Eventually([&] {
    return log_b.stats().records == 1 &&
           log_b.durable_lsn() == log_b.last_lsn();
  }));
  // A's log writer reaches its held write in its own time (a loaded
  // machine may run B's flush first).
  EXPECT_TRUE(Eventually([&] { return files.held_writes() >= 1; }));
  // Neither may be acknowledged: B depends on A, which is not durable.
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ((*a)->Poll() + (*b)->Poll(), 0u);
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(outcomes.empty()) << "acknowledged: " << outcomes[0];
  }

  // A crash now: the logs as they are on disk.
  const std::string crash = dir_.path() + "/crash";
  std::filesystem::copy(wal_dir_, crash,
                        std::filesystem::copy_options::recursive);
  std::vector<int64_t> initial(testing::kWalBankAccounts,
                               kWalBankInitialBalance);
  ExpectRecovered(crash, initial, 0, "crash while A's log was held");
  {
    auto engine2 = Recover(crash);
    ASSERT_TRUE(engine2.ok());
    const RecoveryReport& report = *(*engine2)->recovery_report();
    EXPECT_TRUE(report.acked_by_watermark);
    EXPECT_GE(report.records_above_watermark, 1u)
        << "B's durable record was not cut: " << report.Summary();
  }

  // A's log moves again: both are acknowledged, A's first.
  files.ReleaseWrites();
  (*a)->Drain();
  (*b)->Drain();
  {
    absl::MutexLock lock(&mu);
    EXPECT_EQ(outcomes, (std::vector<std::string>{"A", "B"}));
  }
  a->reset();
  b->reset();
  engine->reset();
  std::vector<int64_t> after = initial;
  after[1] -= 100;
  after[2] += 100 - (kWalBankInitialBalance + 50);
  after[3] += kWalBankInitialBalance + 50;
  ExpectRecovered(wal_dir_, after, 2, "after both were acknowledged");
}

INSTANTIATE_TEST_SUITE_P(Algorithms, WalDependencyTest,
                         ::testing::ValuesIn(testing::kWalAlgorithms),
                         testing::WalAlgorithmName);

}  // namespace
}  // namespace strand::engine
