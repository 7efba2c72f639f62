#include "wal/log_merger.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/failover_records.h"
#include "wal/log_writer.h"
#include "wal/two_phase_records.h"

namespace strand::wal {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kDb = 0x3e76e;

void WriteNode(const std::string& dir, uint32_t node, uint64_t db,
               const std::vector<uint64_t>& commit_timestamps) {
  auto writer = LogWriter::Open(
      {.wal_dir = dir, .database_id = db, .compute_node_id = node});
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (uint64_t ts : commit_timestamps) {
    ASSERT_TRUE(
        (*writer)->Commit(ts * 100 + node, ts, std::to_string(ts)).ok());
  }
}

// Marks fixed per commit: the flush of each commit carries them.
class FixedMarks : public FlushObserver {
 public:
  FlushMarks marks;
  absl::StatusOr<FlushMarks> BeforeFlush() override { return marks; }
  bool WantsPersisted(const FlushMarks&) override { return false; }
  void AfterFlush(const FlushMarks&, bool) override {}
  void Closed() override {}
  void Failed(const absl::Status&) override {}
};

// Writes `node`'s log acknowledged by watermark: each commit (ts, cluster
// mark) is flushed with node mark ts and that cluster mark.
void WriteWatermarkedNode(
    const std::string& dir, uint32_t node,
    const std::vector<std::pair<uint64_t, uint64_t>>& commits) {
  FixedMarks observer;
  auto writer = LogWriter::Open({.wal_dir = dir,
                                 .database_id = kDb,
                                 .compute_node_id = node,
                                 .observer = &observer,
                                 .observer_interval = absl::Seconds(30)});
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (const auto& [ts, cluster] : commits) {
    observer.marks = {.node = ts, .cluster = cluster};
    ASSERT_TRUE((*writer)->Commit(ts, ts, std::to_string(ts)).ok());
  }
}

// The merger's next record (its redo read back from the segment file);
// a read error fails the test.
bool Next(LogMerger& merger, MergedRecord* r) {
  absl::StatusOr<bool> more = merger.Next(r);
  EXPECT_TRUE(more.ok()) << more.status();
  return more.ok() && *more;
}

TEST(LogMergerTest, WatermarkedLogsReplayOnlyUpToTheLargestClusterMark) {
  TempDir dir;
  // The largest cluster mark any log persisted is 20: records above it in
  // watermarked logs were never acknowledged and are dropped; node 2's
  // log acknowledged each commit as it became durable and is kept whole.
  WriteWatermarkedNode(dir.path(), 0, {{5, 0}, {12, 12}, {40, 20}});
  WriteWatermarkedNode(dir.path(), 1, {{15, 3}, {25, 18}});
  WriteNode(dir.path(), 2, kDb, {50});
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_TRUE((*merger)->acked_by_watermark());
  EXPECT_EQ((*merger)->watermark_cut_ts(), 20u);
  EXPECT_EQ((*merger)->records_dropped_above_watermark(), 2u);
  EXPECT_EQ((*merger)->max_commit_ts_read(), 50u);
  std::vector<uint64_t> replayed;
  MergedRecord r;
  while (Next(**merger, &r)) {
    EXPECT_EQ(r.header.type, RecordType::kCommit);
    replayed.push_back(r.header.commit_ts);
  }
  EXPECT_EQ(replayed, (std::vector<uint64_t>{5, 12, 15, 50}));
}

TEST(LogMergerTest, MergesNodesInCommitTimestampOrder) {
  TempDir dir;
  // Within a node, LSN order is not timestamp order (a transaction may
  // append after one with a later timestamp).
  WriteNode(dir.path(), 0, kDb, {5, 1, 9, 10});
  WriteNode(dir.path(), 1, kDb, {2, 8, 3});
  WriteNode(dir.path(), 7, kDb, {7, 4, 6, 12, 11});
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_EQ((*merger)->record_count(), 12u);
  ASSERT_EQ((*merger)->node_stats().size(), 3u);
  MergedRecord r;
  uint64_t expected_ts = 1;
  while (Next(**merger, &r)) {
    EXPECT_EQ(r.header.commit_ts, expected_ts);
    EXPECT_EQ(r.payload, std::to_string(expected_ts));
    EXPECT_EQ(r.header.txn_id, expected_ts * 100 + r.compute_node_id);
    ++expected_ts;
  }
  EXPECT_EQ(expected_ts, 13u);
}

// Open keeps where each record is, and Next reads it again: a record
// that changed on disk in between is an error naming it, never a
// different redo replayed.
TEST(LogMergerTest, ARecordChangedAfterOpenIsAnErrorNotReplayed) {
  TempDir dir;
  {
    auto writer = LogWriter::Open({.wal_dir = dir.path(),
                                   .database_id = kDb,
                                   .compute_node_id = 0,
                                   .segment_bytes = 1 << 20});
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Commit(1, 1, "first-redo").ok());
    ASSERT_TRUE((*writer)->Commit(2, 2, "second-redo").ok());
  }
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  const std::string segment = SegmentPath(NodeDirectory(dir.path(), 0), 1);
  std::string bytes = ReadFile(segment);
  const size_t at = bytes.find("second-redo");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'S';
  WriteFile(segment, bytes);

