// Reading one's own writes stays serializable against others (part of
// the anomaly_test binary: every algorithm x protocol at two compute
// nodes, with dropped and delayed invalidations): workers race to claim
// the same few keys with InsertIfAbsent, read their own claim back
// through every path while others insert the same keys, and give half of
// them up again (deleting them, then checking they are gone in their own
// view). No key is ever held twice, each transaction's reads of its own
// writes are right, and the committed claims and releases add up to what
// the heap and both indexes hold.

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/anomaly_testing.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::TxnTestConfig;
using txn::Txn;

constexpr int kNodes = testing::kAnomalyNodes;
constexpr int kThreadsPerNode = 2;
constexpr int kWorkers = kNodes * kThreadsPerNode;
constexpr int kKeys = 6;
constexpr int kCallsPerWorker = 60;

std::string Key8(int64_t k) { return index::KeyBuilder().Int64(k).Build(8); }
std::string OwnerKey(int64_t owner) {
  return index::KeyBuilder().Int32(static_cast<int32_t>(owner)).Build(4);
}

class OwnWritesAnomalyTest : public ::testing::TestWithParam<TxnTestConfig> {
 protected:
  void SetUp() override {
    auto engine =
        Engine::Open(testing::AnomalyOptions(GetParam(), uint64_t{4} << 20));
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    claims_ = *engine_->CreateTable(
        "claims",
        *storage::Schema::Create({{"key", storage::ColumnType::kInt64},
                                  {"owner", storage::ColumnType::kInt32},
                                  {"serial", storage::ColumnType::kInt64}}));
    by_key_ = *engine_->CreateIndex("claims_by_key", claims_, {"key"}, true);
    by_owner_ =
        *engine_->CreateIndex("claims_by_owner", claims_, {"owner"}, false);
  }

  // The claims of `owner` by_owner lists, as (key, address), in this
  // transaction's view.
  absl::StatusOr<std::multiset<int64_t>> OwnedKeys(Txn& txn, int owner) {
    std::multiset<int64_t> keys;
    absl::Status read;
    absl::Status s = txn.Scan(by_owner_, OwnerKey(owner), OwnerKey(owner),
                              /*forward=*/owner % 2 == 0, UINT64_MAX,
                              [&](std::string_view, TupleAddress at) {
                                auto row = txn.Read(claims_, at);
                                if (!row.ok()) {
                                  read = row.status();
                                  return false;
                                }
                                keys.insert(row->GetInt("key"));
                                return true;
                              });
    if (!s.ok()) return s;
    if (!read.ok()) return read;
    return keys;
  }

  // What a worker's call found wrong: a committed call must never have.
  // An attempt may read others' writes half-way (reads are validated at
  // commit, not as they happen), so the call returns it and commits: a
  // read that was stale fails the commit, which is retried.
  static absl::StatusOr<int> Anomaly(std::string what) {
    return absl::StatusOr<int>(absl::FailedPreconditionError(what));
  }

  // One worker's call: claim `key` if free, check the claim is seen, maybe
  // release it (or an older claim of `key`). Returns +1 (claimed), -1
  // (claimed and released), -2 (an older claim released), 0 (taken, or
  // kept), or FailedPrecondition (an Anomaly) if a read was wrong.
  absl::StatusOr<int> Claim(Txn& txn, int owner, int64_t key, int64_t serial,
                            bool release) {
    auto before = OwnedKeys(txn, owner);
    if (!before.ok()) return before.status();
    auto row = *txn.NewRow(claims_);
    row.SetInt("key", key);
    row.SetInt("owner", owner);
    row.SetInt("serial", serial);
    auto claim = txn.InsertIfAbsent(claims_, row);
    if (!claim.ok()) return claim.status();
    testing::Pause();  // others insert the same keys meanwhile
    auto found = txn.Lookup(by_key_, Key8(key));
    if (absl::IsNotFound(found.status())) {
      return Anomaly("the claimed or taken key is not found");
    }
    if (!found.ok()) return found.status();
    if (*found != claim->address) {
      return Anomaly("Lookup names another row than the claim");
    }
    auto holder = txn.Read(claims_, *found);
    if (absl::IsNotFound(holder.status())) {
      return Anomaly("the row the index names is gone");
    }
    if (!holder.ok()) return holder.status();
    if (!claim->inserted) {
      const bool mine = holder->GetInt("owner") == owner;
      if (mine != (before->count(key) == 1)) {
        return Anomaly("by_key and by_owner disagree on a key");
      }
      if (!mine || !release) return 0;
      // Give up an older claim: others may take the key from now on.
      if (absl::Status s = txn.Delete(claims_, *found); !s.ok()) return s;
      if (!absl::IsNotFound(txn.Lookup(by_key_, Key8(key)).status())) {
        return Anomaly("my released claim is still found");
      }
      auto released = OwnedKeys(txn, owner);
      if (!released.ok()) return released.status();
      if (released->count(key) != 0) {
        return Anomaly("by_owner still lists my released claim");
      }
      return -2;
    }
    if (holder->GetInt("owner") != owner ||
        holder->GetInt("serial") != serial) {
      return Anomaly("my claim reads as someone else's");
    }
    auto after = OwnedKeys(txn, owner);
    if (!after.ok()) return after.status();
    std::multiset<int64_t> want = *before;
    want.insert(key);
    if (*after != want) {
      return Anomaly("by_owner misses my new claim");
    }
    if (!release) return 1;
    if (absl::Status s = txn.Delete(claims_, claim->address); !s.ok()) {
      return s;
    }
    if (!absl::IsNotFound(txn.Lookup(by_key_, Key8(key)).status())) {
      return Anomaly("my released claim is still found");
    }
    auto released = OwnedKeys(txn, owner);
    if (!released.ok()) return released.status();
    if (*released != *before) {
      return Anomaly("by_owner still lists my released claim");
    }
    return -1;
  }

