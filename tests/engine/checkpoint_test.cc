// Checkpoints through the engine (engine/checkpointer.h, engine/
// checkpoint_load.h, docs/design/checkpoints.md) on the bank workload:
// fuzzy checkpoints taken while transfers run on two compute nodes recover
// the exact state; recovery resumes in place run after run; a damaged
// newest checkpoint falls back to the previous one; truncation keeps the
// disk bounded. Per algorithm, synchronous and with early lock release.

#include "wal/checkpoint.h"

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/recovery.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_format.h"

namespace strand::engine {
namespace {

using testing::HistoryRow;
using testing::kWalBankAccounts;
using testing::WalBank;
using testing::WalBankOptions;

constexpr int kNodes = 2;

// (algorithm, early lock release)
using Param = std::tuple<txn::CcAlgorithm, bool>;

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return absl::StrCat(txn::CcAlgorithmName(std::get<0>(info.param)),
                      std::get<1>(info.param) ? "_elr" : "_sync");
}

// What the bank held when its engine closed.
struct BankState {
  std::vector<int64_t> balances;
  size_t history = 0;
};

class CheckpointTest : public ::testing::TestWithParam<Param> {
 protected:
  EngineOptions Options() const {
    EngineOptions o = WalBankOptions(std::get<0>(GetParam()), kNodes);
    o.wal.dir = wal_dir_;
    o.wal.early_lock_release = std::get<1>(GetParam());
    o.wal.segment_bytes = 64 << 10;  // truncation has segments to delete
    o.recovery_threads = 2;
    return o;
  }
  // Recovers `wal_dir_` with nothing logging afterwards.
  absl::StatusOr<std::unique_ptr<Engine>> RecoverOffline(
      uint64_t batch_bytes = EngineOptions().recovery_batch_bytes) const {
    EngineOptions o = Options();
    o.wal.dir.clear();
    o.recover_wal_dir = wal_dir_;
    o.recovery_batch_bytes = batch_bytes;
    return Engine::Open(o);
  }
  // Recovers and carries on logging in the same directory.
  absl::StatusOr<std::unique_ptr<Engine>> Resume() const {
    EngineOptions o = Options();
    o.recover_wal_dir = wal_dir_;
    return Engine::Open(o);
  }

  // Transfers on every node's session at once, `per_node` each, with seqs
  // from `*seq` on, while `during` runs on this thread.
  void RunTransfers(Engine& engine, const WalBank& bank, int per_node,
                    int64_t* seq, const std::function<void()>& during) {
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    const int64_t base = *seq;
    for (int node = 0; node < kNodes; ++node) {
      threads.emplace_back([&, node] {
        auto session = engine.NewSession(node);
        if (!session.ok()) {
          ++failures;
          return;
        }
        for (int i = 0; i < per_node; ++i) {
          const int64_t s = base + 1 + node * per_node + i;
          if (!bank.Transfer(**session, s % kWalBankAccounts,
                             (s * 7 + 3) % kWalBankAccounts, 1 + s % 5, s)
                   .ok()) {
            ++failures;
          }
        }
      });
    }
    during();
    for (std::thread& t : threads) t.join();
    *seq = base + kNodes * per_node;
    EXPECT_EQ(failures.load(), 0);
  }

  BankState State(Engine& engine, const WalBank& bank) {
    auto session = engine.NewSession(0);
    EXPECT_TRUE(session.ok());
    BankState st;
    EXPECT_EQ(bank.CheckConsistent(**session), "");
    st.balances = *bank.Balances(**session);
    st.history = bank.History(**session)->size();
    return st;
  }

  void ExpectState(Engine& engine, const WalBank& bank, const BankState& want) {
    const BankState got = State(engine, bank);
    EXPECT_EQ(got.balances, want.balances);
    EXPECT_EQ(got.history, want.history);
  }
  // Opens the bank of a recovered engine and checks it.
  void ExpectState(Engine& engine, const BankState& want) {
    auto bank = WalBank::Define(engine, /*create=*/false);
    ASSERT_TRUE(bank.ok()) << bank.status();
    ExpectState(engine, *bank, want);
  }

