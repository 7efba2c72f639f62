// The strand_recover binary as a user meets it: exit status 0 (recovered),
// 1 (recovery failed: a damaged log names the node, segment, offset and
// LSN), 2 (misuse, found before any replay); the layout taken from the
// image; --json printing one JSON object and nothing else on stdout.
// STRAND_RECOVER_BINARY in the environment runs another build's binary.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"

namespace strand::engine {
namespace {

using testing::WalBank;
using testing::WalBankOptions;
using wal::testing::ReadFile;
using wal::testing::WriteFile;

constexpr auto kAlgorithm = txn::CcAlgorithm::kTwoPhaseLocking;
constexpr int kTransfers = 200;  // 3+ segments of 16 KiB

struct ToolRun {
  int exit_status = -1;
  std::string out, err;
};

class StrandRecoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    image_ = dir_.path() + "/bank.img";
    wal_dir_ = dir_.path() + "/wal";
    ASSERT_TRUE(testing::MakeWalBankImage(kAlgorithm, image_).ok());
    EngineOptions o = WalBankOptions(kAlgorithm);
    o.image_path = image_;
    o.wal.dir = wal_dir_;
    o.wal.segment_bytes = 16 << 10;  // several segments
    auto engine = Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    database_id_ = (*engine)->database_id();
    auto bank = WalBank::Define(**engine, false);
    ASSERT_TRUE(bank.ok());
    auto session = (*engine)->NewSession(0);
    ASSERT_TRUE(session.ok());
    for (int seq = 1; seq <= kTransfers; ++seq) {
      ASSERT_TRUE(
          bank->Transfer(**session, seq % 11, 11 + seq % 13, 1, seq).ok());
    }
  }

  std::string node_dir() const { return wal::NodeDirectory(wal_dir_, 0); }
  // The commit records (not the flushes' kWatermark records).
  std::vector<wal::LogRecord> Records() const {
    std::vector<wal::LogRecord> records =
        wal::testing::ReadAll(node_dir(), database_id_, nullptr);
    std::erase_if(records, [](const wal::LogRecord& r) {
      return r.header.type == wal::RecordType::kWatermark;
    });
    return records;
  }
  // Flips 8 payload bytes of `r`.
  void Damage(const wal::LogRecord& r) const {
    const std::string path = wal::SegmentPath(node_dir(), r.segment_index);
    std::string data = ReadFile(path);
    for (int i = 0; i < 8; ++i) {
      data[r.offset + wal::kRecordHeaderBytes + i] ^= 0x3c;
    }
    WriteFile(path, data);
  }

  ToolRun Run(std::vector<std::string> args) const {
    const char* env = std::getenv("STRAND_RECOVER_BINARY");
    const std::string binary =
        env != nullptr && *env != '\0' ? env : STRAND_RECOVER_BINARY;
    const std::string out = dir_.path() + "/stdout";
    const std::string err = dir_.path() + "/stderr";
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, STDOUT_FILENO);
      ::dup2(e, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ToolRun run;
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.out = ReadFile(out);
    run.err = ReadFile(err);
    return run;
  }
  ToolRun Recover(std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"--image=" + image_,
                                     "--wal_dir=" + wal_dir_};
    args.insert(args.end(), more.begin(), more.end());
    return Run(args);
  }

  wal::testing::TempDir dir_;
  std::string image_, wal_dir_;
  uint64_t database_id_ = 0;
};

void ExpectContains(const std::string& text,
                    const std::vector<std::string>& parts) {
  for (const std::string& part : parts) {
    EXPECT_TRUE(absl::StrContains(text, part))
        << "'" << part << "' not in: " << text;
  }
}

