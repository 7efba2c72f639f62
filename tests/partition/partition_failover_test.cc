// A compute node fails in partitioned mode (docs/design/node_failure.md,
// "Status"), at a forced point of two-phase commit: as coordinator before
// its decision, as coordinator after its decision is logged and published
// but before any participant heard it, as participant before its vote,
// and as participant after its yes vote, both before its live
// coordinator's decision (the reclaim is over before the coordinator goes
// on, so the reclaimer decides first: abort) and after it (COMMIT is lost).
//
// Three nodes run bank transfers between accounts of every node; each
// transfer also adds one to its coordinator's counter row (on the
// coordinator's own partition). In each of kCycles cycles the victim is
// failed (Engine::FailNode) the first time it reaches the point (after a
// random number of passes), and then:
//   - the survivors' branches of its transactions are decided (the reclaim
//     finishes within a bound), and survivors commit transfers that do not
//     touch its partitions, while those that do fail Unavailable, counted;
//   - after it rejoins, the total of the balances is exact (no transfer is
//     partly visible) and every node's counter is at least the number of
//     its acknowledged transfers (none acknowledged is lost).

// With the resolution disabled (partition/node.cc's ResolveBranchesOf
// deciding every branch abort) the after-decision case loses the victim's
// acknowledged transfers' remote halves, and the total check fails; with
// no prepared ring records (partition/node.cc's OnPrepare), both
// after-vote cases lose the victim's halves of transfers that commit.

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/engine.h"
#include "engine/node_reclaim.h"
#include "engine/recovery.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "partition/fragment.h"
#include "partition/partition_map.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/test_fabric.h"

namespace strand::partition {
namespace {

using txn::Txn;

constexpr int kNodes = 3;
constexpr int kPartitions = 6;
constexpr int kAccounts = 24;
constexpr int64_t kInitialBalance = 1000;
constexpr int kCycles = 20;
constexpr absl::Duration kLease = absl::Milliseconds(40);
// Reclaim, and a survivor's commit after it, within this of the failure.
constexpr absl::Duration kRecoveryBound = absl::Seconds(10);

int64_t PartitionOf(int64_t account) { return account % kPartitions + 1; }
std::string Key(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }
int64_t CounterId(int node) { return 1000 + node; }

struct AdjustIn {
  int64_t id;
  int64_t delta;
};
struct Value {
  int64_t value;
};
struct IdIn {
  int64_t id;
};

// Fails the armed node when it reaches the armed point (the hook runs on
// the thread that reached it; FailNode then is a kill -9 right there).
struct Trigger {
  std::atomic<engine::Engine*> engine{nullptr};
  std::atomic<int> point{-1};
  std::atomic<int> node{-1};
  std::atomic<int> skip{0};
  std::atomic<bool> fired{false};
  // Returns only once the failed node is reclaimed (a coordinator that
  // reached the point through this node goes on after its reclaimer).
  std::atomic<bool> wait_reclaimed{false};
  // If set, this node fails too, at the same moment.
  std::atomic<int> partner{-1};

  // Arms `n` to fail at its `passes`-th pass through `p` (and `with` at
  // the same moment, if not -1); `wait`: wait_reclaimed. The point last:
  // At reads it first.
  void Arm(TwoPhasePoint p, int n, int passes, bool wait, int with = -1) {
    wait_reclaimed = wait;
    fired = false;
    partner = with;
    node = n;
    skip = passes;
    point = static_cast<int>(p);
  }

  void At(TwoPhasePoint p, uint32_t n) {
    if (point.load() != static_cast<int>(p) ||
        node.load() != static_cast<int>(n)) {
      return;
    }
    if (skip.fetch_sub(1) > 0) return;
    int armed = static_cast<int>(p);
    if (!point.compare_exchange_strong(armed, -1)) return;
    absl::Status s = engine.load()->FailNode(n);
    EXPECT_TRUE(s.ok()) << s;
    if (const int other = partner.load(); other >= 0) {
      s = engine.load()->FailNode(other);
      EXPECT_TRUE(s.ok()) << s;
    }
    fired = true;
    if (wait_reclaimed.load()) {
      s = engine.load()->WaitReclaimed(n, absl::Seconds(10));
      EXPECT_TRUE(s.ok()) << s;
    }
  }
};

struct Param {
  TwoPhasePoint point;
  rdma::ComputeNodeId victim;
  const char* name;