  size_t PublishedCheckpoints() const {
    auto listed = wal::ListCheckpoints(wal_dir_);
    size_t n = 0;
    for (const auto& e : *listed) n += e.published;
    return n;
  }
  size_t LogSegments() const {
    size_t n = 0;
    for (int node = 0; node < kNodes; ++node) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(
               wal::NodeDirectory(wal_dir_, node), ec)) {
        n += e.path().extension() == ".wal";
      }
    }
    return n;
  }

  // A fresh bank, loaded and checkpointed ("initial"), logging.
  std::unique_ptr<Engine> Fresh(WalBank* bank) {
    auto engine = Engine::Open(Options());
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return nullptr;
    auto defined = WalBank::Define(**engine, /*create=*/true);
    EXPECT_TRUE(defined.ok());
    *bank = *defined;
    auto session = (*engine)->NewSession(0);
    EXPECT_TRUE(bank->Load(**session).ok());
    auto initial = (*engine)->Checkpoint("initial");
    EXPECT_TRUE(initial.ok()) << initial.status();
    return *std::move(engine);
  }

  wal::testing::TempDir dir_;
  std::string wal_dir_ = dir_.path() + "/wal";
};

// Checkpoints taken while both nodes' transfers run: the copy is fuzzy
// (each page and leaf as it was at some moment), the replay idempotent,
// the result exactly what the engine held.
TEST_P(CheckpointTest, FuzzyCheckpointsWhileTransfersRunRecoverExactly) {
  WalBank bank;
  BankState before;
  std::vector<CheckpointResult> taken;
  {
    auto engine = Fresh(&bank);
    ASSERT_NE(engine, nullptr);
    int64_t seq = 0;
    RunTransfers(*engine, bank, 400, &seq, [&] {
      for (int i = 0; i < 3; ++i) {
        auto c = engine->Checkpoint();
        ASSERT_TRUE(c.ok()) << c.status();
        taken.push_back(*c);
      }
    });
    // More after the last checkpoint: the replay has work.
    RunTransfers(*engine, bank, 50, &seq, [] {});
    before = State(*engine, bank);
    EXPECT_EQ(before.history, static_cast<size_t>(seq));
  }
  ASSERT_EQ(taken.size(), 3u);
  for (const CheckpointResult& c : taken) {
    EXPECT_LE(c.start_ts, c.end_ts);
    EXPECT_EQ(c.tables, 2u);
    EXPECT_EQ(c.indexes, 2u);
  }
  // Two kept; logs truncated to the older one's start.
  EXPECT_EQ(PublishedCheckpoints(), 2u);
  EXPECT_EQ(taken.back().truncated_to_ts, taken[1].start_ts);

  auto recovered = RecoverOffline();
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  const RecoveryReport& report = *(*recovered)->recovery_report();
  EXPECT_EQ(report.base_kind, "checkpoint") << report.Summary();
  EXPECT_TRUE(absl::StrContains(report.base_path, "checkpoint-00000004"))
      << report.Summary();
  EXPECT_GE(report.records_replayed, 100u) << report.Summary();
  EXPECT_EQ(report.image_timestamp, taken.back().start_ts);
  EXPECT_EQ(report.batches, 1u) << report.Summary();
  ExpectState(**recovered, before);

  // Replayed a few records at a time (each batch's tables, then indexes):
  // the same database.
  auto batched = RecoverOffline(/*batch_bytes=*/4096);
  ASSERT_TRUE(batched.ok()) << batched.status();
  const RecoveryReport& in_batches = *(*batched)->recovery_report();
  EXPECT_EQ(in_batches.records_replayed, report.records_replayed);
  EXPECT_EQ(in_batches.ops_replayed, report.ops_replayed);
  EXPECT_GT(in_batches.batches, 3u) << in_batches.Summary();
  ExpectState(**batched, before);
}

// Crash -> recover -> carry on, run after run on one directory: each
// resume checkpoints the recovered pool and appends to the same logs; the
// final recovery holds every run's transfers.
TEST_P(CheckpointTest, ResumesInPlaceRunAfterRun) {
  WalBank bank;
  BankState last;
  int64_t seq = 0;
  {
    auto engine = Fresh(&bank);
    ASSERT_NE(engine, nullptr);
    RunTransfers(*engine, bank, 60, &seq, [] {});
    last = State(*engine, bank);
  }
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE(absl::StrCat("run ", run));
    auto engine = Resume();
    ASSERT_TRUE(engine.ok()) << engine.status();
    const RecoveryReport& report = *(*engine)->recovery_report();
    EXPECT_EQ(report.base_kind, "checkpoint");
    // The state the last run left, then more on top of it.
    auto defined = WalBank::Define(**engine, /*create=*/false);
    ASSERT_TRUE(defined.ok());
    ExpectState(**engine, *defined, last);
    RunTransfers(**engine, *defined, 60, &seq, [&] {
      if (run % 2 == 1) {
        auto c = (*engine)->Checkpoint();
        ASSERT_TRUE(c.ok()) << c.status();
      }
    });
    last = State(**engine, *defined);
    EXPECT_EQ(last.history, static_cast<size_t>(seq));
    // The resume deleted the older address space's checkpoints.
    EXPECT_LE(PublishedCheckpoints(), 2u);
  }
  auto recovered = RecoverOffline();
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  ExpectState(**recovered, last);
}