// With --json, stdout is exactly one JSON object, which says what build
// made it; the layout (here GCLs of 1024 bytes, pool of the test fabric)
// comes from the image.
TEST_F(StrandRecoverTest, RecoversACleanLogAndJsonIsAllOfStdout) {
  ToolRun run =
      Recover({"--json", "--out_image=" + dir_.path() + "/recovered.img"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  ASSERT_FALSE(run.out.empty());
  EXPECT_EQ(run.out.front(), '{') << run.out;
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1) << run.out;
  EXPECT_EQ(run.out[run.out.size() - 2], '}') << run.out;
  ExpectContains(run.out, {absl::StrCat("\"records_replayed\":", kTransfers),
                           "\"gcl_size\":1024", "\"data_lost\":false",
                           "{\"program\":\"strand_recover\",\"version\":",
                           "\"commit\":", "\"fabric\":\"loopback\""});
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/recovered.img"));
  // The human report went to stderr.
  ExpectContains(run.err, {"recovery:"});
}

TEST_F(StrandRecoverTest, DamageInTheMiddleIsAnErrorUnlessAllowed) {
  const std::vector<wal::LogRecord> records = Records();
  ASSERT_EQ(records.size(), static_cast<size_t>(kTransfers));
  ASSERT_GE(records.back().segment_index, 3u);
  const wal::LogRecord& victim = records[kTransfers / 2 - 1];
  Damage(victim);
  ToolRun run = Recover();
  EXPECT_EQ(run.exit_status, 1) << run.out << run.err;
  ExpectContains(
      run.err,
      {"node-0", wal::SegmentPath("", victim.segment_index).substr(1),
       absl::StrCat("offset ", victim.offset),
       absl::StrCat("LSN ", victim.header.lsn), "--allow_log_data_loss"});
  EXPECT_TRUE(run.out.empty()) << run.out;

  run = Recover({"--allow_log_data_loss", "--json"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  ExpectContains(run.out,
                 {"\"data_lost\":true",
                  absl::StrCat("\"records_replayed\":", kTransfers / 2 - 1)});
  ExpectContains(run.err, {"DATA LOST", "WARNING"});
}

TEST_F(StrandRecoverTest, CorruptFirstRecordIsAnError) {
  const std::vector<wal::LogRecord> records = Records();
  Damage(records.front());
  const ToolRun run = Recover();
  EXPECT_EQ(run.exit_status, 1) << run.out << run.err;
  ExpectContains(run.err,
                 {"node-0", "00000001.wal",
                  absl::StrCat("offset ", records.front().offset), "LSN 1 "});
}

TEST_F(StrandRecoverTest, MissingSegmentIsAnErrorNamingIt) {
  ASSERT_GE(Records().back().segment_index, 3u);
  ASSERT_EQ(::unlink(wal::SegmentPath(node_dir(), 2).c_str()), 0);
  const ToolRun run = Recover();
  EXPECT_EQ(run.exit_status, 1) << run.out << run.err;
  ExpectContains(run.err, {"node-0", "00000002.wal", "missing", "LSN "});
}

// The GCL size is the image's; a contradicting --gcl_size is misuse.
TEST_F(StrandRecoverTest, GclSizeComesFromTheImage) {
  ToolRun run = Recover({"--gcl_size=4096"});
  EXPECT_EQ(run.exit_status, 2) << run.out << run.err;
  ExpectContains(run.err, {"--gcl_size=4096", "1024"});
  run = Recover({"--gcl_size=1024"});
  EXPECT_EQ(run.exit_status, 0) << run.err;
  run = Recover({"--pool_mb=128"});
  EXPECT_EQ(run.exit_status, 2) << run.out << run.err;
  ExpectContains(run.err, {"--pool_mb=128", "64"});
}

// Misuse is found before any replay: with a damaged log (which the replay
// would report with status 1) the command still fails with status 2.
TEST_F(StrandRecoverTest, MisuseIsFoundBeforeTheReplay) {
  Damage(Records()[10]);
  const std::string file = dir_.path() + "/a-file";
  WriteFile(file, "x");
  ToolRun run = Recover({"--out_image=" + file + "/recovered.img"});
  EXPECT_EQ(run.exit_status, 2) << run.out << run.err;
  ExpectContains(run.err, {"--out_image"});
  EXPECT_FALSE(absl::StrContains(run.err, "recovery:")) << run.err;

  const std::string empty = dir_.path() + "/empty";
  std::filesystem::create_directories(empty);
  run = Run({"--image=" + image_, "--wal_dir=" + empty});
  EXPECT_EQ(run.exit_status, 2) << run.out << run.err;
  ExpectContains(run.err, {"holds no log"});
  run = Run({"--image=" + image_});
  EXPECT_EQ(run.exit_status, 2) << run.err;
  ExpectContains(run.err, {"--wal_dir"});
  run = Run({"--wal_dir=" + wal_dir_});
  EXPECT_EQ(run.exit_status, 2) << run.err;
  ExpectContains(run.err, {"--image"});
}

}  // namespace
}  // namespace strand::engine
