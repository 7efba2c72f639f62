// A compute node fails and the others keep committing
// (docs/design/node_failure.md), in one process (Engine::FailNode).
//
// Bank transfers run on three compute nodes; each transfer also adds one
// to its node's counter row. In each of kCycles cycles one node is failed
// at a random moment (holding latches on dirty lines, committing, being
// asked for a line, evicting: whatever it was doing), the survivors must
// commit again within a bound, and then:
//   - the total of the balances is exact (no transfer is partly visible);
//   - every node's counter is at least the number of its acknowledged
//     transfers (every acknowledged one is visible, the failed node's
//     included);
// then the node rejoins with an empty cache and takes work again. With a
// log, the reclaimer logs the failed node's undurable commits again.
// A paused node (heartbeats stop, threads go on) is declared failed and
// fenced, changes nothing after that, and its commits fail promptly.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/node_reclaim.h"
#include "engine/recovery.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;

constexpr int kNodes = 3;
constexpr int kAccounts = 24;
constexpr int64_t kInitialBalance = 1000;
constexpr int kThreadsPerNode = 2;
constexpr int kCycles = 20;
constexpr absl::Duration kLease = absl::Milliseconds(40);
// The survivors must commit again within this of the failure.
constexpr absl::Duration kRecoveryBound = absl::Seconds(5);

struct Config {
  txn::CcAlgorithm algorithm;
  bool log;
};

std::string ConfigName(const ::testing::TestParamInfo<Config>& info) {
  return absl::StrCat(txn::CcAlgorithmName(info.param.algorithm),
                      info.param.log ? "_log" : "_nolog");
}

