// Anomalies a serializable engine must never show, written against the
// public API only (engine.h, session.h, and the Txn a procedure gets), for
// every algorithm x protocol at two compute nodes with dropped and delayed
// invalidations:
//   - phantom, range form: "count the rows of a group, insert one if fewer
//     than the limit" racing itself must never exceed the limit;
//   - phantom, point form: "claim K in A if K is absent from B" racing the
//     mirror transaction must never leave K in both;
//   - predicate write skew: "leave the shift if someone else is on it"
//     must never empty a shift;
//   - lost update through an index: "append max(seq) + 1" must never write
//     one sequence number twice;
//   - ghost index entries: a committed reader never sees an entry of a
//     commit that failed;
//   - delete and re-insert of one unique key in one transaction, in either
//     order of calls.
// Each worker's procedure waits a little between its read and its write so
// that racing transactions overlap.

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/clock.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/anomaly_testing.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/test_fabric.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::Pause;
using testing::TxnTestConfig;
using txn::Txn;

constexpr int kNodes = testing::kAnomalyNodes;
constexpr int kThreadsPerNode = 2;
constexpr int64_t kMaxId = INT64_MAX;
constexpr uint64_t kPoolBytes = 4 << 20;

std::string GroupKey(int64_t group, int64_t id) {
  return index::KeyBuilder().Int64(group).Int64(id).Build(16);
}
std::string Key8(int64_t k) { return index::KeyBuilder().Int64(k).Build(8); }

class AnomalyTest : public ::testing::TestWithParam<TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::AnomalyOptions(GetParam(), kPoolBytes));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"group", storage::ColumnType::kInt64},
                                 {"id", storage::ColumnType::kInt64},
                                 {"value", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    rows_ = *engine_->CreateTable("rows", *schema);
    schema_ = *engine_->schema(rows_);
    by_group_ = *engine_->CreateIndex("by_group", rows_, 16, true);
    claims_a_ = *engine_->CreateIndex("claims_a", rows_, 8, true);
    claims_b_ = *engine_->CreateIndex("claims_b", rows_, 8, true);
    seq_ = *engine_->CreateIndex("seq", rows_, 16, /*unique=*/false);
    ghost_ = *engine_->CreateIndex("ghost", rows_, 8, true);
    // One row per page: rows conflict only through the index, never
    // because two of them share a page latch.
    storage::TableOptions one_per_page;
    one_per_page.max_rows_per_page = 1;
    doctors_ = *engine_->CreateTable("doctors", *schema, one_per_page);
    on_call_ = *engine_->CreateIndex("on_call", doctors_, 16, true);
    taken_ = *engine_->CreateIndex("taken", rows_, 8, true);
  }

  absl::StatusOr<TupleAddress> InsertRow(Txn& txn, int64_t group, int64_t id,
                                         int64_t value) {
    storage::TupleBuffer t(*schema_);
    t.SetInt(0, group);
    t.SetInt(1, id);
    t.SetInt(2, value);
    return txn.Insert(rows_, t);
  }

  // Rows of `group` in by_group, or an error.
  absl::StatusOr<std::vector<TupleAddress>> GroupRows(Txn& txn, int64_t group) {
    std::vector<TupleAddress> found;
    const std::string low = GroupKey(group, 0);
    const std::string high = GroupKey(group, kMaxId);
    absl::Status s =
        txn.Scan(by_group_, low, high, /*forward=*/true, UINT64_MAX,
                 [&](std::string_view, TupleAddress a) {
                   found.push_back(a);
                   return true;
                 });
    if (!s.ok()) return s;
    return found;
  }

  // Runs `work(session, thread index, rng)` on kThreadsPerNode threads per
  // compute node, each with its own session.
  template <typename Work>
  void RunWorkers(Work work) {
    // Sessions are opened here, one after the other: Engine's session list
    // is guarded by an absl::Mutex, which TSan cannot see through.
    std::vector<std::unique_ptr<Session>> sessions;
    for (int node = 0; node < kNodes; ++node) {
      for (int t = 0; t < kThreadsPerNode; ++t) {
        auto session = engine_->NewSession(node);
        ASSERT_TRUE(session.ok()) << session.status();
        sessions.push_back(*std::move(session));
      }
    }
    std::vector<std::thread> threads;
    for (int index = 0; index < kNodes * kThreadsPerNode; ++index) {
      threads.emplace_back([index, &work, &sessions] {
        std::mt19937_64 rng(index * 7919 + 1);
        work(*sessions[index], index, rng);
      });
    }
    for (auto& t : threads) t.join();
  }

  std::unique_ptr<Engine> engine_;
  const storage::Schema* schema_ = nullptr;
  txn::TableId rows_ = 0, doctors_ = 0;
  txn::IndexId by_group_ = 0, claims_a_ = 0, claims_b_ = 0, seq_ = 0,
               ghost_ = 0, taken_ = 0, on_call_ = 0;
};