  friend void PrintTo(const Param& p, std::ostream* os) { *os << p.name; }
};

// Each forced point, and the node that fails there.
constexpr Param kPoints[] = {
    {TwoPhasePoint::kCoordinatorBeforeDecision, 1, "CoordinatorBeforeDecision"},
    {TwoPhasePoint::kCoordinatorAfterDecision, 1, "CoordinatorAfterDecision"},
    {TwoPhasePoint::kCoordinatorAfterDecision, 0,
     "CoordinatorAfterDecisionNode0"},
    {TwoPhasePoint::kParticipantBeforeVote, 2, "ParticipantBeforeVote"},
    {TwoPhasePoint::kParticipantAfterVote, 2,
     "ParticipantAfterVoteBeforeDecision"},
    {TwoPhasePoint::kParticipantBeforeCommit, 2,
     "ParticipantAfterVoteAfterDecision"},
};

class PartitionFailoverTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    engine::EngineOptions o = Options();
    strand::testing::EnableTestFailover(o, kLease);
    o.partitioned.testing_faults.at_point =
        [t = &trigger_](TwoPhasePoint p, uint32_t n) { t->At(p, n); };
    if (!log_dir_.empty()) {
      o.wal.dir = log_dir_.string();
      o.wal.early_lock_release = true;
      o.wal.io_mode = wal::LogIoMode::kBuffered;
      // Each rejoin starts a segment: small ones keep /tmp small.
      o.wal.segment_bytes = 1 << 20;
    }
    auto engine = engine::Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    trigger_.engine = engine_.get();
    Register(/*create_table=*/true);
    auto s = Session(0);
    ASSERT_NE(s, nullptr);
    for (int64_t id = 0; id < kAccounts; ++id) {
      auto r = s->Call<bool>(open_, PartitionOf(id), id, kInitialBalance);
      ASSERT_TRUE(r.ok()) << r.status();
    }
    for (int n = 0; n < kNodes; ++n) {
      auto r = s->Call<bool>(open_, OwnPartition(n), CounterId(n), int64_t{0});
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  // The deployment, without failover or a log.
  static engine::EngineOptions Options() {
    engine::EngineOptions o;
    o.mode = engine::EngineMode::kPartitioned;
    o.partitioned.partitions = kPartitions;
    o.fabric = testing::TestFabricOptions(1, kNodes);
    o.cc.gcl_size = 256;
    o.retry.max_retries = 1000;
    return o;
  }

  // The first partition `node` owns.
  int64_t OwnPartition(int node) const {
    for (int64_t p = 1; p <= kPartitions; ++p) {
      if (engine_->partition_map()->Owner(p) == static_cast<uint32_t>(node)) {
        return p;
      }
    }
    return 0;
  }
  bool OnNode(int64_t account, int node) const {
    return engine_->partition_map()->Owner(PartitionOf(account)) ==
           static_cast<uint32_t>(node);
  }

  std::unique_ptr<engine::Session> Session(rdma::ComputeNodeId node) {
    auto s = engine_->NewSession(node);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  // Creates the table and its index, or opens them (a recovered pool).
  void Register(bool create_table) {
    auto schema =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"value", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    const txn::TableId rows = create_table
                                  ? *engine_->CreateTable("rows", *schema)
                                  : *engine_->OpenTable("rows");
    const txn::IndexId by_id =
        create_table ? *engine_->CreateIndex("rows_by_id", rows, 8, true)
                     : *engine_->OpenIndex("rows_by_id");
    const storage::Schema* s = *engine_->schema(rows);
    auto adjust = *engine_->RegisterFragment<AdjustIn, Value>(
        "adjust", [=](Txn& txn, const AdjustIn& in) -> absl::StatusOr<Value> {
          auto a = txn.Lookup(by_id, Key(in.id));
          if (!a.ok()) return a.status();
          auto t = txn.Modify(rows, *a);
          if (!t.ok()) return t.status();
          const int64_t v = (*t)->view().GetInt(1) + in.delta;
          (*t)->SetInt(1, v);
          return Value{v};
        });
    auto read = *engine_->RegisterFragment<IdIn, Value>(
        "read", [=](Txn& txn, const IdIn& in) -> absl::StatusOr<Value> {
          auto a = txn.Lookup(by_id, Key(in.id));
          if (!a.ok()) return a.status();
          auto t = txn.Read(rows, *a);
          if (!t.ok()) return t.status();
          return Value{t->GetInt(1)};
        });
    auto create = *engine_->RegisterFragment<AdjustIn, Value>(
        "create", [=](Txn& txn, const AdjustIn& in) -> absl::StatusOr<Value> {
          storage::TupleBuffer t(*s);
          t.SetInt(0, in.id);
          t.SetInt(1, in.delta);
          auto a = txn.Insert(rows, t);
          if (!a.ok()) return a.status();
          if (absl::Status added = txn.AddIndexEntry(by_id, Key(in.id), *a);
              !added.ok()) {
            return added;
          }
          return Value{in.delta};
        });
    // Balances may go negative: only the total matters here.
    transfer_ = *engine_->RegisterProcedure(
        "transfer",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, int64_t,
                                           int64_t)>(
            [=, this](Txn& txn, int64_t from, int64_t to, int64_t amount,
                      int64_t counter_partition) -> absl::StatusOr<bool> {
              absl::StatusOr<Value> a, b, c;
              FragmentBatch batch(txn);
              batch.Add(PartitionOf(from), adjust, AdjustIn{from, -amount}, &a);
              batch.Add(PartitionOf(to), adjust, AdjustIn{to, amount}, &b);
              const int64_t counter =
                  CounterId(engine_->partition_map()->Owner(counter_partition));
              batch.Add(counter_partition, adjust, AdjustIn{counter, 1}, &c);
              if (absl::Status s = batch.Run(); !s.ok()) return s;
              for (const auto* r : {&a, &b, &c}) {
                if (!r->ok()) return r->status();
              }
              return true;
            }));
    read_ = *engine_->RegisterProcedure(
        "read", std::function<absl::StatusOr<int64_t>(Txn&, int64_t, int64_t)>(
                    [=](Txn& txn, int64_t partition,
                        int64_t id) -> absl::StatusOr<int64_t> {
                      auto v = RunAt(txn, partition, read, IdIn{id});
                      if (!v.ok()) return v.status();
                      return v->value;
                    }));
    open_ = *engine_->RegisterProcedure(
        "open",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, int64_t)>(
            [=](Txn& txn, int64_t partition, int64_t id,
                int64_t value) -> absl::StatusOr<bool> {
              auto v = RunAt(txn, partition, create, AdjustIn{id, value});
              if (!v.ok()) return v.status();
              return true;
            }));
  }

