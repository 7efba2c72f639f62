#include "wal/log_reader.h"

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
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

// Flips `mask` into `bytes` bytes of the file at `offset` (damage).
void XorBytes(const std::string& path, uint64_t offset, size_t bytes,
              char mask) {
  std::string data = ReadFile(path);
  for (size_t i = 0; i < bytes; ++i) data[offset + i] ^= mask;
  WriteFile(path, data);
}

// What reading a log to its end or first error gave.
struct ReadOutcome {
  size_t records = 0;
  absl::Status status;  // OK: the log ended (stats says how)
  LogReaderStats stats;
};

ReadOutcome ReadUntilError(const std::string& node,
                           DamagePolicy policy = DamagePolicy::kFail) {
  ReadOutcome out;
  auto reader = LogReader::Open(node, kDb, policy);
  if (!reader.ok()) {
    out.status = reader.status();
    return out;
  }
  LogRecord r;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&r);
    if (!more.ok()) {
      out.status = more.status();
      break;
    }
    if (!*more) break;
    ++out.records;
  }
  out.stats = (*reader)->stats();
  return out;
}

// A damage error must say where: the node, the segment, the offset and
// the LSN of the first record that is missing or corrupt.
void ExpectNamesDamage(const absl::Status& status, std::string_view segment,
                       uint64_t offset, Lsn lsn) {
  const std::string m(status.message());
  EXPECT_NE(m.find("node-0"), std::string::npos) << m;
  EXPECT_NE(m.find(segment), std::string::npos) << m;
  EXPECT_NE(m.find(absl::StrCat("offset ", offset)), std::string::npos) << m;
  EXPECT_NE(m.find(absl::StrCat("LSN ", lsn)), std::string::npos) << m;
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

// Cuts the last record at every byte: by zeros (a write that never
// happened) and by garbage (a torn write). (A shorter file is not a crash:
// TruncatedSegmentIsAnErrorNamingIt.)
TEST(LogReaderTest, TornTailAtEveryOffsetIsCutCleanly) {
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
    for (int variant = 1; variant < 3; ++variant) {
      std::string data = original;
      for (uint64_t i = cut; i < end; ++i) {
        data[i] = variant == 1 ? '\0' : static_cast<char>(rng() | 1);
      }
      WriteFile(path, data);
      LogReaderStats stats;
      auto got = ReadAll(node, kDb, nullptr, &stats);
      ASSERT_EQ(got.size(), expected)
          << "cut " << cut << " variant " << variant;
      EXPECT_EQ(stats.last_lsn, expected);
      if (expected == kRecords || (cut == start && variant == 1)) {
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

// Segments are preallocated to their full size before they get a name, so
// a segment shorter than its header says was truncated after the fact,
// whatever the point: to 0 bytes, into its header, to its header, in the
// middle of a record. The reproduction (truncate -s of a segment)
// silently lost acknowledged transactions when this was read as a torn
// tail.
TEST(LogReaderTest, TruncatedSegmentIsAnErrorNamingIt) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 20, 64);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 20u);
  const std::string path = SegmentPath(node, 1);
  const std::string original = ReadFile(path);
  ASSERT_EQ(original.size(), 64u << 10);
  for (uint64_t size : {uint64_t{0}, uint64_t{100}, uint64_t{kBlockBytes},
                        records[10].offset + 7, records.back().offset + 40,
                        uint64_t{original.size() - 1}}) {
    SCOPED_TRACE(absl::StrCat("cut to ", size, " bytes"));
    WriteFile(path, original.substr(0, size));
    const ReadOutcome got = ReadUntilError(node);
    EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
    const std::string m(got.status.message());
    EXPECT_NE(m.find("00000001.wal"), std::string::npos) << m;
    EXPECT_NE(m.find(size < kBlockBytes ? "header" : "shorter"),
              std::string::npos)
        << m;
    // The explicit opt-in reads up to it: here, nothing.
    const ReadOutcome allowed =
        ReadUntilError(node, DamagePolicy::kStopAtDamage);
    EXPECT_TRUE(allowed.status.ok()) << allowed.status;
    EXPECT_EQ(allowed.records, 0u);
    EXPECT_FALSE(allowed.stats.damage.empty());
  }
  WriteFile(path, original);
  EXPECT_EQ(ReadAll(node, kDb, nullptr).size(), 20u);
}

// Every commit of WriteLog waited for its record to be durable, so a
// flipped bit in record 10 is damage before the end of the log (records
// 11..20 were appended after it was durable), never a torn tail.
TEST(LogReaderTest, FlippedBitIsAnErrorNamingTheRecord) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 20, 40);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 20u);
  const std::string path = SegmentPath(node, 1);
  const std::string original = ReadFile(path);
  const uint64_t start = records[9].offset;  // LSN 10
  // Every 5th bit: each field of the header and the payload, in a test
  // that stays fast (each flip rewrites and rereads the segment).
  for (uint64_t bit = 0; bit < (kRecordHeaderBytes + 40) * 8; bit += 5) {
    std::string data = original;
    data[start + bit / 8] ^= static_cast<char>(1 << (bit % 8));
    WriteFile(path, data);
    const ReadOutcome got = ReadUntilError(node);
    ASSERT_EQ(got.records, 9u) << "bit " << bit;
    ASSERT_EQ(got.status.code(), absl::StatusCode::kDataLoss)
        << "bit " << bit << ": " << got.status;
    ExpectNamesDamage(got.status, "00000001.wal", start, 10);
  }
}

