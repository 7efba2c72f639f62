// Indexes kept by the transaction always match the heap: random
// transactions of inserts (Insert, InsertIfAbsent, Upsert), updates of
// indexed and non-indexed columns (Update, and Modify's buffer), deletes
// and reads run against the engine and an in-memory model; some roll
// back. Each statement's outcome (done, or AlreadyExists for a taken
// unique key) and each read inside the transaction must be the model's;
// after every transaction the heap, read directly (storage::HeapTable),
// must hold the model's rows, and each declared index, read directly
// (index::BLinkTree), exactly one entry per row, its key built from the
// row's columns.

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/engine_internals.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/blink_tree.h"
#include "index/key_codec.h"
#include "storage/catalog.h"
#include "storage/heap_table.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"
#include "txn/index_key.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::TxnTestConfig;
using txn::Txn;

constexpr int kTransactions = 250;
constexpr int64_t kIds = 48;
constexpr int kTags = 4;
constexpr int kNames = 40;

struct Row {
  int64_t tag = 0;
  std::string name;
  int64_t note = 0;
  friend bool operator==(const Row&, const Row&) = default;
};
using Model = std::map<int64_t, Row>;  // by id

std::string NameOf(int n) { return absl::StrCat("n", n); }

// The statements a transaction may run; each picks its operands from the
// random generator and the model as the transaction sees it.
enum class Op {
  kInsert,
  kInsertIfAbsent,
  kUpsert,
  kUpdate,
  kModifyUnindexed,
  kModifyTag,
  kModifyFreeName,
  kDelete,
  kReadTag,
  kReadName,
  kCount
};

