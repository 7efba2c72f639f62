// Hot counters lose no update, and table and index agree after concurrent
// inserts and deletes, under each algorithm, protocol and node count.

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "storage/catalog.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::AccountKey;
using txn::Txn;

constexpr int kThreadsPerNode = 2;

class CountersTest : public ::testing::TestWithParam<testing::TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::TxnTestOptions(GetParam()));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    schema_ =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"value", storage::ColumnType::kInt64}});
    table_ = *engine_->CreateTable("items", schema_);
    index_ = *engine_->CreateIndex("items_by_id", table_, 8, true);
    const txn::TableId table = table_;
    const txn::IndexId index = index_;
    const storage::Schema* schema = *engine_->schema(table_);
    insert_ = *engine_->RegisterProcedure(
        "insert", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                      [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                        storage::TupleBuffer t(*schema);
                        t.SetInt(0, id);
                        auto addr = txn.Insert(table, t);
                        if (!addr.ok()) return addr.status();
                        if (absl::Status added =
                                txn.AddIndexEntry(index, AccountKey(id), *addr);
                            !added.ok()) {
                          return added;
                        }
                        return true;
                      }));
    erase_ = *engine_->RegisterProcedure(
        "erase", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                     [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                       auto addr = txn.Lookup(index, AccountKey(id));
                       if (!addr.ok()) return addr.status();
                       if (absl::Status s = txn.Delete(table, *addr); !s.ok()) {
                         return s;
                       }
                       if (absl::Status added = txn.RemoveIndexEntry(
                               index, AccountKey(id), *addr);
                           !added.ok()) {
                         return added;
                       }
                       return true;
                     }));
    increment_ = *engine_->RegisterProcedure(
        "increment", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                         [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                           auto addr = txn.Lookup(index, AccountKey(id));
                           if (!addr.ok()) return addr.status();
                           auto t = txn.Modify(table, *addr);
                           if (!t.ok()) return t.status();
                           (*t)->SetInt(1, (*t)->view().GetInt(1) + 1);
                           return true;
                         }));
    read_ = *engine_->RegisterProcedure(
        "read", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                    [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
                      auto addr = txn.Lookup(index, AccountKey(id));
                      if (!addr.ok()) return addr.status();
                      auto t = txn.Read(table, *addr);
                      if (!t.ok()) return t.status();
                      if (t->GetInt(0) != id) {
                        return absl::InternalError("index points elsewhere");
                      }
                      return t->GetInt(1);
                    }));
  }

  int nodes() const { return GetParam().compute_nodes; }

  std::unique_ptr<Engine> engine_;
  storage::Schema schema_;
  txn::TableId table_ = 0;
  txn::IndexId index_ = 0;
  ProcedureId insert_ = 0, erase_ = 0, increment_ = 0, read_ = 0;
};

TEST_P(CountersTest, HotCountersLoseNoUpdate) {
  constexpr int kCounters = 3;
  constexpr int kIncrementsPerThread = 200;
  {
    auto s = *engine_->NewSession(0);
    for (int64_t c = 0; c < kCounters; ++c) {
      ASSERT_TRUE(s->Call<bool>(insert_, c).ok());
    }
  }
  std::vector<std::thread> threads;
  std::vector<std::array<int, kCounters>> done(nodes() * kThreadsPerNode);
  for (int n = 0; n < nodes(); ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        auto session = *engine_->NewSession(n);
        auto& mine = done[n * kThreadsPerNode + t];
        mine.fill(0);
        for (int i = 0; i < kIncrementsPerThread; ++i) {
          const int64_t c = (i + t) % kCounters;
          auto r = session->Call<bool>(increment_, c);
          ASSERT_TRUE(r.ok()) << r.status();
          mine[c]++;
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  auto session = *engine_->NewSession(0);
  for (int64_t c = 0; c < kCounters; ++c) {
    int expected = 0;
    for (const auto& d : done) expected += d[c];
    EXPECT_EQ(*session->Call<int64_t>(read_, c), expected) << "counter " << c;
  }
}

TEST_P(CountersTest, TableAndIndexAgreeAfterConcurrentInsertsAndDeletes) {
  constexpr int kKeys = 64;
  constexpr int kOpsPerThread = 120;
  std::vector<std::thread> threads;
  std::atomic<int> unexpected{0};
  for (int n = 0; n < nodes(); ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        auto session = *engine_->NewSession(n);
        std::mt19937_64 rng(n * 31 + t);
        for (int i = 0; i < kOpsPerThread; ++i) {
          const int64_t key = rng() % kKeys;
          auto r = (rng() % 2) ? session->Call<bool>(insert_, key)
                               : session->Call<bool>(erase_, key);
          // Inserting a present key or erasing an absent one is the
          // caller's mistake, reported as such; anything else is a bug.
          if (!r.ok() && !absl::IsAlreadyExists(r.status()) &&
              !absl::IsNotFound(r.status())) {
            ADD_FAILURE() << r.status();
            unexpected++;
          }
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(unexpected.load(), 0);

  // Every key the index has points to a live tuple with that key, and every
  // live tuple of the heap is reachable through the index exactly once.
  cc::GclManager& m = **EngineInternals::manager(*engine_, 0);
  auto ctx = *m.NewThreadContext();
  auto catalog = *storage::Catalog::Open(m, *ctx);
  auto desc = *catalog->FindTable(*ctx, "items");
  auto heap = *storage::HeapTable::Open(m, *ctx, desc.root, desc.schema);
  absl::flat_hash_map<int64_t, TupleAddress> live;
  ASSERT_TRUE(heap->Scan(*ctx,
                         [&](TupleAddress a, const uint8_t* tuple) {
                           const int64_t id =
                               storage::TupleView(desc.schema, tuple).GetInt(0);
                           EXPECT_TRUE(live.emplace(id, a).second)
                               << "two live tuples with id " << id;
                           return true;
                         })
                  .ok());
  auto session = *engine_->NewSession(0);
  int indexed = 0;
  for (int64_t key = 0; key < kKeys; ++key) {
    auto r = session->Call<int64_t>(read_, key);
    if (absl::IsNotFound(r.status())) {
      EXPECT_FALSE(live.contains(key)) << "live tuple " << key << " unindexed";
      continue;
    }
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(live.contains(key)) << "index entry " << key << " dangles";
    ++indexed;
  }
  EXPECT_EQ(indexed, static_cast<int>(live.size()));
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, CountersTest,
    ::testing::ValuesIn(testing::TxnTestConfigs(testing::TestProtocols())),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