// Range phantom: no group ever gets more than kLimit rows.
TEST_P(AnomalyTest, RangeCountNeverExceedsLimit) {
  constexpr int kGroups = 6, kLimit = 3, kCallsPerThread = 60;
  auto add = *engine_->RegisterProcedure(
      "add_if_room",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
          [this](Txn& txn, int64_t group, int64_t id) -> absl::StatusOr<bool> {
            auto rows = GroupRows(txn, group);
            if (!rows.ok()) return rows.status();
            Pause();
            if (rows->size() >= kLimit) return false;
            auto a = InsertRow(txn, group, id, 0);
            if (!a.ok()) return a.status();
            if (absl::Status added =
                    txn.AddIndexEntry(by_group_, GroupKey(group, id), *a);
                !added.ok()) {
              return added;
            }
            return true;
          }));
  auto count = *engine_->RegisterProcedure(
      "count", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                   [this](Txn& txn, int64_t group) -> absl::StatusOr<int64_t> {
                     auto rows = GroupRows(txn, group);
                     if (!rows.ok()) return rows.status();
                     return static_cast<int64_t>(rows->size());
                   }));
  RunWorkers([&](Session& session, int thread, std::mt19937_64& rng) {
    for (int i = 0; i < kCallsPerThread; ++i) {
      const int64_t group = rng() % kGroups;
      auto r = session.Call<bool>(add, group, int64_t{thread * 100000 + i + 1});
      ASSERT_TRUE(r.ok()) << r.status();
    }
  });
  auto session = *engine_->NewSession(0);
  for (int64_t g = 0; g < kGroups; ++g) {
    auto n = session->Call<int64_t>(count, g);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_LE(*n, kLimit) << "group " << g << ": a phantom let a transaction "
                          << "insert past the limit it counted";
    EXPECT_GT(*n, 0) << "group " << g;
  }
}

// Point phantom: "claim K in A if K is absent from B" and its mirror
// never both succeed for one K.
TEST_P(AnomalyTest, AbsentKeyLookupIsProtected) {
  constexpr int kKeys = 150;
  auto claim = *engine_->RegisterProcedure(
      "claim",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, bool)>(
          [this](Txn& txn, int64_t k, bool into_a) -> absl::StatusOr<bool> {
            const txn::IndexId mine = into_a ? claims_a_ : claims_b_;
            const txn::IndexId other = into_a ? claims_b_ : claims_a_;
            if (k % 2 == 0) {  // the batch form, as TPC-C's New-Order
              const std::string key = Key8(k);
              std::string_view keys[] = {key};
              TupleAddress found[1];
              absl::Status s = txn.LookupBatch(other, keys, found);
              if (!s.ok()) return s;
              if (!found[0].is_null()) return false;
            } else {
              auto found = txn.Lookup(other, Key8(k));
              if (found.ok()) return false;
              if (!absl::IsNotFound(found.status())) return found.status();
            }
            Pause();
            auto a = InsertRow(txn, -1, k, 0);
            if (!a.ok()) return a.status();
            if (absl::Status added = txn.AddIndexEntry(mine, Key8(k), *a);
                !added.ok()) {
              return added;
            }
            return true;
          }));
  auto both = *engine_->RegisterProcedure(
      "both", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                  [this](Txn& txn, int64_t k) -> absl::StatusOr<bool> {
                    auto a = txn.Lookup(claims_a_, Key8(k));
                    auto b = txn.Lookup(claims_b_, Key8(k));
                    return a.ok() && b.ok();
                  }));
  RunWorkers([&](Session& session, int thread, std::mt19937_64&) {
    for (int64_t k = 0; k < kKeys; ++k) {
      auto r = session.Call<bool>(claim, k, thread % 2 == 0);
      // AlreadyExists: a thread of the same side claimed k first.
      ASSERT_TRUE(r.ok() || absl::IsAlreadyExists(r.status())) << r.status();
    }
  });
  auto session = *engine_->NewSession(1);
  int doubly_claimed = 0;
  for (int64_t k = 0; k < kKeys; ++k) {
    auto r = session->Call<bool>(both, k);
    ASSERT_TRUE(r.ok()) << r.status();
    doubly_claimed += *r;
  }
  EXPECT_EQ(doubly_claimed, 0)
      << "keys claimed in both indexes: each claim saw the other absent";
}

