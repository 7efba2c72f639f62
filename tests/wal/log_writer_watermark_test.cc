// LogWriter with a FlushObserver (acknowledgement by durable watermark,
// txn/commit_watermark.h): every flush carries the observer's marks as a
// kWatermark record and reports them only once durable; segments say how
// their commits were acknowledged; a record at or below a node mark a
// flush took is refused; an idle writer asks for marks on its interval
// without I/O unless someone waits; close and failure reach the observer.

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace strand::wal {
namespace {

using testing::FaultInjectingLogFileFactory;
using testing::ReadAll;
using testing::TempDir;

constexpr uint64_t kDb = 0xabc;

// Hands out the marks a test sets, and records what the writer reports.
class ScriptedObserver : public FlushObserver {
 public:
  void set_marks(FlushMarks marks) {
    absl::MutexLock lock(&mu_);
    marks_ = marks;
  }
  void set_wants_persisted(bool wants) { wants_ = wants; }
  // The next `n` BeforeFlush calls fail, as when memory node 0 does not
  // answer.
  void fail_next(int n) {
    absl::MutexLock lock(&mu_);
    failures_left_ = n;
  }

  absl::StatusOr<FlushMarks> BeforeFlush() override {
    absl::MutexLock lock(&mu_);
    ++before_;
    if (failures_left_ > 0) {
      --failures_left_;
      return absl::UnavailableError("memory node 0 did not answer");
    }
    return marks_;
  }
  bool WantsPersisted(const FlushMarks&) override { return wants_; }
  void AfterFlush(const FlushMarks& marks, bool persisted) override {
    const LogWriter* writer = writer_.load();
    const Lsn durable = writer != nullptr ? writer->durable_lsn() : 0;
    absl::MutexLock lock(&mu_);
    after_.push_back({marks, persisted, durable});
  }
  void Closed() override { ++closed_; }
  void Failed(const absl::Status&) override { ++failed_; }

  struct After {
    FlushMarks marks;
    bool persisted;
    Lsn durable_lsn;  // the writer's, when reported
  };
  std::vector<After> after() const {
    absl::MutexLock lock(&mu_);
    return after_;
  }
  int before() const {
    absl::MutexLock lock(&mu_);
    return before_;
  }
  int closed() const { return closed_; }
  int failed() const { return failed_; }
  void watch(const LogWriter* writer) { writer_ = writer; }

 private:
  mutable absl::Mutex mu_;
  FlushMarks marks_ ABSL_GUARDED_BY(mu_);
  int before_ ABSL_GUARDED_BY(mu_) = 0;
  int failures_left_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<After> after_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> wants_{false};
  std::atomic<int> closed_{0}, failed_{0};
  std::atomic<const LogWriter*> writer_{nullptr};
};

LogWriterOptions Options(const std::string& dir, FlushObserver* observer,
                         absl::Duration interval = absl::Seconds(30)) {
  return {.wal_dir = dir,
          .database_id = kDb,
          .segment_bytes = 1 << 20,
          .observer = observer,
          .observer_interval = interval};
}

TEST(LogWriterWatermarkTest, FlushesCarryTheMarksAndReportThemOnceDurable) {
  TempDir dir;
  ScriptedObserver observer;
  auto writer = LogWriter::Open(Options(dir.path(), &observer));
  ASSERT_TRUE(writer.ok()) << writer.status();
  observer.watch(writer->get());
  for (uint64_t i = 1; i <= 5; ++i) {
    observer.set_marks({.node = 10 * i, .cluster = 10 * i - 5});
    // One record per flush: Commit waits for it.
    auto lsn = (*writer)->Commit(i, 10 * i + 1, "redo");
    ASSERT_TRUE(lsn.ok()) << lsn.status();
  }
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(observer.closed(), 1);
  EXPECT_EQ(observer.failed(), 0);

  std::vector<std::string> payloads;
  const std::vector<LogRecord> records =
      ReadAll(NodeDirectory(dir.path(), 0), kDb, &payloads);
  ASSERT_EQ(records.size(), 10u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_NE(records[i].segment_flags & kSegmentAckedByWatermark, 0u);
    const uint64_t flush = i / 2 + 1;
    if (i % 2 == 0) {
      EXPECT_EQ(records[i].header.type, RecordType::kCommit);
      EXPECT_EQ(records[i].header.commit_ts, 10 * flush + 1);
      continue;
    }
    // Each flush's batch ends with its marks.
    EXPECT_EQ(records[i].header.type, RecordType::kWatermark);
    EXPECT_EQ(records[i].header.commit_ts, 10 * flush);
    auto cluster = DecodeWatermarkPayload(payloads[i]);
    ASSERT_TRUE(cluster.ok());
    EXPECT_EQ(*cluster, 10 * flush - 5);
  }
  const std::vector<ScriptedObserver::After> after = observer.after();
  ASSERT_EQ(after.size(), 5u);
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(after[i].persisted);
    EXPECT_EQ(after[i].marks.node, 10 * (i + 1));
    // Reported after the flush that holds its watermark record.
    EXPECT_GE(after[i].durable_lsn, 2 * (i + 1));
  }
  EXPECT_EQ((*writer)->stats().records, 5u);
  EXPECT_EQ((*writer)->stats().watermark_records, 5u);
}

TEST(LogWriterWatermarkTest, RefusesARecordAtOrBelowATakenNodeMark) {
  TempDir dir;
  ScriptedObserver observer;
  auto writer = LogWriter::Open(Options(dir.path(), &observer));
  ASSERT_TRUE(writer.ok());
  observer.set_marks({.node = 100, .cluster = 100});
  ASSERT_TRUE((*writer)->Commit(1, 101, "").ok());
  // The flush promised that nothing at or below 100 follows.
  auto late = (*writer)->AppendRecord(RecordType::kPrepare, 2, 100, "vote");
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*writer)->AppendRecord(RecordType::kPrepare, 3, 102, "").ok());
  // kWatermark is the flusher's alone.
  EXPECT_EQ((*writer)
                ->AppendRecord(RecordType::kWatermark, 0, 500, "")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Without an observer nothing is refused.
  TempDir plain;
  auto unwatched = LogWriter::Open(Options(plain.path(), nullptr));
  ASSERT_TRUE(unwatched.ok());
  EXPECT_TRUE((*unwatched)->Commit(1, 5, "").ok());
  EXPECT_TRUE((*unwatched)->Commit(2, 1, "").ok());
  for (const LogRecord& r :
       ReadAll(NodeDirectory(plain.path(), 0), kDb, nullptr)) {
    EXPECT_EQ(r.segment_flags & kSegmentAckedByWatermark, 0u);
    EXPECT_EQ(r.header.type, RecordType::kCommit);
  }
}

