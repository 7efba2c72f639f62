// Read your own writes (txn/own_writes.h) and indexes kept by the
// transaction (txn/declared_indexes.h), through the public API: after each
// kind of write (Insert, Update, a change through Modify's buffer, Delete,
// AddIndexEntry and RemoveIndexEntry on an index declared by width), every
// read path (Lookup, LookupBatch, Scan forward and backward, the iterator
// both ways, Read) shows the transaction its own writes, under every
// algorithm and protocol, with one and two compute nodes; the commit then
// leaves exactly that, which another node reads back.
//
// The table: items(id int64, tag int32, qty int64), with by_id (declared,
// unique), by_tag (declared, not unique) and by_qty (by width, unique,
// kept by the procedures). Each scenario applies a list of writes to an
// in-memory model and, in one transaction, to the engine; the transaction
// renders the database through every read path and each rendering must
// equal the model's.

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/txn_test_db.h"
#include "tests/testing/protocols.h"

namespace strand::engine {
namespace {

using storage::TupleAddress;
using testing::TxnTestConfig;
using txn::Txn;

constexpr int kId = 0, kTag = 1, kQty = 2;
constexpr int64_t kRows = 12;   // ids 0..11 loaded
constexpr int64_t kMaxId = 40;  // ids a scenario may use
constexpr int64_t kTags = 4;

std::string IdKey(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }
std::string TagKey(int64_t tag) {
  return index::KeyBuilder().Int32(static_cast<int32_t>(tag)).Build(4);
}
std::string QtyKey(int64_t qty) {
  return index::KeyBuilder().Int64(qty).Build(8);
}

struct Row {
  int64_t tag;
  int64_t qty;
};
using Model = std::map<int64_t, Row>;  // by id

// One write of a scenario.
enum class Op {
  kInsert,    // id, tag, qty (+ its by_qty entry)
  kUpdate,    // id to tag, qty, with Txn::Update (+ by_qty moved)
  kModify,    // id to tag through Modify's buffer (qty unchanged)
  kDelete,    // id (+ its by_qty entry)
  kModifyId,  // id's row gets id `tag` through Modify's buffer
};
struct Write {
  Op op;
  int64_t id;
  int64_t tag = 0;
  int64_t qty = 0;
};

// What every read path must show: one line per path.
std::string Render(const Model& m) {
  std::vector<std::string> rows, tags_fwd, ids;
  std::map<int64_t, std::vector<int64_t>> by_tag;
  for (const auto& [id, r] : m) {
    rows.push_back(absl::StrCat(id, ":", r.tag, ":", r.qty));
    by_tag[r.tag].push_back(id);
    ids.push_back(absl::StrCat(id));
  }
  std::vector<std::string> tag_groups;
  for (const auto& [tag, members] : by_tag) {
    tag_groups.push_back(absl::StrCat(tag, "=", absl::StrJoin(members, ",")));
  }
  std::vector<std::string> tag_groups_back(tag_groups.rbegin(),
                                           tag_groups.rend());
  std::vector<std::string> ids_back(ids.rbegin(), ids.rend());
  const std::string all = absl::StrJoin(rows, " ");
  return absl::StrCat("lookup ", all, "\nbatch ", all, "\nqty ", all,
                      "\nscan_id ", absl::StrJoin(ids, ","), "\nscan_id_back ",
                      absl::StrJoin(ids_back, ","), "\nscan_tag ",
                      absl::StrJoin(tag_groups, " "), "\nscan_tag_back ",
                      absl::StrJoin(tag_groups_back, " "), "\niter_tag ",
                      absl::StrJoin(tag_groups, " "), "\niter_tag_back ",
                      absl::StrJoin(tag_groups_back, " "), "\n");
}

class OwnWritesTest : public ::testing::TestWithParam<TxnTestConfig> {
 protected:
  void SetUp() override {
    EngineOptions options = testing::TxnTestOptions(GetParam());
    // Room for a transaction that reads every row (2PL holds them).
    options.cc.cache_bytes = 256 * 256;
    auto engine = Engine::Open(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"tag", storage::ColumnType::kInt32},
                                  {"qty", storage::ColumnType::kInt64}});
    items_ = *engine_->CreateTable("items", schema);
    by_id_ = *engine_->CreateIndex("by_id", items_, {"id"}, /*unique=*/true);
    by_tag_ = *engine_->CreateIndex("by_tag", items_, {"tag"}, false);
    by_qty_ = *engine_->CreateIndex("by_qty", items_, 8, /*unique=*/true);
    // Applies `writes` (encoded as op, id, tag, qty quadruples), then
    // renders what the transaction sees; commits if `commit`.
    apply_ = *engine_->RegisterProcedure(
        "apply",
        [=, this](Txn& txn, std::vector<int64_t> writes,
                  bool commit) -> absl::StatusOr<std::string> {
          for (size_t i = 0; i + 3 < writes.size(); i += 4) {
            const Write w{static_cast<Op>(writes[i]), writes[i + 1],
                          writes[i + 2], writes[i + 3]};
            if (absl::Status s = ApplyOne(txn, w); !s.ok()) return s;
          }
          auto seen = RenderTxn(txn);
          if (!seen.ok()) return seen.status();
          if (!commit) return txn.UserAbort(*seen);
          return *seen;
        });
    render_ = *engine_->RegisterProcedure(
        "render", [this](Txn& txn) -> absl::StatusOr<std::string> {
          return RenderTxn(txn);
        });
  }

