// Crash test: bank transfers with the WAL on in a child process, kill -9 at
// a random moment, recover (image + logs), and check that every transfer
// whose commit was acknowledged before the kill is present and that the
// bank is consistent (total unchanged, every balance = initial + history).
//
// The child appends each acknowledged transfer's seq to a side file with
// one write(2) right after Session::Call returned OK; the kernel keeps
// written bytes across a SIGKILL of the writer, so the file lists every
// acknowledged transfer except at most one per thread acknowledged just as
// the kill landed, and nothing unacknowledged.
//
// Modes: synchronous commits and early lock release with Call (1 node);
// pipelined acknowledgement (CallAsync, up to 64 outstanding per thread) at
// 2 and 4 nodes, one thread each, acknowledged by the cluster's durable
// watermark (txn/commit_watermark.h): a seq goes to the side file when its
// outcome is delivered, and the kill catches every node's log at its own
// point. Each round: a fresh log over the same image, kill -9 after a
// random 30-250 ms, recover, check. Rounds per test:
// STRAND_WAL_CRASH_ROUNDS (default 2-3 per algorithm: the short version
// ctest runs; the report's runs set it to 20+). Prints rounds, acknowledged
// transfers checked and losses.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/recovery.h"
#include "gtest/gtest.h"
#include "tests/engine/wal_bank.h"
#include "tests/wal/wal_test_util.h"

namespace strand::engine {
namespace {

using testing::WalBank;

constexpr std::string_view kChildFlag = "--wal_crash_child";

enum class Mode { kSynchronous, kEarlyLockRelease, kPipelined };

// The child: transfers until killed, on 2 threads (one per node with
// several nodes), each on a session of node thread % nodes.
int RunChild(const std::string& image, const std::string& wal_dir,
             const std::string& side_file, txn::CcAlgorithm algorithm,
             Mode mode, int nodes) {
  EngineOptions o = testing::WalBankOptions(algorithm, nodes);
  o.image_path = image;
  o.wal.dir = wal_dir;
  o.wal.early_lock_release = mode != Mode::kSynchronous;
  auto engine = Engine::Open(o);
  if (!engine.ok()) {
    std::cerr << "child: " << engine.status() << "\n";
    return 2;
  }
  auto bank = WalBank::Define(**engine, false);
  if (!bank.ok()) return 3;
  const int fd = ::open(side_file.c_str(),
                        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return 4;
  // Acknowledged: record it (one write, survives our SIGKILL).
  auto record = [fd](int64_t seq) {
    const std::string line = absl::StrCat(seq, "\n");
    if (::write(fd, line.data(), line.size()) !=
        static_cast<ssize_t>(line.size())) {
      std::_Exit(6);
    }
  };
  auto check = [](const absl::Status& s) {
    if (!s.ok() && !absl::IsAborted(s)) {
      std::cerr << "child: " << s << "\n";
      std::_Exit(7);
    }
  };
  const int threads = std::max(2, nodes);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto session = (*engine)->NewSession(t % nodes);
      if (!session.ok()) std::_Exit(5);
      (*session)->set_max_unacknowledged(64);
      std::mt19937_64 rng(::getpid() * 31 + t);
      for (int64_t i = 1;; ++i) {
        const int64_t seq = (int64_t{t} << 40) | i;
        const int64_t from = rng() % testing::kWalBankAccounts;
        const int64_t to = (from + 1 + rng() % 7) % testing::kWalBankAccounts;
        const int64_t amount = rng() % 40;
        if (mode != Mode::kPipelined) {
          absl::Status s = bank->Transfer(**session, from, to, amount, seq);
          check(s);
          if (s.ok()) record(seq);
          continue;
        }
        (*session)->CallAsync<bool>(
            bank->transfer,
            [&, seq](absl::StatusOr<bool> r) {
              check(r.status());
              if (r.ok()) record(seq);
            },
            from, to, amount, seq);
      }
    });
  }
  for (auto& t : workers) t.join();
  return 0;
}

struct CrashStats {
  int rounds = 0;
  int64_t acknowledged = 0;  // checked after recovery
  int64_t lost = 0;
  int64_t replayed = 0;
  uint64_t dropped_bytes = 0;
};

class WalCrashTest : public ::testing::TestWithParam<txn::CcAlgorithm> {
 protected:
  void SetUp() override {
    image_ = dir_.path() + "/bank.img";
    absl::Status s = testing::MakeWalBankImage(GetParam(), image_);
    ASSERT_TRUE(s.ok()) << s;
  }

