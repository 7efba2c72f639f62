#include "wal/log_reader.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_writer.h"

namespace strand::wal {
namespace {

using testing::ReadAll;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kDb = 0x5eed;

std::string Payload(int i, size_t bytes) {
  std::string p(bytes, '\0');
  for (size_t j = 0; j < bytes; ++j)
    p[j] = static_cast<char>('a' + (i + j) % 26);
  return p;
}

// Writes `n` records of `payload_bytes` (txn i, commit_ts 10 * i) and
// returns the node directory.
std::string WriteLog(const std::string& wal_dir, int n, size_t payload_bytes,
                     uint64_t segment_bytes = 64 << 10) {
  auto writer = LogWriter::Open(
      {.wal_dir = wal_dir, .database_id = kDb, .segment_bytes = segment_bytes});
  EXPECT_TRUE(writer.ok()) << writer.status();
  for (int i = 1; i <= n; ++i) {
    auto lsn = (*writer)->Commit(i, 10 * i, Payload(i, payload_bytes));
    EXPECT_TRUE(lsn.ok()) << lsn.status();
    EXPECT_EQ(*lsn, static_cast<Lsn>(i));
  }
  EXPECT_TRUE((*writer)->Close().ok());
  return (*writer)->node_dir();
}

TEST(LogReaderTest, ReadsBackWhatWasWritten) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 50, 30);
  std::vector<std::string> payloads;
  LogReaderStats stats;
  auto records = ReadAll(node, kDb, &payloads, &stats);
  ASSERT_EQ(records.size(), 50u);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(records[i].header.lsn, static_cast<Lsn>(i + 1));
    EXPECT_EQ(records[i].header.txn_id, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(records[i].header.commit_ts, static_cast<uint64_t>(10 * (i + 1)));
    EXPECT_EQ(payloads[i], Payload(i + 1, 30));
  }
  EXPECT_EQ(stats.dropped_bytes, 0u);
  EXPECT_EQ(stats.last_lsn, 50u);
}

TEST(LogReaderTest, MissingDirectoryIsNotFoundAndEmptyIsEmpty) {
  TempDir dir;
  EXPECT_EQ(LogReader::Open(dir.path() + "/nope", kDb).status().code(),
            absl::StatusCode::kNotFound);
  auto records = ReadAll(dir.path(), kDb, nullptr);
  EXPECT_TRUE(records.empty());
}

// Cuts the last record at every byte: by truncating the file, by zeros
// (a write that never happened) and by garbage (a torn write).
TEST(LogReaderTest, TruncatedTailAtEveryOffsetIsCutCleanly) {
  TempDir dir;
  constexpr int kRecords = 20;
  constexpr size_t kPayload = 64;  // 104-byte records, no padding
  const std::string node = WriteLog(dir.path(), kRecords, kPayload);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), static_cast<size_t>(kRecords));
  const std::string path = SegmentPath(node, 1);
  const std::string original = ReadFile(path);
  const uint64_t start = records.back().offset;
  const uint64_t end = start + EncodedRecordBytes(kPayload);
  ASSERT_EQ(end - start, kRecordHeaderBytes + kPayload);
  std::mt19937 rng(7);
  for (uint64_t cut = start; cut <= end; ++cut) {
    const size_t expected = cut == end ? kRecords : kRecords - 1;
    for (int variant = 0; variant < 3; ++variant) {
      std::string data = original;
      if (variant == 0) {
        data.resize(cut);
      } else {
        for (uint64_t i = cut; i < end; ++i) {
          data[i] = variant == 1 ? '\0' : static_cast<char>(rng() | 1);
        }
      }
      WriteFile(path, data);
      LogReaderStats stats;
      auto got = ReadAll(node, kDb, nullptr, &stats);
      ASSERT_EQ(got.size(), expected)
          << "cut " << cut << " variant " << variant;
      EXPECT_EQ(stats.last_lsn, expected);
      if (expected == kRecords || (cut == start && variant != 2)) {
        EXPECT_EQ(stats.dropped_bytes, 0u);  // nothing but zeros remains
      } else {
        // Everything from the record's start that is not zero is dropped.
        EXPECT_GT(stats.dropped_bytes, 0u) << "cut " << cut;
        EXPECT_LE(stats.dropped_bytes, end - start);
        if (variant == 2) {
          EXPECT_EQ(stats.dropped_bytes, end - start);
        }
      }
    }
  }
}

TEST(LogReaderTest, FlippedBitCutsTheLogAtThatRecord) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 20, 40);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 20u);
  const std::string path = SegmentPath(node, 1);
  const std::string original = ReadFile(path);
  const uint64_t start = records[9].offset;  // LSN 10
  for (uint64_t bit = 0; bit < (kRecordHeaderBytes + 40) * 8; ++bit) {
    std::string data = original;
    data[start + bit / 8] ^= static_cast<char>(1 << (bit % 8));
    WriteFile(path, data);
    LogReaderStats stats;
    auto got = ReadAll(node, kDb, nullptr, &stats);
    ASSERT_EQ(got.size(), 9u) << "bit " << bit;
    EXPECT_GT(stats.dropped_bytes, 10 * EncodedRecordBytes(40));
  }
}

