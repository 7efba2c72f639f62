#include "wal/log_merger.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_writer.h"

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
  while ((*merger)->Next(&r)) {
    EXPECT_EQ(r.header.commit_ts, expected_ts);
    EXPECT_EQ(r.payload, std::to_string(expected_ts));
    EXPECT_EQ(r.header.txn_id, expected_ts * 100 + r.compute_node_id);
    ++expected_ts;
  }
  EXPECT_EQ(expected_ts, 13u);
}

TEST(LogMergerTest, TiesBreakByNodeThenLsn) {
  TempDir dir;
  WriteNode(dir.path(), 2, kDb, {4, 4});
  WriteNode(dir.path(), 1, kDb, {4});
  auto merger = LogMerger::Open(dir.path(), kDb);
  ASSERT_TRUE(merger.ok());
  MergedRecord r;
  std::vector<std::pair<uint32_t, Lsn>> order;
  while ((*merger)->Next(&r))
    order.push_back({r.compute_node_id, r.header.lsn});
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

}  // namespace
}  // namespace strand::wal
