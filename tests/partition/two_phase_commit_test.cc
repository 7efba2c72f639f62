// Partitioned mode through the public Engine API: transfers between
// accounts owned by different compute nodes keep the exact total while
// every step of two-phase commit is made to fail (a no vote, a lost work,
// prepare or vote message, an abort before PREPARE), on both protocols;
// and each protocol switch changes the counters as it should.

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "base/thread_ledger.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "partition/fragment.h"
#include "tests/testing/test_fabric.h"
#include "tests/wal/wal_test_util.h"
#include "wal/log_merger.h"

namespace strand::partition {
namespace {

using txn::Txn;

constexpr int kNodes = 3;
constexpr int kPartitions = 6;
constexpr int kAccounts = 36;
constexpr int64_t kInitialBalance = 1000;

int64_t PartitionOf(int64_t account) { return account % kPartitions + 1; }

std::string Key(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }

struct AdjustIn {
  int64_t id;
  int64_t delta;
};
struct Balance {
  int64_t balance;
};
struct IdIn {
  int64_t id;
};

class Bank {
 public:
  explicit Bank(engine::EngineOptions options) {
    auto engine = engine::Engine::Open(options);
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return;
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"balance", storage::ColumnType::kInt64}});
    accounts_ = *engine_->CreateTable("accounts", *schema);
    by_id_ = *engine_->CreateIndex("accounts_by_id", accounts_, 8, true);
    const storage::Schema* s = *engine_->schema(accounts_);
    const txn::TableId accounts = accounts_;
    const txn::IndexId by_id = by_id_;
    // Adds delta to an account of this node; refuses an overdraft without
    // aborting (the procedure decides).
    adjust_ = *engine_->RegisterFragment<AdjustIn, Balance>(
        "adjust", [=](Txn& txn, const AdjustIn& in) -> absl::StatusOr<Balance> {
          auto a = txn.Lookup(by_id, Key(in.id));
          if (!a.ok()) return a.status();
          auto t = txn.Modify(accounts, *a);
          if (!t.ok()) return t.status();
          const int64_t b = (*t)->view().GetInt(1) + in.delta;
          if (b < 0) return absl::FailedPreconditionError("overdraft");
          (*t)->SetInt(1, b);
          return Balance{b};
        });
    read_ = *engine_->RegisterFragment<IdIn, Balance>(
        "read", [=](Txn& txn, const IdIn& in) -> absl::StatusOr<Balance> {
          auto a = txn.Lookup(by_id, Key(in.id));
          if (!a.ok()) return a.status();
          auto t = txn.Read(accounts, *a);
          if (!t.ok()) return t.status();
          return Balance{t->GetInt(1)};
        });
    create_ = *engine_->RegisterFragment<AdjustIn, Balance>(
        "create", [=](Txn& txn, const AdjustIn& in) -> absl::StatusOr<Balance> {
          storage::TupleBuffer t(*s);
          t.SetInt(0, in.id);
          t.SetInt(1, in.delta);
          auto a = txn.Insert(accounts, t);
          if (!a.ok()) return a.status();
          if (absl::Status added = txn.AddIndexEntry(by_id, Key(in.id), *a);
              !added.ok()) {
            return added;
          }
          return Balance{in.delta};
        });
    const auto adjust = adjust_;
    const auto read = read_;
    const auto create = create_;
    transfer_ = *engine_->RegisterProcedure(
        "transfer",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, int64_t)>(
            [=](Txn& txn, int64_t from, int64_t to,
                int64_t amount) -> absl::StatusOr<bool> {
              absl::StatusOr<Balance> a, b;
              FragmentBatch batch(txn);
              batch.Add(PartitionOf(from), adjust, AdjustIn{from, -amount}, &a);
              batch.Add(PartitionOf(to), adjust, AdjustIn{to, amount}, &b);
              if (absl::Status s = batch.Run(); !s.ok()) return s;
              if (!a.ok())
                return txn.UserAbort(std::string(a.status().message()));
              if (!b.ok())
                return txn.UserAbort(std::string(b.status().message()));
              return true;
            }));
    // Reads one account remotely and writes nothing: a read-only branch.
    peek_ = *engine_->RegisterProcedure(
        "peek", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                    [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
                      auto b = RunAt(txn, PartitionOf(id), read, IdIn{id});
                      if (!b.ok()) return b.status();
                      return b->balance;
                    }));
    total_ = *engine_->RegisterProcedure(
        "total", std::function<absl::StatusOr<int64_t>(Txn&)>(
                     [=](Txn& txn) -> absl::StatusOr<int64_t> {
                       std::vector<absl::StatusOr<Balance>> out(kAccounts);
                       FragmentBatch batch(txn);
                       for (int64_t id = 0; id < kAccounts; ++id) {
                         batch.Add(PartitionOf(id), read, IdIn{id}, &out[id]);
                       }
                       if (absl::Status s = batch.Run(); !s.ok()) return s;
                       int64_t sum = 0;
                       for (const auto& b : out) {
                         if (!b.ok()) return b.status();
                         if (b->balance < 0) {
                           return absl::InternalError("negative balance");
                         }
                         sum += b->balance;
                       }
                       return sum;
                     }));
    open_ = *engine_->RegisterProcedure(
        "open", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                    [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                      auto b = RunAt(txn, PartitionOf(id), create,
                                     AdjustIn{id, kInitialBalance});
                      if (!b.ok()) return b.status();
                      return true;
                    }));
  }

  engine::Engine& engine() { return *engine_; }
  bool ok() const { return engine_ != nullptr; }
  std::unique_ptr<engine::Session> Session(rdma::ComputeNodeId node) {
    auto s = engine_->NewSession(node);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }
  void Open() {
    auto s = Session(0);
    for (int64_t id = 0; id < kAccounts; ++id) {
      auto r = s->Call<bool>(open_, id);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }
  absl::StatusOr<int64_t> Total(engine::Session& s) {
    return s.Call<int64_t>(total_);
  }

  engine::ProcedureId transfer_ = 0, peek_ = 0, total_ = 0, open_ = 0;

 private:
  std::unique_ptr<engine::Engine> engine_;
  txn::TableId accounts_ = 0;
  txn::IndexId by_id_ = 0;
  Fragment<AdjustIn, Balance> adjust_, create_;
  Fragment<IdIn, Balance> read_;
};