// Predicate write skew: every shift starts with kOnCall doctors; one leaves
// only if the scan shows more than kMinOnCall on it. No shift may end up
// with fewer.
TEST_P(AnomalyTest, WriteSkewNeverEmptiesAShift) {
  constexpr int kShifts = 24, kOnCall = 4, kMinOnCall = 2;
  auto join = *engine_->RegisterProcedure(
      "join",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
          [this](Txn& txn, int64_t shift, int64_t id) -> absl::StatusOr<bool> {
            storage::TupleBuffer t(*schema_);
            t.SetInt(0, shift);
            t.SetInt(1, id);
            auto a = txn.Insert(doctors_, t);
            if (!a.ok()) return a.status();
            if (absl::Status added =
                    txn.AddIndexEntry(on_call_, GroupKey(shift, id), *a);
                !added.ok()) {
              return added;
            }
            return true;
          }));
  auto leave = *engine_->RegisterProcedure(
      "leave",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
          [this](Txn& txn, int64_t shift, int64_t id) -> absl::StatusOr<bool> {
            // Only the index: no tuple read that 2PL or OCC would protect.
            std::vector<TupleAddress> on_call;
            TupleAddress me;
            absl::Status s = txn.Scan(
                on_call_, GroupKey(shift, 0), GroupKey(shift, kMaxId), true,
                UINT64_MAX, [&](std::string_view key, TupleAddress a) {
                  if (key == GroupKey(shift, id)) me = a;
                  on_call.push_back(a);
                  return true;
                });
            if (!s.ok()) return s;
            if (me.is_null() || on_call.size() <= kMinOnCall) return false;
            Pause();
            if (absl::Status added =
                    txn.RemoveIndexEntry(on_call_, GroupKey(shift, id), me);
                !added.ok()) {
              return added;
            }
            if (absl::Status s = txn.Delete(doctors_, me); !s.ok()) return s;
            return true;
          }));
  auto count = *engine_->RegisterProcedure(
      "count", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                   [this](Txn& txn, int64_t shift) -> absl::StatusOr<int64_t> {
                     int64_t n = 0;
                     absl::Status s = txn.Scan(
                         on_call_, GroupKey(shift, 0), GroupKey(shift, kMaxId),
                         true, UINT64_MAX, [&](std::string_view, TupleAddress) {
                           ++n;
                           return true;
                         });
                     if (!s.ok()) return s;
                     return n;
                   }));
  {
    auto session = *engine_->NewSession(0);
    for (int64_t s = 0; s < kShifts; ++s) {
      for (int64_t d = 1; d <= kOnCall; ++d) {
        ASSERT_TRUE(session->Call<bool>(join, s, d).ok());
      }
    }
  }
  // Each shift's doctors try to leave at once, one thread per doctor.
  static_assert(kOnCall == kNodes * kThreadsPerNode);
  RunWorkers([&](Session& session, int thread, std::mt19937_64&) {
    for (int64_t s = 0; s < kShifts; ++s) {
      const int64_t id = thread % kOnCall + 1;
      auto r = session.Call<bool>(leave, s, id);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  });
  auto session = *engine_->NewSession(1);
  for (int64_t s = 0; s < kShifts; ++s) {
    auto n = session->Call<int64_t>(count, s);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_GE(*n, kMinOnCall) << "shift " << s << " (write skew)";
  }
}