  absl::Status ApplyOne(Txn& txn, const Write& w) {
    switch (w.op) {
      case Op::kInsert: {
        auto row = txn.NewRow(items_);
        if (!row.ok()) return row.status();
        row->SetInt(kId, w.id);
        row->SetInt(kTag, w.tag);
        row->SetInt(kQty, w.qty);
        auto at = txn.Insert(items_, *row);
        if (!at.ok()) return at.status();
        return txn.AddIndexEntry(by_qty_, QtyKey(w.qty), *at);
      }
      case Op::kUpdate: {
        auto at = txn.Lookup(by_id_, IdKey(w.id));
        if (!at.ok()) return at.status();
        auto old = txn.Read(items_, *at);
        if (!old.ok()) return old.status();
        if (absl::Status s =
                txn.RemoveIndexEntry(by_qty_, QtyKey(old->GetInt(kQty)), *at);
            !s.ok()) {
          return s;
        }
        auto row = txn.NewRow(items_);
        if (!row.ok()) return row.status();
        row->SetInt("id", w.id);
        row->SetInt("tag", w.tag);
        row->SetInt("qty", w.qty);
        if (absl::Status s = txn.Update(items_, *at, *row); !s.ok()) return s;
        return txn.AddIndexEntry(by_qty_, QtyKey(w.qty), *at);
      }
      case Op::kModify:
      case Op::kModifyId: {
        auto at = txn.Lookup(by_id_, IdKey(w.id));
        if (!at.ok()) return at.status();
        auto row = txn.Modify(items_, *at);
        if (!row.ok()) return row.status();
        (*row)->SetInt(w.op == Op::kModify ? kTag : kId, w.tag);
        return absl::OkStatus();
      }
      case Op::kDelete: {
        auto at = txn.Lookup(by_id_, IdKey(w.id));
        if (!at.ok()) return at.status();
        auto old = txn.Read(items_, *at);
        if (!old.ok()) return old.status();
        const int64_t qty = old->GetInt(kQty);
        if (absl::Status s = txn.Delete(items_, *at); !s.ok()) return s;
        return txn.RemoveIndexEntry(by_qty_, QtyKey(qty), *at);
      }
    }
    return absl::InternalError("unknown op");
  }

  // "id:tag:qty" of the row at `at`, or an error.
  absl::StatusOr<std::string> RowText(Txn& txn, TupleAddress at) {
    auto row = txn.Read(items_, at);
    if (!row.ok()) return row.status();
    return absl::StrCat(row->GetInt(kId), ":", row->GetInt(kTag), ":",
                        row->GetInt(kQty));
  }