engine::EngineOptions Options(cc::Protocol protocol) {
  engine::EngineOptions o;
  o.mode = engine::EngineMode::kPartitioned;
  o.partitioned.partitions = kPartitions;
  o.fabric = testing::TestFabricOptions(1, kNodes);
  o.cc.protocol = protocol;
  o.cc.gcl_size = 256;
  o.retry.max_retries = 100000;
  return o;
}

class TwoPhaseCommitTest : public ::testing::TestWithParam<cc::Protocol> {};

// Random transfers from every node's sessions while a share of the votes
// say no, messages get lost (the coordinator's bounded wait turns them into
// aborts, reported as Unavailable) and coordinators abort before PREPARE:
// the total never moves and no account goes negative, and both commits and
// every kind of failure happened.
TEST_P(TwoPhaseCommitTest, TransfersStayAtomicUnderInjectedFailures) {
  engine::EngineOptions o = Options(GetParam());
  o.partitioned.testing_faults.no_vote = 0.05;
  o.partitioned.testing_faults.drop_message = 0.02;
  o.partitioned.testing_faults.abort_before_prepare = 0.05;
  o.partitioned.reply_timeout = absl::Milliseconds(50);
  Bank bank(o);
  ASSERT_TRUE(bank.ok());
  bank.Open();
  constexpr int kSessionsPerNode = 2;
  constexpr int kTransfers = 150;
  // Unavailable: a lost message ran out the coordinator's wait, and the
  // transaction was rolled back everywhere (not retried: a node that does
  // not answer may be gone).
  std::atomic<int> committed{0}, refused{0}, unanswered{0}, errors{0};
  std::vector<std::thread> threads;
  for (int n = 0; n < kNodes; ++n) {
    for (int t = 0; t < kSessionsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        auto s = bank.Session(n);
        std::mt19937_64 rng(n * 100 + t);
        for (int i = 0; i < kTransfers; ++i) {
          const int64_t from = rng() % kAccounts;
          int64_t to = rng() % kAccounts;
          if (to == from) to = (to + 1) % kAccounts;
          auto r = s->Call<bool>(bank.transfer_, from, to,
                                 static_cast<int64_t>(rng() % 400));
          if (r.ok()) {
            ++committed;
          } else if (absl::IsAborted(r.status()) &&
                     r.status().message().find("overdraft") !=
                         std::string::npos) {
            ++refused;
          } else if (absl::IsUnavailable(r.status())) {
            ++unanswered;
          } else {
            ++errors;
            ADD_FAILURE() << r.status();
          }
        }
      });
    }
  }
  for (auto& th : threads) th.join();
  // The audit runs under the same injected losses: it tries again when a
  // message of its own was lost.
  auto s = bank.Session(1);
  absl::StatusOr<int64_t> total = bank.Total(*s);
  for (int i = 0; i < 100 && absl::IsUnavailable(total.status()); ++i) {
    total = bank.Total(*s);
  }
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_EQ(*total, kAccounts * kInitialBalance);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_GT(committed.load(), 0);
  const PartitionStats stats = bank.engine().PartitionStats();
  EXPECT_GT(stats.distributed, 0u);
  EXPECT_GT(stats.aborted, 0u) << "no injected failure hit";
  EXPECT_GT(unanswered.load(), 0) << "no lost message hit";
  EXPECT_GT(stats.aborts, 0u);
}

