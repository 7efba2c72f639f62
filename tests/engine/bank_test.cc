// Transactions under each algorithm, protocol and number of compute nodes:
// bank transfers keep the total, a concurrent reader always sees the exact
// total, hot counters lose no update, aborted transactions leave no trace,
// and table and index stay consistent under concurrent inserts and deletes.

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
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

constexpr int kAccounts = 48;
constexpr int64_t kInitialBalance = 1000;
constexpr int kThreadsPerNode = 2;

class BankTest : public ::testing::TestWithParam<testing::TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::TxnTestOptions(GetParam()));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                 {"balance", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    accounts_ = *engine_->CreateTable("accounts", *schema);
    by_id_ = *engine_->CreateIndex("accounts_by_id", accounts_, 8, true);
    RegisterProcedures();
  }

  void RegisterProcedures() {
    const txn::TableId accounts = accounts_;
    const txn::IndexId by_id = by_id_;
    const storage::Schema* schema = *engine_->schema(accounts_);
    create_ = *engine_->RegisterProcedure(
        "create",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
            [=](Txn& txn, int64_t id, int64_t balance) -> absl::StatusOr<bool> {
              storage::TupleBuffer t(*schema);
              t.SetInt(0, id);
              t.SetInt(1, balance);
              auto addr = txn.Insert(accounts, t);
              if (!addr.ok()) return addr.status();
              if (absl::Status added =
                      txn.AddIndexEntry(by_id, AccountKey(id), *addr);
                  !added.ok()) {
                return added;
              }
              return true;
            }));
    transfer_ = *engine_->RegisterProcedure(
        "transfer",
        std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, int64_t)>(
            [=](Txn& txn, int64_t from, int64_t to,
                int64_t amount) -> absl::StatusOr<bool> {
              auto a = txn.Lookup(by_id, AccountKey(from));
              if (!a.ok()) return a.status();
              auto b = txn.Lookup(by_id, AccountKey(to));
              if (!b.ok()) return b.status();
              auto fa = txn.Modify(accounts, *a);
              if (!fa.ok()) return fa.status();
              const int64_t balance = (*fa)->view().GetInt(1);
              if (balance < amount) return txn.UserAbort("insufficient funds");
              (*fa)->SetInt(1, balance - amount);
              auto fb = txn.Modify(accounts, *b);
              if (!fb.ok()) return fb.status();
              (*fb)->SetInt(1, (*fb)->view().GetInt(1) + amount);
              return true;
            }));
    sum_ = *engine_->RegisterProcedure(
        "sum", std::function<absl::StatusOr<int64_t>(Txn&)>(
                   [=](Txn& txn) -> absl::StatusOr<int64_t> {
                     int64_t sum = 0;
                     for (int64_t id = 0; id < kAccounts; ++id) {
                       auto addr = txn.Lookup(by_id, AccountKey(id));
                       if (!addr.ok()) return addr.status();
                       auto t = txn.Read(accounts, *addr);
                       if (!t.ok()) return t.status();
                       if (t->GetInt(1) < 0) {
                         return absl::InternalError("negative balance");
                       }
                       sum += t->GetInt(1);
                     }
                     return sum;
                   }));
    // Modifies two accounts, then rolls back: must leave nothing behind.
    doomed_ = *engine_->RegisterProcedure(
        "doomed", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                      [=](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                        auto a = txn.Lookup(by_id, AccountKey(id));
                        if (!a.ok()) return a.status();
                        auto t = txn.Modify(accounts, *a);
                        if (!t.ok()) return t.status();
                        (*t)->SetInt(1, -999999);
                        storage::TupleBuffer ghost(*schema);
                        ghost.SetInt(0, 1000000 + id);
                        auto g = txn.Insert(accounts, ghost);
                        if (!g.ok()) return g.status();
                        if (absl::Status added = txn.AddIndexEntry(
                                by_id, AccountKey(1000000 + id), *g);
                            !added.ok()) {
                          return added;
                        }
                        return txn.UserAbort("injected");
                      }));
  }

  int nodes() const { return GetParam().compute_nodes; }

  std::unique_ptr<Engine> engine_;
  txn::TableId accounts_ = 0;
  txn::IndexId by_id_ = 0;
  ProcedureId create_ = 0, transfer_ = 0, sum_ = 0, doomed_ = 0;
};

