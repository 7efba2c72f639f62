#include "wal/log_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/redo_record.h"

namespace strand::wal {
namespace {

using testing::FaultInjectingLogFileFactory;
using testing::LogPosition;
using testing::ReadAll;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kDb = 0xabc;

LogWriterOptions Options(const std::string& dir,
                         uint64_t segment_bytes = 1 << 20) {
  return {.wal_dir = dir, .database_id = kDb, .segment_bytes = segment_bytes};
}

// Where each record of a node's log ends: LSN -> position.
absl::flat_hash_map<Lsn, LogPosition> RecordEnds(const std::string& node_dir) {
  absl::flat_hash_map<Lsn, LogPosition> ends;
  for (const LogRecord& r : ReadAll(node_dir, kDb, nullptr)) {
    ends[r.header.lsn] = {
        r.segment_index, r.offset + EncodedRecordBytes(r.header.payload_bytes)};
  }
  return ends;
}

TEST(LogWriterTest, CommitsRedoRecordsThatReadBack) {
  TempDir dir;
  auto writer = LogWriter::Open(Options(dir.path()));
  ASSERT_TRUE(writer.ok()) << writer.status();
  RedoBuilder redo;
  for (int i = 1; i <= 100; ++i) {
    redo.Clear();
    redo.Update(1, 0x10000 + i, i, 8, std::string(i % 13, 'u'))
        .Insert(2, 0x20000 + i, i, std::string(24, 'i'));
    auto lsn = (*writer)->Commit(i, 1000 + i, redo.payload());
    ASSERT_TRUE(lsn.ok()) << lsn.status();
    EXPECT_EQ(*lsn, static_cast<Lsn>(i));
    EXPECT_GE((*writer)->durable_lsn(), *lsn);
  }
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_FALSE((*writer)->Commit(101, 2000, "").ok()) << "commit after Close";
  std::vector<std::string> payloads;
  auto records = ReadAll((*writer)->node_dir(), kDb, &payloads);
  ASSERT_EQ(records.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(records[i].header.commit_ts, static_cast<uint64_t>(1001 + i));
    std::vector<RedoOp> ops;
    ASSERT_TRUE(ParseRedo(payloads[i], &ops).ok());
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[0].address, static_cast<uint64_t>(0x10001 + i));
    EXPECT_EQ(ops[0].after_image, std::string((i + 1) % 13, 'u'));
    EXPECT_EQ(ops[1].kind, RedoKind::kInsert);
  }
}

TEST(LogWriterTest, RollsOverSegmentsAndContinuesAfterReopen) {
  TempDir dir;
  const std::string big(3000, 'x');
  {
    auto writer = LogWriter::Open(Options(dir.path(), 16 << 10));
    ASSERT_TRUE(writer.ok());
    for (int i = 1; i <= 20; ++i)
      ASSERT_TRUE((*writer)->Commit(i, i, big).ok());
    EXPECT_GE((*writer)->stats().segments_created, 4u);
    // Cannot fit in a segment at all.
    EXPECT_EQ(
        (*writer)->Append(0, 0, std::string(16 << 10, 'y')).status().code(),
        absl::StatusCode::kInvalidArgument);
  }
  {
    auto writer = LogWriter::Open(Options(dir.path(), 16 << 10));
    ASSERT_TRUE(writer.ok());
    auto lsn = (*writer)->Commit(21, 21, "after reopen");
    ASSERT_TRUE(lsn.ok());
    EXPECT_EQ(*lsn, 21u);
  }
  auto records = ReadAll(NodeDirectory(dir.path(), 0), kDb, nullptr);
  ASSERT_EQ(records.size(), 21u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].header.lsn, i + 1);
  }
}

TEST(LogWriterTest, ReopenCutsATornTailAndReusesItsLsn) {
  TempDir dir;
  std::string node;
  {
    auto writer = LogWriter::Open(Options(dir.path()));
    ASSERT_TRUE(writer.ok());
    for (int i = 1; i <= 10; ++i)
      ASSERT_TRUE((*writer)->Commit(i, i, "r").ok());
    node = (*writer)->node_dir();
  }
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 10u);
  std::string data = ReadFile(SegmentPath(node, 1));
  data[records.back().offset + kRecordHeaderBytes] ^= 0x40;  // tear LSN 10
  WriteFile(SegmentPath(node, 1), data);
  {
    auto writer = LogWriter::Open(Options(dir.path()));
    ASSERT_TRUE(writer.ok());
    auto lsn = (*writer)->Commit(11, 11, "new ten");
    ASSERT_TRUE(lsn.ok());
    EXPECT_EQ(*lsn, 10u);
  }
  std::vector<std::string> payloads;
  records = ReadAll(node, kDb, &payloads);
  ASSERT_EQ(records.size(), 10u);
  EXPECT_EQ(records.back().header.txn_id, 11u);
  EXPECT_EQ(payloads.back(), "new ten");
  EXPECT_EQ(records.back().segment_index, 2u);
}