class NodeFailureTest : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    EngineOptions o = testing::TxnTestOptions(
        {GetParam().algorithm, cc::Protocol::kSelcc, kNodes});
    o.failover.enabled = true;
    o.failover.node_lease = kLease;
    o.failover.redo_ring_bytes = 1 << 20;
    o.retry.max_retries = 50;
    if (GetParam().log) {
      // A parameterized test's name has a '/': one directory, not two
      // (TearDown removes it).
      std::string name =
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
      std::replace(name.begin(), name.end(), '/', '_');
      dir_ = std::filesystem::path(::testing::TempDir()) /
             absl::StrCat("node_failure_", getpid(), "_", name);
      std::filesystem::remove_all(dir_);
      o.wal.dir = dir_.string();
      o.wal.early_lock_release = true;
      o.wal.io_mode = wal::LogIoMode::kBuffered;
      // Wide enough that a crash often finds commits appended but not
      // durable: what the reclaimer must log again.
      o.wal.group_commit_window = absl::Milliseconds(2);
      // Each rejoin starts a segment: 20 of the default 64 MiB would
      // fill /tmp with 1.3 GB per test.
      o.wal.segment_bytes = 1 << 20;
    }
    options_ = o;
    auto engine = Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"value", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    accounts_ = *engine_->CreateTable("accounts", *schema);
    by_id_ = *engine_->CreateIndex("accounts_by_id", accounts_, 8, true);
    counters_ = *engine_->CreateTable("counters", *schema);
    counter_by_id_ =
        *engine_->CreateIndex("counters_by_id", counters_, 8, true);
    Register();
    auto s = engine_->NewSession(0);
    ASSERT_TRUE(s.ok());
    for (int64_t id = 0; id < kAccounts; ++id) {
      ASSERT_TRUE(
          (*s)->Call(create_, accounts_, by_id_, id, kInitialBalance).ok());
    }
    for (int64_t n = 0; n < kNodes; ++n) {
      ASSERT_TRUE((*s)->Call(create_, counters_, counter_by_id_, n, 0).ok());
    }
  }
  void TearDown() override {
    StopAll();
    engine_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Register() {
    const storage::Schema* schema = *engine_->schema(accounts_);
    create_ = *engine_->RegisterProcedure(
        "create", std::function<absl::StatusOr<bool>(
                      Txn&, txn::TableId, txn::IndexId, int64_t, int64_t)>(
                      [=](Txn& txn, txn::TableId table, txn::IndexId index,
                          int64_t id, int64_t value) -> absl::StatusOr<bool> {
                        storage::TupleBuffer t(*schema);
                        t.SetInt(0, id);
                        t.SetInt(1, value);
                        auto addr = txn.Insert(table, t);
                        if (!addr.ok()) return addr.status();
                        if (absl::Status s =
                                txn.AddIndexEntry(index, AccountKey(id), *addr);
                            !s.ok()) {
                          return s;
                        }
                        return true;
                      }));
    const txn::TableId accounts = accounts_, counters = counters_;
    const txn::IndexId by_id = by_id_, counter_by_id = counter_by_id_;
    auto add = [](Txn& txn, txn::TableId table, txn::IndexId index, int64_t id,
                  int64_t delta) -> absl::Status {
      auto a = txn.Lookup(index, AccountKey(id));
      if (!a.ok()) return a.status();
      auto t = txn.Modify(table, *a);
      if (!t.ok()) return t.status();
      (*t)->SetInt(1, (*t)->view().GetInt(1) + delta);
      return absl::OkStatus();
    };
    transfer_ = *engine_->RegisterProcedure(
        "transfer",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, int64_t)>(
            [=](Txn& txn, int64_t from, int64_t to,
                int64_t node) -> absl::StatusOr<bool> {
              if (auto s = add(txn, accounts, by_id, from, -1); !s.ok())
                return s;
              if (auto s = add(txn, accounts, by_id, to, 1); !s.ok()) return s;
              if (auto s = add(txn, counters, counter_by_id, node, 1);
                  !s.ok()) {
                return s;
              }
              return true;
            }));
    // Modifies account 0, then waits (holding its latch) for release_.
    hold_ = *engine_->RegisterProcedure(
        "hold", std::function<absl::StatusOr<bool>(Txn&)>(
                    [=, this](Txn& txn) -> absl::StatusOr<bool> {
                      if (auto s = add(txn, accounts, by_id, 0, 0); !s.ok()) {
                        return s;
                      }
                      holding_.Notify();
                      release_.WaitForNotification();
                      return true;
                    }));
    // The total of the balances, then every counter: kAccounts + kNodes.
    read_all_ = *engine_->RegisterProcedure(
        "read_all", std::function<absl::StatusOr<std::vector<int64_t>>(Txn&)>(
                        [=](Txn& txn) -> absl::StatusOr<std::vector<int64_t>> {
                          std::vector<int64_t> out(1 + kNodes, 0);
                          for (int64_t id = 0; id < kAccounts; ++id) {
                            auto a = txn.Lookup(by_id, AccountKey(id));
                            if (!a.ok()) return a.status();
                            auto t = txn.Read(accounts, *a);
                            if (!t.ok()) return t.status();
                            out[0] += t->GetInt(1);
                          }
                          for (int64_t n = 0; n < kNodes; ++n) {
                            auto a = txn.Lookup(counter_by_id, AccountKey(n));
                            if (!a.ok()) return a.status();
                            auto t = txn.Read(counters, *a);
                            if (!t.ok()) return t.status();
                            out[1 + n] = t->GetInt(1);
                          }
                          return out;
                        }));
  }

  // Node `node`'s workers: transfers until told to stop or their node
  // fails; acked_[node] counts the acknowledged ones.
  void StartNode(int node) {
    stop_[node] = false;
    for (int i = 0; i < kThreadsPerNode; ++i) {
      // Opened here, not in the thread: the node may be failed again
      // before a thread that is slow to start would open it.
      auto opened = engine_->NewSession(node);
      ASSERT_TRUE(opened.ok()) << opened.status();
      threads_[node].emplace_back([this, node, i,
                                   session = *std::move(opened)] {
        std::mt19937_64 rng(node * 100 + i + seed_++);
        while (!stop_[node].load()) {
          const int64_t from = rng() % kAccounts;
          const int64_t to = (from + 1 + rng() % (kAccounts - 1)) % kAccounts;
          auto r = session->Call(transfer_, from, to, int64_t{node});
          if (r.ok()) acked_[node].fetch_add(1);
        }
      });
    }
  }
  void StopNode(int node) {
    stop_[node] = true;
    for (std::thread& t : threads_[node]) t.join();
    threads_[node].clear();
  }
  void StopAll() {
    for (int n = 0; n < kNodes; ++n) StopNode(n);
  }

  // read_all_ through `session`, calling before() ahead of each attempt.
  // It takes every row while transfers go on, so under 2PL no-wait it may
  // run out of retries: it starts again (not a failover matter), within a
  // bound.
  template <typename Before>
  absl::StatusOr<std::vector<int64_t>> ReadAll(Session& session,
                                               Before before) {
    absl::StatusOr<std::vector<int64_t>> all;
    const absl::Time deadline = absl::Now() + kRecoveryBound;
    do {
      before();
      all = session.Call(read_all_);
    } while (!all.ok() && absl::IsAborted(all.status()) &&
             absl::Now() < deadline);
    return all;
  }

  // Reads every balance and counter through a survivor and checks them.
  void Check(int survivor) {
    auto session = engine_->NewSession(survivor);
    ASSERT_TRUE(session.ok()) << session.status();
    // Acknowledged before the read began: visible to it.
    int64_t acked[kNodes];
    auto all = ReadAll(**session, [&] {
      for (int n = 0; n < kNodes; ++n) acked[n] = acked_[n].load();
    });
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ((*all)[0], kAccounts * kInitialBalance)
        << "a transfer is partly visible";
    for (int n = 0; n < kNodes; ++n) {
      EXPECT_GE((*all)[1 + n], acked[n])
          << "an acknowledged transfer of node " << n << " is lost";
    }
  }

  // Waits until every node in `nodes` acknowledged more than `from`.
  void ExpectProgress(const std::vector<int>& nodes,
                      const std::vector<int64_t>& from) {
    const absl::Time deadline = absl::Now() + kRecoveryBound;
    for (size_t i = 0; i < nodes.size(); ++i) {
      while (acked_[nodes[i]].load() <= from[i] && absl::Now() < deadline) {
        absl::SleepFor(absl::Milliseconds(1));
      }
      EXPECT_GT(acked_[nodes[i]].load(), from[i])
          << "survivor " << nodes[i] << " committed nothing within "
          << kRecoveryBound << " of the failure";
    }
  }

  // Stops a failed node's workers (within kRecoveryBound: none waits for
  // an answer its crash lost), rejoins it and waits until it commits again.
  void Rejoin(int node) {
    const absl::Time stopping = absl::Now();
    StopNode(node);
    EXPECT_LT(absl::Now() - stopping, kRecoveryBound)
        << "a thread of failed node " << node << " kept waiting";
    ASSERT_TRUE(engine_->RejoinNode(node).ok());
    StartNode(node);
    ExpectProgress({node}, {acked_[node].load()});
  }

  std::filesystem::path dir_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  txn::TableId accounts_ = 0, counters_ = 0;
  txn::IndexId by_id_ = 0, counter_by_id_ = 0;
  Procedure<bool(txn::TableId, txn::IndexId, int64_t, int64_t)> create_;
  Procedure<bool(int64_t, int64_t, int64_t)> transfer_;
  Procedure<std::vector<int64_t>()> read_all_;
  Procedure<bool()> hold_;
  absl::Notification holding_, release_;  // hold_'s
  std::vector<std::thread> threads_[kNodes];
  std::atomic<bool> stop_[kNodes];
  std::atomic<int64_t> acked_[kNodes] = {};
  std::atomic<int> seed_{1};
};

