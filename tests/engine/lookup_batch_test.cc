// Txn::LookupBatch and Txn::Prefetch inside procedures: a batch of ids
// (absent, duplicated, unsorted) finds the rows one Lookup per id finds, in
// the same transaction and in another; Prefetch over the found addresses,
// nulls among them, changes nothing read; and the calls a procedure can
// get wrong: sizes that differ (InvalidArgument, the transaction goes on
// and commits), a key of the wrong width (aborts, as Lookup), Prefetch
// with a table that does not exist or addresses that name no tuple (a
// no-op, the transaction commits), and Prefetch after the transaction
// ended. The cache is smaller than the data, so some pages a batch names
// are not cached.

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;
using Ids = std::vector<int64_t>;

// Rows have even ids 0, 2, ..., 2 * (kRows - 1) and balance Balance(id).
constexpr int64_t kRows = 200;
int64_t Balance(int64_t id) { return id * 100 + 7; }

// One row as the procedures print it: "id:balance ", or "- " for none.
std::string Show(const storage::TupleView& row) {
  return absl::StrCat(row.GetInt(0), ":", row.GetInt(1), " ");
}

class LookupBatchTest
    : public ::testing::TestWithParam<testing::TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine = Engine::Open(testing::TxnTestOptions(GetParam()));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    const storage::Schema schema =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"balance", storage::ColumnType::kInt64}});
    table_ = *engine_->CreateTable("accounts", schema);
    index_ = *engine_->CreateIndex("accounts_id", table_, 8, true);
    const storage::Schema* s = *engine_->schema(table_);
    const txn::TableId table = table_;
    const txn::IndexId index = index_;

    // Rows with ids first, first + 2, ... (count of them).
    load_ = Register(
        "load",
        [=](Txn& txn, int64_t first, int64_t count) -> absl::StatusOr<int64_t> {
          for (int64_t id = first; id < first + 2 * count; id += 2) {
            storage::TupleBuffer t(*s);
            t.SetInt(0, id);
            t.SetInt(1, Balance(id));
            auto address = txn.Insert(table, t);
            if (!address.ok()) return address.status();
            if (absl::Status added =
                    txn.AddIndexEntry(index, AccountKey(id), *address);
                !added.ok()) {
              return added;
            }
          }
          return count;
        });

    // The rows of `ids` through LookupBatch, Prefetch and Read (if `read`,
    // else only which are present); checked in the same transaction
    // against one Lookup per id.
    batch_read_ = Register(
        "batch_read",
        [=](Txn& txn, Ids ids, bool read) -> absl::StatusOr<std::string> {
          std::vector<std::string> keys;
          for (int64_t id : ids) keys.push_back(AccountKey(id));
          const std::vector<std::string_view> views(keys.begin(), keys.end());
          // Garbage in: LookupBatch must overwrite every slot.
          std::vector<storage::TupleAddress> addresses(
              ids.size(), storage::TupleAddress::FromRaw(0xbad0bad0));
          absl::Status st =
              txn.LookupBatch(index, views, absl::MakeSpan(addresses));
          if (!st.ok()) return st;
          txn.Prefetch(table, addresses);
          std::string out;
          for (size_t i = 0; i < ids.size(); ++i) {
            auto one = txn.Lookup(index, keys[i]);
            if (one.ok() ? *one != addresses[i]
                         : !absl::IsNotFound(one.status()) ||
                               !addresses[i].is_null()) {
              return absl::InternalError(absl::StrCat(
                  "id ", ids[i], ": batch says ", addresses[i].ToString(),
                  ", Lookup says ",
                  one.ok() ? one->ToString() : one.status().ToString()));
            }
            if (addresses[i].is_null()) {
              out += "- ";
              continue;
            }
            if (!read) {
              out += absl::StrCat(ids[i], ":? ");
              continue;
            }
            auto row = txn.Read(table, addresses[i]);
            if (!row.ok()) return row.status();
            out += Show(*row);
          }
          return out;
        });

    // The same through one Lookup per id, in a transaction of its own.
    one_by_one_ = Register(
        "one_by_one",
        [=](Txn& txn, Ids ids, bool read) -> absl::StatusOr<std::string> {
          std::string out;
          for (int64_t id : ids) {
            auto address = txn.Lookup(index, AccountKey(id));
            if (absl::IsNotFound(address.status())) {
              out += "- ";
              continue;
            }
            if (!address.ok()) return address.status();
            if (!read) {
              out += absl::StrCat(id, ":? ");
              continue;
            }
            auto row = txn.Read(table, *address);
            if (!row.ok()) return row.status();
            out += Show(*row);
          }
          return out;
        });

    // Calls with sizes that differ and with an index that does not exist
    // (InvalidArgument, nothing aborted), then a write: the transaction
    // must still commit it. Returns how many calls were refused as they
    // should be.
    mismatch_then_write_ = Register(
        "mismatch_then_write",
        [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
          const std::string keys[] = {AccountKey(id), AccountKey(id + 2)};
          const std::vector<std::string_view> views = {keys[0], keys[1]};
          int64_t refused = 0;
          for (size_t n : {size_t{0}, size_t{1}, size_t{3}}) {
            std::vector<storage::TupleAddress> addresses(n);
            absl::Status st =
                txn.LookupBatch(index, views, absl::MakeSpan(addresses));
            if (absl::IsInvalidArgument(st) && txn.active()) ++refused;
          }
          std::vector<storage::TupleAddress> two(2);
          absl::Status st =
              txn.LookupBatch(index + 100, views, absl::MakeSpan(two));
          if (absl::IsInvalidArgument(st) && txn.active()) ++refused;
          auto address = txn.Lookup(index, AccountKey(id));
          if (!address.ok()) return address.status();
          auto row = txn.Modify(table, *address);
          if (!row.ok()) return row.status();
          (*row)->SetInt(1, -id);
          return refused;
        });

    // A key of the wrong width in a batch: the error aborts the
    // transaction, as Lookup's does. Returns the batch's status, or
    // Internal if the transaction were still active.
    bad_width_ = Register(
        "bad_width", [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
          const std::string good = AccountKey(id);
          const std::string bad = good.substr(1);
          const std::vector<std::string_view> views = {good, bad};
          std::vector<storage::TupleAddress> addresses(2);
          absl::Status st =
              txn.LookupBatch(index, views, absl::MakeSpan(addresses));
          if (!txn.active()) {
            return absl::InternalError(absl::StrCat(
                "aborted by a refused statement: ", st.ToString()));
          }
          return st.ok() ? absl::InternalError("a 7-byte key was accepted")
                         : st;
        });

    // Prefetch with a table that does not exist and with addresses that
    // name no tuple of the table, then a write: the transaction commits.
    garbage_prefetch_then_write_ = Register(
        "garbage_prefetch_then_write",
        [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
          auto address = txn.Lookup(index, AccountKey(id));
          if (!address.ok()) return address.status();
          const uint64_t raw = address->raw();
          const uint64_t slot_mask = storage::TupleAddress::kMaxSlots - 1;
          const std::vector<storage::TupleAddress> garbage = {
              storage::TupleAddress(),
              storage::TupleAddress::FromRaw(1),  // offset 0: a node header
              storage::TupleAddress::FromRaw(~uint64_t{0}),
              storage::TupleAddress::FromRaw(uint64_t{255} << 56 | 4096),
              // The row's page, every slot (most beyond the page's).
              storage::TupleAddress::FromRaw(raw | slot_mask),
              storage::TupleAddress::FromRaw((raw & ~slot_mask) + 17),
              // Off the GCL grid.
              storage::TupleAddress::FromRaw(raw + (8 << 12)),
              storage::TupleAddress::FromRaw(raw + (uint64_t{1} << 40)),
              *address,
          };
          for (txn::TableId t : {table, static_cast<txn::TableId>(table + 1),
                                 static_cast<txn::TableId>(1000),
                                 static_cast<txn::TableId>(~0u)}) {
            txn.Prefetch(t, garbage);
            txn.Prefetch(t, {});
          }
          if (!txn.active()) return absl::InternalError("Prefetch aborted");
          auto row = txn.Modify(table, *address);
          if (!row.ok()) return row.status();
          (*row)->SetInt(1, -id);
          return 1;
        });

    // Prefetch after the transaction aborted itself: a no-op.
    prefetch_after_abort_ =
        Register("prefetch_after_abort",
                 [=](Txn& txn, int64_t id) -> absl::StatusOr<int64_t> {
                   auto address = txn.Lookup(index, AccountKey(id));
                   if (!address.ok()) return address.status();
                   auto row = txn.Modify(table, *address);
                   if (!row.ok()) return row.status();
                   (*row)->SetInt(1, -id);
                   absl::Status st = txn.UserAbort("on purpose");
                   txn.Prefetch(table, std::vector<storage::TupleAddress>{
                                           *address, storage::TupleAddress()});
                   return st;
                 });

    session_ = *engine_->NewSession(0);
    for (int64_t first = 0; first < 2 * kRows; first += 100) {
      auto loaded = session_->Call<int64_t>(load_, first, int64_t{50});
      ASSERT_TRUE(loaded.ok()) << loaded.status();
    }
  }

  template <typename Fn>
  ProcedureId Register(std::string name, Fn fn) {
    using Signature = decltype(std::function(fn));
    auto id = engine_->RegisterProcedure(std::move(name), Signature(fn));
    EXPECT_TRUE(id.ok()) << id.status();
    return *id;
  }

  // What the procedures should print for `ids` (balances as loaded, but
  // those in `changed`; "?" if they do not read the rows).
  static std::string Want(const Ids& ids,
                          const std::map<int64_t, int64_t>& changed = {},
                          bool read = true) {
    std::string out;
    for (int64_t id : ids) {
      if (id < 0 || id >= 2 * kRows || id % 2 != 0) {
        out += "- ";
      } else {
        auto it = changed.find(id);
        out += !read ? absl::StrCat(id, ":? ")
                     : absl::StrCat(
                           id, ":",
                           it == changed.end() ? Balance(id) : it->second, " ");
      }
    }
    return out;
  }

  // Under 2PL a transaction keeps its pages latched, and the test cache
  // holds 16 GCLs: batches that read rows stay small (kMaxReadBatch ids).
  static constexpr int64_t kMaxReadBatch = 8;
  std::string BatchRead(const Ids& ids, bool read = true) {
    auto got = session_->Call<std::string>(batch_read_, ids, read);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : got.status().ToString();
  }
  std::string OneByOne(const Ids& ids, bool read = true) {
    auto got = session_->Call<std::string>(one_by_one_, ids, read);
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : got.status().ToString();
  }
  const ProcedureStats& StatsOf(ProcedureId id) {
    stats_ = engine_->Stats();
    return stats_[id];
  }

  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Session> session_;
  std::vector<ProcedureStats> stats_;
  txn::TableId table_ = 0;
  txn::IndexId index_ = 0;
  ProcedureId load_ = 0, batch_read_ = 0, one_by_one_ = 0,
              mismatch_then_write_ = 0, bad_width_ = 0,
              garbage_prefetch_then_write_ = 0, prefetch_after_abort_ = 0;
};

