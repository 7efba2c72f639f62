// TPC-C crash test: the `tpcc` binary, in a child process, loads a small
// database (2 warehouses, fewer items and customers), checkpoints it, and
// runs the mix with the WAL on, writing acknowledged New-Orders to a side
// file (--acked_log, tpcc/acked_log.h). It is killed (SIGKILL) at a random
// moment after that checkpoint exists, or kills itself at a step of a later
// checkpoint (STRAND_CRASH_AT, engine/crash_point.h). The test recovers
// (engine/recovery.h) and checks that every acknowledged New-Order is there
// (its ORDER row, its NEW-ORDER row unless since delivered, its O_OL_CNT
// ORDER-LINE rows), and the consistency conditions 1-12 of clause 3.3.2
// (tpcc/consistency.h), which no half-applied transaction passes.
//
// Configurations: 1 node x 2 threads synchronous, with early lock release,
// and pipelined (tpcc's default; depth 1024 and 1) at 1, 2 and 4 nodes;
// 2 nodes synchronous; partitioned two-phase commit, pipelined and
// synchronous; periodic checkpoints with 1 MiB segments (so truncation
// deletes some), shared and partitioned; a kill at each checkpoint step;
// crash -> carry on -> crash cycles on one directory. Rounds cycle through
// 2PL, TO and OCC (partitioned: 2PL); per test: STRAND_TPCC_CRASH_ROUNDS
// (default 1 to 3: the short version ctest runs). Prints rounds,
// acknowledged New-Orders checked and losses.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/recovery.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "tests/wal/wal_test_util.h"
#include "tpcc/acked_check.h"
#include "tpcc/acked_log.h"
#include "tpcc/consistency.h"
#include "tpcc/schema.h"
#include "tpcc/tpcc_db.h"
#include "wal/checkpoint.h"
#include "wal/log_format.h"