TEST(LogReaderTest, RefusesAnotherDatabaseAndANewerVersion) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 3, 10);
  auto reader = LogReader::Open(node, kDb + 1);
  ASSERT_TRUE(reader.ok());
  LogRecord r;
  absl::StatusOr<bool> next = (*reader)->Next(&r);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(next.status().message().find("not to this database"),
            std::string::npos)
      << next.status();
  // The writer refuses to continue it too.
  auto writer =
      LogWriter::Open({.wal_dir = dir.path(), .database_id = kDb + 1});
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kFailedPrecondition);

  const std::string path = SegmentPath(node, 1);
  std::string data = ReadFile(path);
  auto header = DecodeSegmentHeader(
      std::string_view(data).substr(0, kSegmentHeaderBytes), kDb, path);
  ASSERT_TRUE(header.ok());
  header->format_version = kFormatVersion + 1;
  EncodeSegmentHeader(*header, data.data());
  WriteFile(path, data);
  reader = LogReader::Open(node, kDb);
  ASSERT_TRUE(reader.ok());
  next = (*reader)->Next(&r);
  EXPECT_EQ(next.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(next.status().message().find(
                absl::StrCat("newer than version ", kFormatVersion)),
            std::string::npos)
      << next.status();
  EXPECT_NE(next.status().message().find(path), std::string::npos);
}

TEST(LogReaderTest, TornSegmentHeaderAndGapsEndTheLog) {
  TempDir dir;
  // ~1 KiB records in 16 KiB segments: 3 records... per segment.
  const std::string node = WriteLog(dir.path(), 30, 1000, 16 << 10);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(node)) {
    files.push_back(e.path().string());
  }
  ASSERT_GE(files.size(), 3u);
  const uint64_t last = files.size();
  auto all = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(all.size(), 30u);
  size_t before_last = 0;
  for (const LogRecord& r : all) before_last += r.segment_index < last;

  // The last segment's header never reached the disk.
  std::string data = ReadFile(SegmentPath(node, last));
  std::string zeroed = data;
  std::fill(zeroed.begin(), zeroed.begin() + kSegmentHeaderBytes, '\0');
  WriteFile(SegmentPath(node, last), zeroed);
  LogReaderStats stats;
  EXPECT_EQ(ReadAll(node, kDb, nullptr, &stats).size(), before_last);
  EXPECT_GT(stats.dropped_bytes, 0u);
  WriteFile(SegmentPath(node, last), data);

  // A missing middle segment: the log ends before it, the rest is dropped.
  ASSERT_EQ(::unlink(SegmentPath(node, 2).c_str()), 0);
  auto got = ReadAll(node, kDb, nullptr, &stats);
  for (const LogRecord& r : got) EXPECT_EQ(r.segment_index, 1u);
  EXPECT_LT(got.size(), before_last);
  EXPECT_NE(stats.end.find("starts at LSN"), std::string::npos) << stats.end;
  EXPECT_GT(stats.dropped_bytes, 0u);
}

// Random bytes must never crash or hang the reader; mutations of a valid
// log yield a prefix of its records or a clean refusal.
TEST(LogReaderTest, FuzzedInputNeverCrashes) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 40, 50, 16 << 10);
  std::vector<std::string> payloads;
  auto original = ReadAll(node, kDb, &payloads);
  ASSERT_EQ(original.size(), 40u);
  std::vector<std::string> files;
  std::vector<std::string> contents;
  for (uint64_t i = 1; std::filesystem::exists(SegmentPath(node, i)); ++i) {
    files.push_back(SegmentPath(node, i));
    contents.push_back(ReadFile(files.back()));
  }
  std::mt19937_64 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    for (size_t f = 0; f < files.size(); ++f) {
      std::string data = contents[f];
      switch (iter % 3) {
        case 0:  // a few random bytes anywhere
          for (int k = rng() % 8 + 1; k > 0; --k) {
            data[rng() % data.size()] = static_cast<char>(rng());
          }
          break;
        case 1:  // random bytes after a valid header
          for (size_t i = kSegmentHeaderBytes; i < data.size(); ++i) {
            data[i] = static_cast<char>(rng());
          }
          break;
        case 2:  // entirely random, random length
          data.resize(rng() % (3 * kBlockBytes));
          for (char& c : data) c = static_cast<char>(rng());
          break;
      }
      WriteFile(files[f], data);
    }
    auto reader = LogReader::Open(node, kDb);
    ASSERT_TRUE(reader.ok());
    LogRecord r;
    size_t n = 0;
    for (;; ++n) {
      ASSERT_LE(n, original.size()) << "iteration " << iter;
      absl::StatusOr<bool> more = (*reader)->Next(&r);
      if (!more.ok()) {
        const auto code = more.status().code();
        EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument ||
                    code == absl::StatusCode::kFailedPrecondition ||
                    code == absl::StatusCode::kDataLoss)
            << more.status();
        break;
      }
      if (!*more) break;
      ASSERT_EQ(r.header.lsn, original[n].header.lsn) << "iteration " << iter;
      ASSERT_EQ(r.payload, payloads[n]) << "iteration " << iter;
    }
  }
}

}  // namespace
}  // namespace strand::wal
