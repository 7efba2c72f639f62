// Checkpoints on disk (wal/checkpoint.h): a checkpoint exists once its
// manifest does, and nothing damaged passes for one.

#include "wal/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "wal/durable_file.h"

namespace strand::wal {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// A published checkpoint of two files.
CheckpointManifest Publish(const std::string& wal_dir, uint64_t sequence) {
  const std::string dir = CheckpointDirectory(wal_dir, sequence);
  std::filesystem::create_directories(dir);
  CheckpointManifest m;
  m.sequence = sequence;
  m.database_id = 77;
  m.start_ts = 100 * sequence;
  m.end_ts = 100 * sequence + 5;
  m.compute_nodes = 2;
  m.kind = "periodic";
  m.memory_nodes = 1;
  m.region_bytes = 1 << 30;
  m.chunk_bytes = 1 << 20;
  m.gcl_size = 4096;
  for (const char* name : {"catalog", "table-1"}) {
    auto file = SyncedFileWriter::Create(dir + "/" + name);
    EXPECT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE(file->Append(std::string(3000, name[0])).ok());
    EXPECT_TRUE(file->Finish().ok());
    m.files.push_back({name, file->bytes(), file->crc()});
  }
  EXPECT_TRUE(PublishCheckpoint(dir, m).ok());
  return m;
}

TEST(CheckpointTest, PublishedManifestReadsBackAndVerifies) {
  TempDir dir;
  const CheckpointManifest m = Publish(dir.path(), 3);
  const std::string cdir = CheckpointDirectory(dir.path(), 3);
  auto read = ReadManifest(cdir);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, m);
  EXPECT_TRUE(VerifyCheckpoint(cdir, *read).ok());
}

// Newest first; a directory without a manifest is listed as unfinished.
TEST(CheckpointTest, ListsNewestFirstAndUnfinishedOnes) {
  TempDir dir;
  Publish(dir.path(), 1);
  Publish(dir.path(), 2);
  std::filesystem::create_directories(CheckpointDirectory(dir.path(), 3));
  auto listed = ListCheckpoints(dir.path());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].sequence, 3u);
  EXPECT_FALSE((*listed)[0].published);
  EXPECT_EQ((*listed)[1].sequence, 2u);
  EXPECT_TRUE((*listed)[1].published);
  EXPECT_EQ(ReadManifest((*listed)[0].dir).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(DeleteCheckpoint((*listed)[1].dir).ok());
  listed = ListCheckpoints(dir.path());
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u);
}

TEST(CheckpointTest, DamageIsDataLossNamingTheFile) {
  TempDir dir;
  const CheckpointManifest m = Publish(dir.path(), 1);
  const std::string cdir = CheckpointDirectory(dir.path(), 1);
  const std::string table = cdir + "/table-1";
  const std::string original = ReadFile(table);

  // A flipped byte: the CRC.
  std::string data = original;
  data[1234] ^= 1;
  WriteFile(table, data);
  absl::Status s = VerifyCheckpoint(cdir, m);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("table-1"), std::string::npos) << s;
  EXPECT_NE(s.message().find("CRC"), std::string::npos) << s;

  // Cut short: the size.
  WriteFile(table, original.substr(0, 1000));
  s = VerifyCheckpoint(cdir, m);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("1000 bytes"), std::string::npos) << s;

  // Gone.
  ASSERT_EQ(::unlink(table.c_str()), 0);
  s = VerifyCheckpoint(cdir, m);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("table-1"), std::string::npos) << s;
  WriteFile(table, original);
  EXPECT_TRUE(VerifyCheckpoint(cdir, m).ok());

  // The manifest itself: any byte of it, and cut short.
  const std::string manifest = ReadFile(ManifestPath(cdir));
  for (size_t i = 0; i < manifest.size(); i += 7) {
    std::string bad = manifest;
    bad[i] = bad[i] == '1' ? '2' : '1';
    WriteFile(ManifestPath(cdir), bad);
    auto read = ReadManifest(cdir);
    EXPECT_FALSE(read.ok()) << "byte " << i;
    if (!read.ok()) {
      EXPECT_EQ(read.status().code(), absl::StatusCode::kDataLoss)
          << read.status();
    }
  }
  WriteFile(ManifestPath(cdir), manifest.substr(0, manifest.size() / 2));
  EXPECT_EQ(ReadManifest(cdir).status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace strand::wal
