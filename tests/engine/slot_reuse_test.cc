// Reuse of deleted rows' slots (txn/epoch_manager.h), through the public
// API, for every algorithm x protocol at two compute nodes with dropped and
// delayed invalidations, with the nodes sharing one epoch manager (as in
// one process) and with each its own, sharing epochs through the pool (as
// in separate processes: EngineOptions::epochs_in_pool):
//   - delete + reinsert churn that deletes several times as many rows as
//     the pool has room for keeps going;
//   - a reader that found a row through the index never reads another
//     row's contents in its slot (rows carry their index key, which
//     changes with every reinsert), while the churn reuses slots;
//   - a transaction open since before a delete holds that slot back (and
//     every slot deleted after it began), and the slots come back once it
//     ends.

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "engine/engine.h"
#include "engine/engine_internals.h"
#include "engine/session.h"
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

struct SlotReuseParam {
  TxnTestConfig config;
  bool epochs_in_pool = false;
};

std::vector<SlotReuseParam> SlotReuseParams() {
  std::vector<SlotReuseParam> params;
  for (bool in_pool : {false, true}) {
    for (const TxnTestConfig& c : testing::AnomalyConfigs()) {
      params.push_back({c, in_pool});
    }
  }
  return params;
}

std::string SlotReuseName(
    const ::testing::TestParamInfo<SlotReuseParam>& info) {
  return testing::TxnTestName(::testing::TestParamInfo<TxnTestConfig>(
             info.param.config, info.index)) +
         (info.param.epochs_in_pool ? "_pool" : "_local");
}

constexpr int kNodes = testing::kAnomalyNodes;
constexpr int kThreadsPerNode = 2;
constexpr int64_t kKeys = 64;
// 2 MiB: 7 chunks of 256 KiB for data, about 7,000 GCLs; every row takes
// a GCL of its own (max_rows_per_page = 1). (1 MiB left some runs with no
// chunk for one node's first insert: the nodes and the index take chunks
// in whatever order they first allocate.)
constexpr uint64_t kPoolBytes = 2 << 20;
constexpr int64_t kMaxIncarnation = INT64_MAX;

// Index key: (key, incarnation). A row carries both, and a reinsert of a
// key gets the next incarnation: a slot reused by any insert, even of the
// same key, holds a row whose (key, incarnation) differs.
std::string RowKey(int64_t key, int64_t incarnation) {
  return index::KeyBuilder().Int64(key).Int64(incarnation).Build(16);
}

