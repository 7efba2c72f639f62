// EngineOptions::validate_index_reads, the switch that measures what
// serializable scans and lookups cost: on (the default), a transaction
// that found a key absent and a racing transaction that inserts it cannot
// both commit as if in some serial order; off, the phantom goes through.
// The race is made deterministic: the reader's first attempt runs the
// inserter to its commit on another thread between its lookup and its own
// write.

#include <atomic>
#include <thread>

#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using testing::AccountKey;
using txn::Txn;

constexpr int64_t kKey = 7;

struct Param {
  testing::TxnTestConfig config;
  bool validate = true;
};

class ValidateIndexReadsTest : public ::testing::TestWithParam<Param> {};

TEST_P(ValidateIndexReadsTest, AbsentKeyLookupAgainstARacingInsert) {
  EngineOptions options = testing::TxnTestOptions(GetParam().config);
  options.validate_index_reads = GetParam().validate;
  auto engine = Engine::Open(options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const storage::Schema schema =
      *storage::Schema::Create({{"id", storage::ColumnType::kInt64}});
  const txn::TableId table = *(*engine)->CreateTable("rows", schema);
  const txn::IndexId keys = *(*engine)->CreateIndex("keys", table, 8, true);
  const txn::IndexId log = *(*engine)->CreateIndex("log", table, 8, true);
  const storage::Schema* s = *(*engine)->schema(table);
  auto insert = [=](Txn& txn, txn::IndexId index, int64_t id) -> absl::Status {
    storage::TupleBuffer t(*s);
    t.SetInt(0, id);
    auto addr = txn.Insert(table, t);
    if (!addr.ok()) return addr.status();
    if (absl::Status added = txn.AddIndexEntry(index, AccountKey(id), *addr);
        !added.ok()) {
      return added;
    }
    return absl::OkStatus();
  };
  auto add_key = *(*engine)->RegisterProcedure(
      "add_key", std::function<absl::StatusOr<bool>(Txn&)>(
                     [=](Txn& txn) -> absl::StatusOr<bool> {
                       if (absl::Status st = insert(txn, keys, kKey); !st.ok())
                         return st;
                       return true;
                     }));
  // "If kKey is absent, log that it was": true when it logged.
  std::atomic<int> attempts{0};  // runs of the procedure (retries too)
  Session* racer = nullptr;
  auto log_if_absent = *(*engine)->RegisterProcedure(
      "log_if_absent",
      std::function<absl::StatusOr<bool>(Txn&)>(
          [&, insert](Txn& txn) -> absl::StatusOr<bool> {
            const bool first = attempts.fetch_add(1) == 0;
            auto found = txn.Lookup(keys, AccountKey(kKey));
            if (found.ok()) return false;
            if (!absl::IsNotFound(found.status())) return found.status();
            if (first) {
              absl::StatusOr<bool> added;
              std::thread([&] { added = racer->Call<bool>(add_key); }).join();
              if (!added.ok()) return added.status();
            }
            if (absl::Status st = insert(txn, log, kKey); !st.ok()) return st;
            return true;
          }));
  const int nodes = GetParam().config.compute_nodes;
  auto reader = (*engine)->NewSession(0);
  auto other = (*engine)->NewSession(nodes - 1);
  ASSERT_TRUE(reader.ok() && other.ok());
  racer = other->get();
  auto logged = (*reader)->Call<bool>(log_if_absent);
  ASSERT_TRUE(logged.ok()) << logged.status();
  if (GetParam().validate) {
    // The first attempt read a range the racer changed: it must not commit;
    // the retry sees the key.
    EXPECT_FALSE(*logged) << "a phantom committed";
    EXPECT_EQ(attempts.load(), 2);
  } else {
    EXPECT_TRUE(*logged) << "without validation the stale read commits";
    EXPECT_EQ(attempts.load(), 1);
  }
}

std::vector<Param> Params() {
  std::vector<Param> params;
  for (const testing::TxnTestConfig& c :
       testing::TxnTestConfigs(testing::TestProtocols())) {
    if (c.compute_nodes == 4) continue;
    params.push_back({c, true});
    params.push_back({c, false});
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(
    Configs, ValidateIndexReadsTest, ::testing::ValuesIn(Params()),
    [](const ::testing::TestParamInfo<Param>& info) {
      return testing::TxnTestName({info.param.config, info.index}) +
             (info.param.validate ? "_validated" : "_not_validated");
    });

}  // namespace
}  // namespace strand::engine
