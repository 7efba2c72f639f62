// Log truncation after a checkpoint (wal/log_truncation.h, LogWriter::
// Truncate, DiscardLog): what is deleted, what readers accept afterwards,
// and that a gap no truncation explains stays an error.

#include "wal/log_truncation.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_merger.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace strand::wal {
namespace {

using testing::ReadAll;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kDb = 0x7a11;
constexpr uint64_t kSegmentBytes = 16 << 10;

std::unique_ptr<LogWriter> OpenWriter(const std::string& wal_dir) {
  auto writer = LogWriter::Open(
      {.wal_dir = wal_dir, .database_id = kDb, .segment_bytes = kSegmentBytes});
  EXPECT_TRUE(writer.ok()) << writer.status();
  return writer.ok() ? *std::move(writer) : nullptr;
}

// Commits records of ~1 KiB with commit timestamps `first_ts`, +1, ...
void Commit(LogWriter& writer, uint64_t first_ts, int n) {
  for (int i = 0; i < n; ++i) {
    auto lsn =
        writer.Commit(first_ts + i, first_ts + i, std::string(1000, 'x'));
    ASSERT_TRUE(lsn.ok()) << lsn.status();
  }
}

std::vector<uint64_t> Segments(const std::string& node_dir) {
  std::vector<uint64_t> out;
  for (uint64_t i = 1; i < 1000; ++i) {
    if (std::filesystem::exists(SegmentPath(node_dir, i))) out.push_back(i);
  }
  return out;
}

TEST(LogTruncationTest, NoteRoundTripsAndDamageIsNamed) {
  TempDir dir;
  auto none = ReadTruncationNote(dir.path());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  const TruncationNote note{
      .first_segment = 7, .first_lsn = 123, .truncated_ts = 456789};
  ASSERT_TRUE(WriteTruncationNote(dir.path(), note).ok());
  auto read = ReadTruncationNote(dir.path());
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, note);
  std::string text = ReadFile(TruncationNotePath(dir.path()));
  text[text.find("456789")] = '9';
  WriteFile(TruncationNotePath(dir.path()), text);
  auto damaged = ReadTruncationNote(dir.path());
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(damaged.status().message().find("TRUNCATED"), std::string::npos)
      << damaged.status();
}

// Deletes exactly the segments at the front whose records are all at or
// below the timestamp, never the one being appended to; the log reads on
// from where it starts now, and a writer reopened continues it.
TEST(LogTruncationTest, WriterDeletesWholeOldSegmentsOnly) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  Commit(*writer, 1, 40);  // ~14 records per segment: 3 segments
  const std::string node = writer->node_dir();
  auto before = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(before.size(), 40u);
  ASSERT_GE(Segments(node).size(), 3u);
  // Timestamp of the last record of segment 2: segments 1 and 2 go.
  uint64_t last_of_2 = 0;
  for (const LogRecord& r : before) {
    if (r.segment_index == 2) last_of_2 = r.header.commit_ts;
  }
  // One timestamp short of it: only segment 1 qualifies.
  auto truncated = writer->Truncate(last_of_2 - 1);
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_EQ(truncated->segments_deleted, 1u);
  EXPECT_EQ(truncated->first_segment, 2u);
  EXPECT_FALSE(std::filesystem::exists(SegmentPath(node, 1)));
  truncated = writer->Truncate(last_of_2);
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_EQ(truncated->segments_deleted, 1u);
  EXPECT_GT(truncated->bytes_deleted, 0u);
  // Even a timestamp above everything keeps the segment being appended to.
  truncated = writer->Truncate(1000000);
  ASSERT_TRUE(truncated.ok());
  const std::vector<uint64_t> left = Segments(node);
  ASSERT_FALSE(left.empty());
  EXPECT_EQ(left.back(), before.back().segment_index);

  LogReaderStats stats;
  auto after = ReadAll(node, kDb, nullptr, &stats);
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.back().header.lsn, 40u);
  EXPECT_EQ(after.front().header.lsn, before.size() - after.size() + 1);
  EXPECT_EQ(stats.truncated_ts, 1000000u);

  // Reopened: the numbering goes on after the log.
  ASSERT_TRUE(writer->Close().ok());
  writer = OpenWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  Commit(*writer, 100, 20);
  ASSERT_TRUE(writer->Close().ok());
  auto continued = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(continued.size(), after.size() + 20);
  EXPECT_EQ(continued.back().header.lsn, 60u);
}