TEST(LogWriterTest, DirectIoRoundTrip) {
  TempDir dir;
  // tmpfs and some file systems refuse O_DIRECT.
  const std::string probe = dir.path() + "/probe";
  const int fd = ::open(probe.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  if (fd < 0) GTEST_SKIP() << "O_DIRECT not supported under " << dir.path();
  ::close(fd);
  LogWriterOptions options = Options(dir.path(), 64 << 10);
  options.io_mode = LogIoMode::kDirect;
  options.max_write_bytes = 8 << 10;  // several writes per flush
  auto writer = LogWriter::Open(options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        EXPECT_TRUE((*writer)->Commit(t, i, std::string(500, 'd')).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadAll((*writer)->node_dir(), kDb, nullptr).size(), 400u);
}

TEST(LogWriterTest, DirectModeFallsBackWhereODirectIsRefused) {
  // tmpfs refuses O_DIRECT; the log must still work there, buffered.
  if (!std::filesystem::is_directory("/dev/shm")) GTEST_SKIP();
  char pattern[] = "/dev/shm/strand-wal-test-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) GTEST_SKIP() << "no /dev/shm";
  const std::string dir = pattern;
  {
    LogWriterOptions options = Options(dir);
    options.io_mode = LogIoMode::kDirect;
    auto writer = LogWriter::Open(options);
    ASSERT_TRUE(writer.ok()) << writer.status();
    EXPECT_TRUE((*writer)->Commit(1, 1, "on tmpfs").ok());
    ASSERT_TRUE((*writer)->Close().ok());
    EXPECT_EQ(ReadAll((*writer)->node_dir(), kDb, nullptr).size(), 1u);
  }
  std::filesystem::remove_all(dir);
}

// Many committing threads; the file layer delays each sync so an early
// acknowledgement would be seen: each acknowledged record must end at or
// before what the file layer had made durable when Commit returned.
TEST(LogWriterTest, GroupCommitAcknowledgesOnlyDurableRecords) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.set_sync_delay(absl::Microseconds(500));
  auto writer = LogWriter::Open(Options(dir.path(), 64 << 10), &files);
  ASSERT_TRUE(writer.ok());
  constexpr int kThreads = 8;
  constexpr int kCommits = 150;
  struct Ack {
    Lsn lsn;
    Lsn durable_lsn;
    LogPosition durable;
  };
  std::vector<std::vector<Ack>> acks(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommits; ++i) {
        auto lsn = (*writer)->Commit(t * kCommits + i, 0,
                                     std::string(100 + (i * 37) % 700, 'g'));
        ASSERT_TRUE(lsn.ok()) << lsn.status();
        acks[t].push_back({*lsn, (*writer)->durable_lsn(), files.durable()});
      }
    });
  }
  for (auto& t : threads) t.join();
  const LogWriterStats stats = (*writer)->stats();
  ASSERT_TRUE((*writer)->Close().ok());

  const auto ends = RecordEnds((*writer)->node_dir());
  ASSERT_EQ(ends.size(), static_cast<size_t>(kThreads * kCommits));
  for (const auto& thread_acks : acks) {
    for (const Ack& a : thread_acks) {
      EXPECT_LE(a.lsn, a.durable_lsn);
      ASSERT_TRUE(ends.contains(a.lsn));
      EXPECT_LE(ends.at(a.lsn), a.durable) << "LSN " << a.lsn;
    }
  }
  EXPECT_EQ(stats.records, static_cast<uint64_t>(kThreads * kCommits));
  EXPECT_GE(stats.segments_created, 2u);  // rollover under load too
  // One flush serves many commits.
  EXPECT_LT(stats.flushes * 3, stats.records)
      << stats.flushes << " flushes for " << stats.records << " commits";
}

