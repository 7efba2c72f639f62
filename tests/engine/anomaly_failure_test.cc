// Serializable outcomes with compute nodes failing
// (docs/design/node_failure.md): two anomalies of anomaly_test.cc, run by
// three compute nodes with failover on while a random node fails in each
// of 20 cycles and rejoins, for 2PL, OCC and TO:
//   - lost update through an index: "append max(seq) + 1" to a group. The
//     sequence numbers a survivor reads must be exactly 1..n: a number
//     twice is a lost update, a gap a failed node's append that was seen
//     and then lost (or partly applied); none acknowledged may be missing,
//     and n is at most the appends acknowledged plus those whose call
//     failed;
//   - predicate write skew: doctors leave a shift only if more than two
//     are on it, and join again; no shift ever has fewer than two, in any
//     committed read or at the end.
// The failed node's transactions are cut at any point (its threads' calls
// fail from the failure on); the survivors must go on committing.

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/anomaly_testing.h"
#include "tests/engine/failover_bank.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using txn::Txn;

constexpr int kCycles = 20;
constexpr int kGroups = 3;
constexpr int kShifts = 6;
constexpr int kDoctors = 4;
constexpr int64_t kMinOnCall = 2;
constexpr int64_t kMaxId = INT64_MAX;

std::string GroupKey(int64_t group, int64_t id) {
  return index::KeyBuilder().Int64(group).Int64(id).Build(16);
}