  MergedRecord r;
  absl::StatusOr<bool> first = (*merger)->Next(&r);
  ASSERT_TRUE(first.ok() && *first) << first.status();
  EXPECT_EQ(r.payload, "first-redo");
  absl::StatusOr<bool> second = (*merger)->Next(&r);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(second.status().message().find("LSN 2"), std::string::npos)
      << second.status();
  EXPECT_NE(second.status().message().find("changed after it was read"),
            std::string::npos)
      << second.status();
}

TEST(LogMergerTest, TiesBreakByNodeThenLsn) {
  TempDir dir;
  WriteNode(dir.path(), 2, kDb, {4, 4});
  WriteNode(dir.path(), 1, kDb, {4});
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok());
  MergedRecord r;
  std::vector<std::pair<uint32_t, Lsn>> order;
  while (Next(**merger, &r)) order.push_back({r.compute_node_id, r.header.lsn});
  EXPECT_EQ(order,
            (std::vector<std::pair<uint32_t, Lsn>>{{1, 1}, {2, 1}, {2, 2}}));
}

TEST(LogMergerTest, CutsEachNodesTornTailAndRefusesForeignLogs) {
  TempDir dir;
  WriteNode(dir.path(), 0, kDb, {1, 3});
  WriteNode(dir.path(), 1, kDb, {2, 4});
  // Tear node 1's last record.
  const std::string path = SegmentPath(NodeDirectory(dir.path(), 1), 1);
  std::string data = ReadFile(path);
  data[kSegmentHeaderBytes + EncodedRecordBytes(1) + 5] ^= 1;
  WriteFile(path, data);
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_EQ((*merger)->record_count(), 3u);
  EXPECT_GT((*merger)->node_stats()[1].dropped_bytes, 0u);

  WriteNode(dir.path(), 2, kDb + 1, {5});
  auto refused = LogMerger::Open(dir.path(), kDb);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(LogMerger::Open(dir.path() + "/missing", kDb).status().code(),
            absl::StatusCode::kNotFound);
}

// Two-phase commit records: a distributed transaction's branches are
// replayed iff its coordinator's decision (or a participant's commit
// marker) is in some log; a prepared branch without either is presumed
// aborted. Payloads come out as plain redo.
TEST(LogMergerTest, ResolvesTwoPhaseCommitRecords) {
  TempDir dir;
  const uint64_t committed = GlobalTxnId(0, 1);   // decision in node 0's log
  const uint64_t marked = GlobalTxnId(0, 2);      // only node 2's marker
  const uint64_t in_doubt = GlobalTxnId(0, 3);    // prepared, no decision
  const uint64_t committed2 = GlobalTxnId(1, 1);  // coordinator node 1
  {
    auto w = LogWriter::Open(
        {.wal_dir = dir.path(), .database_id = kDb, .compute_node_id = 0});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Commit(7, 1, "local").ok());
    auto c = EncodeDistributedCommitPayload({1, 2}, "coord-redo");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kDistributedCommit, committed, 10, c)
            .ok());
    auto p = EncodePreparePayload(1, "n0-branch");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kPrepare, committed2, 20, p).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  {
    auto w = LogWriter::Open(
        {.wal_dir = dir.path(), .database_id = kDb, .compute_node_id = 1});
    ASSERT_TRUE(w.ok());
    auto p = EncodePreparePayload(0, "n1-branch");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kPrepare, committed, 10, p).ok());
    auto d = EncodePreparePayload(0, "n1-in-doubt");
    ASSERT_TRUE((*w)->AppendRecord(RecordType::kPrepare, in_doubt, 30, d).ok());
    auto c = EncodeDistributedCommitPayload({0}, "");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kDistributedCommit, committed2, 20, c)
            .ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  {
    auto w = LogWriter::Open(
        {.wal_dir = dir.path(), .database_id = kDb, .compute_node_id = 2});
    ASSERT_TRUE(w.ok());
    auto p = EncodePreparePayload(0, "n2-branch");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kPrepare, committed, 10, p).ok());
    auto m = EncodePreparePayload(0, "n2-marked");
    ASSERT_TRUE((*w)->AppendRecord(RecordType::kPrepare, marked, 15, m).ok());
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kParticipantCommit, marked, 15, "")
            .ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  std::vector<std::pair<uint32_t, std::string>> got;
  MergedRecord r;
  while (Next(**merger, &r)) {
    EXPECT_EQ(r.header.type, RecordType::kCommit);
    got.push_back({r.compute_node_id, r.payload});
  }
  EXPECT_EQ(got,
            (std::vector<std::pair<uint32_t, std::string>>{{0, "local"},
                                                           {0, "coord-redo"},
                                                           {1, "n1-branch"},
                                                           {2, "n2-branch"},
                                                           {2, "n2-marked"},
                                                           {0, "n0-branch"},
                                                           {1, ""}}));
  EXPECT_EQ((*merger)->two_phase_stats().distributed_commits, 2u);
  EXPECT_EQ((*merger)->two_phase_stats().prepared_committed, 4u);
  EXPECT_EQ((*merger)->two_phase_stats().prepared_in_doubt, 1u);
}