// A flush that takes more than one buffer writes the block where one
// buffer ends and the next begins twice: the first buffer's copy is padded
// with zeros, the next one's continues. Written in the same submission, in
// whichever order io_uring completes them, the zeros could land last and
// cut a hole in the log that recovery reports as damage (DATA_LOSS) after a
// run that never crashed.
TEST(LogWriterTest, AFlushOfSeveralBuffersSurvivesItsWritesInAnyOrder) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.set_reverse_writes(true);
  LogWriterOptions options = Options(dir.path(), 16 << 20);
  options.max_write_bytes = 4 << 10;  // a write per block: the most overlap
  auto writer = LogWriter::Open(options, &files);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // The flusher takes the first record and stalls writing it, so the next
  // flush takes ~3 MiB: several 1 MiB buffers, none ending on a block.
  files.HoldWrites(dir.path());
  ASSERT_TRUE((*writer)->AppendRecord(RecordType::kCommit, 1, 1, "first").ok());
  while (files.held_writes() == 0) absl::SleepFor(absl::Milliseconds(1));
  constexpr int kRecords = 1500;
  for (int i = 2; i <= kRecords; ++i) {
    const std::string payload(1000 + (i * 37) % 3000, 'a' + i % 26);
    ASSERT_TRUE(
        (*writer)->AppendRecord(RecordType::kCommit, i, i, payload).ok());
  }
  files.ReleaseWrites();
  ASSERT_TRUE((*writer)->WaitDurable(kRecords).ok());
  ASSERT_TRUE((*writer)->Close().ok());

  std::vector<std::string> payloads;
  const auto records = ReadAll((*writer)->node_dir(), kDb, &payloads);
  ASSERT_EQ(records.size(), static_cast<size_t>(kRecords));
  for (int i = 2; i <= kRecords; ++i) {
    ASSERT_EQ(payloads[i - 1],
              std::string(1000 + (i * 37) % 3000, 'a' + i % 26))
        << "LSN " << i;
  }
}

TEST(LogWriterTest, GroupCommitWindowSpacesFlushes) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  LogWriterOptions options = Options(dir.path());
  options.group_commit_window = absl::Milliseconds(50);
  auto writer = LogWriter::Open(options, &files);
  ASSERT_TRUE(writer.ok());
  // Appends that never wait: the window alone decides how many flushes.
  const absl::Time start = absl::Now();
  Lsn last = 0;
  while (absl::Now() - start < absl::Milliseconds(300)) {
    auto lsn = (*writer)->Append(last + 1, last + 1, std::string(64, 'w'));
    ASSERT_TRUE(lsn.ok()) << lsn.status();
    last = *lsn;
    absl::SleepFor(absl::Microseconds(100));
  }
  ASSERT_TRUE((*writer)->WaitDurable(last).ok());
  const absl::Duration elapsed = absl::Now() - start;
  const LogWriterStats stats = (*writer)->stats();
  // At most one flush per window (plus the first, which opens at once); a
  // loaded machine only makes fewer.
  EXPECT_LE(stats.flushes, elapsed / absl::Milliseconds(50) + 1)
      << stats.flushes << " flushes in " << elapsed;
  EXPECT_GE(stats.records, 10u);
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(ReadAll((*writer)->node_dir(), kDb, nullptr).size(), last);
}

TEST(LogWriterTest, CloseCutsTheGroupCommitWindowShort) {
  TempDir dir;
  LogWriterOptions options = Options(dir.path());
  // A window no test waits for: Close must not either.
  options.group_commit_window = absl::Seconds(60);
  auto writer = LogWriter::Open(options);
  ASSERT_TRUE(writer.ok());
  // The first flush opens at once; the record after it would wait 60 s.
  auto first = (*writer)->Commit(1, 1, "opens the window");
  ASSERT_TRUE(first.ok());
  auto lsn = (*writer)->Append(2, 2, "closing");
  ASSERT_TRUE(lsn.ok());
  const absl::Time close_start = absl::Now();
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_LT(absl::Now() - close_start, absl::Seconds(30));
  EXPECT_EQ((*writer)->durable_lsn(), *lsn);
  EXPECT_EQ(ReadAll((*writer)->node_dir(), kDb, nullptr).size(), *lsn);
}

void RunUntilFailure(FaultInjectingLogFileFactory::Fault fault) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.set_sync_delay(absl::Microseconds(200));
  auto writer = LogWriter::Open(Options(dir.path()), &files);
  ASSERT_TRUE(writer.ok());
  // Call 1 writes the segment header; fail from the 6th call on.
  files.FailFromCall(6, fault);
  std::atomic<int> ok{0}, failed{0};
  absl::Mutex mu;
  std::vector<std::pair<Lsn, LogPosition>> acked;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        auto lsn = (*writer)->Commit(t, i, "payload");
        if (lsn.ok()) {
          const LogPosition durable = files.durable();
          absl::MutexLock lock(&mu);
          acked.push_back({*lsn, durable});
          ++ok;
        } else {
          EXPECT_NE(lsn.status().message().find("injected"), std::string::npos)
              << lsn.status();
          ++failed;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(ok.load(), 0);
  EXPECT_GT(failed.load(), 0);
  // Failed for good: no later commit is acknowledged.
  EXPECT_FALSE((*writer)->Commit(99, 99, "late").ok());
  EXPECT_FALSE((*writer)->Close().ok());
  const auto ends = RecordEnds((*writer)->node_dir());
  for (const auto& [lsn, durable] : acked) {
    ASSERT_TRUE(ends.contains(lsn)) << "acknowledged LSN " << lsn << " lost";
    EXPECT_LE(ends.at(lsn), durable) << "LSN " << lsn;
  }
  EXPECT_LE(static_cast<Lsn>(acked.size()), (*writer)->durable_lsn());
}