// Lost update through an index: each append takes the group's largest
// sequence number (a backward scan of a non-unique index) and adds the
// next; the sequence numbers must come out 1..n, none twice.
TEST_P(AnomalyTest, AppendsNeverReuseASequenceNumber) {
  constexpr int kGroups = 3, kCallsPerThread = 40;
  auto append = *engine_->RegisterProcedure(
      "append",
      std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
          [this](Txn& txn, int64_t group) -> absl::StatusOr<int64_t> {
            int64_t last = 0;
            absl::Status s = txn.Scan(
                seq_, GroupKey(group, 0), GroupKey(group, kMaxId),
                /*forward=*/false, 1, [&](std::string_view, TupleAddress a) {
                  auto row = txn.Read(rows_, a);
                  if (row.ok()) last = row->GetInt(1);
                  return false;
                });
            if (!s.ok()) return s;
            Pause();
            auto a = InsertRow(txn, group, last + 1, 0);
            if (!a.ok()) return a.status();
            if (absl::Status added =
                    txn.AddIndexEntry(seq_, GroupKey(group, last + 1), *a);
                !added.ok()) {
              return added;
            }
            return last + 1;
          }));
  auto list = *engine_->RegisterProcedure(
      "list",
      std::function<absl::StatusOr<std::vector<int64_t>>(Txn&, int64_t)>(
          [this](Txn& txn,
                 int64_t group) -> absl::StatusOr<std::vector<int64_t>> {
            std::vector<int64_t> seqs;
            absl::Status s =
                txn.Scan(seq_, GroupKey(group, 0), GroupKey(group, kMaxId),
                         /*forward=*/true, UINT64_MAX,
                         [&](std::string_view, TupleAddress a) {
                           auto row = txn.Read(rows_, a);
                           seqs.push_back(row.ok() ? row->GetInt(1) : -1);
                           return true;
                         });
            if (!s.ok()) return s;
            return seqs;
          }));
  RunWorkers([&](Session& session, int, std::mt19937_64& rng) {
    for (int i = 0; i < kCallsPerThread; ++i) {
      auto r = session.Call<int64_t>(append, int64_t(rng() % kGroups));
      ASSERT_TRUE(r.ok()) << r.status();
    }
  });
  auto session = *engine_->NewSession(0);
  int64_t total = 0;
  for (int64_t g = 0; g < kGroups; ++g) {
    auto seqs = session->Call<std::vector<int64_t>>(list, g);
    ASSERT_TRUE(seqs.ok()) << seqs.status();
    for (size_t i = 0; i < seqs->size(); ++i) {
      EXPECT_EQ((*seqs)[i], static_cast<int64_t>(i + 1))
          << "group " << g << ": sequence numbers reused (lost update)";
    }
    total += seqs->size();
  }
  EXPECT_EQ(total, kNodes * kThreadsPerNode * kCallsPerThread);
}

