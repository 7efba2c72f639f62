#ifndef STRAND_TESTS_ENGINE_FAILOVER_BANK_H_
#define STRAND_TESTS_ENGINE_FAILOVER_BANK_H_

// The bank that the node failure tests run (node_failure_test.cc,
// forced_failure_test.cc): three compute nodes make transfers between 24
// accounts, with failover on (docs/design/node_failure.md). A transfer
// takes 2 from one account, gives 1 to another and 1 to its node's
// counter row, so the money stays constant across every row it writes,
// however the rows are spread over memory nodes. A test fails nodes; the
// fixture checks what a failure must leave: the balances and counters
// together hold the initial total (no transfer partly visible) and every
// node's counter is at least the number of its acknowledged transfers
// (none acknowledged is lost).

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/recovery.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/test_fabric.h"

namespace strand::engine {

// A deployment's concurrency control, and whether it logs.
struct FailoverConfig {
  txn::CcAlgorithm algorithm;
  bool log;
};

inline std::string FailoverConfigLabel(const FailoverConfig& config) {
  return absl::StrCat(txn::CcAlgorithmName(config.algorithm),
                      config.log ? "_log" : "_nolog");
}
inline std::string FailoverConfigName(
    const ::testing::TestParamInfo<FailoverConfig>& info) {
  return FailoverConfigLabel(info.param);
}

class FailoverBank : public ::testing::Test {
 protected:
  static constexpr int kNodes = 3;
  static constexpr int kAccounts = 24;
  static constexpr int64_t kInitialBalance = 1000;
  static constexpr int kThreadsPerNode = 2;
  // Short, so that a test runs many cycles. On verbs in the VM (a TCG
  // guest) a live node's heartbeat can miss 40 ms and the node be declared
  // failed without a failure injected: longer there.
  const absl::Duration kLease =
      testing::TestFabricKind() == rdma::FabricKind::kVerbs
          ? absl::Milliseconds(300)
          : absl::Milliseconds(40);
  // The survivors must commit again within this of the failure. On verbs
  // (the Soft-RoCE VM, STRAND_TEST_FABRIC=verbs) a retransmitted atomic is
  // now and then not answered and waits out the endpoint's 10-s completion
  // timeout (VerbsEndpoint::kCompletionTimeout), failover or not: the
  // bound there leaves room for one such stall.
  const absl::Duration kRecoveryBound =
      testing::TestFabricKind() == rdma::FabricKind::kVerbs ? absl::Seconds(25)
                                                            : absl::Seconds(5);

  using Txn = txn::Txn;