TEST_P(LookupBatchTest, BatchFindsWhatLookupFinds) {
  const Ids fixed[] = {
      {},
      {4},
      {5},
      {398, 0, 7, 0, -2, 400, 398, 12},
      {INT64_MIN, INT64_MAX, -1, 0, 1},
  };
  for (const Ids& ids : fixed) {
    EXPECT_EQ(BatchRead(ids), Want(ids));
    EXPECT_EQ(OneByOne(ids), Want(ids));
  }
  std::mt19937_64 rng(7);
  auto random_ids = [&](size_t max_size) {
    Ids ids;
    const size_t size = rng() % (max_size + 1);
    while (ids.size() < size) {
      if (!ids.empty() && rng() % 5 == 0) {
        ids.push_back(ids[rng() % ids.size()]);  // a duplicate
      } else {
        ids.push_back(static_cast<int64_t>(rng() % (2 * kRows + 20)) - 10);
      }
    }
    return ids;
  };
  // Rows read.
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    const Ids ids = random_ids(kMaxReadBatch);
    const std::string want = Want(ids);
    EXPECT_EQ(BatchRead(ids), want);
    EXPECT_EQ(OneByOne(ids), want);
  }
  // Bigger batches, their addresses only (checked against Lookup's in the
  // procedure).
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(round);
    const Ids ids = random_ids(40);
    EXPECT_EQ(BatchRead(ids, false), Want(ids, {}, false));
  }
  Ids all;
  for (int64_t id = 2 * kRows + 1; id >= -1; --id) all.push_back(id);
  EXPECT_EQ(BatchRead(all, false), Want(all, {}, false));
  EXPECT_EQ(StatsOf(batch_read_).commits, 5u + 20u + 10u + 1u);
}