namespace strand::tpcc {
namespace {

constexpr int kWarehouses = 2;
constexpr int kPoolMb = 1024;  // >= what tpcc needs for this scale
// The run and the recovery must agree on it; tpcc's default.
constexpr uint32_t kGclSize = 4096;

Scale CrashScale() {
  Scale s;
  s.items = 2000;
  s.customers = 60;
  return s;
}

struct Config {
  int compute_nodes = 1;
  int threads = 2;
  bool early_lock_release = false;
  int pipeline = -1;  // --wal_pipeline; -1: tpcc's default
  // --mode=partitioned with this --distributed_pct (2PL only); < 0: shared.
  int partitioned_distributed_pct = -1;
  // --checkpoint_interval_s (0: only the one after the load), with 1 MiB
  // segments when set.
  double checkpoint_interval_s = 0;
  // The child kills itself here (STRAND_CRASH_AT) instead of being killed
  // at a random moment.
  std::string crash_at = "";
  // Every round carries on from the previous round's directory.
  bool resume = false;
};

struct CrashStats {
  int rounds = 0;
  int killed_before_run = 0;  // no log yet: nothing acknowledged
  int64_t acknowledged = 0;   // New-Orders checked after recovery
  int64_t lost = 0;
  int64_t partial_records = 0;  // side-file tails cut by the kill
  int64_t replayed = 0;
  uint64_t dropped_bytes = 0;
  // Partitioned mode: prepared branches recovery replayed, and those it
  // found without a decision (presumed aborted).
  uint64_t prepared_committed = 0, prepared_in_doubt = 0;
  // Checkpoints: rounds that recovered from a checkpoint newer than the
  // first, and newer checkpoints passed over (unfinished ones).
  int from_later_checkpoint = 0;
  int checkpoints_passed_over = 0;
};

// Whether `wal_dir` holds a published checkpoint: a run is past its load.
bool HasCheckpoint(const std::string& wal_dir) {
  auto listed = wal::ListCheckpoints(wal_dir);
  if (!listed.ok()) return false;
  for (const wal::CheckpointEntry& e : *listed) {
    if (e.published) return true;
  }
  return false;
}

engine::EngineOptions RecoveryOptions(const Config& c, txn::CcAlgorithm cc) {
  engine::EngineOptions o;
  o.fabric.compute_nodes = c.compute_nodes;
  o.fabric.pool_bytes = uint64_t{kPoolMb} << 20;
  o.algorithm = cc;
  o.cc.gcl_size = kGclSize;
  // Many small replay batches: a batch boundary falls between a tuple's
  // insert and the index ops or updates that need its new address.
  o.recovery_batch_bytes = 64 << 10;
  return o;
}

class TpccCrashTest : public ::testing::Test {
 protected:
  // One round: run tpcc, kill it `kill_after` after its first checkpoint,
  // recover and check.
  void Round(int round, const Config& c, txn::CcAlgorithm cc,
             absl::Duration kill_after, CrashStats* st) {
    // Rounds that carry on share one directory and one side file.
    const std::string dir = c.resume
                                ? dir_.path() + "/carried-on"
                                : absl::StrCat(dir_.path(), "/round-", round);
    std::filesystem::create_directories(dir);
    const std::string wal_dir = dir + "/wal";
    const std::string acked = dir + "/acked";
    const std::string output = absl::StrCat(dir, "/tpcc-", round, ".out");

    std::vector<std::string> args = {
        STRAND_TPCC_BINARY,
        absl::StrCat("--warehouses=", kWarehouses),
        absl::StrCat("--compute_nodes=", c.compute_nodes),
        absl::StrCat("--threads=", c.threads),
        absl::StrCat("--items=", CrashScale().items),
        absl::StrCat("--customers=", CrashScale().customers),
        absl::StrCat("--pool_mb=", kPoolMb),
        absl::StrCat("--gcl_size=", kGclSize),
        absl::StrCat("--cc=", txn::CcAlgorithmName(cc)),
        "--wal=on",
        "--wal_dir=" + wal_dir,
        "--acked_log=" + acked,
        "--duration_s=3600",
        "--warmup_s=0",
        // Crash recovery, not speed: no wait for the pool to be committed.
        "--populate_memory=touch",
        absl::StrCat("--seed=", seed_),
    };
    if (c.early_lock_release) args.push_back("--wal_early_lock_release");
    if (c.pipeline >= 0) {
      args.push_back(absl::StrCat("--wal_pipeline=", c.pipeline));
    }
    if (c.partitioned_distributed_pct >= 0) {
      args.push_back("--mode=partitioned");
      args.push_back(
          absl::StrCat("--distributed_pct=", c.partitioned_distributed_pct));
    }
    if (c.checkpoint_interval_s > 0) {
      args.push_back(
          absl::StrCat("--checkpoint_interval_s=", c.checkpoint_interval_s));
      args.push_back("--wal_segment_mb=1");
    }
    const bool resuming = c.resume && HasCheckpoint(wal_dir);
    // Some carried-on runs are killed at any moment from their start, in
    // the middle of recovering the last one too.
    const bool anytime = resuming && round % 3 == 2;
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
      }
      if (!c.crash_at.empty()) {
        ::setenv("STRAND_CRASH_AT", c.crash_at.c_str(), 1);
      }
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    // Wait for the first checkpoint (published once complete), or the
    // carried-on run's recovery, then let the run go for `kill_after`, or
    // (a crash point) until it kills itself.
    const absl::Time deadline = absl::Now() + absl::Seconds(120);
    bool exited = false;
    int status = 0;
    auto started = [&] {
      if (anytime) return true;
      return resuming ? std::filesystem::exists(output) &&
                            absl::StrContains(wal::testing::ReadFile(output),
                                              "carrying on from the run")
                      : HasCheckpoint(wal_dir);
    };
    while (!started() && absl::Now() < deadline) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (!exited && !c.crash_at.empty()) {
      // It kills itself at the crash point; a run that never gets there
      // fails the round.
      const absl::Time crash_deadline = absl::Now() + absl::Seconds(60);
      while (::waitpid(pid, &status, WNOHANG) != pid) {
        if (absl::Now() > crash_deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          FAIL() << "round " << round << ": never reached " << c.crash_at
                 << ":\n"
                 << wal::testing::ReadFile(output);
        }
        absl::SleepFor(absl::Milliseconds(5));
      }
      exited = true;
    }
    if (!exited) {
      absl::SleepFor(kill_after);
      ASSERT_EQ(::kill(pid, SIGKILL), 0);
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    }
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": tpcc exited by itself with status "
        << WEXITSTATUS(status) << ":\n"
        << wal::testing::ReadFile(output);
    ASSERT_TRUE(HasCheckpoint(wal_dir))
        << "round " << round << ": no checkpoint within 120 s:\n"
        << wal::testing::ReadFile(output);