  // Every read path's view of the table, as Render writes it.
  absl::StatusOr<std::string> RenderTxn(Txn& txn) {
    std::string out;
    // Lookup, then LookupBatch, of every id that may exist.
    std::vector<std::string> rows, batch_rows, qty_rows;
    std::vector<std::string> keys;
    for (int64_t id = 0; id < kMaxId; ++id) keys.push_back(IdKey(id));
    for (int64_t id = 0; id < kMaxId; ++id) {
      auto at = txn.Lookup(by_id_, keys[id]);
      if (absl::IsNotFound(at.status())) continue;
      if (!at.ok()) return at.status();
      auto text = RowText(txn, *at);
      if (!text.ok()) return text.status();
      rows.push_back(*text);
      // The manual index names the same row by its qty.
      auto row = txn.Read(items_, *at);
      auto by_qty = txn.Lookup(by_qty_, QtyKey(row->GetInt(kQty)));
      if (!by_qty.ok()) return by_qty.status();
      auto qty_text = RowText(txn, *by_qty);
      if (!qty_text.ok()) return qty_text.status();
      qty_rows.push_back(*qty_text);
    }
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<TupleAddress> found(keys.size());
    if (absl::Status s = txn.LookupBatch(by_id_, views, absl::MakeSpan(found));
        !s.ok()) {
      return s;
    }
    for (TupleAddress at : found) {
      if (at.is_null()) continue;
      auto text = RowText(txn, at);
      if (!text.ok()) return text.status();
      batch_rows.push_back(*text);
    }
    absl::StrAppend(&out, "lookup ", absl::StrJoin(rows, " "), "\nbatch ",
                    absl::StrJoin(batch_rows, " "), "\nqty ",
                    absl::StrJoin(qty_rows, " "), "\n");
    // by_id scanned both ways: ids in order.
    for (bool forward : {true, false}) {
      std::vector<int64_t> ids;
      absl::Status read;
      absl::Status s = txn.Scan(
          by_id_, std::nullopt, std::nullopt, forward, UINT64_MAX,
          [&](std::string_view key, TupleAddress at) {
            auto row = txn.Read(items_, at);
            if (!row.ok() || IdKey(row->GetInt(kId)) != key) {
              read = row.ok() ? absl::InternalError("key and row differ")
                              : row.status();
              return false;
            }
            ids.push_back(row->GetInt(kId));
            return true;
          });
      if (!s.ok()) return s;
      if (!read.ok()) return read;
      absl::StrAppend(&out, forward ? "scan_id " : "scan_id_back ",
                      absl::StrJoin(ids, ","), "\n");
    }
    // by_tag by Scan and by iterator, both ways: groups in key order, the
    // members of a group sorted (the index orders them by address).
    for (bool iterator : {false, true}) {
      for (bool forward : {true, false}) {
        std::vector<std::pair<int64_t, int64_t>> entries;  // (tag, id)
        absl::Status read;
        auto visit = [&](std::string_view key, TupleAddress at) {
          auto row = txn.Read(items_, at);
          if (!row.ok() || TagKey(row->GetInt(kTag)) != key) {
            read = row.ok() ? absl::InternalError("tag key and row differ")
                            : row.status();
            return false;
          }
          entries.push_back({row->GetInt(kTag), row->GetInt(kId)});
          return true;
        };
        if (iterator) {
          txn::IndexIterator it =
              txn.NewIterator(by_tag_, {.low = TagKey(0),
                                        .high = TagKey(kTags + kMaxId),
                                        .forward = forward});
          for (; it.Valid() && visit(it.key(), it.address()); it.Next()) {
          }
          if (!it.status().ok()) return it.status();
        } else {
          absl::Status s = txn.Scan(by_tag_, std::nullopt, std::nullopt,
                                    forward, UINT64_MAX, visit);
          if (!s.ok()) return s;
        }
        if (!read.ok()) return read;
        std::vector<std::string> groups;
        std::map<int64_t, std::vector<int64_t>> members;
        std::vector<int64_t> order;
        for (const auto& [tag, id] : entries) {
          if (order.empty() || order.back() != tag) order.push_back(tag);
          members[tag].push_back(id);
        }
        for (int64_t tag : order) {
          std::vector<int64_t>& m = members[tag];
          std::sort(m.begin(), m.end());
          groups.push_back(absl::StrCat(tag, "=", absl::StrJoin(m, ",")));
        }
        absl::StrAppend(&out, iterator ? "iter_tag" : "scan_tag",
                        forward ? " " : "_back ", absl::StrJoin(groups, " "),
                        "\n");
      }
    }
    return out;
  }