  // One round: child runs, is killed after `kill_after`, we recover.
  void Round(int round, absl::Duration kill_after, Mode mode, int nodes,
             CrashStats* st) {
    const std::string wal_dir = absl::StrCat(dir_.path(), "/wal-", round);
    const std::string side = absl::StrCat(dir_.path(), "/acked-", round);
    const std::string algorithm(txn::CcAlgorithmName(GetParam()));
    const std::string mode_arg = absl::StrCat(static_cast<int>(mode));
    const std::string nodes_arg = absl::StrCat(nodes);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const char* argv[] = {
          "/proc/self/exe", kChildFlag.data(), image_.c_str(),
          wal_dir.c_str(),  side.c_str(),      algorithm.c_str(),
          mode_arg.c_str(), nodes_arg.c_str(), nullptr};
      ::execv("/proc/self/exe", const_cast<char* const*>(argv));
      std::_Exit(127);
    }
    absl::SleepFor(kill_after);
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the child exited by itself with status " << WEXITSTATUS(status);

    std::vector<int64_t> acked;
    {
      std::ifstream in(side);
      std::string line;
      while (std::getline(in, line)) {
        int64_t seq;
        ASSERT_TRUE(absl::SimpleAtoi(line, &seq)) << "side file: " << line;
        acked.push_back(seq);
      }
    }
    EngineOptions o = testing::WalBankOptions(GetParam());
    o.image_path = image_;
    o.recover_wal_dir = wal_dir;
    if (!std::filesystem::exists(wal::NodeDirectory(wal_dir, 0))) {
      // Killed before the log existed: nothing can have been acknowledged.
      ASSERT_TRUE(acked.empty());
      ++st->rounds;
      return;
    }
    auto engine = Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << "round " << round << ": " << engine.status();
    const RecoveryReport& report = *(*engine)->recovery_report();
    auto bank = WalBank::Define(**engine, false);
    ASSERT_TRUE(bank.ok());
    auto session = (*engine)->NewSession(0);
    ASSERT_TRUE(session.ok());
    EXPECT_EQ(bank->CheckConsistent(**session), "") << "round " << round;
    int64_t lost = 0;
    for (int64_t seq : acked) {
      auto has = bank->HasSeq(**session, seq);
      ASSERT_TRUE(has.ok()) << has.status();
      if (!*has) {
        ++lost;
        ADD_FAILURE() << "round " << round << ": acknowledged transfer " << seq
                      << " is missing after recovery";
      }
    }
    EXPECT_LE(static_cast<int64_t>(acked.size()),
              static_cast<int64_t>(report.records_replayed));
    ++st->rounds;
    st->acknowledged += static_cast<int64_t>(acked.size());
    st->lost += lost;
    st->replayed += static_cast<int64_t>(report.records_replayed);
    st->dropped_bytes += report.dropped_bytes;
  }

  void Run(int rounds, Mode mode, int nodes = 1) {
    CrashStats st;
    std::mt19937_64 rng(std::random_device{}());
    for (int r = 0; r < rounds; ++r) {
      const auto kill_after = absl::Milliseconds(30 + rng() % 220);
      Round(r, kill_after, mode, nodes, &st);
      if (HasFatalFailure()) return;
    }
    const char* const names[] = {"", " (early lock release)", " (pipelined)"};
    std::cout << "crash test " << txn::CcAlgorithmName(GetParam())
              << names[static_cast<int>(mode)] << ", " << nodes
              << " compute node(s): " << st.rounds << " kill -9 rounds, "
              << st.acknowledged << " acknowledged transfers checked, "
              << st.lost << " lost, " << st.replayed << " records replayed, "
              << st.dropped_bytes << " torn-tail bytes dropped\n";
    EXPECT_EQ(st.lost, 0);
  }

  wal::testing::TempDir dir_;
  std::string image_;
};

int RoundsFromEnv(int fallback) {
  const char* env = std::getenv("STRAND_WAL_CRASH_ROUNDS");
  int rounds;
  if (env != nullptr && absl::SimpleAtoi(env, &rounds) && rounds > 0) {
    return rounds;
  }
  return fallback;
}

TEST_P(WalCrashTest, KillNine) { Run(RoundsFromEnv(3), Mode::kSynchronous); }
TEST_P(WalCrashTest, KillNineEarlyLockRelease) {
  Run(RoundsFromEnv(2), Mode::kEarlyLockRelease);
}
TEST_P(WalCrashTest, KillNinePipelinedTwoNodes) {
  Run(RoundsFromEnv(2), Mode::kPipelined, 2);
}
TEST_P(WalCrashTest, KillNinePipelinedFourNodes) {
  Run(RoundsFromEnv(2), Mode::kPipelined, 4);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, WalCrashTest,
                         ::testing::ValuesIn(testing::kWalAlgorithms),
                         testing::WalAlgorithmName);

}  // namespace
}  // namespace strand::engine

int main(int argc, char** argv) {
  if (argc == 8 && std::string_view(argv[1]) == strand::engine::kChildFlag) {
    auto algorithm = strand::txn::ParseCcAlgorithm(argv[5]);
    int mode = 0, nodes = 0;
    if (!algorithm.ok() || !absl::SimpleAtoi(argv[6], &mode) ||
        !absl::SimpleAtoi(argv[7], &nodes)) {
      return 9;
    }
    return strand::engine::RunChild(argv[2], argv[3], argv[4], *algorithm,
                                    static_cast<strand::engine::Mode>(mode),
                                    nodes);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