class SlotReuseTest : public ::testing::TestWithParam<SlotReuseParam> {
 protected:
  void SetUp() override {
    EngineOptions options =
        testing::AnomalyOptions(GetParam().config, kPoolBytes);
    options.epochs_in_pool = GetParam().epochs_in_pool;
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        storage::Schema::Create({{"key", storage::ColumnType::kInt64},
                                 {"incarnation", storage::ColumnType::kInt64}});
    ASSERT_TRUE(schema.ok());
    storage::TableOptions one_per_page;
    one_per_page.max_rows_per_page = 1;
    rows_ = *engine_->CreateTable("rows", *schema, one_per_page);
    schema_ = *engine_->schema(rows_);
    by_key_ = *engine_->CreateIndex("by_key", rows_, 16, /*unique=*/true);

    add_ = *engine_->RegisterProcedure(
        "add", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                   [this](Txn& txn, int64_t key) -> absl::StatusOr<bool> {
                     return Insert(txn, key, 0);
                   }));
    // Deletes the row of each key in [first, first + count) and inserts
    // it again as the next incarnation.
    move_ = *engine_->RegisterProcedure(
        "move", std::function<absl::StatusOr<bool>(Txn&, int64_t, int64_t)>(
                    [this](Txn& txn, int64_t first,
                           int64_t count) -> absl::StatusOr<bool> {
                      for (int64_t key = first; key < first + count; ++key) {
                        auto found = Find(txn, key);
                        if (!found.ok()) return found.status();
                        auto row = txn.Read(rows_, found->address);
                        if (absl::IsNotFound(row.status())) {
                          // Another move deleted it after our scan (which then
                          // fails validation): a conflict, retried.
                          txn.Abort(txn::AbortReason::kConflict);
                          return absl::AbortedError("row moved meanwhile");
                        }
                        if (!row.ok()) return row.status();
                        if (!Matches(*row, *found)) wrong_.fetch_add(1);
                        if (absl::Status s = txn.Delete(rows_, found->address);
                            !s.ok()) {
                          return s;
                        }
                        if (absl::Status added = txn.RemoveIndexEntry(
                                by_key_, RowKey(key, found->incarnation),
                                found->address);
                            !added.ok()) {
                          return added;
                        }
                        auto inserted =
                            Insert(txn, key, found->incarnation + 1);
                        if (!inserted.ok()) return inserted.status();
                      }
                      return true;
                    }));
    // Finds `key`'s row, waits, reads it: its contents must be the row
    // the index named, or the row is gone (deleted meanwhile).
    read_ = *engine_->RegisterProcedure(
        "read", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                    [this](Txn& txn, int64_t key) -> absl::StatusOr<bool> {
                      auto found = Find(txn, key);
                      if (!found.ok()) return found.status();
                      Pause();
                      return ReadChecked(txn, *found);
                    }));
    // read_ with a long wait between the lookup and the read: longer
    // than the pool's publish interval, so that a bound published past
    // an open reader would let its slot go while it waits.
    read_slow_ = *engine_->RegisterProcedure(
        "read_slow", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                         [this](Txn& txn, int64_t key) -> absl::StatusOr<bool> {
                           auto found = Find(txn, key);
                           if (!found.ok()) return found.status();
                           absl::SleepFor(absl::Milliseconds(3));
                           return ReadChecked(txn, *found);
                         }));
    // read_, but it tells when it looked up, and waits for churned_
    // before it reads (OpenReaderHoldsDeletedSlotsBack).
    hold_ = *engine_->RegisterProcedure(
        "hold", std::function<absl::StatusOr<bool>(Txn&, int64_t)>(
                    [this](Txn& txn, int64_t key) -> absl::StatusOr<bool> {
                      const bool first = !looked_up_.HasBeenNotified();
                      auto found = Find(txn, key);
                      if (!found.ok()) return found.status();
                      if (first) looked_up_.Notify();
                      churned_.WaitForNotification();
                      auto read = ReadChecked(txn, *found);
                      if (first) first_read_ = read;
                      return read;
                    }));
  }

  struct Found {
    int64_t key = 0;
    int64_t incarnation = 0;
    TupleAddress address;
  };

  absl::StatusOr<bool> Insert(Txn& txn, int64_t key, int64_t incarnation) {
    storage::TupleBuffer t(*schema_);
    t.SetInt(0, key);
    t.SetInt(1, incarnation);
    auto a = txn.Insert(rows_, t);
    if (!a.ok()) return a.status();
    if (absl::Status added =
            txn.AddIndexEntry(by_key_, RowKey(key, incarnation), *a);
        !added.ok()) {
      return added;
    }
    return true;
  }

  // `key`'s entry (there is one per key between commits).
  absl::StatusOr<Found> Find(Txn& txn, int64_t key) {
    Found found;
    absl::Status s = txn.Scan(
        by_key_, RowKey(key, 0), RowKey(key, kMaxIncarnation),
        /*forward=*/true, /*limit=*/1, [&](std::string_view k, TupleAddress a) {
          found.key = index::DecodeInt64(k.data());
          found.incarnation = index::DecodeInt64(k.data() + 8);
          found.address = a;
          return false;
        });
    if (!s.ok()) return s;
    if (found.address.is_null()) {
      return absl::NotFoundError("key " + std::to_string(key));
    }
    return found;
  }

  static bool Matches(const storage::TupleView& row, const Found& found) {
    return row.GetInt(0) == found.key && row.GetInt(1) == found.incarnation;
  }

  // Reads the row `found` names; a row with other contents counts in
  // wrong_ (whether or not this transaction commits later).
  absl::StatusOr<bool> ReadChecked(Txn& txn, const Found& found) {
    auto row = txn.Read(rows_, found.address);
    if (absl::IsNotFound(row.status())) return false;  // deleted meanwhile
    if (!row.ok()) return row.status();
    if (!Matches(*row, found)) wrong_.fetch_add(1);
    return true;
  }

  // The engine's epoch managers: one for both nodes, or one each.
  std::vector<const txn::EpochManager*> Managers() const {
    std::vector<const txn::EpochManager*> managers;
    for (int node = 0; node < kNodes; ++node) {
      const txn::EpochManager* m = EngineInternals::epochs(*engine_, node);
      EXPECT_NE(m, nullptr);
      EXPECT_EQ(m->pool() != nullptr, GetParam().epochs_in_pool);
      if (m != nullptr && (managers.empty() || managers.back() != m)) {
        managers.push_back(m);
      }
    }
    return managers;
  }
  uint64_t Reclaimed() const {
    uint64_t sum = 0;
    for (const txn::EpochManager* m : Managers()) sum += m->reclaimed();
    return sum;
  }
  uint64_t Queued() const {
    uint64_t sum = 0;
    for (const txn::EpochManager* m : Managers()) sum += m->queued();
    return sum;
  }

  void AddKeys() {
    auto session = *engine_->NewSession(0);
    for (int64_t key = 0; key < kKeys; ++key) {
      auto r = session->Call<bool>(add_, key);
      ASSERT_TRUE(r.ok()) << r.status();
    }
  }

  std::unique_ptr<Engine> engine_;
  const storage::Schema* schema_ = nullptr;
  txn::TableId rows_ = 0;
  txn::IndexId by_key_ = 0;
  Procedure<bool(int64_t)> add_, read_, read_slow_, hold_;
  Procedure<bool(int64_t, int64_t)> move_;
  std::atomic<int64_t> wrong_{0};
  absl::Notification looked_up_, churned_;
  // hold_'s first attempt's read (a retry after an abort reads anew).
  absl::StatusOr<bool> first_read_ = false;
};