TEST(LogWriterWatermarkTest,
     AnIdleWriterAsksOnItsIntervalAndSyncsOnlyIfWanted) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  ScriptedObserver observer;
  auto writer = LogWriter::Open(
      Options(dir.path(), &observer, absl::Milliseconds(1)), &files);
  ASSERT_TRUE(writer.ok());
  observer.set_marks({.node = 7, .cluster = 3});
  absl::SleepFor(absl::Milliseconds(40));
  // Several ticks, each reported as holding without I/O.
  EXPECT_GE(observer.before(), 3);
  for (const auto& a : observer.after()) EXPECT_FALSE(a.persisted);
  EXPECT_EQ(files.calls(), 0);
  EXPECT_EQ((*writer)->stats().flushes, 0u);

  // Someone waits for a cluster mark: the next tick syncs it.
  observer.set_wants_persisted(true);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while ((*writer)->stats().flushes == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_GE((*writer)->stats().watermark_records, 1u);
  EXPECT_GE((*writer)->stats().flushes, 1u);
  EXPECT_EQ((*writer)->stats().records, 0u);
  ASSERT_TRUE((*writer)->Close().ok());
  bool persisted = false;
  for (const auto& a : observer.after()) persisted |= a.persisted;
  EXPECT_TRUE(persisted);
}

// A flush whose marks could not be read still makes its batch durable; the
// marks then come with the next tick, with nothing more appended, so a node
// whose last commits met a stalled atomic does not hold the cluster's
// watermark back for good.
TEST(LogWriterWatermarkTest, MarksAFlushCouldNotReadComeWithTheNextTick) {
  TempDir dir;
  ScriptedObserver observer;
  auto writer =
      LogWriter::Open(Options(dir.path(), &observer, absl::Milliseconds(1)));
  ASSERT_TRUE(writer.ok());
  observer.watch(writer->get());
  observer.set_marks({.node = 20, .cluster = 10});
  observer.fail_next(3);
  auto lsn = (*writer)->Commit(1, 15, "redo");
  ASSERT_TRUE(lsn.ok()) << lsn.status();
  observer.set_wants_persisted(true);
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  auto reported = [&] {
    for (const auto& a : observer.after()) {
      if (a.persisted && a.marks.node == 20 && a.durable_lsn >= *lsn) {
        return true;
      }
    }
    return false;
  };
  while (!reported() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  EXPECT_TRUE(reported()) << "the marks of the commit's flush never came";
  EXPECT_GE(observer.before(), 4);
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(observer.failed(), 0);
}

TEST(LogWriterWatermarkTest, AFailedLogTellsTheObserverAndNeverCloses) {
  TempDir dir;
  FaultInjectingLogFileFactory files;
  files.FailFromCall(2, FaultInjectingLogFileFactory::Fault::kSync);
  ScriptedObserver observer;
  auto writer = LogWriter::Open(Options(dir.path(), &observer), &files);
  ASSERT_TRUE(writer.ok());
  observer.set_marks({.node = 1, .cluster = 1});
  // The segment header syncs (call 1), the first batch fails (call 2).
  EXPECT_FALSE((*writer)->Commit(1, 2, "").ok());
  EXPECT_FALSE((*writer)->Close().ok());
  EXPECT_EQ(observer.failed(), 1);
  EXPECT_EQ(observer.closed(), 0);
  for (const auto& a : observer.after()) {
    EXPECT_FALSE(a.persisted) << "marks of a failed flush were reported";
  }
}

}  // namespace
}  // namespace strand::wal
