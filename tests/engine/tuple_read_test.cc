// Tuple reads that are not for update, which 2PL and OCC make with no latch
// where the page is cached (EngineOptions::optimistic_tuple_reads,
// txn/two_phase_locking.h), must stay serializable, under every algorithm
// x protocol at two compute nodes with dropped and delayed invalidations:
//   - write skew through tuples: "go off call if enough of the others are
//     on call" (each doctor reads every row of the shift and writes only
//     its own) must never leave a shift short;
//   - read, then write the same row from the value read: "v = read(c);
//     write(c, v + 1)" must lose no increment.
// No index is involved: the rows are named by address, so only the tuple
// reads can protect these invariants. Part of the anomaly_test binary,
// which also runs with the CPU-path switches off (the latched reads).

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "tests/engine/anomaly_testing.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/cpu_path.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::Pause;
using testing::TxnTestConfig;
using txn::Txn;

constexpr int kNodes = testing::kAnomalyNodes;
constexpr int kThreadsPerNode = 2;
constexpr int kWorkers = kNodes * kThreadsPerNode;
constexpr int kMinOnCall = 2;

class TupleReadTest : public ::testing::TestWithParam<TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::AnomalyOptions(GetParam(), 4 << 20));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"value", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    // One row per page: rows conflict only when they are the same row.
    storage::TableOptions one_per_page;
    one_per_page.max_rows_per_page = 1;
    rows_ = *engine_->CreateTable("rows", *schema, one_per_page);
    const txn::TableId rows = rows_;
    const storage::Schema* s = *engine_->schema(rows_);
    create_ = *engine_->RegisterProcedure(
        "create", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                      [=](Txn& txn, int64_t value) -> absl::StatusOr<int64_t> {
                        storage::TupleBuffer t(*s);
                        t.SetInt(0, value);
                        auto a = txn.Insert(rows, t);
                        if (!a.ok()) return a.status();
                        return static_cast<int64_t>(a->raw());
                      }));
    value_ = *engine_->RegisterProcedure(
        "value", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                     [=](Txn& txn, int64_t row) -> absl::StatusOr<int64_t> {
                       auto t = txn.Read(rows, TupleAddress::FromRaw(row));
                       if (!t.ok()) return t.status();
                       return t->GetInt(0);
                     }));
    leave_ = *engine_->RegisterProcedure(
        "leave", std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t,
                                                    int64_t, int64_t, int64_t)>(
                     [=](Txn& txn, int64_t me, int64_t a, int64_t b, int64_t c,
                         int64_t d) -> absl::StatusOr<bool> {
                       int64_t on_call = 0;
                       for (int64_t row : {a, b, c, d}) {
                         auto t = txn.Read(rows, TupleAddress::FromRaw(row));
                         if (!t.ok()) return t.status();
                         on_call += t->GetInt(0);
                       }
                       if (on_call <= kMinOnCall) return false;
                       Pause();
                       auto mine = txn.Modify(rows, TupleAddress::FromRaw(me));
                       if (!mine.ok()) return mine.status();
                       (*mine)->SetInt(0, 0);
                       return true;
                     }));
    increment_ = *engine_->RegisterProcedure(
        "increment", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                         [=](Txn& txn, int64_t row) -> absl::StatusOr<bool> {
                           const TupleAddress a = TupleAddress::FromRaw(row);
                           auto t = txn.Read(rows, a);
                           if (!t.ok()) return t.status();
                           const int64_t v = t->GetInt(0);
                           Pause();
                           // The write comes from the value read, not from
                           // what Modify hands back.
                           auto m = txn.Modify(rows, a);
                           if (!m.ok()) return m.status();
                           (*m)->SetInt(0, v + 1);
                           return true;
                         }));
  }

  // A new row holding `value`; its address as the procedures take it.
  int64_t CreateRow(int64_t value) {
    auto session = engine_->NewSession(0);
    EXPECT_TRUE(session.ok()) << session.status();
    auto row = (*session)->Call<int64_t>(create_, value);
    EXPECT_TRUE(row.ok()) << row.status();
    return row.ok() ? *row : 0;
  }

  // The row's value, read on compute node `node` (which then caches it).
  int64_t Value(int64_t row, int node = 1) {
    auto session = engine_->NewSession(node);
    EXPECT_TRUE(session.ok()) << session.status();
    auto v = (*session)->Call<int64_t>(value_, row);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : -1;
  }

  // Runs `work(session, worker)` on kThreadsPerNode threads per compute
  // node, each with its own session (opened here, one after the other).
  template <typename Work>
  void RunWorkers(Work work) {
    std::vector<std::unique_ptr<Session>> sessions;
    for (int w = 0; w < kWorkers; ++w) {
      auto session = engine_->NewSession(w % kNodes);
      ASSERT_TRUE(session.ok()) << session.status();
      sessions.push_back(*std::move(session));
    }
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back([w, &work, &sessions] { work(*sessions[w], w); });
    }
    for (auto& t : threads) t.join();
  }

  // Whether this configuration reads tuples with no latch at all: SELCC
  // (SEL caches nothing), 2PL or OCC, switch on.
  bool ReadsUnlatched() const {
    return GetParam().protocol == cc::Protocol::kSelcc &&
           GetParam().algorithm != txn::CcAlgorithm::kTimestampOrdering &&
           !testing::TestCpuPathAblation();
  }

  std::unique_ptr<Engine> engine_;
  txn::TableId rows_ = 0;
  Procedure<int64_t(int64_t)> create_;
  Procedure<int64_t(int64_t)> value_;
  // leave(me, a, b, c, d): row `me` goes off call (0) if more than
  // kMinOnCall of rows a-d are on call (1).
  Procedure<bool(int64_t, int64_t, int64_t, int64_t, int64_t)> leave_;
  // increment(row): row's value + 1, written from the value read.
  Procedure<bool(int64_t)> increment_;
};

