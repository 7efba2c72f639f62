// The WAL in the commit path and recovery, per algorithm: a commit is
// acknowledged only once durable; image + replay rebuilds exactly the
// committed state (updates, tuple inserts at new addresses, index entries);
// a log of another database is refused; a torn tail is cut and reported.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "engine/engine_internals.h"
#include "engine/image.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/testing/test_fabric.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace strand::engine {
namespace {

using testing::WalBank;
using testing::WalBankOptions;

class WalRecoveryTest : public testing::WalBankTest {
 protected:
  // Opens the engine over the image, logging to wal_dir_.
  std::unique_ptr<Engine> OpenLogged(wal::LogFileFactory* factory = nullptr,
                                     bool early_lock_release = false) {
    auto engine = Engine::Open(LoggedOptions(factory, early_lock_release));
    EXPECT_TRUE(engine.ok()) << engine.status();
    return engine.ok() ? *std::move(engine) : nullptr;
  }
  // Commits transfers 1..n with the log on, then closes the engine (as if
  // the process died), and returns the records of node 0's log.
  std::vector<wal::LogRecord> LogTransfers(int n) {
    uint64_t database_id = 0;
    {
      auto engine = OpenLogged();
      if (engine == nullptr) return {};
      database_id = engine->database_id();
      auto bank = WalBank::Define(*engine, false);
      auto session = engine->NewSession(0);
      for (int seq = 1; seq <= n; ++seq) {
        EXPECT_TRUE(
            bank->Transfer(**session, seq % 9, 9 + seq % 7, 1, seq).ok());
      }
    }
    // Commit records only: the flushes' kWatermark records (the durable
    // marks every log keeps, docs/design/checkpoints.md) are not transfers.
    std::vector<wal::LogRecord> records =
        wal::testing::ReadAll(node_dir(), database_id, nullptr);
    std::erase_if(records, [](const wal::LogRecord& r) {
      return r.header.type == wal::RecordType::kWatermark;
    });
    return records;
  }
  std::string node_dir() const { return wal::NodeDirectory(wal_dir_, 0); }
};

// After every acknowledged commit its record is durable: the file layer
// delays each sync's report, so a commit acknowledged before its sync
// completed would see durable_lsn behind.
TEST_P(WalRecoveryTest, AcknowledgedCommitIsDurable) {
  for (bool elr : {false, true}) {
    SCOPED_TRACE(elr ? "early lock release" : "latches held until durable");
    std::filesystem::remove_all(wal_dir_);
    wal::testing::FaultInjectingLogFileFactory files;
    files.set_sync_delay(absl::Milliseconds(1));
    auto engine = OpenLogged(&files, elr);
    ASSERT_NE(engine, nullptr);
    auto bank = WalBank::Define(*engine, false);
    ASSERT_TRUE(bank.ok());
    auto session = engine->NewSession(0);
    ASSERT_TRUE(session.ok());
    for (int i = 1; i <= 20; ++i) {
      ASSERT_TRUE(bank->Transfer(**session, i % 7, 7 + i % 5, 1, i).ok());
      // One session: the i-th acknowledged commit is LSN i.
      EXPECT_GE(EngineInternals::log(*engine, 0)->durable_lsn(),
                static_cast<wal::Lsn>(i));
    }
    EXPECT_GT(files.calls(), 0);
  }
}

// A log that cannot be made durable: the commit is not acknowledged.
TEST_P(WalRecoveryTest, FailedSyncIsNotAcknowledged) {
  wal::testing::FaultInjectingLogFileFactory files;
  files.FailFromCall(1,
                     wal::testing::FaultInjectingLogFileFactory::Fault::kSync);
  auto engine = OpenLogged(&files);
  ASSERT_NE(engine, nullptr);
  auto bank = WalBank::Define(*engine, false);
  ASSERT_TRUE(bank.ok());
  auto session = engine->NewSession(0);
  ASSERT_TRUE(session.ok());
  EXPECT_FALSE(bank->Transfer(**session, 1, 2, 5, 1).ok());
}

// Image + replay gives back exactly the state the run committed.
TEST_P(WalRecoveryTest, ReplayRebuildsCommittedState) {
  std::vector<int64_t> balances;
  std::vector<testing::HistoryRow> history;
  {
    auto engine = OpenLogged();
    ASSERT_NE(engine, nullptr);
    auto bank = WalBank::Define(*engine, false);
    ASSERT_TRUE(bank.ok());
    auto session = engine->NewSession(0);
    ASSERT_TRUE(session.ok());
    std::mt19937_64 rng(7);
    // Enough history rows to need pages the image does not have.
    for (int seq = 1; seq <= 300; ++seq) {
      const int64_t from = rng() % testing::kWalBankAccounts;
      const int64_t to = (from + 1 + rng() % 5) % testing::kWalBankAccounts;
      absl::Status s = bank->Transfer(**session, from, to, rng() % 50, seq);
      ASSERT_TRUE(s.ok() || absl::IsAborted(s)) << s;
    }
    EXPECT_EQ(bank->CheckConsistent(**session), "");
    balances = *bank->Balances(**session);
    history = *bank->History(**session);
  }  // no SaveImage: as if the process died (the pool is gone)
  auto engine = Recover();
  ASSERT_TRUE(engine.ok()) << engine.status();
  const RecoveryReport& report = *(*engine)->recovery_report();
  EXPECT_EQ(report.records_replayed, history.size());
  EXPECT_EQ(report.dropped_bytes, 0u);
  auto bank = WalBank::Define(**engine, false);
  ASSERT_TRUE(bank.ok());
  auto session = (*engine)->NewSession(0);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(bank->CheckConsistent(**session), "");
  EXPECT_EQ(*bank->Balances(**session), balances);
  auto recovered = bank->History(**session);
  ASSERT_TRUE(recovered.ok());
  ASSERT_EQ(recovered->size(), history.size());
  for (size_t i = 0; i < history.size(); ++i) {
    EXPECT_EQ((*recovered)[i].seq, history[i].seq);
    EXPECT_EQ((*recovered)[i].amount, history[i].amount);
  }
  // New transactions continue after the replayed ones.
  EXPECT_TRUE(bank->Transfer(**session, 0, 1, 1, 100000).ok());
}

TEST_P(WalRecoveryTest, RefusesLogOfAnotherDatabase) {
  {
    auto engine = OpenLogged();
    ASSERT_NE(engine, nullptr);
    auto bank = WalBank::Define(*engine, false);
    auto session = engine->NewSession(0);
    ASSERT_TRUE(bank->Transfer(**session, 1, 2, 3, 1).ok());
  }
  // Another pool: another database id.
  ASSERT_TRUE(testing::MakeWalBankImage(GetParam(), image_).ok());
  auto engine = Recover();
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(engine.status().message(), "database"))
      << engine.status();
}