// Churn: every call deletes kMovesPerCall rows and inserts them again. The
// calls delete about 3x as many rows as the pool has GCLs, so without
// reuse the inserts run out of memory (ResourceExhausted naming --pool_mb)
// well before the end.
// Readers race the churn on every key, some of them holding the address
// they looked up for a few ms.
TEST_P(SlotReuseTest, DeleteReinsertChurnOutlivesThePool) {
  constexpr int kMovesPerCall = 8;
  // 4 x 600 x 8 = 19,200 deletes: without reuse, more rows than the
  // pool's ~7,000 GCLs.
  constexpr int kCallsPerThread = 600;
  AddKeys();
  std::vector<std::unique_ptr<Session>> sessions;
  // One more per node for a slow reader. All opened here: NewSession's
  // absl::Mutex is invisible to TSan (tests/cc/tsan_suppressions.txt), so
  // sessions opened on two threads at once look like a race there.
  std::vector<std::unique_ptr<Session>> slow_sessions;
  for (int node = 0; node < kNodes; ++node) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      sessions.push_back(*engine_->NewSession(node));
    }
    slow_sessions.push_back(*engine_->NewSession(node));
  }
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> threads;
  for (int index = 0; index < kNodes * kThreadsPerNode; ++index) {
    threads.emplace_back([&, index] {
      std::mt19937_64 rng(index * 7919 + 1);
      Session& session = *sessions[index];
      for (int i = 0; i < kCallsPerThread; ++i) {
        const int64_t first = static_cast<int64_t>(
            rng() % static_cast<uint64_t>(kKeys - kMovesPerCall + 1));
        auto moved = session.Call<bool>(move_, first, int64_t{kMovesPerCall});
        ASSERT_TRUE(moved.ok()) << "call " << i << ": " << moved.status();
        auto read = session.Call<bool>(
            read_, static_cast<int64_t>(rng() % static_cast<uint64_t>(kKeys)));
        ASSERT_TRUE(read.ok() || absl::IsAborted(read.status()))
            << read.status();
        reads += read.ok() && *read;
      }
    });
  }
  std::atomic<bool> churning{true};
  std::vector<std::thread> slow_readers;
  for (int node = 0; node < kNodes; ++node) {
    slow_readers.emplace_back([&, node] {
      Session& session = *slow_sessions[node];
      std::mt19937_64 rng(node + 1);
      while (churning.load()) {
        auto read = session.Call<bool>(
            read_slow_,
            static_cast<int64_t>(rng() % static_cast<uint64_t>(kKeys)));
        ASSERT_TRUE(read.ok() || absl::IsAborted(read.status()))
            << read.status();
        reads += read.ok() && *read;
      }
    });
  }
  for (auto& t : threads) t.join();
  churning = false;
  for (auto& t : slow_readers) t.join();
  EXPECT_EQ(wrong_.load(), 0)
      << "reads found another row's contents in the slot the index named";
  EXPECT_GT(reads.load(), 0);
  EXPECT_GT(Reclaimed(), 0u);
}