    AckedLogContents side;
    if (std::filesystem::exists(acked)) {
      auto read = ReadAckedLog(acked);
      ASSERT_TRUE(read.ok()) << read.status();
      side = *std::move(read);
    }
    ++st->rounds;
    st->partial_records += side.partial_tail_bytes > 0;
    if (!std::filesystem::exists(wal::NodeDirectory(wal_dir, 0))) {
      // Killed before the log was opened: nothing can be acknowledged.
      EXPECT_TRUE(side.records.empty());
      ++st->killed_before_run;
      return;
    }

    engine::EngineOptions o = RecoveryOptions(c, cc);
    o.recover_wal_dir = wal_dir;
    auto db = TpccDatabase::Open(o, CrashScale(), seed_,
                                 TpccDatabase::TablesAt::kOpen);
    ASSERT_TRUE(db.ok()) << "round " << round << ": " << db.status();
    engine::Engine& engine = (*db)->engine();
    const engine::RecoveryReport& report = *engine.recovery_report();
    auto checker = AckedNewOrderChecker::Register(engine, (*db)->tables());
    ASSERT_TRUE(checker.ok()) << checker.status();

    auto consistency = CheckConsistency(engine, kWarehouses, CrashScale());
    ASSERT_TRUE(consistency.ok()) << consistency.status();
    EXPECT_TRUE(consistency->ok())
        << "round " << round << " (" << txn::CcAlgorithmName(cc)
        << "): " << consistency->ToString();

    auto found = checker->Check(engine, side.records);
    ASSERT_TRUE(found.ok()) << found.status();
    for (const std::string& example : found->examples) {
      ADD_FAILURE() << "round " << round << " (" << txn::CcAlgorithmName(cc)
                    << "): acknowledged New-Order " << example;
    }
    const int64_t lost = found->lost;
    if (absl::StrContains(report.base_path, "checkpoint-00000001") &&
        !c.resume) {
      // From the load's checkpoint every acknowledged New-Order is a
      // replayed record (a later checkpoint holds some of them).
      EXPECT_LE(static_cast<int64_t>(side.records.size()),
                static_cast<int64_t>(report.records_replayed));
    }
    st->acknowledged += static_cast<int64_t>(side.records.size());
    st->lost += lost;
    st->replayed += static_cast<int64_t>(report.records_replayed);
    st->dropped_bytes += report.dropped_bytes;
    st->prepared_committed += report.two_phase.prepared_committed;
    st->prepared_in_doubt += report.two_phase.prepared_in_doubt;
    st->from_later_checkpoint +=
        !absl::StrContains(report.base_path, "checkpoint-00000001");
    st->checkpoints_passed_over +=
        static_cast<int>(report.bases_passed_over.size());
    for (const std::string& passed : report.bases_passed_over) {
      // Only a crash during a checkpoint leaves one behind: unfinished.
      EXPECT_TRUE(absl::StrContains(passed, "no manifest")) << passed;
    }
  }