// Garbage after the last record (a torn write): recovery cuts it, says how
// many bytes it dropped, and replays everything before it.
TEST_P(WalRecoveryTest, TornTailIsCutAndReported) {
  const std::vector<wal::LogRecord> records = LogTransfers(10);
  ASSERT_EQ(records.size(), 10u);
  const std::string node_dir = this->node_dir();
  const wal::LogRecord& last = records.back();
  const uint64_t end =
      last.offset + wal::EncodedRecordBytes(last.header.payload_bytes);
  const std::string segment = wal::SegmentPath(node_dir, last.segment_index);
  int fd = ::open(segment.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string junk(100, '\x5a');
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), static_cast<off_t>(end)),
            static_cast<ssize_t>(junk.size()));
  ::close(fd);
  auto engine = Recover();
  ASSERT_TRUE(engine.ok()) << engine.status();
  const RecoveryReport& report = *(*engine)->recovery_report();
  EXPECT_EQ(report.records_replayed, 10u);
  EXPECT_EQ(report.dropped_bytes, 100u);
  EXPECT_TRUE(absl::StrContains(report.Summary(), "100 bytes dropped"))
      << report.Summary();
}

// A record damaged in the middle of the log (later records were durable
// after it): recovery fails and says where, instead of replaying the
// records before it as if they were all there were.
TEST_P(WalRecoveryTest, DamageBeforeTheEndOfTheLogFailsRecovery) {
  const std::vector<wal::LogRecord> records = LogTransfers(40);
  ASSERT_EQ(records.size(), 40u);
  const std::string node_dir = this->node_dir();
  const wal::LogRecord& victim = records[16];  // LSN 17
  const std::string segment = wal::SegmentPath(node_dir, victim.segment_index);
  std::string data = wal::testing::ReadFile(segment);
  for (int i = 0; i < 8; ++i) data[victim.offset + 48 + i] ^= 0x77;
  wal::testing::WriteFile(segment, data);

  auto engine = Recover();
  ASSERT_FALSE(engine.ok()) << (*engine)->recovery_report()->Summary();
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kDataLoss);
  const std::string m(engine.status().message());
  for (const std::string& part :
       {std::string("node-0"),
        wal::SegmentPath("", victim.segment_index).substr(1),
        absl::StrCat("offset ", victim.offset),
        absl::StrCat("LSN ", victim.header.lsn)}) {
    EXPECT_TRUE(absl::StrContains(m, part)) << part << " not in: " << m;
  }
  EXPECT_TRUE(absl::StrContains(m, "allow_log_data_loss")) << m;

  // The explicit opt-in: the 16 transfers before the damage, consistent,
  // and a report that says data was lost.
  EngineOptions o = WalBankOptions(GetParam());
  o.image_path = image_;
  o.recover_wal_dir = wal_dir_;
  o.recover_allow_log_data_loss = true;
  auto allowed = Engine::Open(o);
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  const RecoveryReport& report = *(*allowed)->recovery_report();
  EXPECT_EQ(report.records_replayed, 16u);
  EXPECT_TRUE(report.data_lost);
  ASSERT_EQ(report.nodes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(report.nodes[0].damage,
                                absl::StrCat("LSN ", victim.header.lsn)))
      << report.nodes[0].damage;
  EXPECT_TRUE(absl::StrContains(report.Summary(), "DATA LOST"))
      << report.Summary();
  auto bank = WalBank::Define(**allowed, false);
  ASSERT_TRUE(bank.ok());
  auto session = (*allowed)->NewSession(0);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(bank->CheckConsistent(**session), "");
  EXPECT_EQ(bank->History(**session)->size(), 16u);
}