TEST_P(BankTest, TransfersKeepTheTotalAndReadersSeeIt) {
  {
    auto s = *engine_->NewSession(0);
    for (int64_t id = 0; id < kAccounts; ++id) {
      ASSERT_TRUE(s->Call<bool>(create_, id, kInitialBalance).ok());
    }
  }
  const int64_t total = kAccounts * kInitialBalance;
  constexpr int kTransfersPerThread = 150;
  // Writers keep going until the reader has summed this often meanwhile,
  // so the reader's checks overlap the transfers.
  constexpr int kMinSums = 20;
  std::atomic<int> failures{0}, bad_sums{0}, sums{0}, user_aborts{0};
  std::atomic<uint64_t> calls{0};
  std::atomic<bool> writers_done{false};
  std::vector<std::thread> threads;
  for (int n = 0; n < nodes(); ++n) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      threads.emplace_back([&, n, t] {
        auto session = *engine_->NewSession(n);
        std::mt19937_64 rng(n * 10 + t);
        for (int i = 0; i < kTransfersPerThread || sums.load() < kMinSums;
             ++i) {
          calls++;
          const int64_t from = rng() % kAccounts;
          const int64_t to = (from + 1 + rng() % (kAccounts - 1)) % kAccounts;
          // Amounts up to 1.5x the initial balance: some must be refused.
          auto r =
              session->Call<bool>(transfer_, from, to, int64_t(rng() % 1500));
          if (!r.ok()) {
            if (IsUserAbort(r.status())) {
              user_aborts++;
            } else {
              ADD_FAILURE() << r.status();
              failures++;
            }
          }
        }
      });
    }
  }
  // A reader on the last node sums every account while transfers run.
  threads.emplace_back([&] {
    auto session = *engine_->NewSession(nodes() - 1);
    while (!writers_done.load()) {
      auto sum = session->Call<int64_t>(sum_);
      ASSERT_TRUE(sum.ok()) << sum.status();
      sums++;
      if (*sum != total) {
        ADD_FAILURE() << "a reader saw total " << *sum << ", not " << total;
        bad_sums++;
      }
    }
  });
  for (size_t i = 0; i + 1 < threads.size(); ++i) threads[i].join();
  writers_done = true;
  threads.back().join();

  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(bad_sums.load(), 0);
  EXPECT_GE(sums.load(), kMinSums);
  auto session = *engine_->NewSession(0);
  EXPECT_EQ(*session->Call<int64_t>(sum_), total);
  // Stats add up: every transfer call either committed or was a user abort.
  const ProcedureStats stats = engine_->Stats()[transfer_];
  EXPECT_EQ(stats.calls, calls.load());
  EXPECT_EQ(stats.commits + stats.aborts_for(txn::AbortReason::kUser),
            stats.calls);
  EXPECT_EQ(stats.aborts_for(txn::AbortReason::kUser),
            uint64_t(user_aborts.load()));
  EXPECT_GT(user_aborts.load(), 0);
}

TEST_P(BankTest, AbortedTransactionsLeaveNoTrace) {
  auto session = *engine_->NewSession(0);
  for (int64_t id = 0; id < kAccounts; ++id) {
    ASSERT_TRUE(session->Call<bool>(create_, id, kInitialBalance).ok());
  }
  std::vector<std::thread> threads;
  for (int n = 0; n < nodes(); ++n) {
    threads.emplace_back([&, n] {
      auto s = *engine_->NewSession(n);
      for (int i = 0; i < 40; ++i) {
        auto r = s->Call<bool>(doomed_, int64_t((n * 7 + i) % kAccounts));
        ASSERT_FALSE(r.ok());
        EXPECT_TRUE(IsUserAbort(r.status())) << r.status();
        // Interleave real work so aborts race with commits.
        ASSERT_TRUE(s->Call<bool>(transfer_, int64_t(i % kAccounts),
                                  int64_t((i + 1) % kAccounts), int64_t(1))
                        .ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(*session->Call<int64_t>(sum_), kAccounts * kInitialBalance);
  // No ghost account reachable through the index ...
  auto probe =
      engine_
          ->RegisterProcedure(
              "probe", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                           [&](Txn& txn, int64_t id) -> absl::StatusOr<bool> {
                             return txn.Lookup(by_id_, AccountKey(id)).ok();
                           }))
          .status();
  EXPECT_EQ(probe.code(), absl::StatusCode::kFailedPrecondition);  // frozen
  cc::GclManager& m = **EngineInternals::manager(*engine_, 0);
  auto ctx = *m.NewThreadContext();
  auto catalog = *storage::Catalog::Open(m, *ctx);
  auto desc = *catalog->FindTable(*ctx, "accounts");
  auto heap = *storage::HeapTable::Open(m, *ctx, desc.root, desc.schema);
  // ... and no ghost tuple left live in the heap.
  int live = 0;
  ASSERT_TRUE(heap->Scan(*ctx,
                         [&](TupleAddress, const uint8_t* tuple) {
                           ++live;
                           storage::TupleView v(desc.schema, tuple);
                           EXPECT_LT(v.GetInt(0), kAccounts) << "ghost tuple";
                           EXPECT_GE(v.GetInt(1), 0);
                           return true;
                         })
                  .ok());
  EXPECT_EQ(live, kAccounts);
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, BankTest,
    ::testing::ValuesIn(testing::TxnTestConfigs(testing::TestProtocols())),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
