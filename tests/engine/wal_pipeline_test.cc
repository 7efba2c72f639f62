// Pipelined commit acknowledgement (Session::CallAsync, engine/session.h),
// per algorithm, on the bank workload (wal_bank.h) with early lock release,
// so acknowledged by durable watermark (txn/commit_watermark.h): an
// outcome is delivered only once the log is durable up to its record
// (checked against what the file layer really made durable); a failed sync
// delivers the error and never OK; one flush serves many commits; reads of
// not-yet-durable writes stay serializable (the bank total); and recovery
// finds every acknowledged transfer.

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace strand::engine {
namespace {

using testing::WalBank;
using wal::testing::FaultInjectingLogFileFactory;
using wal::testing::LogPosition;

class WalPipelineTest : public testing::WalBankTest {
 protected:
  // The bank over the image, logging to wal_dir_ with early lock release
  // (what pipelining needs).
  void OpenLogged(wal::LogFileFactory* files) {
    auto engine = Engine::Open(LoggedOptions(files, true));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto bank = WalBank::Define(*engine_, false);
    ASSERT_TRUE(bank.ok()) << bank.status();
    bank_ = *bank;
  }

  std::unique_ptr<Session> NewSession() {
    auto session = engine_->NewSession(0);
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

  void TransferAsync(Session& s, int64_t from, int64_t to, int64_t amount,
                     int64_t seq,
                     absl::AnyInvocable<void(absl::StatusOr<bool>)> done) {
    s.CallAsync<bool>(bank_.transfer, std::move(done), from, to, amount, seq);
  }

  std::unique_ptr<Engine> engine_;
  WalBank bank_;
};

// Every outcome is delivered only after the file layer made its record
// durable: the layer delays reporting each sync, so a session that
// delivered on append, or on a durable LSN it read too early, is caught.
TEST_P(WalPipelineTest, AcknowledgesOnlyDurableCommits) {
  FaultInjectingLogFileFactory files;
  files.set_sync_delay(absl::Microseconds(500));
  OpenLogged(&files);
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  session->set_max_unacknowledged(16);
  constexpr int kCalls = 200;
  // With one session every transfer commits (amount 1, balances 1000), so
  // the i-th acknowledgement is LSN i; at that moment record what the
  // layer had made durable.
  std::vector<LogPosition> durable_at_ack;
  size_t most_unacknowledged = 0;
  for (int i = 1; i <= kCalls; ++i) {
    TransferAsync(*session, i % 7, 7 + i % 5, 1, i,
                  [&, i](absl::StatusOr<bool> r) {
                    ASSERT_TRUE(r.ok()) << r.status();
                    durable_at_ack.push_back(files.durable());
                    EXPECT_EQ(durable_at_ack.size(), static_cast<size_t>(i))
                        << "outcomes out of call order";
                    EXPECT_GE(EngineInternals::log(*engine_, 0)->durable_lsn(),
                              static_cast<wal::Lsn>(i));
                  });
    most_unacknowledged =
        std::max(most_unacknowledged, session->unacknowledged());
    EXPECT_LE(session->unacknowledged(), 16u);
  }
  EXPECT_GT(most_unacknowledged, 1u) << "the calls were not pipelined";
  // A synchronous call delivers the earlier outcomes before it returns.
  auto balances = bank_.Balances(*session);
  ASSERT_TRUE(balances.ok()) << balances.status();
  EXPECT_EQ(session->unacknowledged(), 0u);
  ASSERT_EQ(durable_at_ack.size(), static_cast<size_t>(kCalls));
  const uint64_t database_id = engine_->database_id();
  session.reset();
  engine_.reset();  // closes the log

  std::vector<wal::LogRecord> records = wal::testing::ReadAll(
      wal::NodeDirectory(wal_dir_, 0), database_id, nullptr);
  // The flushes wrote their watermarks beside the commits.
  const size_t watermarks = std::erase_if(records, [](const wal::LogRecord& r) {
    return r.header.type == wal::RecordType::kWatermark;
  });
  EXPECT_GT(watermarks, 0u);
  ASSERT_EQ(records.size(), static_cast<size_t>(kCalls));
  for (int i = 0; i < kCalls; ++i) {
    const wal::LogRecord& r = records[i];
    if (i > 0) {
      ASSERT_GT(r.header.commit_ts, records[i - 1].header.commit_ts);
    }
    const LogPosition end{
        r.segment_index,
        r.offset + wal::EncodedRecordBytes(r.header.payload_bytes)};
    EXPECT_LE(end, durable_at_ack[i])
        << "LSN " << i + 1 << " acknowledged before it was durable";
  }
}

// A log whose sync fails from the 4th call on (the segment header, two
// flushes, then the failure): the outcomes acknowledged before are
// durable; every later one gets the error, none OK, and none counts as
// committed.
TEST_P(WalPipelineTest, FailedSyncDeliversTheErrorNotAnAck) {
  FaultInjectingLogFileFactory files;
  files.set_sync_delay(absl::Microseconds(300));
  files.FailFromCall(4, FaultInjectingLogFileFactory::Fault::kSync);
  OpenLogged(&files);
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  session->set_max_unacknowledged(64);
  int acked = 0, failed = 0, calls = 0;
  std::vector<LogPosition> acked_durable;
  auto transfer = [&] {
    ++calls;
    TransferAsync(*session, calls % 7, 7 + calls % 5, 1, calls,
                  [&](absl::StatusOr<bool> r) {
                    if (r.ok()) {
                      EXPECT_EQ(failed, 0) << "an ack after an error";
                      ++acked;
                      // Every acknowledged commit ends before what the
                      // file layer made durable.
                      acked_durable.push_back(files.durable());
                    } else {
                      ++failed;
                    }
                  });
  };
  // How many commits each flush takes depends on timing: commit until the
  // 4th sync has failed, then a few more (their appends fail).
  while (!EngineInternals::log(*engine_, 0)->failed() && calls < 100000)
    transfer();
  ASSERT_TRUE(EngineInternals::log(*engine_, 0)->failed());
  for (int i = 0; i < 10; ++i) transfer();
  session->Drain();
  EXPECT_EQ(acked + failed, calls);
  EXPECT_GT(acked, 0);
  EXPECT_GE(failed, 10);
  EXPECT_EQ(engine_->Stats()[bank_.transfer].commits,
            static_cast<uint64_t>(acked));
  const uint64_t database_id = engine_->database_id();
  session.reset();
  engine_.reset();
  // The i-th acknowledged transfer is the i-th commit record (one session
  // commits in call order), and it was durable when acknowledged.
  std::vector<wal::LogRecord> records = wal::testing::ReadAll(
      wal::NodeDirectory(wal_dir_, 0), database_id, nullptr);
  std::erase_if(records, [](const wal::LogRecord& r) {
    return r.header.type != wal::RecordType::kCommit;
  });
  ASSERT_GE(records.size(), static_cast<size_t>(acked));
  for (int i = 0; i < acked; ++i) {
    const wal::LogRecord& r = records[i];
    const LogPosition end{
        r.segment_index,
        r.offset + wal::EncodedRecordBytes(r.header.payload_bytes)};
    EXPECT_LE(end, acked_durable[i])
        << "commit " << i + 1 << " acknowledged before it was durable";
  }
}

// Every sync fails: not one acknowledgement.
TEST_P(WalPipelineTest, NoAckWhenNothingBecomesDurable) {
  FaultInjectingLogFileFactory files;
  files.FailFromCall(1, FaultInjectingLogFileFactory::Fault::kSync);
  OpenLogged(&files);
  auto session = NewSession();
  ASSERT_NE(session, nullptr);
  int acked = 0, failed = 0;
  for (int i = 1; i <= 20; ++i) {
    TransferAsync(*session, 1, 2, 1, i,
                  [&](absl::StatusOr<bool> r) { (r.ok() ? acked : failed)++; });
  }
  session->Drain();
  EXPECT_EQ(acked, 0);
  EXPECT_EQ(failed, 20);
  EXPECT_EQ(engine_->Stats()[bank_.transfer].commits, 0u);
}

// Several threads pipelining transfers while a reader pipelines balance
// snapshots: every snapshot (a read-only transaction that may read
// not-yet-durable writes) sees the bank total unchanged; flushes serve
// many commits each; afterwards the state is consistent, and recovery of
// the log finds every acknowledged transfer.
TEST_P(WalPipelineTest, ConcurrentPipelinesStaySerializableAndShareFlushes) {
  FaultInjectingLogFileFactory files;
  // Long enough that flushes are few even when a sanitizer slows commits.
  files.set_sync_delay(absl::Milliseconds(2));
  OpenLogged(&files);
  constexpr int kWriters = 3;
  constexpr int kTransfersPerWriter = 300;
  constexpr int64_t kTotal =
      testing::kWalBankAccounts * testing::kWalBankInitialBalance;
  absl::Mutex mu;
  std::vector<int64_t> acked_seqs;
  std::atomic<bool> writers_done{false};
  std::atomic<int> snapshots{0}, bad_snapshots{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      auto session = NewSession();
      if (session == nullptr) return;
      for (int i = 0; i < kTransfersPerWriter; ++i) {
        const int64_t seq = int64_t{t} * kTransfersPerWriter + i + 1;
        const int64_t from = (seq * 7 + t) % testing::kWalBankAccounts;
        const int64_t to = (from + 1 + seq % 5) % testing::kWalBankAccounts;
        TransferAsync(*session, from, to, seq % 20, seq,
                      [&, seq](absl::StatusOr<bool> r) {
                        if (r.ok()) {
                          absl::MutexLock lock(&mu);
                          acked_seqs.push_back(seq);
                        } else if (!absl::IsAborted(r.status())) {
                          ++errors;  // a user abort (funds short) is fine
                        }
                      });
      }
    });
  }
  threads.emplace_back([&] {
    auto session = NewSession();
    if (session == nullptr) return;
    while (!writers_done.load()) {
      session->CallAsync<std::vector<int64_t>>(
          bank_.balances, [&](absl::StatusOr<std::vector<int64_t>> b) {
            if (!b.ok()) {
              ++errors;
              return;
            }
            int64_t total = 0;
            for (int64_t v : *b) total += v;
            ++snapshots;
            if (total != kTotal) ++bad_snapshots;
          });
    }
  });
  for (int t = 0; t < kWriters; ++t) threads[t].join();
  writers_done = true;
  threads.back().join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(snapshots.load(), 0);
  EXPECT_EQ(bad_snapshots.load(), 0) << "a snapshot saw a partial transfer";

  const wal::LogWriterStats stats = EngineInternals::log(*engine_, 0)->stats();
  EXPECT_EQ(stats.records, acked_seqs.size());
  // A flush takes >= 2 ms; the writers keep up to 1024 commits each in
  // flight, so flushes must be far fewer than commits (one commit per
  // flush without pipelining).
  EXPECT_GE(stats.records, 4 * stats.flushes)
      << stats.records << " records in " << stats.flushes << " flushes";
  {
    auto session = NewSession();
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(bank_.CheckConsistent(*session), "");
  }
  engine_.reset();

  auto recovered = Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  auto bank = WalBank::Define(**recovered, false);
  ASSERT_TRUE(bank.ok());
  auto session = (*recovered)->NewSession(0);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(bank->CheckConsistent(**session), "");
  for (int64_t seq : acked_seqs) {
    auto has = bank->HasSeq(**session, seq);
    ASSERT_TRUE(has.ok()) << has.status();
    EXPECT_TRUE(*has) << "acknowledged transfer " << seq << " lost";
  }
}

// Without a log CallAsync delivers at once: nothing waits.
TEST_P(WalPipelineTest, WithoutALogTheOutcomeComesAtOnce) {
  EngineOptions o = testing::WalBankOptions(GetParam());
  o.image_path = image_;
  auto engine = Engine::Open(o);
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto bank = WalBank::Define(**engine, false);
  ASSERT_TRUE(bank.ok());
  auto session = (*engine)->NewSession(0);
  ASSERT_TRUE(session.ok());
  bool delivered = false;
  (*session)->CallAsync<bool>(
      bank->transfer,
      [&](absl::StatusOr<bool> r) {
        EXPECT_TRUE(r.ok()) << r.status();
        delivered = true;
      },
      int64_t{1}, int64_t{2}, int64_t{3}, int64_t{1});
  EXPECT_TRUE(delivered);
  EXPECT_EQ((*session)->unacknowledged(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, WalPipelineTest,
                         ::testing::ValuesIn(testing::kWalAlgorithms),
                         testing::WalAlgorithmName);

}  // namespace
}  // namespace strand::engine