// An image is only meaningful with the GCL size it was taken with: every
// page and index node is one GCL. Another size is refused up front, saying
// which size to use.
TEST_P(WalRecoveryTest, ImageRefusesAnotherGclSize) {
  engine::EngineOptions o = WalBankOptions(GetParam());
  ASSERT_EQ(o.cc.gcl_size, 1024u);
  o.image_path = image_;
  o.cc.gcl_size = 2048;
  auto engine = Engine::Open(o);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(engine.status().message(), "--gcl_size=1024"))
      << engine.status();
}

// The compute processes of a cluster image the pool without closing: each
// writes back its cache (WriteBackCaches), one writes the image, then each
// starts its log. Two compute nodes, both with dirty lines at the image:
// recovery (the image plus both nodes' logs, merged) gives back the final
// state. Without the write-back the image would miss those lines.
TEST_P(WalRecoveryTest, ImageOfARunningEngineWithLogsStartedAfter) {
  EngineOptions options = WalBankOptions(GetParam());
  options.fabric = ::strand::testing::TestFabricOptions(1, 2);
  const std::string image = dir_.path() + "/running.img";
  std::vector<int64_t> balances;
  size_t history_rows = 0;
  {
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    auto bank = WalBank::Define(**engine, /*create=*/true);
    ASSERT_TRUE(bank.ok()) << bank.status();
    auto s0 = (*engine)->NewSession(0);
    auto s1 = (*engine)->NewSession(1);
    ASSERT_TRUE(s0.ok() && s1.ok());
    ASSERT_TRUE(bank->Load(**s0).ok());
    int seq = 0;
    for (int i = 0; i < 40; ++i) {
      engine::Session& s = i % 2 == 0 ? **s0 : **s1;
      ASSERT_TRUE(bank->Transfer(s, i % 13, 13 + i % 11, 3, ++seq).ok());
    }
    ASSERT_TRUE((*engine)->WriteBackCaches().ok());
    auto info = (*engine)->WriteImage(image);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->database_id, (*engine)->database_id());
    WalOptions wal;
    wal.dir = wal_dir_;
    ASSERT_TRUE((*engine)->StartLogging(wal).ok());
    EXPECT_EQ((*engine)->StartLogging(wal).code(),
              absl::StatusCode::kFailedPrecondition);
    for (int i = 0; i < 60; ++i) {
      engine::Session& s = i % 3 == 0 ? **s0 : **s1;
      ASSERT_TRUE(bank->Transfer(s, i % 17, 17 + i % 13, 5, ++seq).ok());
    }
    ASSERT_EQ(bank->CheckConsistent(**s0), "");
    balances = *bank->Balances(**s0);
    history_rows = bank->History(**s0)->size();
  }  // the pool is gone
  EngineOptions recover = options;
  recover.image_path = image;
  recover.recover_wal_dir = wal_dir_;
  auto engine = Engine::Open(recover);
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->recovery_report()->records_replayed, 60u);
  auto bank = WalBank::Define(**engine, false);
  ASSERT_TRUE(bank.ok());
  auto session = (*engine)->NewSession(1);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(bank->CheckConsistent(**session), "");
  EXPECT_EQ(*bank->Balances(**session), balances);
  EXPECT_EQ(bank->History(**session)->size(), history_rows);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, WalRecoveryTest,
                         ::testing::ValuesIn(testing::kWalAlgorithms),
                         testing::WalAlgorithmName);

}  // namespace
}  // namespace strand::engine