  void Run(const std::string& name, int rounds, const Config& c,
           int kill_within_ms = 400) {
    CrashStats st;
    std::mt19937_64 rng(std::random_device{}());
    const txn::CcAlgorithm algorithms[] = {txn::CcAlgorithm::kTwoPhaseLocking,
                                           txn::CcAlgorithm::kTimestampOrdering,
                                           txn::CcAlgorithm::kOptimistic};
    // Partitioned mode runs 2PL only.
    const int algorithm_count = c.partitioned_distributed_pct >= 0 ? 1 : 3;
    for (int r = 0; r < rounds; ++r) {
      seed_ = 1 + rng() % 1000;
      const auto kill_after = absl::Milliseconds(20 + rng() % kill_within_ms);
      Round(r, c, algorithms[r % algorithm_count], kill_after, &st);
      if (HasFatalFailure()) return;
    }
    std::cout << "tpcc crash test " << name << " (" << c.compute_nodes
              << " compute node(s) x " << c.threads << " threads"
              << (c.early_lock_release ? ", early lock release" : "")
              << (c.pipeline > 0 || (c.pipeline < 0 && c.compute_nodes == 1)
                      ? ", pipelined acknowledgement"
                      : "")
              << (c.partitioned_distributed_pct >= 0
                      ? absl::StrCat(", partitioned, ",
                                     c.partitioned_distributed_pct,
                                     "% distributed")
                      : "")
              << (c.checkpoint_interval_s > 0
                      ? absl::StrCat(", checkpoints every ",
                                     c.checkpoint_interval_s, " s")
                      : "")
              << (c.crash_at.empty() ? ""
                                     : absl::StrCat(", killed at ", c.crash_at))
              << (c.resume ? ", each round carrying on from the last" : "")
              << "): " << st.rounds << " kill -9 rounds ("
              << st.killed_before_run << " before the log opened), "
              << st.acknowledged << " acknowledged New-Orders checked, "
              << st.lost << " lost, " << st.partial_records
              << " partial side-file records dropped, " << st.replayed
              << " log records replayed, " << st.dropped_bytes
              << " torn-tail bytes dropped";
    if (c.partitioned_distributed_pct >= 0) {
      std::cout << ", " << st.prepared_committed
                << " prepared branches committed, " << st.prepared_in_doubt
                << " in doubt (presumed aborted)";
      // Half the New-Orders are distributed: of 20 acknowledged ones, some
      // certainly were (a kill within the first few ms may leave fewer).
      if (st.acknowledged >= 20) {
        EXPECT_GT(st.prepared_committed, 0u)
            << "no distributed commit replayed";
      }
    }
    if (c.checkpoint_interval_s > 0) {
      std::cout << ", " << st.from_later_checkpoint
                << " recovered from a periodic checkpoint, "
                << st.checkpoints_passed_over
                << " unfinished checkpoints passed over";
    }
    std::cout << "\n";
    EXPECT_EQ(st.lost, 0);
  }