  // Every row's value (accounts, then counters), read through `s`.
  void Rows(engine::Session& s, std::vector<int64_t>* rows) {
    rows->clear();
    for (int64_t id = 0; id < kAccounts; ++id) {
      auto v = s.Call<int64_t>(read_, PartitionOf(id), id);
      ASSERT_TRUE(v.ok()) << v.status();
      rows->push_back(*v);
    }
    for (int n = 0; n < kNodes; ++n) {
      auto v = s.Call<int64_t>(read_, OwnPartition(n), CounterId(n));
      ASSERT_TRUE(v.ok()) << v.status();
      rows->push_back(*v);
    }
  }

  // Reads every row through `s` (a node up): the total and the counters.
  void Audit(engine::Session& s) {
    std::vector<int64_t> rows;
    ASSERT_NO_FATAL_FAILURE(Rows(s, &rows));
    int64_t total = 0;
    for (int64_t id = 0; id < kAccounts; ++id) total += rows[id];
    EXPECT_EQ(total, kAccounts * kInitialBalance)
        << "a transfer is partly visible";
    for (int n = 0; n < kNodes; ++n) {
      const int64_t counter = rows[kAccounts + n];
      EXPECT_GE(counter, acked_[n].load())
          << "node " << n << " acknowledged a transfer that is lost";
      EXPECT_LE(counter, attempted_[n].load());
    }
  }