// A truncation that deleted every segment (resume in place: DiscardLog)
// leaves a log a new writer continues after, not at LSN 1.
TEST(LogTruncationTest, DiscardedLogContinuesItsNumbering) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  Commit(*writer, 1, 40);
  const std::string node = writer->node_dir();
  const uint64_t last_segment = Segments(node).back();
  ASSERT_TRUE(writer->Close().ok());
  int deletes = 0;
  auto discarded = DiscardLog(node, kDb, 5000, [&deletes] { ++deletes; });
  ASSERT_TRUE(discarded.ok()) << discarded.status();
  EXPECT_EQ(discarded->segments_deleted, last_segment);
  EXPECT_EQ(deletes, static_cast<int>(last_segment));
  EXPECT_TRUE(Segments(node).empty());
  EXPECT_TRUE(ReadAll(node, kDb, nullptr).empty());

  writer = OpenWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  Commit(*writer, 6000, 3);
  ASSERT_TRUE(writer->Close().ok());
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records.front().header.lsn, 41u);
  EXPECT_EQ(records.front().segment_index, last_segment + 1);
}

// A crash between deleting the segments below the note's first one leaves
// some of them: readers accept them. A segment missing at or after the
// note's first one is still an error naming it.
TEST(LogTruncationTest, LeftoversAreReadAndGapsAreErrors) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  Commit(*writer, 1, 60);
  const std::string node = writer->node_dir();
  ASSERT_TRUE(writer->Close().ok());
  auto all = ReadAll(node, kDb, nullptr);
  ASSERT_GE(Segments(node).size(), 4u);
  // The note says segments below 3 are gone; only 1 was deleted so far.
  Lsn first_of_3 = 0;
  for (const LogRecord& r : all) {
    if (r.segment_index == 3 && first_of_3 == 0) first_of_3 = r.header.lsn;
  }
  ASSERT_TRUE(WriteTruncationNote(node, {.first_segment = 3,
                                         .first_lsn = first_of_3,
                                         .truncated_ts = 10})
                  .ok());
  ASSERT_EQ(::unlink(SegmentPath(node, 1).c_str()), 0);
  auto read = ReadAll(node, kDb, nullptr);
  ASSERT_FALSE(read.empty());
  EXPECT_EQ(read.front().segment_index, 2u);
  EXPECT_EQ(read.back().header.lsn, 60u);

  // Segment 3 missing too: the note says the log starts there.
  ASSERT_EQ(::unlink(SegmentPath(node, 2).c_str()), 0);
  ASSERT_EQ(::unlink(SegmentPath(node, 3).c_str()), 0);
  auto reader = LogReader::Open(node, kDb);
  ASSERT_TRUE(reader.ok());
  LogRecord r;
  absl::StatusOr<bool> next = (*reader)->Next(&r);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kDataLoss) << next.status();
  EXPECT_NE(next.status().message().find("00000003.wal"), std::string::npos)
      << next.status();

  // Without a note, a log that does not start at segment 1 lost its head.
  ASSERT_EQ(::unlink(TruncationNotePath(node).c_str()), 0);
  reader = LogReader::Open(node, kDb);
  ASSERT_TRUE(reader.ok());
  next = (*reader)->Next(&r);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kDataLoss) << next.status();
  EXPECT_NE(next.status().message().find("00000001.wal"), std::string::npos)
      << next.status();
}

// A deployment's node set is known (the checkpoint's manifest): a node
// directory that is missing is an error naming it, never an empty log.
TEST(LogTruncationTest, MissingNodeDirectoryIsAnErrorNamingIt) {
  TempDir dir;
  {
    auto writer = LogWriter::Open({.wal_dir = dir.path(),
                                   .database_id = kDb,
                                   .compute_node_id = 0,
                                   .segment_bytes = kSegmentBytes});
    ASSERT_TRUE(writer.ok());
    Commit(**writer, 1, 5);
  }
  auto merger = LogMerger::Open(dir.path(), kDb, {.compute_nodes = 2});
  EXPECT_EQ(merger.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(merger.status().message().find("node-1"), std::string::npos)
      << merger.status();
  // Unknown node set: whatever is there.
  EXPECT_TRUE(LogMerger::Open(dir.path(), kDb).ok());
  // The opt-in: every node's history is cut before the missing one's.
  merger = LogMerger::Open(
      dir.path(), kDb,
      {.policy = DamagePolicy::kStopAtDamage, .compute_nodes = 2});
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_TRUE((*merger)->damaged());
  EXPECT_EQ((*merger)->record_count(), 0u);
  EXPECT_EQ((*merger)->records_dropped_at_cut(), 5u);
}

}  // namespace
}  // namespace strand::wal