// The newest checkpoint damaged (a flipped byte, a file cut short, no
// manifest): recovery names it and starts from the one before, whose logs
// were kept; with both damaged it fails naming both, never loading one.
TEST_P(CheckpointTest, DamagedCheckpointFallsBackToThePreviousOne) {
  WalBank bank;
  BankState before;
  {
    auto engine = Fresh(&bank);
    ASSERT_NE(engine, nullptr);
    int64_t seq = 0;
    for (int i = 0; i < 2; ++i) {
      RunTransfers(*engine, bank, 40, &seq, [] {});
      ASSERT_TRUE(engine->Checkpoint().ok());
    }
    RunTransfers(*engine, bank, 40, &seq, [] {});
    before = State(*engine, bank);
  }
  auto listed = wal::ListCheckpoints(wal_dir_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  const std::string newest = (*listed)[0].dir;
  const std::string older = (*listed)[1].dir;
  const std::string table = newest + "/table-1";
  const std::string original = wal::testing::ReadFile(table);

  auto expect_fallback = [&](const std::string& why) {
    SCOPED_TRACE(why);
    auto recovered = RecoverOffline();
    ASSERT_TRUE(recovered.ok()) << recovered.status();
    const RecoveryReport& report = *(*recovered)->recovery_report();
    EXPECT_EQ(report.base_path, older) << report.Summary();
    ASSERT_EQ(report.bases_passed_over.size(), 1u) << report.Summary();
    EXPECT_TRUE(absl::StrContains(report.bases_passed_over[0], newest))
        << report.bases_passed_over[0];
    EXPECT_TRUE(absl::StrContains(report.bases_passed_over[0], why))
        << report.bases_passed_over[0];
    ExpectState(**recovered, before);
  };
  std::string flipped = original;
  flipped[flipped.size() / 2] ^= 0x10;
  wal::testing::WriteFile(table, flipped);
  expect_fallback("CRC");
  wal::testing::WriteFile(table, original.substr(0, original.size() / 3));
  expect_fallback("bytes");
  wal::testing::WriteFile(table, original);
  ASSERT_EQ(std::rename(wal::ManifestPath(newest).c_str(),
                        (newest + "/manifest.saved").c_str()),
            0);
  expect_fallback("no manifest");

  // Both damaged: nothing usable, and the error names both.
  const std::string older_catalog = older + "/catalog";
  std::string bad = wal::testing::ReadFile(older_catalog);
  bad[10] ^= 1;
  wal::testing::WriteFile(older_catalog, bad);
  auto failed = RecoverOffline();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(failed.status().message(), newest))
      << failed.status();
  EXPECT_TRUE(absl::StrContains(failed.status().message(), older))
      << failed.status();
}

// Many checkpoints while the log grows: never more than two kept, and the
// log segments stay bounded instead of growing with the history.
TEST_P(CheckpointTest, TruncationKeepsTheDiskBounded) {
  WalBank bank;
  auto engine = Fresh(&bank);
  ASSERT_NE(engine, nullptr);
  int64_t seq = 0;
  size_t most_segments = 0;
  uint64_t deleted = 0;
  for (int i = 0; i < 8; ++i) {
    RunTransfers(*engine, bank, 150, &seq, [] {});
    auto c = engine->Checkpoint();
    ASSERT_TRUE(c.ok()) << c.status();
    deleted += c->log_segments_deleted;
    EXPECT_LE(PublishedCheckpoints(), 2u);
    most_segments = std::max(most_segments, LogSegments());
  }
  EXPECT_GT(deleted, 0u);
  // 300 transfers (~40 KiB of log per node) per interval, 64 KiB
  // segments: two intervals and the open segment, per node.
  EXPECT_LE(most_segments, 4u * kNodes);
  EXPECT_EQ(engine->CheckpointHistory().size(), 9u);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, CheckpointTest,
    ::testing::Combine(::testing::ValuesIn(testing::kWalAlgorithms),
                       ::testing::Bool()),
    ParamName);

}  // namespace
}  // namespace strand::engine