class AnomalyFailureTest
    : public FailoverBank,
      public ::testing::WithParamInterface<FailoverConfig> {
 protected:
  void SetUp() override { Open(GetParam()); }
  void CreateMore() override {
    auto schema =
        storage::Schema::Create({{"group", storage::ColumnType::kInt64},
                                 {"id", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    rows_ = *engine_->CreateTable("rows", *schema);
    seq_ = *engine_->CreateIndex("seq", rows_, 16, /*unique=*/false);
    doctors_ = *engine_->CreateTable("doctors", *schema);
    on_call_ = *engine_->CreateIndex("on_call", doctors_, 16, true);
    RegisterAnomalies();
  }
  void TearDown() override {
    for (int n = 0; n < kNodes; ++n) StopWorkers(n);
    FailoverBank::TearDown();
  }

  // The ids of `group`'s entries in `index`, in key order (from the keys:
  // a list of a whole group reads no rows, whose latches would not fit the
  // test's small caches under 2PL).
  absl::StatusOr<std::vector<int64_t>> Ids(Txn& txn, txn::IndexId index,
                                           int64_t group, bool forward,
                                           uint64_t limit) {
    std::vector<int64_t> ids;
    absl::Status s =
        txn.Scan(index, GroupKey(group, 0), GroupKey(group, kMaxId), forward,
                 limit, [&](std::string_view key, TupleAddress) {
                   ids.push_back(index::DecodeInt64(key.data() + 8));
                   return true;
                 });
    if (!s.ok()) return s;
    return ids;
  }
  absl::StatusOr<TupleAddress> InsertRow(Txn& txn, txn::TableId table,
                                         txn::IndexId index, int64_t group,
                                         int64_t id) {
    storage::TupleBuffer t(**engine_->schema(table));
    t.SetInt(0, group);
    t.SetInt(1, id);
    auto a = txn.Insert(table, t);
    if (!a.ok()) return a.status();
    if (absl::Status s = txn.AddIndexEntry(index, GroupKey(group, id), *a);
        !s.ok()) {
      return s;
    }
    return a;
  }

  void RegisterAnomalies() {
    append_ = *engine_->RegisterProcedure(
        "append",
        std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
            [this](Txn& txn, int64_t group) -> absl::StatusOr<int64_t> {
              // The last row itself, as anomaly_test.cc reads it.
              int64_t last = 0;
              absl::Status read;
              absl::Status s = txn.Scan(
                  seq_, GroupKey(group, 0), GroupKey(group, kMaxId),
                  /*forward=*/false, 1, [&](std::string_view, TupleAddress a) {
                    auto row = txn.Read(rows_, a);
                    if (row.ok()) last = row->GetInt(1);
                    read = row.status();
                    return false;
                  });
              if (!s.ok()) return s;
              if (!read.ok()) return read;
              testing::Pause();  // racing appends overlap
              const int64_t next = last + 1;
              auto a = InsertRow(txn, rows_, seq_, group, next);
              if (!a.ok()) return a.status();
              return next;
            }));
    list_ = *engine_->RegisterProcedure(
        "list",
        std::function<absl::StatusOr<std::vector<int64_t>>(Txn&, int64_t)>(
            [this](Txn& txn, int64_t group) {
              return Ids(txn, seq_, group, true, UINT64_MAX);
            }));
    // Joins if absent (true), else leaves if more than kMinOnCall are on
    // the shift (true), else changes nothing (false).
    toggle_ = *engine_->RegisterProcedure(
        "toggle",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
            [this](Txn& txn, int64_t shift,
                   int64_t doctor) -> absl::StatusOr<bool> {
              TupleAddress me;
              int64_t on_call = 0;
              absl::Status s = txn.Scan(
                  on_call_, GroupKey(shift, 0), GroupKey(shift, kMaxId), true,
                  UINT64_MAX, [&](std::string_view key, TupleAddress a) {
                    if (key == GroupKey(shift, doctor)) me = a;
                    ++on_call;
                    return true;
                  });
              if (!s.ok()) return s;
              if (me.is_null()) {
                auto a = InsertRow(txn, doctors_, on_call_, shift, doctor);
                if (!a.ok()) return a.status();
                return true;
              }
              if (on_call <= kMinOnCall) return false;
              testing::Pause();
              if (absl::Status removed = txn.RemoveIndexEntry(
                      on_call_, GroupKey(shift, doctor), me);
                  !removed.ok()) {
                return removed;
              }
              if (absl::Status deleted = txn.Delete(doctors_, me);
                  !deleted.ok()) {
                return deleted;
              }
              return true;
            }));
    count_ = *engine_->RegisterProcedure(
        "count",
        std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
            [this](Txn& txn, int64_t shift) -> absl::StatusOr<int64_t> {
              auto ids = Ids(txn, on_call_, shift, true, UINT64_MAX);
              if (!ids.ok()) return ids.status();
              return static_cast<int64_t>(ids->size());
            }));
  }

  // Node `node`'s worker: appends, or toggles a doctor and counts a shift.
  void StartWorker(int node, bool appends) {
    stop_[node] = false;
    auto opened = engine_->NewSession(node);
    ASSERT_TRUE(opened.ok()) << opened.status();
    workers_[node] =
        std::thread([this, node, appends, session = *std::move(opened)] {
          std::mt19937_64 rng(node * 31 + seed_++);
          while (!stop_[node].load()) {
            if (appends) {
              // Paced: a survivor's list of a whole group must get through
              // (and the pool hold the rows) when appends are fast (no log).
              absl::SleepFor(absl::Microseconds(200));
              if (hold_.load()) continue;
              const int64_t group = static_cast<int64_t>(rng() % kGroups);
              auto r = session->Call(append_, group);
              absl::MutexLock lock(&mu_);
              if (r.ok()) {
                acked_max_[group] = std::max(acked_max_[group], *r);
                ++appends_acked_;
                acked_[node].fetch_add(1);
              } else {
                ++appends_failed_;
              }
              continue;
            }
            if (hold_.load()) {
              absl::SleepFor(absl::Microseconds(200));
              continue;
            }
            const int64_t shift = static_cast<int64_t>(rng() % kShifts);
            auto r = session->Call(toggle_, shift,
                                   static_cast<int64_t>(rng() % kDoctors));
            if (!r.ok()) continue;
            acked_[node].fetch_add(1);
            auto n = session->Call(count_, shift);
            if (n.ok() && *n < kMinOnCall) skewed_.fetch_add(1);
          }
        });
  }
  void StopWorkers(int node) {
    stop_[node] = true;
    if (workers_[node].joinable()) workers_[node].join();
  }

  // Through `survivor`: every group's sequence numbers are 1..n, none
  // acknowledged is missing, none invented. New appends wait meanwhile: a
  // list of a whole group under 2PL no-wait would rarely get through them.
  void CheckAppends(int survivor) {
    hold_ = true;
    CheckAppendsHeld(survivor);
    hold_ = false;
  }
  void CheckAppendsHeld(int survivor) {
    auto session = engine_->NewSession(survivor);
    ASSERT_TRUE(session.ok()) << session.status();
    int64_t acked_max[kGroups];
    int64_t acked;
    {
      absl::MutexLock lock(&mu_);
      std::copy(acked_max_, acked_max_ + kGroups, acked_max);
      acked = appends_acked_;
    }
    int64_t total = 0;
    for (int64_t g = 0; g < kGroups; ++g) {
      absl::StatusOr<std::vector<int64_t>> seqs;
      const absl::Time deadline = absl::Now() + kRecoveryBound;
      do {
        seqs = (*session)->Call(list_, g);
      } while (!seqs.ok() && absl::Now() < deadline);
      ASSERT_TRUE(seqs.ok()) << seqs.status();
      for (size_t i = 0; i < seqs->size(); ++i) {
        ASSERT_EQ((*seqs)[i], static_cast<int64_t>(i + 1))
            << "group " << g << ": a sequence number twice (lost update) or "
            << "a gap (an append seen, then lost)";
      }
      EXPECT_GE(static_cast<int64_t>(seqs->size()), acked_max[g])
          << "group " << g << " lost an acknowledged append";
      total += seqs->size();
    }
    // Acknowledged appends may have been made after the counts were read.
    EXPECT_GE(total, acked) << "an acknowledged append is lost";
    absl::MutexLock lock(&mu_);
    EXPECT_LE(total, appends_acked_ + appends_failed_) << "appends nobody made";
  }

  // Through `survivor`: no shift has fewer than kMinOnCall doctors. New
  // toggles wait meanwhile, as appends do for CheckAppends (under TO a
  // count racing them ran out of retries for 5 s under ASan).
  void CheckShifts(int survivor) {
    hold_ = true;
    CheckShiftsHeld(survivor);
    hold_ = false;
  }
  void CheckShiftsHeld(int survivor) {
    auto session = engine_->NewSession(survivor);
    ASSERT_TRUE(session.ok()) << session.status();
    for (int64_t s = 0; s < kShifts; ++s) {
      absl::StatusOr<int64_t> n;
      const absl::Time deadline = absl::Now() + kRecoveryBound;
      do {
        n = (*session)->Call(count_, s);
      } while (!n.ok() && absl::Now() < deadline);
      ASSERT_TRUE(n.ok()) << n.status();
      EXPECT_GE(*n, kMinOnCall) << "shift " << s << " (write skew)";
      EXPECT_LE(*n, kDoctors) << "shift " << s;
    }
  }

  // kCycles times: fails a random node while the workers run, waits until
  // the survivors commit again and the node is reclaimed, checks through
  // a survivor, rejoins the node.
  void RunCycles(uint64_t seed, bool appends,
                 const std::function<void(int)>& check) {
    for (int n = 0; n < kNodes; ++n) StartWorker(n, appends);
    std::mt19937_64 rng(seed);
    for (int cycle = 0; cycle < kCycles; ++cycle) {
      SCOPED_TRACE(absl::StrCat("cycle ", cycle));
      absl::SleepFor(absl::Milliseconds(10 + rng() % 40));
      const int victim = static_cast<int>(rng() % kNodes);
      ASSERT_TRUE(engine_->FailNode(victim).ok());
      stop_[victim] = true;
      const std::vector<int> survivors = ExpectSurvivorsProgress(victim);
      ASSERT_TRUE(engine_->WaitReclaimed(victim, absl::Seconds(10)).ok());
      check(survivors.front());
      if (HasFatalFailure()) return;
      StopWorkers(victim);
      const absl::Status rejoined = engine_->RejoinNode(victim);
      ASSERT_TRUE(rejoined.ok()) << rejoined;
      StartWorker(victim, appends);
      ExpectProgress({victim}, {acked_[victim].load()});
    }
    for (int n = 0; n < kNodes; ++n) StopWorkers(n);
    check(0);
  }

  txn::TableId rows_ = 0, doctors_ = 0;
  txn::IndexId seq_ = 0, on_call_ = 0;
  Procedure<int64_t(int64_t)> append_;
  Procedure<std::vector<int64_t>(int64_t)> list_;
  Procedure<bool(int64_t, int64_t)> toggle_;
  Procedure<int64_t(int64_t)> count_;
  std::thread workers_[kNodes];
  absl::Mutex mu_;
  int64_t acked_max_[kGroups] ABSL_GUARDED_BY(mu_) = {};
  int64_t appends_acked_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t appends_failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<int64_t> skewed_{0};
  std::atomic<bool> hold_{false};  // workers start no new call
};