TEST_P(NodeFailureTest, SurvivorsCommitAndNothingAcknowledgedIsLost) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(42);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
    const int victim = static_cast<int>(rng() % kNodes);
    ASSERT_TRUE(engine_->FailNode(victim).ok());
    const absl::Time failed = absl::Now();
    stop_[victim] = true;  // joined below, once the survivors are checked
    std::vector<int> survivors;
    std::vector<int64_t> before;
    for (int n = 0; n < kNodes; ++n) {
      if (n == victim) continue;
      survivors.push_back(n);
      before.push_back(acked_[n].load());
    }
    ExpectProgress(survivors, before);
    ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
    EXPECT_LT(absl::Now() - failed, kRecoveryBound);
    Check(survivors.front());
    // Its workers' calls fail from now on; they stop without cleanup
    // having any effect. One waiting for an invalidation reply that its
    // crash lost stops waiting at once (FailNode fences every peer in its
    // cache), not after SelccManager::kReplyGrace: Rejoin bounds it.
    Rejoin(victim);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  const std::vector<ReclaimReport> reports = engine_->ReclaimReports();
  EXPECT_EQ(reports.size(), static_cast<size_t>(kCycles));
  uint64_t relogged = 0, held = 0;
  for (const ReclaimReport& r : reports) {
    relogged += r.records_relogged;
    held += r.latches.holder_fields + r.latches.reader_bits;
  }
  if (GetParam().log) {
    EXPECT_GT(relogged, 0u);
  }
  EXPECT_GT(held + engine_->CacheStats().failed_peer_steals, 0u)
      << "no failed node ever held a line a survivor took over";
}