TEST_P(TupleReadTest, WriteSkewNeverLeavesAShiftShort) {
  constexpr int kShifts = 24;
  // Doctor d of shift s is row shifts[s][d], 1 while on call.
  std::vector<std::vector<int64_t>> shifts(kShifts);
  for (auto& doctors : shifts) {
    for (int d = 0; d < kWorkers; ++d) doctors.push_back(CreateRow(1));
  }
  static_assert(kWorkers == 4);  // `leave` reads four rows
  // Cached on every node, as hot rows are: reads then take no latch.
  for (const std::vector<int64_t>& doctors : shifts) {
    for (int64_t row : doctors) {
      for (int node = 0; node < kNodes; ++node) Value(row, node);
    }
  }
  const cc::CacheStats before = engine_->CacheStats();
  // Every doctor of a shift tries to leave at once, one thread each.
  RunWorkers([&](Session& session, int worker) {
    for (const std::vector<int64_t>& doctors : shifts) {
      auto r = session.Call<bool>(leave_, doctors[worker], doctors[0],
                                  doctors[1], doctors[2], doctors[3]);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  });
  const cc::CacheStats used = engine_->CacheStats() - before;
  for (int s = 0; s < kShifts; ++s) {
    int64_t on_call = 0;
    for (int64_t row : shifts[s]) on_call += Value(row);
    EXPECT_GE(on_call, kMinOnCall) << "shift " << s << " (write skew)";
  }
  if (ReadsUnlatched()) {
    EXPECT_GT(used.optimistic_reads, 0u);
  }
}

TEST_P(TupleReadTest, ReadThenWriteLosesNoIncrement) {
  constexpr int kCounters = 3, kCallsPerWorker = 60;
  std::vector<int64_t> counters;
  for (int c = 0; c < kCounters; ++c) counters.push_back(CreateRow(0));
  const cc::CacheStats before = engine_->CacheStats();
  std::vector<std::atomic<int64_t>> done(kCounters);
  RunWorkers([&](Session& session, int worker) {
    std::mt19937_64 rng(worker + 1);
    for (int i = 0; i < kCallsPerWorker; ++i) {
      const int c = rng() % kCounters;
      auto r = session.Call<bool>(increment_, counters[c]);
      ASSERT_TRUE(r.ok()) << r.status();
      ++done[c];
    }
  });
  const cc::CacheStats used = engine_->CacheStats() - before;
  for (int c = 0; c < kCounters; ++c) {
    EXPECT_EQ(Value(counters[c]), done[c].load())
        << "counter " << c << " (lost update)";
  }
  if (ReadsUnlatched()) {
    EXPECT_GT(used.optimistic_reads, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsProtocols, TupleReadTest,
                         ::testing::ValuesIn(testing::AnomalyConfigs()),
                         testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