// Ghost entries: "doomed" transactions add an odd key to `ghost`, then a
// key `taken` already holds, so every one of their commits fails. A
// committed reader must never see an odd key.
TEST_P(AnomalyTest, FailedCommitLeavesNoVisibleIndexEntry) {
  constexpr absl::Duration kRun = absl::Milliseconds(250);
  auto insert = *engine_->RegisterProcedure(
      "insert",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, bool)>(
          [this](Txn& txn, int64_t k, bool doomed) -> absl::StatusOr<bool> {
            auto a = InsertRow(txn, -2, k, 0);
            if (!a.ok()) return a.status();
            if (absl::Status added = txn.AddIndexEntry(ghost_, Key8(k), *a);
                !added.ok()) {
              return added;
            }
            if (doomed) {
              if (absl::Status added = txn.AddIndexEntry(taken_, Key8(0), *a);
                  !added.ok()) {
                return added;
              }
            }
            return true;
          }));
  auto odd_seen = *engine_->RegisterProcedure(
      "odd_seen", std::function<absl::StatusOr<int64_t>(Txn&)>(
                      [this](Txn& txn) -> absl::StatusOr<int64_t> {
                        int64_t odd = 0;
                        absl::Status s =
                            txn.Scan(ghost_, std::nullopt, std::nullopt, true,
                                     UINT64_MAX,
                                     [&](std::string_view key, TupleAddress) {
                                       odd += (key.back() & 1) != 0;
                                       return true;
                                     });
                        if (!s.ok()) return s;
                        return odd;
                      }));
  // Key 0 of `taken`: every doomed commit collides with it.
  auto take = *engine_->RegisterProcedure(
      "take",
      std::function<absl::StatusOr<bool>(Txn&)>(
          [this](Txn& txn) -> absl::StatusOr<bool> {
            auto a = InsertRow(txn, -3, 0, 0);
            if (!a.ok()) return a.status();
            if (absl::Status added = txn.AddIndexEntry(taken_, Key8(0), *a);
                !added.ok()) {
              return added;
            }
            return true;
          }));
  ASSERT_TRUE((*engine_->NewSession(0))->Call<bool>(take).ok());
  std::atomic<int64_t> ghosts{0}, reads{0}, failed{0};
  const absl::Time end = absl::Now() + kRun;
  RunWorkers([&](Session& session, int thread, std::mt19937_64& rng) {
    int64_t next = thread + 1;
    while (absl::Now() < end) {
      if (thread % 2 == 0) {
        // Writers: mostly doomed inserts of odd keys, some good even ones.
        const bool doomed = rng() % 4 != 0;
        const int64_t k = 2 * (next += 4) + (doomed ? 1 : 0);
        auto r = session.Call<bool>(insert, k, doomed);
        if (!r.ok()) {
          ASSERT_TRUE(absl::IsAlreadyExists(r.status())) << r.status();
          ++failed;
        }
      } else {
        auto n = session.Call<int64_t>(odd_seen);
        ASSERT_TRUE(n.ok()) << n.status();
        ghosts += *n;
        ++reads;
      }
    }
  });
  EXPECT_GT(failed.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(ghosts.load(), 0)
      << "committed readers saw index entries of commits that failed";
}

// Remove a unique key's entry and add the same key for a new row in one
// transaction, in either order of calls.
TEST_P(AnomalyTest, DeleteThenReinsertSameKey) {
  auto add = *engine_->RegisterProcedure(
      "add",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
          [this](Txn& txn, int64_t k, int64_t v) -> absl::StatusOr<bool> {
            auto a = InsertRow(txn, -4, k, v);
            if (!a.ok()) return a.status();
            if (absl::Status added = txn.AddIndexEntry(claims_a_, Key8(k), *a);
                !added.ok()) {
              return added;
            }
            return true;
          }));
  auto replace = *engine_->RegisterProcedure(
      "replace",
      std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t, bool)>(
          [this](Txn& txn, int64_t k, int64_t v,
                 bool add_first) -> absl::StatusOr<bool> {
            auto old = txn.Lookup(claims_a_, Key8(k));
            if (!old.ok()) return old.status();
            auto a = InsertRow(txn, -4, k, v);
            if (!a.ok()) return a.status();
            if (add_first) {
              if (absl::Status added =
                      txn.AddIndexEntry(claims_a_, Key8(k), *a);
                  !added.ok()) {
                return added;
              }
            }
            if (absl::Status added =
                    txn.RemoveIndexEntry(claims_a_, Key8(k), *old);
                !added.ok()) {
              return added;
            }
            if (!add_first) {
              if (absl::Status added =
                      txn.AddIndexEntry(claims_a_, Key8(k), *a);
                  !added.ok()) {
                return added;
              }
            }
            if (absl::Status s = txn.Delete(rows_, *old); !s.ok()) return s;
            return true;
          }));
  auto value = *engine_->RegisterProcedure(
      "value", std::function<absl::StatusOr<int64_t>(Txn&, int64_t)>(
                   [this](Txn& txn, int64_t k) -> absl::StatusOr<int64_t> {
                     auto a = txn.Lookup(claims_a_, Key8(k));
                     if (!a.ok()) return a.status();
                     auto row = txn.Read(rows_, *a);
                     if (!row.ok()) return row.status();
                     return row->GetInt(2);
                   }));
  auto session = *engine_->NewSession(1);
  for (int64_t k = 1; k <= 4; ++k) {
    ASSERT_TRUE(session->Call<bool>(add, k, int64_t{10}).ok());
    for (int round = 0; round < 2; ++round) {
      const bool add_first = (k + round) % 2 == 0;
      auto r = session->Call<bool>(replace, k, int64_t{11 + round}, add_first);
      ASSERT_TRUE(r.ok()) << "key " << k << ", add_first=" << add_first << ": "
                          << r.status();
      auto v = session->Call<int64_t>(value, k);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(*v, 11 + round);
    }
  }
}