TEST_P(NodeFailureTest, APausedNodeChangesNothingOnceDeclaredFailed) {
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  auto paused = engine_->NewSession(1);
  ASSERT_TRUE(paused.ok()) << paused.status();
  absl::SleepFor(absl::Milliseconds(30));
  ASSERT_TRUE(engine_->PauseHeartbeats(1).ok());
  ASSERT_TRUE(engine_->WaitReclaimed(1, absl::Seconds(10)).ok());
  // Its threads go on trying; from here on nothing of theirs lands.
  auto session = engine_->NewSession(0);
  ASSERT_TRUE(session.ok());
  auto seen = ReadAll(**session, [] {});
  ASSERT_TRUE(seen.ok()) << seen.status();
  absl::SleepFor(absl::Milliseconds(100));
  ASSERT_TRUE(engine_->ResumeHeartbeats(1).ok());
  absl::SleepFor(absl::Milliseconds(100));
  auto later = ReadAll(**session, [] {});
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ((*later)[2], (*seen)[2]) << "the fenced node changed its counter";
  EXPECT_EQ((*later)[0], kAccounts * kInitialBalance);
  EXPECT_GT((*later)[1], (*seen)[1]) << "node 0 stopped committing";
  // Its commits fail as soon as its monitor tells it it was declared
  // failed, not after wal.ack_timeout (30 s): its workers stop promptly,
  // and so does a call of its own, which changes nothing.
  const absl::Time stopping = absl::Now();
  StopNode(1);
  EXPECT_LT(absl::Now() - stopping, kRecoveryBound)
      << "a worker of the fenced node kept waiting";
  const absl::Time calling = absl::Now();
  auto call = (*paused)->Call(transfer_, int64_t{0}, int64_t{1}, int64_t{1});
  EXPECT_LT(absl::Now() - calling, 25 * kLease);
  EXPECT_EQ(call.status().code(), absl::StatusCode::kUnavailable)
      << call.status();
  paused->reset();
  auto last = ReadAll(**session, [] {});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)[2], (*seen)[2]) << "the fenced node changed its counter";
  EXPECT_EQ((*last)[0], kAccounts * kInitialBalance);
  // It can come back as any failed node does.
  ASSERT_TRUE(engine_->FailNode(1).ok());
  ASSERT_TRUE(engine_->RejoinNode(1).ok());
  StartNode(1);
  ExpectProgress({1}, {acked_[1].load()});
  StopAll();
  Check(0);
}