// A coordinator that restarts (or rejoins after a failure) counts its
// gtids from 1 again: a branch prepared under the first incarnation's gtid
// g, never decided, must not commit because the second incarnation's
// transaction g committed. The commit timestamp tells them apart.
TEST(LogMergerTest, ARepeatedGtidDecidesOnlyItsOwnTransaction) {
  TempDir dir;
  const uint64_t gtid = GlobalTxnId(1, 7);
  {
    auto w = LogWriter::Open(
        {.wal_dir = dir.path(), .database_id = kDb, .compute_node_id = 0});
    ASSERT_TRUE(w.ok());
    auto first = EncodePreparePayload(1, "in-doubt-under-the-first");
    ASSERT_TRUE((*w)->AppendRecord(RecordType::kPrepare, gtid, 10, first).ok());
    auto second = EncodePreparePayload(1, "committed-under-the-second");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kPrepare, gtid, 20, second).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  {
    auto w = LogWriter::Open(
        {.wal_dir = dir.path(), .database_id = kDb, .compute_node_id = 1});
    ASSERT_TRUE(w.ok());
    auto c = EncodeDistributedCommitPayload({0}, "coord");
    ASSERT_TRUE(
        (*w)->AppendRecord(RecordType::kDistributedCommit, gtid, 20, c).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  std::vector<std::string> got;
  MergedRecord r;
  while (Next(**merger, &r)) got.push_back(r.payload);
  EXPECT_EQ(got,
            (std::vector<std::string>{"committed-under-the-second", "coord"}));
  EXPECT_EQ((*merger)->two_phase_stats().prepared_committed, 1u);
  EXPECT_EQ((*merger)->two_phase_stats().prepared_in_doubt, 1u);
}

// A node's log damaged before its end: an error by default; with the
// opt-in, that node is read up to the damage and every node's history is
// cut at the same commit timestamp (the largest the damaged node kept).
TEST(LogMergerTest, DamagedLogFailsOrCutsEveryNodeAtTheSamePoint) {
  TempDir dir;
  WriteNode(dir.path(), 0, kDb, {1, 4, 6, 9, 12});
  WriteNode(dir.path(), 1, kDb, {2, 3, 5, 7, 8, 10, 11});
  // Damage node 0's third record (ts 6): records 4 and 5 follow it, each
  // appended once the one before was durable.
  const std::string path = SegmentPath(NodeDirectory(dir.path(), 0), 1);
  std::string data = ReadFile(path);
  data[kSegmentHeaderBytes + 2 * EncodedRecordBytes(1) + 5] ^= 1;
  WriteFile(path, data);
  auto refused = LogMerger::Open(dir.path(), kDb);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kDataLoss)
      << refused.status();
  EXPECT_NE(refused.status().message().find("node-0"), std::string::npos);

  auto merger = LogMerger::Open(dir.path(), kDb, DamagePolicy::kStopAtDamage);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_TRUE((*merger)->damaged());
  EXPECT_EQ((*merger)->damage_cut_ts(), 4u);
  EXPECT_FALSE((*merger)->node_stats()[0].damage.empty());
  EXPECT_TRUE((*merger)->node_stats()[1].damage.empty());
  std::vector<uint64_t> timestamps;
  MergedRecord r;
  while (Next(**merger, &r)) timestamps.push_back(r.header.commit_ts);
  EXPECT_EQ(timestamps, (std::vector<uint64_t>{1, 2, 3, 4}));
  // Node 1's 5, 7, 8, 10 and 11 are above the cut.
  EXPECT_EQ((*merger)->records_dropped_at_cut(), 5u);
}

// A failed node's records (docs/design/node_failure.md): node 0 failed
// with its published node mark at 10; its log holds 5 (below the mark),
// and 12, 14 and 18 above it. The survivor that reclaimed it found 12 and
// 18 in its redo ring and logged them again (kAdopted, 18 twice: the
// reclaim started over), then excluded node 0's range (10, 20]. Replay
// yields 5 from node 0's log, 12 and 18 once each as node 0's, and the
// survivor's own 25; node 0's own 12, 14 and 18 are dropped.
TEST(LogMergerTest, AFailedNodesRangeIsReplacedByWhatItsReclaimerAdopted) {
  TempDir dir;
  WriteWatermarkedNode(dir.path(), 0, {{5, 5}, {12, 5}, {14, 5}, {18, 5}});
  {
    FixedMarks observer;
    auto writer = LogWriter::Open({.wal_dir = dir.path(),
                                   .database_id = kDb,
                                   .compute_node_id = 1,
                                   .observer = &observer,
                                   .observer_interval = absl::Seconds(30)});
    ASSERT_TRUE(writer.ok()) << writer.status();
    observer.marks = {.node = 9, .cluster = 5};
    ASSERT_TRUE((*writer)->Commit(9, 9, "9").ok());
    // Below this node's own mark: allowed for adopted records only.
    EXPECT_FALSE((*writer)->AppendRecord(RecordType::kCommit, 8, 8, "8").ok());
    for (uint64_t ts : {12, 18, 18}) {
      auto lsn = (*writer)->AppendRecord(
          RecordType::kAdopted, ts, ts,
          EncodeAdoptedPayload(0, RecordType::kCommit, std::to_string(ts)));
      ASSERT_TRUE(lsn.ok()) << lsn.status();
    }
    auto excluded = (*writer)->AppendRecord(RecordType::kNodeExcluded, 0, 20,
                                            EncodeExclusionPayload(10, 20));
    ASSERT_TRUE(excluded.ok()) << excluded.status();
    // Durable under the marks above: a flush of it that ran after the
    // change below would take node mark 25, and commit 25 would then be
    // refused as not above the node's watermark (seen once under ASan).
    ASSERT_TRUE((*writer)->WaitDurable(*excluded).ok());
    observer.marks = {.node = 25, .cluster = 30};
    ASSERT_TRUE((*writer)->Commit(25, 25, "25").ok());
  }
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_EQ((*merger)->records_adopted(), 2u);
  EXPECT_EQ((*merger)->records_excluded(), 3u);
  std::vector<std::pair<uint64_t, uint32_t>> replayed;
  MergedRecord r;
  while (Next(**merger, &r)) {
    EXPECT_EQ(r.header.type, RecordType::kCommit);
    EXPECT_EQ(r.payload, std::to_string(r.header.commit_ts));
    replayed.push_back({r.header.commit_ts, r.compute_node_id});
  }
  const std::vector<std::pair<uint64_t, uint32_t>> expected = {
      {5, 0}, {9, 1}, {12, 0}, {18, 0}, {25, 1}};
  EXPECT_EQ(replayed, expected);
}

// A checkpoint at 11 falls inside the excluded range (10, 20] of failed
// node 0, whose log holds 12 and 14 above its mark. The reclaimer's first
// segment holds only its own 9 and the kNodeExcluded record (commit
// timestamp 20, the range's top), its second one 25. Neither truncation
// at 11 nor recovery from the checkpoint may step over that first
// segment as "all at or below 11": node 0's 12 and 14 would come back.
TEST(LogMergerTest, AnExclusionOutlivesTheCheckpointsInsideItsRange) {
  TempDir dir;
  WriteNode(dir.path(), 0, kDb, {12, 14});
  {
    // 12 KiB of records per segment: 9 and the exclusion fill the first.
    auto writer = LogWriter::Open({.wal_dir = dir.path(),
                                   .database_id = kDb,
                                   .compute_node_id = 1,
                                   .segment_bytes = kMinSegmentBytes});
    ASSERT_TRUE(writer.ok()) << writer.status();
    const std::string big(7000, 'x');
    ASSERT_TRUE((*writer)->Commit(9, 9, big).ok());
    auto excluded = (*writer)->AppendRecord(RecordType::kNodeExcluded, 0, 20,
                                            EncodeExclusionPayload(10, 20));
    ASSERT_TRUE(excluded.ok()) << excluded.status();
    ASSERT_TRUE((*writer)->Commit(25, 25, big).ok());
    ASSERT_EQ((*writer)->stats().segments_created, 2u);
    auto truncated = (*writer)->Truncate(11, [] {});
    ASSERT_TRUE(truncated.ok()) << truncated.status();
    EXPECT_EQ(truncated->segments_deleted, 0u);
  }
  auto merger = LogMerger::Open(dir.path(), kDb, {.skip_through_ts = 11});
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_EQ((*merger)->segments_skipped(), 0u);
  EXPECT_EQ((*merger)->records_excluded(), 2u);
  std::vector<uint64_t> replayed;
  MergedRecord r;
  while (Next(**merger, &r)) replayed.push_back(r.header.commit_ts);
  EXPECT_EQ(replayed, std::vector<uint64_t>{25});
}

}  // namespace
}  // namespace strand::wal