  // Node `n`'s worker: transfers among `mine` until `stop`, or, on the
  // node that fails (`victim`), until it failed: its calls fail from then
  // on. Calls that fail Unavailable or Aborted are expected around a
  // failure; any other error is counted in `errors` and fails the test.
  std::thread Worker(int n, std::vector<int64_t> mine, int victim,
                     uint64_t seed, std::atomic<bool>& stop,
                     std::atomic<int>& errors) {
    return std::thread([this, n, mine = std::move(mine), victim, seed, &stop,
                        &errors] {
      // The victim may fail before its session opens.
      auto opened = engine_->NewSession(n);
      if (!opened.ok()) {
        EXPECT_EQ(n, victim) << opened.status();
        return;
      }
      std::unique_ptr<engine::Session> s = *std::move(opened);
      std::mt19937_64 r(seed);
      auto failed = [&] { return n == victim && trigger_.fired.load(); };
      while (!stop.load() && !failed()) {
        const size_t i = r() % mine.size();
        const int64_t from = mine[i];
        const int64_t to =
            mine[(i + 1 + r() % (mine.size() - 1)) % mine.size()];
        ++attempted_[n];
        auto done =
            s->Call<bool>(transfer_, from, to,
                          static_cast<int64_t>(1 + r() % 49), OwnPartition(n));
        if (done.ok()) {
          ++acked_[n];
        } else if (!failed() && !absl::IsUnavailable(done.status()) &&
                   !absl::IsAborted(done.status())) {
          ++errors;
          ADD_FAILURE() << "node " << n << ": " << done.status();
        }
      }
    });
  }

  // One cycle: the victim fails at the point (after up to 7 passes), the
  // survivors decide and go on, the victim rejoins and the audit holds.
  void FailOnce(const Param& param, std::mt19937_64& rng) {
    const rdma::ComputeNodeId victim = param.victim;
    const int survivor = (victim + 1) % kNodes;
    const bool participant =
        param.point == TwoPhasePoint::kParticipantBeforeVote ||
        param.point == TwoPhasePoint::kParticipantAfterVote ||
        param.point == TwoPhasePoint::kParticipantBeforeCommit;
    // A rejoin starts its node's counts again: compare within the cycle.
    const uint64_t unavailable_before = engine_->PartitionStats().unavailable;
    trigger_.Arm(param.point, static_cast<int>(victim),
                 static_cast<int>(rng() % 8),
                 param.point == TwoPhasePoint::kParticipantAfterVote);
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    std::vector<std::thread> workers;
    // A failed assertion returns early: the workers stop first.
    absl::Cleanup join_workers = [&] {
      stop = true;
      for (auto& w : workers) {
        if (w.joinable()) w.join();
      }
    };
    for (int n = 0; n < kNodes; ++n) {
      // Which transfers each node coordinates: as participant, the victim
      // is one survivor's; as coordinator, no other node's.
      const bool victim_node = n == static_cast<int>(victim);
      if (victim_node && participant) continue;
      const bool touch_victim = victim_node || (participant && n == survivor);
      std::vector<int64_t> mine;
      for (int64_t id = 0; id < kAccounts; ++id) {
        if (touch_victim || !OnNode(id, static_cast<int>(victim))) {
          mine.push_back(id);
        }
      }
      workers.push_back(Worker(n, std::move(mine), static_cast<int>(victim),
                               rng(), stop, errors));
    }
    const absl::Time start = absl::Now();
    while (!trigger_.fired && absl::Now() - start < kRecoveryBound) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    ASSERT_TRUE(trigger_.fired) << "the victim never reached the point";
    const absl::Time failed = absl::Now();
    ASSERT_TRUE(engine_->WaitReclaimed(victim, kRecoveryBound).ok());
    // A survivor commits a transfer away from the victim; one that needs
    // the victim fails Unavailable at once.
    {
      auto s = Session(survivor);
      int64_t a = -1, b = -1;
      for (int64_t id = 0; id < kAccounts; ++id) {
        if (OnNode(id, static_cast<int>(victim))) continue;
        (a < 0 ? a : b) = id;
        if (b >= 0) break;
      }
      absl::StatusOr<bool> done = absl::AbortedError("not tried");
      while (!done.ok() && absl::Now() - failed < kRecoveryBound) {
        ++attempted_[survivor];
        done =
            s->Call<bool>(transfer_, a, b, int64_t{1}, OwnPartition(survivor));
      }
      ASSERT_TRUE(done.ok()) << done.status();
      ++acked_[survivor];
      int64_t on_victim = 0;
      while (!OnNode(on_victim, static_cast<int>(victim))) ++on_victim;
      ++attempted_[survivor];
      auto refused = s->Call<bool>(transfer_, a, on_victim, int64_t{1},
                                   OwnPartition(survivor));
      EXPECT_TRUE(absl::IsUnavailable(refused.status())) << refused.status();
    }
    std::move(join_workers).Invoke();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_GT(engine_->PartitionStats().unavailable, unavailable_before);
    ASSERT_TRUE(engine_->RejoinNode(victim, kRecoveryBound).ok());
    auto auditor = Session(victim);
    ASSERT_NE(auditor, nullptr);
    Audit(*auditor);
  }