TEST(LogWriterTest, FailedSyncFailsCommitsInsteadOfAcknowledging) {
  RunUntilFailure(FaultInjectingLogFileFactory::Fault::kSync);
}

TEST(LogWriterTest, FailedWriteFailsCommitsInsteadOfAcknowledging) {
  RunUntilFailure(FaultInjectingLogFileFactory::Fault::kWrite);
}

TEST(LogWriterTest, FailedSegmentCreationFailsCommits) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.set_fail_create(true);
  auto writer = LogWriter::Open(Options(dir.path()), &files);
  ASSERT_TRUE(writer.ok());
  auto lsn = (*writer)->Commit(1, 1, "x");
  EXPECT_EQ(lsn.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ((*writer)->durable_lsn(), 0u);
}

// WhenDurable: the callback comes only once the record is durable (what
// a 2PC participant's vote waits for), at once for a durable LSN, and with
// the writer's error when it fails; a callback may append.
TEST(LogWriterTest, WhenDurableCallsBackOnceDurable) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.set_sync_delay(absl::Milliseconds(2));
  auto writer = LogWriter::Open(Options(dir.path()), &files);
  ASSERT_TRUE(writer.ok());
  struct Seen {
    absl::Status status;
    LogPosition durable_at_call;
  };
  absl::Mutex mu;
  std::vector<std::pair<Lsn, Seen>> seen;
  constexpr int kRecords = 40;
  for (int i = 0; i < kRecords; ++i) {
    auto lsn = (*writer)->AppendRecord(RecordType::kPrepare, i, i, "vote");
    ASSERT_TRUE(lsn.ok());
    (*writer)->WhenDurable(*lsn, [&, lsn = *lsn](absl::Status s) {
      const LogPosition durable = files.durable();
      absl::MutexLock lock(&mu);
      seen.push_back({lsn, {s, durable}});
    });
  }
  // A callback that appends (a participant logging its commit marker).
  auto first = (*writer)->AppendRecord(RecordType::kPrepare, 99, 99, "x");
  ASSERT_TRUE(first.ok());
  std::atomic<bool> appended{false};
  (*writer)->WhenDurable(*first, [&](absl::Status s) {
    EXPECT_TRUE(s.ok());
    appended = (*writer)
                   ->AppendRecord(RecordType::kParticipantCommit, 99, 99, "")
                   .ok();
  });
  ASSERT_TRUE((*writer)->WaitDurable(*first).ok());
  for (int i = 0; i < 1000 && !appended; ++i) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(appended);
  // Already durable: called before WhenDurable returns.
  bool at_once = false;
  (*writer)->WhenDurable(1, [&](absl::Status s) { at_once = s.ok(); });
  EXPECT_TRUE(at_once);
  ASSERT_TRUE((*writer)->Close().ok());
  const auto ends = RecordEnds((*writer)->node_dir());
  absl::MutexLock lock(&mu);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kRecords));
  for (const auto& [lsn, s] : seen) {
    EXPECT_TRUE(s.status.ok()) << s.status;
    ASSERT_TRUE(ends.contains(lsn));
    EXPECT_LE(ends.at(lsn), s.durable_at_call) << "called before durable";
  }
}

TEST(LogWriterTest, WhenDurableReportsTheFailureInstead) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  auto writer = LogWriter::Open(Options(dir.path()), &files);
  ASSERT_TRUE(writer.ok());
  files.FailFromCall(2, FaultInjectingLogFileFactory::Fault::kSync);
  auto lsn = (*writer)->AppendRecord(RecordType::kPrepare, 1, 1, "vote");
  ASSERT_TRUE(lsn.ok());
  absl::Notification called;
  absl::Status got;
  (*writer)->WhenDurable(*lsn, [&](absl::Status s) {
    got = s;
    called.Notify();
  });
  ASSERT_TRUE(called.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(got.ok());
  EXPECT_NE(got.message().find("injected"), std::string::npos) << got;
  // After the failure: at once, with the error.
  bool failed_at_once = false;
  (*writer)->WhenDurable(*lsn,
                         [&](absl::Status s) { failed_at_once = !s.ok(); });
  EXPECT_TRUE(failed_at_once);
}

TEST(LogWriterTest, RejectsBadOptions) {
  TempDir dir;
  EXPECT_FALSE(LogWriter::Open({.wal_dir = "", .database_id = 1}).ok());
  EXPECT_FALSE(LogWriter::Open({.wal_dir = dir.path(), .database_id = 0}).ok());
  EXPECT_FALSE(
      LogWriter::Open(
          {.wal_dir = dir.path(), .database_id = 1, .segment_bytes = 10000})
          .ok());
}

}  // namespace
}  // namespace strand::wal