TEST_P(LookupBatchTest, SizesThatDifferAreRefusedAndTheTransactionCommits) {
  auto refused = session_->Call<int64_t>(mismatch_then_write_, int64_t{10});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(*refused, 4);
  EXPECT_EQ(StatsOf(mismatch_then_write_).commits, 1u);
  EXPECT_EQ(StatsOf(mismatch_then_write_).aborts_total(), 0u);
  const Ids ids = {8, 10, 12};
  EXPECT_EQ(BatchRead(ids), Want(ids, {{10, -10}}));
}

TEST_P(LookupBatchTest, AKeyOfTheWrongWidthIsRefusedAndTheTransactionGoesOn) {
  auto r = session_->Call<int64_t>(bad_width_, int64_t{10});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
      << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              ::testing::HasSubstr("index accounts_id takes 8-byte keys"));
  EXPECT_EQ(StatsOf(bad_width_).commits, 0u);
  // The procedure returned the error: its own decision to roll back.
  EXPECT_EQ(StatsOf(bad_width_).aborts_for(txn::AbortReason::kUser), 1u);
  // Nothing was left latched.
  const Ids ids = {8, 10, 11};
  EXPECT_EQ(BatchRead(ids), Want(ids));
}

TEST_P(LookupBatchTest, PrefetchOfGarbageIsANoOpAndTheTransactionCommits) {
  auto r = session_->Call<int64_t>(garbage_prefetch_then_write_, int64_t{20});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(StatsOf(garbage_prefetch_then_write_).commits, 1u);
  EXPECT_EQ(StatsOf(garbage_prefetch_then_write_).aborts_total(), 0u);
  for (int64_t first = 0; first < 2 * kRows; first += 2 * kMaxReadBatch) {
    Ids ids;
    for (int64_t id = first; id < first + 2 * kMaxReadBatch; id += 2) {
      ids.push_back(id);
    }
    EXPECT_EQ(BatchRead(ids), Want(ids, {{20, -20}}));
    EXPECT_EQ(OneByOne(ids), Want(ids, {{20, -20}}));
  }
}

TEST_P(LookupBatchTest, PrefetchAfterTheTransactionEndedIsANoOp) {
  auto r = session_->Call<int64_t>(prefetch_after_abort_, int64_t{30});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  EXPECT_EQ(StatsOf(prefetch_after_abort_).commits, 0u);
  EXPECT_EQ(StatsOf(prefetch_after_abort_).aborts_for(txn::AbortReason::kUser),
            1u);
  const Ids ids = {28, 30, 32};
  EXPECT_EQ(BatchRead(ids), Want(ids));
}

INSTANTIATE_TEST_SUITE_P(
    Configs, LookupBatchTest,
    ::testing::ValuesIn(testing::TxnTestConfigs(testing::TestProtocols())),
    testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