  static std::vector<int64_t> Encode(const std::vector<Write>& writes) {
    std::vector<int64_t> out;
    for (const Write& w : writes) {
      out.insert(out.end(), {static_cast<int64_t>(w.op), w.id, w.tag, w.qty});
    }
    return out;
  }

  static void ApplyToModel(Model& m, const std::vector<Write>& writes) {
    for (const Write& w : writes) {
      switch (w.op) {
        case Op::kInsert:
          m[w.id] = {w.tag, w.qty};
          break;
        case Op::kUpdate:
          m[w.id] = {w.tag, w.qty};
          break;
        case Op::kModify:
          m[w.id].tag = w.tag;
          break;
        case Op::kModifyId: {
          const Row r = m[w.id];
          m.erase(w.id);
          m[w.tag] = r;
          break;
        }
        case Op::kDelete:
          m.erase(w.id);
          break;
      }
    }
  }

  void Load() {
    std::vector<Write> load;
    for (int64_t id = 0; id < kRows; ++id) {
      load.push_back({Op::kInsert, id, id % 3, 100 * id});
    }
    ApplyToModel(model_, load);
    auto session = *engine_->NewSession(0);
    auto r = session->Call(apply_, Encode(load), true);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(*r, Render(model_));
  }

  // Runs `writes` in one transaction on the last node: what it saw must be
  // the model with them; rolled back, the first node must still see the
  // model without them, and committed, with them.
  void Check(const std::vector<Write>& writes) {
    Model after = model_;
    ApplyToModel(after, writes);
    auto writer = *engine_->NewSession(GetParam().compute_nodes - 1);
    auto reader = *engine_->NewSession(0);
    auto rolled_back = writer->Call(apply_, Encode(writes), false);
    ASSERT_TRUE(IsUserAbort(rolled_back.status())) << rolled_back.status();
    EXPECT_EQ(std::string(rolled_back.status().message()),
              "user abort: " + Render(after));
    auto unchanged = reader->Call(render_);
    ASSERT_TRUE(unchanged.ok()) << unchanged.status();
    EXPECT_EQ(*unchanged, Render(model_));
    auto committed = writer->Call(apply_, Encode(writes), true);
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(*committed, Render(after));
    auto read_back = reader->Call(render_);
    ASSERT_TRUE(read_back.ok()) << read_back.status();
    EXPECT_EQ(*read_back, Render(after));
    model_ = after;
  }

  std::unique_ptr<Engine> engine_;
  txn::TableId items_ = 0;
  txn::IndexId by_id_ = 0, by_tag_ = 0, by_qty_ = 0;
  Procedure<std::string(std::vector<int64_t>, bool)> apply_;
  Procedure<std::string()> render_;
  Model model_;
};

TEST_P(OwnWritesTest, InsertIsSeenByEveryReadPath) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kInsert, 20, 1, 2000}, {Op::kInsert, 13, 3, 1300}});
}

TEST_P(OwnWritesTest, UpdateMovesTheDeclaredAndManualEntries) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kUpdate, 3, 2, 310}, {Op::kUpdate, 7, 1, 700}});
}

TEST_P(OwnWritesTest, ModifyThroughTheBufferMovesTheDeclaredEntries) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kModify, 4, 0}, {Op::kModify, 5, 3}, {Op::kModify, 4, 2}});
}

TEST_P(OwnWritesTest, DeleteHidesTheRowFromEveryReadPath) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kDelete, 5}, {Op::kDelete, 0}});
}

TEST_P(OwnWritesTest, ARowInsertedAndDeletedInOneTransactionLeavesNothing) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kInsert, 21, 2, 2100}, {Op::kDelete, 21}});
}