// The explicit opt-in: the log ends at the damage, and the stats say what
// kFail would have said.
TEST(LogReaderTest, StopAtDamageReadsUpToItAndSaysWhere) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 30, 1000, 16 << 10);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 30u);
  XorBytes(SegmentPath(node, records[4].segment_index),  // LSN 5
           records[4].offset + kRecordHeaderBytes + 3, 1, 0x10);
  const ReadOutcome failed = ReadUntilError(node);
  ASSERT_EQ(failed.status.code(), absl::StatusCode::kDataLoss);
  const ReadOutcome stopped = ReadUntilError(node, DamagePolicy::kStopAtDamage);
  ASSERT_TRUE(stopped.status.ok()) << stopped.status;
  EXPECT_EQ(stopped.records, 4u);
  EXPECT_EQ(stopped.stats.last_lsn, 4u);
  EXPECT_EQ(stopped.stats.damage, failed.status.message());
  EXPECT_EQ(stopped.stats.node, "node-0");
  // Every later record is counted as dropped.
  EXPECT_GE(stopped.stats.dropped_bytes, 26 * EncodedRecordBytes(1000));
  // An undamaged log has no damage to report.
  EXPECT_TRUE(ReadUntilError(WriteLog(dir.path() + "/b", 3, 10),
                             DamagePolicy::kStopAtDamage)
                  .stats.damage.empty());
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

// ~1 KiB records in 16 KiB segments: 3 records... per segment. Returns
// the number of segments and the records before the last segment.
std::string WriteSegmentedLog(const std::string& wal_dir, uint64_t* segments,
                              size_t* before_last) {
  const std::string node = WriteLog(wal_dir, 30, 1000, 16 << 10);
  *segments = 0;
  while (std::filesystem::exists(SegmentPath(node, *segments + 1))) {
    ++*segments;
  }
  EXPECT_GE(*segments, 3u);
  auto all = ReadAll(node, kDb, nullptr);
  EXPECT_EQ(all.size(), 30u);
  *before_last = 0;
  for (const LogRecord& r : all) *before_last += r.segment_index < *segments;
  return node;
}

// A writer creates a segment under a temporary name and renames it into
// place once its header is synced, so even an empty last segment with a
// torn header was damaged after the fact: an error, and under the opt-in
// the log ends before it. A crash while creating one leaves only the
// temporary file, which readers ignore.
TEST(LogReaderTest, DamagedHeaderOfAnEmptyLastSegmentIsAnError) {
  TempDir dir;
  uint64_t last = 0;
  size_t before_last = 0;
  const std::string node = WriteSegmentedLog(dir.path(), &last, &before_last);
  std::string data = ReadFile(SegmentPath(node, last));
  // A torn header: its first bytes written, the rest not (CRC mismatch),
  // and no record after it.
  std::fill(data.begin() + 24, data.end(), '\0');
  WriteFile(SegmentPath(node, last), data);
  ReadOutcome got = ReadUntilError(node);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  EXPECT_NE(got.status.message().find(absl::StrFormat("%08d.wal", last)),
            std::string::npos)
      << got.status;
  got = ReadUntilError(node, DamagePolicy::kStopAtDamage);
  EXPECT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.records, before_last);

  // The leftover of a crash during creation is not part of the log.
  WriteFile(SegmentPath(node, last), ReadFile(SegmentPath(node, 1)));
  ASSERT_EQ(::unlink(SegmentPath(node, last).c_str()), 0);
  WriteFile(SegmentPath(node, last) + ".tmp", std::string(4096, '\0'));
  LogReaderStats stats;
  EXPECT_EQ(ReadAll(node, kDb, nullptr, &stats).size(), before_last);
}