INSTANTIATE_TEST_SUITE_P(Protocols, TwoPhaseCommitTest,
                         ::testing::Values(cc::Protocol::kSelcc,
                                           cc::Protocol::kSel),
                         [](const auto& info) {
                           return std::string(cc::ProtocolName(info.param));
                         });

// Partitions 1-2 are node 0's, 3-4 node 1's, 5-6 node 2's: accounts 0, 1
// and 6 live on node 0, 2 on node 1, 4 on node 2.
class SwitchesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(std::filesystem::exists("/tmp")); }

  // One call of `proc` from node 0 after a warm-up call, and what it did.
  template <typename Result, typename... Args>
  PartitionStats Measure(Bank& bank, engine::ProcedureId proc, Args... args) {
    auto s = bank.Session(0);
    EXPECT_TRUE(s->Call<Result>(proc, args...).ok());
    const PartitionStats before = bank.engine().PartitionStats();
    const ThreadLedger::Snapshot ledger = ThreadLedger::Mine().Read();
    EXPECT_TRUE(s->Call<Result>(proc, args...).ok());
    model_ns_ = (ThreadLedger::Mine().Read() - ledger).fabric_model_ns;
    return bank.engine().PartitionStats() - before;
  }

  engine::EngineOptions WithLog(const std::string& dir) {
    engine::EngineOptions o = Options(cc::Protocol::kSelcc);
    o.wal.dir = dir;
    o.wal.io_mode = wal::LogIoMode::kBuffered;
    return o;
  }

  int64_t model_ns_ = 0;
};

TEST_F(SwitchesTest, StrongProtocolCounts) {
  const wal::testing::TempDir temp;  // removes the preallocated segments
  const std::string& dir = temp.path();
  Bank bank(WithLog(dir));
  ASSERT_TRUE(bank.ok());
  bank.Open();
  // Distributed: one participant (node 1) prepares (forced), the decision
  // is forced, one COMMIT.
  PartitionStats d =
      Measure<bool>(bank, bank.transfer_, int64_t{0}, int64_t{2}, int64_t{5});
  EXPECT_EQ(d.distributed, 1u);
  EXPECT_EQ(d.participants, 1u);
  EXPECT_EQ(d.prepares, 1u);
  EXPECT_EQ(d.votes, 1u);
  EXPECT_EQ(d.commits, 1u);
  EXPECT_EQ(d.forced_writes, 2u);
  // Local: one phase, no 2PC message, nothing forced by 2PC.
  PartitionStats l =
      Measure<bool>(bank, bank.transfer_, int64_t{0}, int64_t{6}, int64_t{5});
  EXPECT_EQ(l.transactions, 1u);
  EXPECT_EQ(l.distributed, 0u);
  EXPECT_EQ(l.prepares + l.votes + l.commits + l.forced_writes, 0u);
  // Read-only participant: votes read-only, no second phase, no log.
  PartitionStats r = Measure<int64_t>(bank, bank.peek_, int64_t{2});
  EXPECT_EQ(r.read_only_votes, 1u);
  EXPECT_EQ(r.commits, 0u);
  EXPECT_EQ(r.forced_writes, 0u);
}