TEST_P(AnomalyFailureTest, AppendsNeverReuseOrLoseASequenceNumber) {
  RunCycles(/*seed=*/11, /*appends=*/true,
            [this](int survivor) { CheckAppends(survivor); });
  absl::MutexLock lock(&mu_);
  EXPECT_GT(appends_acked_, 100);
}

TEST_P(AnomalyFailureTest, WriteSkewNeverEmptiesAShift) {
  {
    auto session = engine_->NewSession(0);
    ASSERT_TRUE(session.ok());
    for (int64_t s = 0; s < kShifts; ++s) {
      for (int64_t d = 0; d < kDoctors; ++d) {
        // Everyone joins: a doctor's next toggle tries to leave.
        ASSERT_TRUE((*session)->Call(toggle_, s, d).ok());
      }
    }
  }
  RunCycles(/*seed=*/13, /*appends=*/false,
            [this](int survivor) { CheckShifts(survivor); });
  EXPECT_EQ(skewed_.load(), 0)
      << "a committed count saw a shift below " << kMinOnCall;
  EXPECT_GT(acked_[0] + acked_[1] + acked_[2], 100);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, AnomalyFailureTest,
    ::testing::Values(FailoverConfig{txn::CcAlgorithm::kTwoPhaseLocking, false},
                      FailoverConfig{txn::CcAlgorithm::kOptimistic, true},
                      FailoverConfig{txn::CcAlgorithm::kTimestampOrdering,
                                     true}),
    FailoverConfigName);

}  // namespace
}  // namespace strand::engine