TEST_P(OwnWritesTest, AnInsertedRowChangedThroughItsBuffer) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kInsert, 22, 0, 2200}, {Op::kModify, 22, 3}});
}

TEST_P(OwnWritesTest, RowsMaySwapUniqueKeysThroughTheirBuffers) {
  ASSERT_NO_FATAL_FAILURE(Load());
  // 1 -> 30, 2 -> 1, 30 -> 2: by_id's keys move in a cycle.
  Check(
      {{Op::kModifyId, 1, 30}, {Op::kModifyId, 2, 1}, {Op::kModifyId, 30, 2}});
}

TEST_P(OwnWritesTest, EveryKindOfWriteInOneTransaction) {
  ASSERT_NO_FATAL_FAILURE(Load());
  Check({{Op::kInsert, 25, 1, 2500},
         {Op::kUpdate, 3, 0, 333},
         {Op::kDelete, 6},
         {Op::kModify, 25, 2},
         {Op::kInsert, 6, 3, 600},  // the deleted id and qty, again
         {Op::kDelete, 9},
         {Op::kUpdate, 25, 0, 2501}});
}

// Unique declared keys are checked at the statement that writes them: it
// fails with AlreadyExists naming the index and the key, and the
// transaction goes on (and commits the rest).
TEST_P(OwnWritesTest, ATakenUniqueKeyFailsItsStatementNotTheTransaction) {
  ASSERT_NO_FATAL_FAILURE(Load());
  auto session = *engine_->NewSession(GetParam().compute_nodes - 1);
  std::vector<std::string> seen;
  absl::Status s = session->Run([&](Txn& txn) -> absl::Status {
    seen.clear();
    auto row = *txn.NewRow(items_);
    row.SetInt("id", 3);  // taken by a committed row
    row.SetInt("tag", 1);
    seen.push_back(txn.Insert(items_, row).status().ToString());
    row.SetInt("id", 30);
    auto at = txn.Insert(items_, row);
    if (!at.ok()) return at.status();
    // Taken by this transaction's own insert.
    seen.push_back(txn.Insert(items_, row).status().ToString());
    // Update of row 30 to id 4 (taken): refused, the row unchanged.
    row.SetInt("id", 4);
    seen.push_back(txn.Update(items_, *at, row).ToString());
    auto again = txn.Read(items_, *at);
    if (!again.ok()) return again.status();
    seen.push_back(absl::StrCat("row 30 has id ", again->GetInt("id")));
    // InsertIfAbsent names the holder instead; Upsert replaces it.
    row.SetInt("id", 5);
    row.SetInt("tag", 3);
    auto if_absent = txn.InsertIfAbsent(items_, row);
    if (!if_absent.ok()) return if_absent.status();
    auto five = txn.Lookup(by_id_, IdKey(5));
    if (!five.ok()) return five.status();
    seen.push_back(absl::StrCat("if_absent inserted=", if_absent->inserted,
                                " holder_is_5=", if_absent->address == *five));
    row.SetInt("qty", 555);
    auto upserted = txn.Upsert(items_, row);
    if (!upserted.ok()) return upserted.status();
    seen.push_back(absl::StrCat("upsert same_row=", *upserted == *five));
    row.SetInt("id", 31);
    auto fresh = txn.InsertIfAbsent(items_, row);
    if (!fresh.ok()) return fresh.status();
    seen.push_back(absl::StrCat("fresh inserted=", fresh->inserted));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_THAT(seen[0], ::testing::HasSubstr(
                           "ALREADY_EXISTS: table items: unique index by_id "
                           "already has key (id=3)"));
  EXPECT_THAT(seen[1], ::testing::HasSubstr("by_id already has key (id=30)"));
  EXPECT_THAT(seen[2], ::testing::HasSubstr("by_id already has key (id=4)"));
  EXPECT_EQ(seen[3], "row 30 has id 30");
  EXPECT_EQ(seen[4], "if_absent inserted=0 holder_is_5=1");
  EXPECT_EQ(seen[5], "upsert same_row=1");
  EXPECT_EQ(seen[6], "fresh inserted=1");
  // Committed: rows 30 and 31 are new, row 5 was replaced (its by_tag
  // entry moved to tag 3), the refused statements left nothing.
  auto reader = *engine_->NewSession(0);
  auto render = reader->Run([&](Txn& txn) -> absl::StatusOr<std::string> {
    std::string out;
    for (int64_t id : {3, 4, 5, 30, 31}) {
      auto at = txn.Lookup(by_id_, IdKey(id));
      if (!at.ok()) return at.status();
      auto row = txn.Read(items_, *at);
      if (!row.ok()) return row.status();
      absl::StrAppend(&out, row->GetInt("id"), ":", row->GetInt("tag"), ":",
                      row->GetInt("qty"), " ");
    }
    absl::StrAppend(&out, "tag3=");
    absl::Status scan =
        txn.Scan(by_tag_, TagKey(3), TagKey(3), true, UINT64_MAX,
                 [&](std::string_view, TupleAddress at) {
                   auto r = txn.Read(items_, at);
                   absl::StrAppend(&out, r.ok() ? r->GetInt("id") : -1, ",");
                   return true;
                 });
    if (!scan.ok()) return scan;
    return out;
  });
  ASSERT_TRUE(render.ok()) << render.status();
  EXPECT_EQ(*render, "3:0:300 4:1:400 5:3:555 30:1:0 31:3:555 tag3=5,31,");
}

// A key changed through Modify's buffer to one another row has is found
// when the transaction next reads the table's indexes, or at commit:
// there was no statement to fail, so the transaction aborts, and nothing
// of it stays.
TEST_P(OwnWritesTest, ATakenKeyWrittenThroughTheBufferAbortsTheTransaction) {
  ASSERT_NO_FATAL_FAILURE(Load());
  auto session = *engine_->NewSession(GetParam().compute_nodes - 1);
  for (bool read_first : {false, true}) {
    absl::Status s = session->Run([&](Txn& txn) -> absl::Status {
      auto at = txn.Lookup(by_id_, IdKey(8));
      if (!at.ok()) return at.status();
      auto row = txn.Modify(items_, *at);
      if (!row.ok()) return row.status();
      (*row)->SetInt("tag", 0);
      (*row)->SetInt("id", 9);  // row 9's
      if (read_first) return txn.Lookup(by_id_, IdKey(1)).status();
      return absl::OkStatus();
    });
    EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists) << s;
    EXPECT_THAT(std::string(s.message()),
                ::testing::HasSubstr("to key (id=9) of unique index by_id"));
  }
  auto reader = *engine_->NewSession(0);
  EXPECT_EQ(*reader->Call(render_), Render(model_));
}

// The iterator fetches IndexIterator::kBatch entries at a time: a range
// several batches long, of one non-unique key, with the transaction's own
// entries among them, is walked whole and in order, both ways.
TEST_P(OwnWritesTest, TheIteratorCrossesBatchesOfOneKey) {
  constexpr int64_t kMany = 3 * txn::IndexIterator::kBatch + 5;
  auto session = *engine_->NewSession(0);
  absl::Status load = session->Run([&](Txn& txn) -> absl::Status {
    for (int64_t id = 0; id < kMany; ++id) {
      auto row = *txn.NewRow(items_);
      row.SetInt("id", id);
      row.SetInt("tag", 7);
      if (auto at = txn.Insert(items_, row); !at.ok()) return at.status();
    }
    return absl::OkStatus();
  });
  ASSERT_TRUE(load.ok()) << load;
  auto walk = session->Run([&](Txn& txn) -> absl::StatusOr<std::string> {
    // Own writes: one more row of tag 7, and one deleted.
    auto row = *txn.NewRow(items_);
    row.SetInt("id", 1000);
    row.SetInt("tag", 7);
    if (auto at = txn.Insert(items_, row); !at.ok()) return at.status();
    auto gone = txn.Lookup(by_id_, IdKey(100));
    if (!gone.ok()) return gone.status();
    if (absl::Status s = txn.Delete(items_, *gone); !s.ok()) return s;
    std::string out;
    for (bool forward : {true, false}) {
      std::vector<uint64_t> addresses;
      txn::IndexIterator it = txn.NewIterator(
          by_tag_, {.low = TagKey(7), .high = TagKey(7), .forward = forward});
      for (; it.Valid(); it.Next()) {
        if (it.key() != TagKey(7)) return absl::InternalError("wrong key");
        addresses.push_back(it.address().raw());
      }
      if (!it.status().ok()) return it.status();
      std::vector<uint64_t> in_order = addresses;
      if (!forward) std::reverse(in_order.begin(), in_order.end());
      const bool ordered =
          std::adjacent_find(in_order.begin(), in_order.end(),
                             std::greater_equal<uint64_t>()) == in_order.end();
      absl::StrAppend(
          &out, addresses.size(), ordered ? " ordered " : " unordered ",
          std::count(addresses.begin(), addresses.end(), gone->raw()),
          " deleted; ");
    }
    return out;
  });
  ASSERT_TRUE(walk.ok()) << walk.status();
  EXPECT_EQ(*walk, absl::StrCat(kMany, " ordered 0 deleted; ", kMany,
                                " ordered 0 deleted; "));
}

// A transaction that found a unique key free, added it, then removed it
// again observed the key free, and nothing at commit checks that any more
// (the commit checks only keys it adds): the read that found it free is
// validated then. Here another transaction takes the key in between, so
// the first attempt must fail validation; the retry finds the key taken.
TEST_P(OwnWritesTest, AFreeKeyAddedThenRemovedIsStillValidated) {
  ASSERT_NO_FATAL_FAILURE(Load());
  auto t = *engine_->NewSession(GetParam().compute_nodes - 1);
  auto u = *engine_->NewSession(0);
  int attempts = 0;
  std::vector<std::string> seen;
  absl::Status s = t->Run([&](Txn& txn) -> absl::Status {
    ++attempts;
    auto row = *txn.NewRow(items_);
    row.SetInt("id", 33);
    row.SetInt("tag", 1);
    auto mine = txn.InsertIfAbsent(items_, row);
    if (!mine.ok()) return mine.status();
    if (attempts == 1) {
      // Another transaction takes id 33 and commits meanwhile.
      absl::Status other = u->Run([&](Txn& other_txn) -> absl::Status {
        auto theirs = *other_txn.NewRow(items_);
        theirs.SetInt("id", 33);
        theirs.SetInt("tag", 2);
        return other_txn.Insert(items_, theirs).status();
      });
      if (!other.ok()) return other;
    }
    if (mine->inserted) {
      if (absl::Status d = txn.Delete(items_, mine->address); !d.ok()) return d;
    }
    auto now = txn.Lookup(by_id_, IdKey(33));
    if (!now.ok()) return now.status();
    // (Under TO this read of a younger write aborts the attempt already.)
    auto theirs = txn.Read(items_, *now);
    if (!theirs.ok()) return theirs.status();
    seen.push_back(absl::StrCat("inserted=", mine->inserted,
                                " tag=", theirs->GetInt("tag")));
    return absl::OkStatus();
  });
  ASSERT_TRUE(s.ok()) << s;
  // The first attempt saw 33 free and then someone's row 33: it must not
  // commit. The second saw it taken from the start.
  EXPECT_EQ(attempts, 2);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), "inserted=0 tag=2");
  if (seen.size() == 2) {
    EXPECT_EQ(seen[0], "inserted=1 tag=2");
  }
}

std::vector<TxnTestConfig> OneAndTwoNodeConfigs() {
  std::vector<TxnTestConfig> configs;
  for (const TxnTestConfig& c :
       testing::TxnTestConfigs(testing::TestProtocols())) {
    if (c.compute_nodes <= 2) configs.push_back(c);
  }
  return configs;
}

INSTANTIATE_TEST_SUITE_P(Configs, OwnWritesTest,
                         ::testing::ValuesIn(OneAndTwoNodeConfigs()),
                         testing::TxnTestName);

}  // namespace
}  // namespace strand::engine