TEST_F(SwitchesTest, NoOnePhaseGivesLocalTransactionsAPrepareRound) {
  const wal::testing::TempDir temp;  // removes the preallocated segments
  const std::string& dir = temp.path();
  engine::EngineOptions o = WithLog(dir);
  o.partitioned.one_phase_local = false;
  Bank bank(o);
  ASSERT_TRUE(bank.ok());
  bank.Open();
  PartitionStats l =
      Measure<bool>(bank, bank.transfer_, int64_t{0}, int64_t{6}, int64_t{5});
  EXPECT_EQ(l.distributed, 0u);
  EXPECT_EQ(l.forced_writes, 2u);  // its prepare, then its decision
}

TEST_F(SwitchesTest, NoReadOnlyVoteMakesReadersPrepareAndCommit) {
  const wal::testing::TempDir temp;  // removes the preallocated segments
  const std::string& dir = temp.path();
  engine::EngineOptions o = WithLog(dir);
  o.partitioned.read_only_vote = false;
  Bank bank(o);
  ASSERT_TRUE(bank.ok());
  bank.Open();
  PartitionStats r = Measure<int64_t>(bank, bank.peek_, int64_t{2});
  EXPECT_EQ(r.read_only_votes, 0u);
  EXPECT_EQ(r.commits, 1u);
  EXPECT_EQ(r.forced_writes, 2u);
}

// Two participants (nodes 1 and 2): parallel PREPAREs cost one exchange,
// serial ones two, in the cost model's charges (deterministic: the
// loopback's inline delivery charges the calling thread).
TEST_F(SwitchesTest, SerialPreparesDoNotOverlap) {
  if (testing::TestFabricKind() != rdma::FabricKind::kLoopback) {
    GTEST_SKIP() << "counts the loopback's modeled charges";
  }
  constexpr int64_t kRtt = 200'000;
  int64_t model[2];
  for (bool parallel : {true, false}) {
    engine::EngineOptions o = Options(cc::Protocol::kSelcc);
    o.fabric.rtt_ns = kRtt;
    o.partitioned.parallel_prepare = parallel;
    Bank bank(o);
    ASSERT_TRUE(bank.ok());
    bank.Open();
    PartitionStats d =
        Measure<bool>(bank, bank.transfer_, int64_t{2}, int64_t{4}, int64_t{5});
    EXPECT_EQ(d.participants, 2u);
    model[parallel ? 0 : 1] = model_ns_;
  }
  // One more exchange: rtt/2 out and rtt/2 back.
  EXPECT_GE(model[1] - model[0], kRtt * 9 / 10)
      << "parallel " << model[0] << " ns, serial " << model[1] << " ns";
}

// The logs distributed commits leave: every prepared branch resolves to
// committed redo (nothing in doubt) and each decision is counted. The load
// made 24 of them (accounts of nodes 1 and 2 opened from node 0).
TEST_F(SwitchesTest, LogsResolveToCommittedBranches) {
  const wal::testing::TempDir temp;  // removes the preallocated segments
  const std::string& dir = temp.path();
  uint64_t database_id = 0;
  {
    Bank bank(WithLog(dir));
    ASSERT_TRUE(bank.ok());
    bank.Open();
    auto s = bank.Session(0);
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(
          s->Call<bool>(bank.transfer_, int64_t{0}, int64_t{2}, int64_t{1})
              .ok());
    }
    database_id = bank.engine().database_id();
  }
  auto merger = wal::LogMerger::Open(dir, database_id);
  ASSERT_TRUE(merger.ok()) << merger.status();
  EXPECT_EQ((*merger)->two_phase_stats().distributed_commits, 34u);
  EXPECT_EQ((*merger)->two_phase_stats().prepared_committed, 34u);
  EXPECT_EQ((*merger)->two_phase_stats().prepared_in_doubt, 0u);
}

}  // namespace
}  // namespace strand::partition