// A segment whose header is damaged but which holds records is not a
// crash during its creation: its records were durable.
TEST(LogReaderTest, DamagedHeaderOfASegmentWithRecordsIsAnError) {
  TempDir dir;
  uint64_t last = 0;
  size_t before_last = 0;
  const std::string node = WriteSegmentedLog(dir.path(), &last, &before_last);
  for (uint64_t segment : {last, uint64_t{2}}) {
    SCOPED_TRACE(absl::StrCat("segment ", segment));
    const std::string path = SegmentPath(node, segment);
    const std::string original = ReadFile(path);
    std::string data = original;
    std::fill(data.begin(), data.begin() + kSegmentHeaderBytes, '\0');
    WriteFile(path, data);
    const ReadOutcome got = ReadUntilError(node);
    EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
    const std::string m(got.status.message());
    EXPECT_NE(m.find(absl::StrFormat("%08d.wal", segment)), std::string::npos)
        << m;
    EXPECT_NE(m.find("header"), std::string::npos) << m;
    WriteFile(path, original);
  }
}

// A missing segment is a gap in the log: an error that names it, never a
// silent end before it.
TEST(LogReaderTest, MissingSegmentIsAnErrorNamingIt) {
  TempDir dir;
  uint64_t last = 0;
  size_t before_last = 0;
  const std::string node = WriteSegmentedLog(dir.path(), &last, &before_last);
  auto all = ReadAll(node, kDb, nullptr);
  Lsn first_of_2 = 0;
  for (const LogRecord& r : all) {
    if (r.segment_index == 2 && first_of_2 == 0) first_of_2 = r.header.lsn;
  }
  ASSERT_EQ(::unlink(SegmentPath(node, 2).c_str()), 0);
  ReadOutcome got = ReadUntilError(node);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  std::string m(got.status.message());
  EXPECT_NE(m.find("00000002.wal"), std::string::npos) << m;
  EXPECT_NE(m.find("missing"), std::string::npos) << m;
  EXPECT_NE(m.find(absl::StrCat("LSN ", first_of_2)), std::string::npos) << m;

  // The first segment missing: the log does not start at LSN 1.
  ASSERT_EQ(::unlink(SegmentPath(node, 1).c_str()), 0);
  got = ReadUntilError(node);
  EXPECT_EQ(got.records, 0u);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  m = std::string(got.status.message());
  EXPECT_NE(m.find("00000001.wal"), std::string::npos) << m;
  EXPECT_NE(m.find("LSN 1"), std::string::npos) << m;
}

// The first record of a one-segment log corrupt: the records after it were
// durable, so this is damage, not an empty log.
TEST(LogReaderTest, CorruptFirstRecordIsAnError) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 20, 40);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 20u);
  XorBytes(SegmentPath(node, 1), records[0].offset + 44, 8, 0x5a);
  const ReadOutcome got = ReadUntilError(node);
  EXPECT_EQ(got.records, 0u);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  ExpectNamesDamage(got.status, "00000001.wal", records[0].offset, 1);
}

// The last record of a full segment corrupt: nothing after it in that
// segment, but the next segment starts past it, so records were lost.
TEST(LogReaderTest, SegmentEndingBeforeTheNextSegmentsFirstLsnIsAnError) {
  TempDir dir;
  uint64_t last = 0;
  size_t before_last = 0;
  const std::string node = WriteSegmentedLog(dir.path(), &last, &before_last);
  auto all = ReadAll(node, kDb, nullptr);
  const LogRecord* last_of_1 = nullptr;
  for (const LogRecord& r : all) {
    if (r.segment_index == 1) last_of_1 = &r;
  }
  ASSERT_NE(last_of_1, nullptr);
  XorBytes(SegmentPath(node, 1), last_of_1->offset + kRecordHeaderBytes, 1, 1);
  const ReadOutcome got = ReadUntilError(node);
  EXPECT_EQ(got.records, last_of_1->header.lsn - 1);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  ExpectNamesDamage(got.status, "00000001.wal", last_of_1->offset,
                    last_of_1->header.lsn);
  EXPECT_NE(std::string(got.status.message()).find("00000002.wal"),
            std::string::npos)
      << got.status;
}