  // A coordinator (param.victim) and a participant of its transactions
  // fail together at the coordinator's point, before or after its
  // decision: the one survivor's branches and the failed participant's
  // prepared ones are decided from the coordinator's word alone; the
  // survivor commits on its own partitions and is refused the others';
  // both rejoin and the audit holds.
  void FailPairOnce(const Param& param, std::mt19937_64& rng) {
    const int coordinator = static_cast<int>(param.victim);
    const int participant = (coordinator + 1) % kNodes;
    const int survivor = (coordinator + 2) % kNodes;
    trigger_.Arm(param.point, coordinator, static_cast<int>(rng() % 8),
                 /*wait=*/false, participant);
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    std::vector<std::thread> workers;
    // A failed assertion returns early: the workers stop first.
    absl::Cleanup join_workers = [&] {
      stop = true;
      for (auto& w : workers) {
        if (w.joinable()) w.join();
      }
    };
    // The coordinator's transfers touch every node; the survivor's stay on
    // its own partitions, except when they meet a failed node's.
    for (const int n : {coordinator, survivor}) {
      std::vector<int64_t> mine;
      for (int64_t id = 0; id < kAccounts; ++id) {
        if (n == coordinator || OnNode(id, survivor)) mine.push_back(id);
      }
      workers.push_back(
          Worker(n, std::move(mine), coordinator, rng(), stop, errors));
    }
    const absl::Time start = absl::Now();
    while (!trigger_.fired && absl::Now() - start < kRecoveryBound) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    trigger_.partner = -1;
    ASSERT_TRUE(trigger_.fired) << "the coordinator never reached the point";
    const absl::Time failed = absl::Now();
    for (const int v : {coordinator, participant}) {
      ASSERT_TRUE(engine_->WaitReclaimed(v, kRecoveryBound).ok());
    }
    {
      auto s = Session(survivor);
      int64_t a = -1, b = -1, elsewhere = -1;
      for (int64_t id = 0; id < kAccounts; ++id) {
        if (!OnNode(id, survivor)) {
          if (elsewhere < 0) elsewhere = id;
        } else if (a < 0) {
          a = id;
        } else if (b < 0) {
          b = id;
        }
      }
      absl::StatusOr<bool> done = absl::AbortedError("not tried");
      while (!done.ok() && absl::Now() - failed < kRecoveryBound) {
        ++attempted_[survivor];
        done =
            s->Call<bool>(transfer_, a, b, int64_t{1}, OwnPartition(survivor));
      }
      ASSERT_TRUE(done.ok()) << done.status();
      ++acked_[survivor];
      ++attempted_[survivor];
      auto refused = s->Call<bool>(transfer_, a, elsewhere, int64_t{1},
                                   OwnPartition(survivor));
      EXPECT_TRUE(absl::IsUnavailable(refused.status())) << refused.status();
    }
    std::move(join_workers).Invoke();
    EXPECT_EQ(errors.load(), 0);
    for (const int v : {coordinator, participant}) {
      const absl::Status rejoined = engine_->RejoinNode(v, kRecoveryBound);
      ASSERT_TRUE(rejoined.ok()) << rejoined;
    }
    auto auditor = Session(participant);
    ASSERT_NE(auditor, nullptr);
    Audit(*auditor);
  }