// 2PL no-wait never waits on a transaction: A reads a row on B's insert
// page and B one on A's (each keeps its shared latch to commit), then
// both insert. Their inserts must not wait for those latches (which only
// the other's commit would release): both calls end within milliseconds.
TEST_P(AnomalyTest, CrossedInsertPagesDoNotWait) {
  std::atomic<int> arrived{0};
  auto read_then_insert = *engine_->RegisterProcedure(
      "read_then_insert",
      std::function<absl::StatusOr<bool>(Txn&, uint64_t)>(
          [&](Txn& txn, uint64_t other_row) -> absl::StatusOr<bool> {
            auto row = txn.Read(rows_, TupleAddress::FromRaw(other_row));
            if (!row.ok()) return row.status();
            // Both hold their read before either inserts (bounded: a
            // retry after an abort does not wait for the other again).
            arrived.fetch_add(1);
            const absl::Time until = absl::Now() + absl::Milliseconds(100);
            while (arrived.load() < 2 && absl::Now() < until) {
              std::this_thread::yield();
            }
            auto a = InsertRow(txn, -5, 1, 0);
            if (!a.ok()) return a.status();
            return true;
          }));
  auto insert = *engine_->RegisterProcedure(
      "insert_row", std::function<absl::StatusOr<uint64_t>(Txn&)>(
                        [this](Txn& txn) -> absl::StatusOr<uint64_t> {
                          auto a = InsertRow(txn, -5, 0, 0);
                          if (!a.ok()) return a.status();
                          return a->raw();
                        }));
  // Each session's first insert is on the page its later inserts go to.
  auto a = *engine_->NewSession(0);
  auto b = *engine_->NewSession(1);
  const uint64_t row_on_a = *a->Call<uint64_t>(insert);
  const uint64_t row_on_b = *b->Call<uint64_t>(insert);
  const absl::Time start = absl::Now();
  std::thread other([&] {
    auto r = b->Call<bool>(read_then_insert, row_on_a);
    EXPECT_TRUE(r.ok() || absl::IsAborted(r.status())) << r.status();
  });
  auto r = a->Call<bool>(read_then_insert, row_on_b);
  EXPECT_TRUE(r.ok() || absl::IsAborted(r.status())) << r.status();
  other.join();
  // The lock timeout is 10 s; the barrier above waits up to 100 ms.
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

// Slots of aborted inserts are reused: far more aborted inserts than the
// pool could hold keep going, and readers of committed rows (found through
// the index, contents checked against their key) never see a reused
// slot's contents.
TEST_P(AnomalyTest, AbortedInsertSlotsAreReused) {
  // Without reuse the 31 in 32 calls that abort would take 4 x 1000 x
  // 31/32 x 64 = 248k slots of 40 bytes (6 to a 256-byte GCL): 10.6 MB,
  // over twice the 4 MiB pool (kPoolBytes); the committed rows take 0.4 MB.
  constexpr int kRowsPerCall = 64;
  constexpr int kCallsPerThread = 1000;
  auto insert_then_abort = *engine_->RegisterProcedure(
      "insert_then_abort",
      std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
          [this](Txn& txn, int64_t k) -> absl::StatusOr<bool> {
            for (int i = 0; i < kRowsPerCall; ++i) {
              auto a = InsertRow(txn, -6, k, -1);
              if (!a.ok()) return a.status();
              if (absl::Status added =
                      txn.AddIndexEntry(ghost_, Key8(k * kRowsPerCall + i), *a);
                  !added.ok()) {
                return added;
              }
            }
            if (k % 32 != 0) return txn.UserAbort("aborted insert");
            return true;
          }));
  auto check = *engine_->RegisterProcedure(
      "check", std::function<absl::StatusOr<int64_t>(Txn&)>(
                   [this](Txn& txn) -> absl::StatusOr<int64_t> {
                     int64_t wrong = 0;
                     std::vector<std::pair<int64_t, TupleAddress>> rows;
                     absl::Status s = txn.Scan(
                         ghost_, std::nullopt, std::nullopt, true, 64,
                         [&](std::string_view key, TupleAddress a) {
                           rows.emplace_back(index::DecodeInt64(key.data()), a);
                           return true;
                         });
                     if (!s.ok()) return s;
                     for (const auto& [k, a] : rows) {
                       auto row = txn.Read(rows_, a);
                       if (!row.ok()) return row.status();
                       wrong += row->GetInt(1) != k / kRowsPerCall ||
                                row->GetInt(0) != -6;
                     }
                     return wrong;
                   }));
  std::atomic<int64_t> wrong{0};
  RunWorkers([&](Session& session, int thread, std::mt19937_64&) {
    for (int i = 0; i < kCallsPerThread; ++i) {
      if (thread == 0 && i % 16 == 0) {
        auto w = session.Call<int64_t>(check);
        ASSERT_TRUE(w.ok()) << w.status();
        wrong += *w;
      }
      const int64_t k = int64_t{thread} * kCallsPerThread + i;
      auto r = session.Call<bool>(insert_then_abort, k);
      ASSERT_TRUE(r.ok() || absl::IsAborted(r.status())) << r.status();
    }
  });
  EXPECT_EQ(wrong.load(), 0) << "rows read through the index with the "
                                "contents of another row";
}