class IndexModelTest : public ::testing::TestWithParam<TxnTestConfig> {
 protected:
  void SetUp() override {
    EngineOptions options = testing::TxnTestOptions(GetParam());
    options.cc.cache_bytes = 256 * 256;
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"tag", storage::ColumnType::kInt16},
                                  {"name", storage::ColumnType::kChar, 6},
                                  {"note", storage::ColumnType::kInt64}});
    rows_ = *engine_->CreateTable("rows", schema);
    by_id_ = *engine_->CreateIndex("by_id", rows_, {"id"}, true);
    by_name_ = *engine_->CreateIndex("by_name", rows_, {"name"}, true);
    by_tag_ = *engine_->CreateIndex("by_tag", rows_, {"tag", "name"}, false);
    for (int node = 0; node < GetParam().compute_nodes; ++node) {
      sessions_.push_back(*engine_->NewSession(node));
    }
  }

  std::string IdKey(int64_t id) {
    return index::KeyBuilder().Int64(id).Build(8);
  }
  std::string NameKey(const std::string& name) {
    return index::KeyBuilder().String(name, 6).Build(6);
  }

  // Whether `name` belongs to a row of `m` other than `id`'s.
  static bool NameTaken(const Model& m, const std::string& name,
                        std::optional<int64_t> except_id = std::nullopt) {
    for (const auto& [id, r] : m) {
      if (r.name == name && id != except_id) return true;
    }
    return false;
  }

  storage::TupleBuffer RowOf(Txn& txn, int64_t id, const Row& r) {
    storage::TupleBuffer row = *txn.NewRow(rows_);
    row.SetInt("id", id);
    row.SetInt("tag", r.tag);
    row.SetChars("name", r.name);
    row.SetInt("note", r.note);
    return row;
  }

  // One random statement on `txn`, mirrored in `m` (the model as the
  // transaction sees it). An error is a mismatch with the model (or the
  // engine's own), described.
  absl::Status Step(Txn& txn, Model& m, std::mt19937_64& rng) {
    const Op op = static_cast<Op>(rng() % static_cast<int>(Op::kCount));
    const int64_t id = rng() % kIds;
    const Row fresh{static_cast<int64_t>(rng() % kTags),
                    NameOf(static_cast<int>(rng() % kNames)),
                    static_cast<int64_t>(rng() % 1000)};
    const bool exists = m.contains(id);
    ++ops_[static_cast<int>(op)];
    auto expect = [&](const absl::Status& got, bool taken,
                      const char* what) -> absl::Status {
      refused_ += taken ? 1 : 0;
      if (taken != absl::IsAlreadyExists(got) || (!taken && !got.ok())) {
        return absl::InternalError(absl::StrCat(what, " of id ", id,
                                                ": model says taken=", taken,
                                                ", got ", got.ToString()));
      }
      return absl::OkStatus();
    };
    switch (op) {
      case Op::kInsert: {
        const bool taken = exists || NameTaken(m, fresh.name);
        absl::Status s = txn.Insert(rows_, RowOf(txn, id, fresh)).status();
        if (!taken && s.ok()) m[id] = fresh;
        return expect(s, taken, "Insert");
      }
      case Op::kInsertIfAbsent: {
        const bool taken = exists || NameTaken(m, fresh.name);
        auto r = txn.InsertIfAbsent(rows_, RowOf(txn, id, fresh));
        if (!r.ok()) return r.status();
        if (r->inserted == taken) {
          return absl::InternalError(absl::StrCat("InsertIfAbsent of id ", id,
                                                  " inserted=", r->inserted));
        }
        if (!taken) m[id] = fresh;
        return absl::OkStatus();
      }
      case Op::kUpsert: {
        // Keyed by by_id (the first unique declared index): the name must
        // be free of other rows.
        const bool taken = NameTaken(m, fresh.name, id);
        absl::Status s = txn.Upsert(rows_, RowOf(txn, id, fresh)).status();
        if (!taken && s.ok()) m[id] = fresh;
        return expect(s, taken, "Upsert");
      }
      case Op::kUpdate:
      case Op::kModifyUnindexed:
      case Op::kModifyTag:
      case Op::kModifyFreeName:
      case Op::kDelete: {
        if (!exists) {
          auto at = txn.Lookup(by_id_, IdKey(id));
          return absl::IsNotFound(at.status())
                     ? absl::OkStatus()
                     : absl::InternalError(absl::StrCat(
                           "id ", id,
                           " should be absent: ", at.status().ToString()));
        }
        auto at = txn.Lookup(by_id_, IdKey(id));
        if (!at.ok()) return at.status();
        if (op == Op::kDelete) {
          if (absl::Status s = txn.Delete(rows_, *at); !s.ok()) return s;
          m.erase(id);
          return absl::OkStatus();
        }
        if (op == Op::kUpdate) {
          // A new id too, half the time.
          const int64_t new_id = rng() % 2 ? id : rng() % kIds;
          const bool taken = (new_id != id && m.contains(new_id)) ||
                             NameTaken(m, fresh.name, id);
          absl::Status s = txn.Update(rows_, *at, RowOf(txn, new_id, fresh));
          if (!taken && s.ok()) {
            m.erase(id);
            m[new_id] = fresh;
          }
          return expect(s, taken, "Update");
        }
        auto row = txn.Modify(rows_, *at);
        if (!row.ok()) return row.status();
        Row& r = m[id];
        if (op == Op::kModifyUnindexed) {
          (*row)->SetInt("note", fresh.note);
          r.note = fresh.note;
        } else if (op == Op::kModifyTag) {
          (*row)->SetInt("tag", fresh.tag);
          r.tag = fresh.tag;
        } else if (!NameTaken(m, fresh.name)) {
          (*row)->SetChars("name", fresh.name);
          r.name = fresh.name;
        }
        return absl::OkStatus();
      }
      case Op::kReadTag: {
        // Every row of a tag, through by_tag, as the model has them.
        const int64_t tag = fresh.tag;
        const std::string low = index::KeyBuilder()
                                    .Int32(static_cast<int32_t>(tag))
                                    .String("", 6)
                                    .Build(10);
        const std::string high = index::KeyBuilder()
                                     .Int32(static_cast<int32_t>(tag))
                                     .String("\xff\xff\xff\xff\xff\xff", 6)
                                     .Build(10);
        std::set<int64_t> seen, want;
        for (const auto& [i, r] : m) {
          if (r.tag == tag) want.insert(i);
        }
        absl::Status read;
        absl::Status s =
            txn.Scan(by_tag_, low, high, rng() % 2 == 0, UINT64_MAX,
                     [&](std::string_view, TupleAddress at) {
                       auto row = txn.Read(rows_, at);
                       if (!row.ok()) {
                         read = row.status();
                         return false;
                       }
                       seen.insert(row->GetInt("id"));
                       return true;
                     });
        if (!s.ok()) return s;
        if (!read.ok()) return read;
        if (seen != want) {
          return absl::InternalError(
              absl::StrCat("by_tag of tag ", tag, " has ", seen.size(),
                           " rows, model ", want.size()));
        }
        return absl::OkStatus();
      }
      case Op::kReadName: {
        auto at = txn.Lookup(by_name_, NameKey(fresh.name));
        std::optional<int64_t> want;
        for (const auto& [i, r] : m) {
          if (r.name == fresh.name) want = i;
        }
        if (!want) {
          return absl::IsNotFound(at.status())
                     ? absl::OkStatus()
                     : absl::InternalError("a name the model lacks");
        }
        if (!at.ok()) return at.status();
        auto row = txn.Read(rows_, *at);
        if (!row.ok()) return row.status();
        if (row->GetInt("id") != *want) {
          return absl::InternalError("by_name names another row");
        }
        return absl::OkStatus();
      }
      case Op::kCount:
        break;
    }
    return absl::InternalError("no such op");
  }

  // The heap and every declared index, read below the transactions, must
  // hold the model: one row per model row, one entry per row per index.
  void CheckStorage(const Model& model, int txn_number) {
    cc::GclManager& manager = **EngineInternals::manager(*engine_, 0);
    auto ctx = *manager.NewThreadContext();
    auto catalog = *storage::Catalog::Open(manager, *ctx);
    auto table = *catalog->FindTable(*ctx, "rows");
    auto heap =
        *storage::HeapTable::Open(manager, *ctx, table.root, table.schema);
    Model in_heap;
    std::map<std::string, std::multiset<std::string>> want;  // index -> keys
    absl::Status scan =
        heap->Scan(*ctx, [&](TupleAddress at, const uint8_t* bytes) {
          const storage::TupleView row(heap->schema(), bytes);
          const int64_t id = row.GetInt("id");
          EXPECT_FALSE(in_heap.contains(id)) << "id " << id << " twice";
          in_heap[id] = {row.GetInt("tag"), std::string(row.GetChars("name")),
                         row.GetInt("note")};
          for (txn::IndexId index : {by_id_, by_name_, by_tag_}) {
            want[Name(index)].insert(engine_->index_key(index)->Build(row) +
                                     absl::StrCat("@", at.raw()));
          }
          return true;
        });
    ASSERT_TRUE(scan.ok()) << scan;
    EXPECT_EQ(in_heap, model) << "after transaction " << txn_number;
    for (txn::IndexId index : {by_id_, by_name_, by_tag_}) {
      auto desc = *catalog->FindIndex(*ctx, Name(index));
      auto tree = *index::BLinkTree::Open(manager, *ctx, desc.anchor);
      std::multiset<std::string> have;
      ASSERT_TRUE(tree->Scan(*ctx, std::nullopt, std::nullopt,
                             index::BLinkTree::kNoLimit,
                             [&](std::string_view key, uint64_t value) {
                               have.insert(std::string(key) +
                                           absl::StrCat("@", value));
                               return true;
                             })
                      .ok());
      EXPECT_EQ(have, want[Name(index)])
          << "index " << Name(index) << " after transaction " << txn_number;
    }
  }

  std::string Name(txn::IndexId index) const {
    return index == by_id_ ? "by_id" : index == by_name_ ? "by_name" : "by_tag";
  }

  std::unique_ptr<Engine> engine_;
  std::vector<std::unique_ptr<Session>> sessions_;
  txn::TableId rows_ = 0;
  txn::IndexId by_id_ = 0, by_name_ = 0, by_tag_ = 0;
  // Statements run, by Op, and those refused for a taken key (retries
  // included): the test must have exercised each.
  int ops_[static_cast<int>(Op::kCount)] = {};
  int refused_ = 0;
};