// A reader that looked a key up before the churn began holds back every
// slot deleted after it: none is reused until it ends, and then its read
// finds its row deleted, never a new row in the slot. Afterwards the
// slots come back.
TEST_P(SlotReuseTest, OpenReaderHoldsDeletedSlotsBack) {
  AddKeys();
  auto reader = *engine_->NewSession(0);
  auto writer = *engine_->NewSession(1);
  absl::StatusOr<bool> held = false;
  std::thread holder([&] { held = reader->Call<bool>(hold_, int64_t{0}); });
  looked_up_.WaitForNotification();
  // Every key moved 9 times: 576 deletes, 9 sealed batches, each of which
  // the open reader (announced before all of them) holds back. The pause
  // lets the reader's node publish (in the pool) after its cached epoch
  // passed the first 8: a bound that ignored the reader would let them go
  // at the last seal.
  for (int round = 0; round < 9; ++round) {
    if (round == 8) absl::SleepFor(absl::Milliseconds(10));
    auto moved = writer->Call<bool>(move_, int64_t{0}, kKeys);
    ASSERT_TRUE(moved.ok()) << moved.status();
  }
  const uint64_t reclaimed_while_open = Reclaimed();
  const uint64_t queued_while_open = Queued();
  churned_.Notify();
  holder.join();
  EXPECT_EQ(reclaimed_while_open, 0u)
      << "deleted slots reused while a transaction that may hold one runs";
  EXPECT_GE(queued_while_open, 8 * txn::EpochManager::kBatchSlots);
  // The reader's row was deleted (and its slot not reused): its first read
  // found nothing (NotFound: false), or aborted (TO: a newer write).
  ASSERT_TRUE(held.ok() || absl::IsAborted(held.status())) << held.status();
  ASSERT_TRUE(first_read_.ok() || absl::IsAborted(first_read_.status()))
      << first_read_.status();
  if (first_read_.ok()) {
    EXPECT_FALSE(*first_read_);
  }
  EXPECT_EQ(wrong_.load(), 0);
  // Nothing holds them back any more: the next batch's seal hands back
  // the earlier ones (in the pool, once the reader's node has published
  // again: within a few ms).
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  do {
    auto moved = writer->Call<bool>(move_, int64_t{0}, kKeys);
    ASSERT_TRUE(moved.ok()) << moved.status();
  } while (Reclaimed() < queued_while_open && absl::Now() < deadline);
  EXPECT_GE(Reclaimed(), queued_while_open);
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsProtocols, SlotReuseTest,
                         ::testing::ValuesIn(SlotReuseParams()), SlotReuseName);

}  // namespace
}  // namespace strand::engine