// A transaction that latches more GCLs than the cache has frames (2PL keeps
// every page it read) either works or fails saying which limit it hit.
TEST_P(AnomalyTest, TransactionBiggerThanTheCacheNamesTheLimit) {
  constexpr int kRows = 400;  // one per page: more than the 256 frames
  auto add = *engine_->RegisterProcedure(
      "add", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                 [this](Txn& txn, int64_t first) -> absl::StatusOr<bool> {
                   for (int64_t id = first; id < first + 20; ++id) {
                     storage::TupleBuffer t(*schema_);
                     t.SetInt(1, id);
                     auto a = txn.Insert(doctors_, t);
                     if (!a.ok()) return a.status();
                     if (absl::Status added =
                             txn.AddIndexEntry(on_call_, GroupKey(0, id), *a);
                         !added.ok()) {
                       return added;
                     }
                   }
                   return true;
                 }));
  auto sum = *engine_->RegisterProcedure(
      "sum", std::function<absl::StatusOr<int64_t>(Txn&)>(
                 [this](Txn& txn) -> absl::StatusOr<int64_t> {
                   std::vector<TupleAddress> rows;
                   absl::Status s = txn.Scan(
                       on_call_, std::nullopt, std::nullopt, true, UINT64_MAX,
                       [&](std::string_view, TupleAddress a) {
                         rows.push_back(a);
                         return true;
                       });
                   if (!s.ok()) return s;
                   int64_t total = 0;
                   for (TupleAddress a : rows) {
                     auto row = txn.Read(doctors_, a);
                     if (!row.ok()) return row.status();
                     total += row->GetInt(1);
                   }
                   return total;
                 }));
  auto session = *engine_->NewSession(0);
  for (int64_t first = 0; first < kRows; first += 20) {
    ASSERT_TRUE(session->Call<bool>(add, first).ok());
  }
  auto total = session->Call<int64_t>(sum);
  if (total.ok()) {
    EXPECT_EQ(*total, int64_t{kRows} * (kRows - 1) / 2);
  } else {
    EXPECT_TRUE(absl::IsResourceExhausted(total.status())) << total.status();
    EXPECT_THAT(std::string(total.status().message()),
                ::testing::AllOf(::testing::HasSubstr("--cache_mb"),
                                 ::testing::HasSubstr("cc.cache_bytes")));
  }
  // SELCC under 2PL is the case that cannot work: it must have failed.
  if (GetParam().protocol == cc::Protocol::kSelcc &&
      GetParam().algorithm == txn::CcAlgorithm::kTwoPhaseLocking) {
    EXPECT_FALSE(total.ok());
  }
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsProtocols, AnomalyTest,
                         ::testing::ValuesIn(testing::AnomalyConfigs()),
                         testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