  Trigger trigger_;
  std::unique_ptr<engine::Engine> engine_;
  engine::ProcedureId transfer_ = 0, read_ = 0, open_ = 0;
  std::atomic<int64_t> acked_[kNodes] = {}, attempted_[kNodes] = {};
  // With a log (PartitionFailoverRecoveryTest): its directory.
  std::filesystem::path log_dir_;
};

TEST_P(PartitionFailoverTest, SurvivorsDecideAndGoOn) {
  const Param param = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(param.point) * 7 + param.victim);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    FailOnce(param, rng);
    if (HasFatalFailure() || HasFailure()) return;
  }
  const std::vector<engine::ReclaimReport> reports = engine_->ReclaimReports();
  ASSERT_EQ(reports.size(), static_cast<size_t>(kCycles));
  uint64_t committed = 0, aborted = 0;
  uint64_t prepared_committed = 0, prepared_aborted = 0;
  for (const auto& r : reports) {
    committed += r.branches_committed;
    aborted += r.branches_aborted;
    prepared_committed += r.prepared_committed;
    prepared_aborted += r.prepared_aborted;
  }
  // Each point leaves in-doubt branches to decide, one way.
  if (param.point == TwoPhasePoint::kCoordinatorAfterDecision) {
    EXPECT_GT(committed, 0u);
  } else if (param.point == TwoPhasePoint::kCoordinatorBeforeDecision) {
    EXPECT_GT(aborted, 0u);
    EXPECT_EQ(committed, 0u);
  } else if (param.point == TwoPhasePoint::kParticipantAfterVote) {
    // Every cycle the reclaimer decided the victim's yes-voted branch
    // before its coordinator could: aborted, and the coordinator too.
    EXPECT_EQ(prepared_aborted, static_cast<uint64_t>(kCycles));
    EXPECT_EQ(prepared_committed, 0u);
  } else if (param.point == TwoPhasePoint::kParticipantBeforeCommit) {
    // Every cycle the coordinator decided first: the branch is redone.
    EXPECT_EQ(prepared_committed, static_cast<uint64_t>(kCycles));
  }
}

// A session's gtids must not repeat those of an earlier session of its
// slot: the earlier one's last decision is still in the slot's word, and a
// coordinator that fails before deciding a transaction with the same gtid
// would have its participants commit (the victim's debit lost, the
// survivor's credit kept: the total is off).
TEST_F(PartitionFailoverTest, ALaterSessionsTransactionIsNotTakenAsDecided) {
  constexpr rdma::ComputeNodeId kVictim = 1;
  int64_t mine = -1, theirs = -1;
  for (int64_t id = 0; id < kAccounts && (mine < 0 || theirs < 0); ++id) {
    (OnNode(id, kVictim) ? mine : theirs) = id;
  }
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    {
      // Decides one distributed commit on its slot, then closes.
      auto first = Session(kVictim);
      ASSERT_NE(first, nullptr);
      ++attempted_[kVictim];
      auto done = first->Call<bool>(transfer_, mine, theirs, int64_t{7},
                                    OwnPartition(kVictim));
      ASSERT_TRUE(done.ok()) << done.status();
      ++acked_[kVictim];
    }
    trigger_.Arm(TwoPhasePoint::kCoordinatorBeforeDecision,
                 static_cast<int>(kVictim), /*passes=*/0, /*wait=*/false);
    {
      // The same slot, its first transaction: fails before deciding.
      auto second = Session(kVictim);
      ASSERT_NE(second, nullptr);
      ++attempted_[kVictim];
      auto done = second->Call<bool>(transfer_, mine, theirs, int64_t{11},
                                     OwnPartition(kVictim));
      EXPECT_FALSE(done.ok());
    }
    ASSERT_TRUE(trigger_.fired);
    ASSERT_TRUE(engine_->WaitReclaimed(kVictim, kRecoveryBound).ok());
    ASSERT_TRUE(engine_->RejoinNode(kVictim, kRecoveryBound).ok());
    auto auditor = Session(kVictim);
    ASSERT_NE(auditor, nullptr);
    Audit(*auditor);
    if (HasFatalFailure() || HasFailure()) return;
  }
}