  // Opens the engine and creates the bank (from a test's SetUp).
  void Open(const FailoverConfig& config, int memory_nodes = 1) {
    config_ = config;
    EngineOptions o = testing::TxnTestOptions(
        {config.algorithm, cc::Protocol::kSelcc, kNodes});
    o.fabric = testing::TestFabricOptions(memory_nodes, kNodes);
    testing::EnableTestFailover(o, kLease);
    o.retry.max_retries = 50;
    if (config.log) {
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
    scratch_ = *engine_->CreateTable("scratch", *schema);
    scratch_by_id_ = *engine_->CreateIndex("scratch_by_id", scratch_, 8, true);
    Register();
    CreateMore();
    if (::testing::Test::HasFatalFailure()) return;
    auto s = engine_->NewSession(0);
    ASSERT_TRUE(s.ok());
    for (int64_t id = 0; id < kAccounts; ++id) {
      ASSERT_TRUE(
          (*s)->Call(create_, accounts_, by_id_, id, kInitialBalance).ok());
    }
    // Through node 1, whose allocator starts at memory node 1: with two
    // memory nodes a transfer's lines span both (rdma/block_allocator.h).
    auto one = engine_->NewSession(1);
    ASSERT_TRUE(one.ok());
    for (int64_t n = 0; n < kNodes; ++n) {
      ASSERT_TRUE((*one)->Call(create_, counters_, counter_by_id_, n, 0).ok());
    }
  }
  // A test's own tables, indexes and procedures, made by Open before the
  // first session.
  virtual void CreateMore() {}

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
                        if (absl::Status s = txn.AddIndexEntry(
                                index, testing::AccountKey(id), *addr);
                            !s.ok()) {
                          return s;
                        }
                        return true;
                      }));
    const txn::TableId accounts = accounts_, counters = counters_;
    const txn::IndexId by_id = by_id_, counter_by_id = counter_by_id_;
    auto add = [](Txn& txn, txn::TableId table, txn::IndexId index, int64_t id,
                  int64_t delta) -> absl::Status {
      auto a = txn.Lookup(index, testing::AccountKey(id));
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
              if (auto s = add(txn, accounts, by_id, from, -2); !s.ok())
                return s;
              if (auto s = add(txn, accounts, by_id, to, 1); !s.ok()) return s;
              if (auto s = add(txn, counters, counter_by_id, node, 1);
                  !s.ok()) {
                return s;
              }
              return true;
            }));
    // Inserts scratch row `id` if it is not there, else deletes it (its
    // slot then waits in the epoch manager, txn/epoch_manager.h).
    const txn::TableId scratch = scratch_;
    const txn::IndexId scratch_by_id = scratch_by_id_;
    const storage::Schema* scratch_schema = *engine_->schema(scratch_);
    churn_ = *engine_->RegisterProcedure(
        "churn",
        std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
            [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
              const std::string key = testing::AccountKey(id);
              auto found = txn.Lookup(scratch_by_id, key);
              if (found.ok()) {
                if (absl::Status s =
                        txn.RemoveIndexEntry(scratch_by_id, key, *found);
                    !s.ok()) {
                  return s;
                }
                if (absl::Status s = txn.Delete(scratch, *found); !s.ok()) {
                  return s;
                }
                return false;
              }
              if (!absl::IsNotFound(found.status())) {
                return found.status();
              }
              storage::TupleBuffer t(*scratch_schema);
              t.SetInt(0, id);
              t.SetInt(1, 0);
              auto added = txn.Insert(scratch, t);
              if (!added.ok()) return added.status();
              if (absl::Status s =
                      txn.AddIndexEntry(scratch_by_id, key, *added);
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
                            auto a = txn.Lookup(by_id, testing::AccountKey(id));
                            if (!a.ok()) return a.status();
                            auto t = txn.Read(accounts, *a);
                            if (!t.ok()) return t.status();
                            out[0] += t->GetInt(1);
                          }
                          for (int64_t n = 0; n < kNodes; ++n) {
                            auto a = txn.Lookup(counter_by_id,
                                                testing::AccountKey(n));
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

  // The money in `all` (read_all_'s): balances and counters. Every
  // committed transfer keeps it at kAccounts * kInitialBalance.
  static int64_t Total(const std::vector<int64_t>& all) {
    int64_t total = 0;
    for (int64_t v : all) total += v;
    return total;
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
    EXPECT_EQ(Total(*all), kAccounts * kInitialBalance)
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

  // Right after `victim` failed: every other node commits again within
  // kRecoveryBound. Returns them.
  std::vector<int> ExpectSurvivorsProgress(int victim) {
    std::vector<int> survivors;
    std::vector<int64_t> before;
    for (int n = 0; n < kNodes; ++n) {
      if (n == victim) continue;
      survivors.push_back(n);
      before.push_back(acked_[n].load());
    }
    ExpectProgress(survivors, before);
    return survivors;
  }

  // Stops a failed node's workers (within kRecoveryBound: none waits for
  // an answer its crash lost), rejoins it and waits until it commits again.
  void Rejoin(int node) {
    const absl::Time stopping = absl::Now();
    StopNode(node);
    EXPECT_LT(absl::Now() - stopping, kRecoveryBound)
        << "a thread of failed node " << node << " kept waiting";
    const absl::Status rejoined = engine_->RejoinNode(node);
    ASSERT_TRUE(rejoined.ok()) << rejoined;
    StartNode(node);
    ExpectProgress({node}, {acked_[node].load()});
  }

  // With a log: closes the engine and opens a fresh pool recovered from
  // its checkpoint (if any) and logs, with the bank's procedures.
  void Recover() {
    StopAll();
    engine_.reset();
    EngineOptions o = options_;
    o.failover = FailoverOptions();
    o.wal = WalOptions();
    o.recover_wal_dir = dir_.string();
    auto recovered = Engine::Open(o);
    ASSERT_TRUE(recovered.ok()) << recovered.status();
    engine_ = *std::move(recovered);
    ASSERT_NE(engine_->recovery_report(), nullptr);
    accounts_ = *engine_->OpenTable("accounts");
    by_id_ = *engine_->OpenIndex("accounts_by_id");
    counters_ = *engine_->OpenTable("counters");
    counter_by_id_ = *engine_->OpenIndex("counters_by_id");
    scratch_ = *engine_->OpenTable("scratch");
    scratch_by_id_ = *engine_->OpenIndex("scratch_by_id");
    Register();
  }

  // Right after `victim` failed: the survivors commit again and it is
  // reclaimed, both within kRecoveryBound; a survivor's read checks; it
  // rejoins. Its workers' calls fail from the failure on; they stop
  // without cleanup having any effect. One waiting for an invalidation
  // reply that its crash lost stops waiting at once (FailNode fences every
  // peer in its cache), not after SelccManager::kReplyGrace: Rejoin
  // bounds it.
  void SurviveAndRejoin(int victim) {
    const absl::Time failed = absl::Now();
    stop_[victim] = true;  // joined by Rejoin
    const std::vector<int> survivors = ExpectSurvivorsProgress(victim);
    ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
    EXPECT_LT(absl::Now() - failed, kRecoveryBound);
    Check(survivors.front());
    Rejoin(victim);
  }

  // With a log: the checkpoint ExpectRecoveredAsSeen recovers from (it
  // then replays every log record since).
  void TakeCheckpoint() {
    auto taken = engine_->Checkpoint();
    ASSERT_TRUE(taken.ok()) << taken.status();
  }

  // With a log, once every node stopped: a fresh pool recovered from the
  // checkpoint and the logs holds exactly what compute node 0 reads now,
  // every balance and counter (the failed nodes' adopted records replayed
  // once, their excluded ones dropped).
  void ExpectRecoveredAsSeen() {
    auto session = engine_->NewSession(0);
    ASSERT_TRUE(session.ok()) << session.status();
    auto seen = ReadAll(**session, [] {});
    ASSERT_TRUE(seen.ok()) << seen.status();
    session->reset();
    Recover();
    if (::testing::Test::HasFatalFailure()) return;
    auto recovered_session = engine_->NewSession(0);
    ASSERT_TRUE(recovered_session.ok()) << recovered_session.status();
    auto recovered = ReadAll(**recovered_session, [] {});
    ASSERT_TRUE(recovered.ok()) << recovered.status();
    EXPECT_EQ(*recovered, *seen)
        << "the recovered balances and counters differ from what the "
           "survivors saw";
  }

  FailoverConfig config_;
  std::filesystem::path dir_;
  EngineOptions options_;
  std::unique_ptr<Engine> engine_;
  txn::TableId accounts_ = 0, counters_ = 0;
  txn::IndexId by_id_ = 0, counter_by_id_ = 0;
  txn::TableId scratch_ = 0;
  txn::IndexId scratch_by_id_ = 0;
  Procedure<bool(txn::TableId, txn::IndexId, int64_t, int64_t)> create_;
  Procedure<bool(int64_t, int64_t, int64_t)> transfer_;
  Procedure<std::vector<int64_t>()> read_all_;
  Procedure<bool()> hold_;
  Procedure<bool(int64_t)> churn_;
  absl::Notification holding_, release_;  // hold_'s
  std::vector<std::thread> threads_[kNodes];
  std::atomic<bool> stop_[kNodes];
  std::atomic<int64_t> acked_[kNodes] = {};
  std::atomic<int> seed_{1};
};

}  // namespace strand::engine

#endif  // STRAND_TESTS_ENGINE_FAILOVER_BANK_H_