  std::unique_ptr<Engine> engine_;
  txn::TableId claims_ = 0;
  txn::IndexId by_key_ = 0, by_owner_ = 0;
};

TEST_P(OwnWritesAnomalyTest, ClaimsReadBackWhileOthersClaimTheSameKeys) {
  std::vector<std::unique_ptr<Session>> sessions;
  for (int node = 0; node < kNodes; ++node) {
    for (int t = 0; t < kThreadsPerNode; ++t) {
      sessions.push_back(*engine_->NewSession(node));
    }
  }
  // Committed claims minus releases, by owner; and errors.
  std::vector<int> held(kWorkers, 0);
  std::vector<int> claims(kWorkers, 0);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937_64 rng(w + 7);
      for (int i = 0; i < kCallsPerWorker; ++i) {
        const int64_t key = rng() % kKeys;
        const bool release = rng() % 2 == 0;
        // (result, anomaly): an anomaly is committed, to be caught.
        using Outcome = std::pair<int, std::string>;
        auto r = sessions[w]->Run([&](Txn& txn) -> absl::StatusOr<Outcome> {
          absl::StatusOr<int> claim = Claim(txn, w, key, i, release);
          if (absl::IsFailedPrecondition(claim.status())) {
            return Outcome{0, std::string(claim.status().message())};
          }
          if (!claim.ok()) return claim.status();
          return Outcome{*claim, ""};
        });
        if (!r.ok() || !r->second.empty()) {
          ADD_FAILURE() << "worker " << w << " call " << i << ": "
                        << (r.ok() ? r->second : r.status().ToString());
          ++errors;
          return;
        }
        if (r->first == 1) ++held[w];
        if (r->first == -2) --held[w];
        if (r->first == 1 || r->first == -1) ++claims[w];
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(errors.load(), 0);
  // What the committed transactions say each owner holds is what the
  // table holds: by_key names one row per key, by_owner each claim once.
  auto check = sessions[0]->Run([&](Txn& txn) -> absl::StatusOr<std::string> {
    std::map<int, int> by_owner_count;
    for (int w = 0; w < kWorkers; ++w) {
      auto keys = OwnedKeys(txn, w);
      if (!keys.ok()) return keys.status();
      by_owner_count[w] = keys->size();
      for (int64_t k : *keys) {
        auto at = txn.Lookup(by_key_, Key8(k));
        if (!at.ok()) return at.status();
        auto row = txn.Read(claims_, *at);
        if (!row.ok()) return row.status();
        if (row->GetInt("owner") != w) {
          return absl::InternalError(absl::StrCat("key ", k, " held twice"));
        }
      }
    }
    std::string out;
    for (int w = 0; w < kWorkers; ++w) {
      absl::StrAppend(&out, by_owner_count[w], " ");
    }
    return out;
  });
  ASSERT_TRUE(check.ok()) << check.status();
  std::string want;
  int total_claims = 0;
  for (int w = 0; w < kWorkers; ++w) {
    absl::StrAppend(&want, held[w], " ");
    total_claims += claims[w];
  }
  EXPECT_EQ(*check, want);
  // The race was real: keys were claimed, released and claimed again.
  EXPECT_GT(total_claims, 2 * kKeys);
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsProtocols, OwnWritesAnomalyTest,
                         ::testing::ValuesIn(testing::AnomalyConfigs()),
                         testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