// A crash tore the tail of the log; the writer reopened it (cutting the
// tail) and went on in a new segment with the next LSN. Not damage: the
// log reads through, the torn bytes are counted as dropped.
TEST(LogReaderTest, TornTailFollowedByARestartIsNotDamage) {
  TempDir dir;
  const std::string node = WriteLog(dir.path(), 10, 40);
  auto records = ReadAll(node, kDb, nullptr);
  ASSERT_EQ(records.size(), 10u);
  const std::string path = SegmentPath(node, 1);
  std::string data = ReadFile(path);
  const uint64_t end = records.back().offset + EncodedRecordBytes(40);
  for (uint64_t i = records.back().offset + 20; i < end; ++i) data[i] = 'x';
  WriteFile(path, data);
  {
    auto writer = LogWriter::Open({.wal_dir = dir.path(), .database_id = kDb});
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 10; i < 15; ++i) {
      auto lsn = (*writer)->Commit(i, 10 * i, Payload(i, 40));
      ASSERT_TRUE(lsn.ok()) << lsn.status();
      EXPECT_EQ(*lsn, static_cast<Lsn>(i));
    }
  }
  LogReaderStats stats;
  auto got = ReadAll(node, kDb, nullptr, &stats);
  ASSERT_EQ(got.size(), 14u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].header.lsn, i + 1);
  }
  EXPECT_EQ(got.back().segment_index, 2u);
  EXPECT_GT(stats.dropped_bytes, 0u);
}

// A flush writes its blocks concurrently, so a crash can leave a record
// torn and later records of the same flush intact. They were never
// acknowledged (nothing of a flush is before its sync), and each record
// says the log was durable only up to before the flush: a torn tail. The
// log is built record by record (as a writer whose first flush took LSN 1
// and whose second took LSNs 2..20 would have), so no timing decides it.
TEST(LogReaderTest, RecordsOfTheTornFlushAfterTheTearAreATornTail) {
  TempDir dir;
  const std::string node = NodeDirectory(dir.path(), 0);
  std::filesystem::create_directories(node);
  std::string data(16 * kBlockBytes, '\0');
  EncodeSegmentHeader({.database_id = kDb,
                       .segment_index = 1,
                       .first_lsn = 1,
                       .segment_bytes = data.size()},
                      data.data());
  std::vector<uint64_t> offsets;
  uint64_t at = kSegmentHeaderBytes;
  for (Lsn lsn = 1; lsn <= 20; ++lsn) {
    offsets.push_back(at);
    const std::string payload = Payload(lsn, 40);
    EncodeRecord({.lsn = lsn,
                  .txn_id = lsn,
                  .commit_ts = 10 * lsn,
                  .durable_lsn = lsn == 1 ? Lsn{0} : Lsn{1}},
                 payload, data.data() + at);
    at += EncodedRecordBytes(payload.size());
  }
  const std::string path = SegmentPath(node, 1);
  WriteFile(path, data);
  ASSERT_EQ(ReadAll(node, kDb, nullptr).size(), 20u);
  XorBytes(path, offsets[4] + kRecordHeaderBytes, 1, 1);  // LSN 5
  ReadOutcome got = ReadUntilError(node);
  EXPECT_TRUE(got.status.ok()) << got.status;
  EXPECT_EQ(got.records, 4u);
  EXPECT_GT(got.stats.dropped_bytes, 15 * EncodedRecordBytes(40));
  // But LSN 1 was durable before LSN 2 was appended: losing it is damage.
  XorBytes(path, offsets[4] + kRecordHeaderBytes, 1, 1);
  XorBytes(path, offsets[0] + kRecordHeaderBytes, 1, 1);
  got = ReadUntilError(node);
  EXPECT_EQ(got.status.code(), absl::StatusCode::kDataLoss) << got.status;
  ExpectNamesDamage(got.status, "00000001.wal", offsets[0], 1);
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
    const DamagePolicy policy =
        iter % 2 == 0 ? DamagePolicy::kFail : DamagePolicy::kStopAtDamage;
    auto reader = LogReader::Open(node, kDb, policy);
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