// With a log: failures, one of them while a checkpoint is being taken (its
// start timestamp then falls in the range the failed node's reclaimer
// excludes), then the engine closes and a fresh pool recovers from that
// checkpoint and the logs: the reclaimers' adopted records replayed, the
// failed nodes' excluded ones dropped, every acknowledged transfer there
// and the total exact.
TEST_P(NodeFailureTest, RecoveryAfterFailuresLosesNothingAcknowledged) {
  if (!GetParam().log) GTEST_SKIP() << "recovery needs a log";
  for (int n = 0; n < kNodes; ++n) StartNode(n);
  std::mt19937_64 rng(7);
  constexpr int kRecoveryCycles = 6;
  for (int cycle = 0; cycle < kRecoveryCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
    const bool checkpoint = cycle == kRecoveryCycles / 2;
    // Compute node 0 takes the checkpoints: not the victim then.
    const int victim = static_cast<int>(checkpoint ? 1 + rng() % (kNodes - 1)
                                                   : rng() % kNodes);
    ASSERT_TRUE(engine_->FailNode(victim).ok());
    stop_[victim] = true;
    if (checkpoint) {
      // Waits for the cluster's durable mark, which the failed node holds
      // back until it is reclaimed.
      auto taken = engine_->Checkpoint();
      ASSERT_TRUE(taken.ok()) << taken.status();
    }
    ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
    Rejoin(victim);
    if (HasFatalFailure()) return;
  }
  StopAll();
  Check(0);
  engine_.reset();

  EngineOptions o = options_;
  o.failover = FailoverOptions();
  o.wal = WalOptions();
  o.recover_wal_dir = dir_.string();
  auto recovered = Engine::Open(o);
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  engine_ = *std::move(recovered);
  ASSERT_NE(engine_->recovery_report(), nullptr);
  EXPECT_EQ(engine_->recovery_report()->base_kind, "checkpoint");
  accounts_ = *engine_->OpenTable("accounts");
  by_id_ = *engine_->OpenIndex("accounts_by_id");
  counters_ = *engine_->OpenTable("counters");
  counter_by_id_ = *engine_->OpenIndex("counters_by_id");
  Register();
  Check(0);
}

// A conflict on a failed node may never clear (a latch that its aborted
// transaction could not release once fenced): its sessions' calls fail
// Unavailable at the first conflict instead of retrying. Here the latch is
// held by a transaction of the node that stays open across the failure.
TEST_P(NodeFailureTest, AFailedNodesCallsStopAtTheirFirstConflict) {
  if (GetParam().algorithm != txn::CcAlgorithm::kTwoPhaseLocking) {
    GTEST_SKIP() << "2PL's latches conflict at once";
  }
  constexpr int kVictim = 1;
  {
    auto holder = engine_->NewSession(kVictim);
    auto other = engine_->NewSession(kVictim);
    ASSERT_TRUE(holder.ok() && other.ok());
    std::thread holding_thread([&] { (void)(*holder)->Call(hold_); });
    holding_.WaitForNotification();
    ASSERT_TRUE(engine_->FailNode(kVictim).ok());
    const absl::Time start = absl::Now();
    auto r =
        (*other)->Call(transfer_, int64_t{0}, int64_t{1}, int64_t{kVictim});
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
    EXPECT_LT(absl::Now() - start, absl::Seconds(2));
    release_.Notify();
    holding_thread.join();
  }
  ASSERT_TRUE(engine_->RejoinNode(kVictim).ok());
  Check(0);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, NodeFailureTest,
    ::testing::Values(Config{txn::CcAlgorithm::kTwoPhaseLocking, false},
                      Config{txn::CcAlgorithm::kTwoPhaseLocking, true},
                      Config{txn::CcAlgorithm::kOptimistic, true},
                      Config{txn::CcAlgorithm::kTimestampOrdering, true}),
    ConfigName);

}  // namespace
}  // namespace strand::engine