// A coordinator and a participant of its transactions fail together,
// before and after the coordinator's decision, coordinators node 1 and
// node 0 (whose rejoin restarts the checkpointer).
TEST_F(PartitionFailoverTest, ACoordinatorAndItsParticipantFailTogether) {
  std::mt19937_64 rng(5);
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    const Param param{cycle % 2 == 0 ? TwoPhasePoint::kCoordinatorBeforeDecision
                                     : TwoPhasePoint::kCoordinatorAfterDecision,
                      static_cast<rdma::ComputeNodeId>(cycle / 2 % 2), "pair"};
    FailPairOnce(param, rng);
    if (HasFatalFailure() || HasFailure()) return;
  }
  uint64_t committed = 0, aborted = 0;
  for (const auto& r : engine_->ReclaimReports()) {
    committed += r.branches_committed + r.prepared_committed;
    aborted += r.branches_aborted + r.prepared_aborted;
  }
  // Both outcomes came up: in-doubt branches decided each way.
  EXPECT_GT(committed, 0u);
  EXPECT_GT(aborted, 0u);
}

// With a log: each point's failure twice, a checkpoint between the rounds,
// then a fresh pool recovers from it and the logs. The failed nodes'
// decided transactions come back (from their own logs, or from the ring
// records their reclaimers logged again as adopted), prepared branches
// without a decision are presumed aborted, even when the rejoined
// coordinator's later transaction has the same gtid, and redone branches
// are not applied twice: every row is as it was before the close.
class PartitionFailoverRecoveryTest : public PartitionFailoverTest {
 protected:
  void SetUp() override {
    log_dir_ = std::filesystem::path(::testing::TempDir()) /
               absl::StrCat("partition_failover_", getpid());
    std::filesystem::remove_all(log_dir_);
    PartitionFailoverTest::SetUp();
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(log_dir_);
  }
};

TEST_F(PartitionFailoverRecoveryTest, RecoveryKeepsEveryAcknowledgedTransfer) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2; ++round) {
    for (const Param& point : kPoints) {
      SCOPED_TRACE(absl::StrCat("round ", round, ", ", point.name));
      FailOnce(point, rng);
      if (HasFatalFailure() || HasFailure()) return;
    }
    if (round == 0) {
      auto taken = engine_->Checkpoint();
      ASSERT_TRUE(taken.ok()) << taken.status();
    }
  }
  std::vector<int64_t> before;
  {
    auto s = Session(0);
    ASSERT_NE(s, nullptr);
    ASSERT_NO_FATAL_FAILURE(Rows(*s, &before));
  }
  engine_.reset();  // a clean close: every commit is durable

  engine::EngineOptions o = Options();
  o.recover_wal_dir = log_dir_.string();
  auto recovered = engine::Engine::Open(o);
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  engine_ = *std::move(recovered);
  ASSERT_NE(engine_->recovery_report(), nullptr);
  EXPECT_EQ(engine_->recovery_report()->base_kind, "checkpoint");
  Register(/*create_table=*/false);
  auto auditor = Session(0);
  ASSERT_NE(auditor, nullptr);
  std::vector<int64_t> after;
  ASSERT_NO_FATAL_FAILURE(Rows(*auditor, &after));
  EXPECT_EQ(after, before) << "recovery changed a row";
  Audit(*auditor);
}

INSTANTIATE_TEST_SUITE_P(Points, PartitionFailoverTest,
                         ::testing::ValuesIn(kPoints),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace strand::partition