TEST_P(IndexModelTest, IndexesAlwaysMatchTheHeap) {
  const uint64_t seed = 20240601 + static_cast<int>(GetParam().algorithm) * 7 +
                        static_cast<int>(GetParam().protocol);
  std::mt19937_64 rng(seed);
  Model committed;
  for (int t = 0; t < kTransactions; ++t) {
    Session& session = *sessions_[t % sessions_.size()];
    const int statements = 1 + rng() % 6;
    const bool roll_back = rng() % 5 == 0;
    const uint64_t txn_seed = rng();
    Model seen;
    absl::Status s = session.Run([&](Txn& txn) -> absl::Status {
      // A retry starts over: the same statements from the same state.
      seen = committed;
      std::mt19937_64 steps(txn_seed);
      for (int i = 0; i < statements; ++i) {
        if (absl::Status st = Step(txn, seen, steps); !st.ok()) return st;
      }
      if (roll_back) return txn.UserAbort("rolled back on purpose");
      return absl::OkStatus();
    });
    if (roll_back) {
      ASSERT_TRUE(IsUserAbort(s))
          << "seed " << seed << " txn " << t << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << "seed " << seed << " txn " << t << ": " << s;
      committed = seen;
    }
    ASSERT_NO_FATAL_FAILURE(CheckStorage(committed, t));
    if (HasFailure()) return;
  }
  EXPECT_GT(committed.size(), kIds / 4);
  for (int op = 0; op < static_cast<int>(Op::kCount); ++op) {
    EXPECT_GT(ops_[op], 20) << "op " << op;
  }
  EXPECT_GT(refused_, 20);
}

INSTANTIATE_TEST_SUITE_P(Configs, IndexModelTest, ::testing::ValuesIn([] {
                           std::vector<TxnTestConfig> configs;
                           for (const TxnTestConfig& c :
                                testing::TxnTestConfigs(
                                    testing::TestProtocols())) {
                             if (c.compute_nodes == 2) configs.push_back(c);
                           }
                           return configs;
                         }()),
                         testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