  wal::testing::TempDir dir_;
  uint64_t seed_ = 1;
};

int RoundsFromEnv(int fallback) {
  const char* env = std::getenv("STRAND_TPCC_CRASH_ROUNDS");
  int rounds;
  if (env != nullptr && absl::SimpleAtoi(env, &rounds) && rounds > 0) {
    return rounds;
  }
  return fallback;
}

TEST_F(TpccCrashTest, KillNineOneNodeTwoThreads) {
  Run("KillNineOneNodeTwoThreads", RoundsFromEnv(2), {1, 2, false, 0});
}

// tpcc's default with two nodes: pipelined, each acknowledgement waiting
// for the cluster's durable watermark; a kill catches each node's log at
// its own point.
TEST_F(TpccCrashTest, KillNineTwoNodes) {
  Run("KillNineTwoNodes", RoundsFromEnv(2), {2, 1, false, -1});
}

TEST_F(TpccCrashTest, KillNineFourNodes) {
  Run("KillNineFourNodes", RoundsFromEnv(1), {4, 1, false, -1});
}

// Every commit holds its latches until its own record is durable.
TEST_F(TpccCrashTest, KillNineTwoNodesSynchronous) {
  Run("KillNineTwoNodesSynchronous", RoundsFromEnv(1), {2, 1, false, 0});
}

TEST_F(TpccCrashTest, KillNineEarlyLockRelease) {
  Run("KillNineEarlyLockRelease", RoundsFromEnv(1), {1, 2, true, 0});
}

// tpcc's default with one node: pipelined acknowledgement, so New-Orders
// reach the side file only when a flush made them durable, while the
// threads run ahead of the log; a kill catches commits in memory that were
// never acknowledged.
TEST_F(TpccCrashTest, KillNinePipelined) {
  Run("KillNinePipelined", RoundsFromEnv(3), {1, 2, false, -1});
}

// A one-deep pipeline: the smallest window, most waits on a full pipeline.
TEST_F(TpccCrashTest, KillNinePipelinedDepthOne) {
  Run("KillNinePipelinedDepthOne", RoundsFromEnv(1), {1, 2, false, 1});
}

// Partitioned mode, two-phase commit across 2 nodes, half the New-Orders
// and Payments distributed. A kill takes both nodes of the in-process
// deployment at once, each caught somewhere in its roles: coordinator of
// its own terminals' transactions (before PREPARE, waiting for votes, its
// decision logged or not) and participant of the other node's (prepared,
// voted, committed or not). Recovery must replay exactly the branches
// whose decision is durable and, pipelined (the default), below the
// cluster's durable watermark (wal/log_merger.h): every acknowledged
// New-Order back, none half applied (the consistency conditions, which
// span warehouses through remote stock and customers).
TEST_F(TpccCrashTest, KillNinePartitionedTwoPhaseCommit) {
  Run("KillNinePartitionedTwoPhaseCommit", RoundsFromEnv(2),
      {2, 1, false, -1, 50});
}

// The same with forced prepare and decision records (--wal_pipeline=0).
TEST_F(TpccCrashTest, KillNinePartitionedSynchronous) {
  Run("KillNinePartitionedSynchronous", RoundsFromEnv(1), {2, 1, false, 0, 50});
}

// Checkpoints while the mix runs: killed at a random moment,
// shared and partitioned; recovery starts from the newest checkpoint.
TEST_F(TpccCrashTest, KillNineWithPeriodicCheckpoints) {
  Config c{.compute_nodes = 2, .threads = 1};
  c.checkpoint_interval_s = 0.3;
  Run("KillNineWithPeriodicCheckpoints", RoundsFromEnv(2), c, 1500);
}

TEST_F(TpccCrashTest, KillNinePartitionedWithPeriodicCheckpoints) {
  Config c{.compute_nodes = 2, .threads = 1, .partitioned_distributed_pct = 50};
  c.checkpoint_interval_s = 0.3;
  Run("KillNinePartitionedWithPeriodicCheckpoints", RoundsFromEnv(1), c, 1500);
}

// Killed at each step of a checkpoint taken while the mix runs (the steps
// of engine/checkpointer.h): @3 is the second periodic checkpoint, after a
// truncation; segments are first deleted by the third checkpoint.
class TpccCheckpointStepTest
    : public TpccCrashTest,
      public ::testing::WithParamInterface<std::tuple<std::string, bool>> {};

TEST_P(TpccCheckpointStepTest, KillNineAtCheckpointStep) {
  const auto& [point, partitioned] = GetParam();
  Config c{.compute_nodes = 2,
           .threads = 1,
           .partitioned_distributed_pct = partitioned ? 50 : -1};
  c.checkpoint_interval_s = 0.3;
  c.crash_at = point == "checkpoint.truncating" ? point + "@1" : point + "@3";
  Run(absl::StrCat("KillNineAtCheckpointStep ", point,
                   partitioned ? " partitioned" : " shared"),
      RoundsFromEnv(1), c);
}

INSTANTIATE_TEST_SUITE_P(
    Steps, TpccCheckpointStepTest,
    ::testing::Combine(::testing::Values("checkpoint.barrier",
                                         "checkpoint.copy",
                                         "checkpoint.before_manifest",
                                         "checkpoint.published",
                                         "checkpoint.truncating"),
                       ::testing::Bool()),
    [](const auto& info) {
      const std::string point = std::get<0>(info.param);
      return point.substr(point.find('.') + 1) +
             (std::get<1>(info.param) ? "_partitioned" : "_shared");
    });

// Crash -> carry on -> crash, round after round on one directory: each run
// recovers the last and appends to its logs and side file; every
// acknowledged New-Order of every run must be found each time.
TEST_F(TpccCrashTest, KillNineCarryOnCycles) {
  Config c{.compute_nodes = 2, .threads = 1};
  c.checkpoint_interval_s = 0.3;
  c.resume = true;
  Run("KillNineCarryOnCycles", RoundsFromEnv(3), c, 1500);
}

}  // namespace
}  // namespace strand::tpcc
