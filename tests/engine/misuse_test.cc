// Every misuse of the public API a program can make returns a Status that
// names what is wrong (the table, column, index, key, procedure or option)
// and never ends the process. Each case runs as a death test that expects
// no death: in a child process, which must exit 0 (the misuse came back
// as the Status expected), not abort on a CHECK nor exit 1 (a wrong or
// missing Status).

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "engine/engine.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using txn::Txn;

EngineOptions Options() {
  return testing::TxnTestOptions(
      {txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSelcc, 1});
}

// The database every case starts from: table t (id int64, small int8,
// name char(4)) with a declared unique index t_by_id and a declared
// non-unique t_by_name, and a session.
struct Db {
  std::unique_ptr<Engine> engine;
  txn::TableId t = 0;
  txn::IndexId by_id = 0, by_name = 0;
  std::unique_ptr<Session> session;

  Db() {
    engine = *Engine::Open(Options());
    t = *engine->CreateTable(
        "t",
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"small", storage::ColumnType::kInt8},
                                  {"name", storage::ColumnType::kChar, 4}}));
    by_id = *engine->CreateIndex("t_by_id", t, {"id"}, true);
    by_name = *engine->CreateIndex("t_by_name", t, {"name"}, false);
  }
  void Start() {
    session = *engine->NewSession(0);
    // One row, id 1.
    absl::Status s = session->Run([&](Txn& txn) -> absl::Status {
      auto row = *txn.NewRow(t);
      row.SetInt("id", 1);
      return txn.Insert(t, row).status();
    });
    if (!s.ok()) std::exit(2);
  }
  absl::Status Run(absl::FunctionRef<absl::Status(Txn&)> fn) {
    return session->Run([&](Txn& txn) { return fn(txn); });
  }
};

// Exits 0 if `status` has `code` and its message contains `text`; else
// says why and exits 1.
[[noreturn]] void ExitExpecting(const absl::Status& status,
                                absl::StatusCode code,
                                const std::string& text) {
  if (status.code() == code &&
      std::string(status.message()).find(text) != std::string::npos) {
    std::exit(0);
  }
  std::cerr << "got " << status << "; wanted " << absl::StatusCodeToString(code)
            << " containing \"" << text << "\"\n";
  std::exit(1);
}

std::string Key(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }

// A death test that expects no death: `misuse` runs in a child process
// and must exit 0.
#define EXPECT_STATUS_NOT_DEATH(misuse) \
  EXPECT_EXIT(misuse, ::testing::ExitedWithCode(0), "")

class MisuseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
};

TEST_F(MisuseTest, AValueTooWideForItsColumn) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) {
      auto row = *txn.NewRow(db.t);
      row.SetInt("id", 2);
      row.SetInt("small", 300);
      return txn.Insert(db.t, row).status();
    }),
                  absl::StatusCode::kInvalidArgument,
                  "table t: 300 does not fit column small (1-byte int8)");
  });
}

TEST_F(MisuseTest, AStringTooLongForItsColumn) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) {
      auto at = *txn.Lookup(db.by_id, Key(1));
      auto row = *txn.Modify(db.t, at);
      row->SetChars("name", "too long");
      return absl::OkStatus();  // the commit finds it
    }),
                  absl::StatusCode::kInvalidArgument,
                  "does not fit column name (char of 4)");
  });
}

TEST_F(MisuseTest, AColumnReadAsAnotherType) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) {
      auto at = *txn.Lookup(db.by_id, Key(1));
      auto row = *txn.Read(db.t, at);
      (void)row.GetDouble("id");
      return absl::OkStatus();  // the commit finds it
    }),
                  absl::StatusCode::kInvalidArgument, "table t, row");
  });
}

TEST_F(MisuseTest, AnUnknownColumnName) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) {
      auto row = *txn.NewRow(db.t);
      row.SetInt("nope", 1);
      return txn.Insert(db.t, row).status();
    }),
                  absl::StatusCode::kInvalidArgument,
                  "SetInt(\"nope\"): the row has no column of that name");
  });
}

TEST_F(MisuseTest, AKeyTooWideForItsIndex) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    // KeyBuilder keeps the fields whole; the index refuses the width.
    const std::string wide = index::KeyBuilder().Int64(1).Int32(2).Build(8);
    ExitExpecting(
        db.Run([&](Txn& txn) { return txn.Lookup(db.by_id, wide).status(); }),
        absl::StatusCode::kInvalidArgument,
        "index t_by_id takes 8-byte keys; key 0x");
  });
}

TEST_F(MisuseTest, UnknownTablesAndIndexes) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) -> absl::Status {
      if (txn.NewRow(99).status().code() !=
          absl::StatusCode::kInvalidArgument) {
        return absl::InternalError("NewRow of table 99");
      }
      if (txn.Lookup(42, Key(1)).status().code() !=
          absl::StatusCode::kInvalidArgument) {
        return absl::InternalError("Lookup in index 42");
      }
      return txn.Read(7, storage::TupleAddress()).status();
    }),
                  absl::StatusCode::kInvalidArgument, "no table with id 7");
  });
}

TEST_F(MisuseTest, ARowOfAnotherTable) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    const txn::TableId other = *db.engine->CreateTable(
        "other",
        *storage::Schema::Create({{"x", storage::ColumnType::kInt32}}));
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) {
      auto row = *txn.NewRow(other);
      return txn.Insert(db.t, row).status();
    }),
                  absl::StatusCode::kInvalidArgument,
                  "table t: the row was built for another table's columns");
  });
}

TEST_F(MisuseTest, EntriesOfADeclaredIndexByHandAndLookupsOfANonUniqueOne) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.Run([&](Txn& txn) -> absl::Status {
      absl::Status by_hand =
          txn.AddIndexEntry(db.by_id, Key(5), storage::TupleAddress());
      if (by_hand.code() != absl::StatusCode::kInvalidArgument) {
        return absl::InternalError(by_hand.ToString());
      }
      return txn.Lookup(db.by_name, index::KeyBuilder().String("a", 4).Build(4))
          .status();
    }),
                  absl::StatusCode::kInvalidArgument,
                  "index t_by_name is not unique");
  });
}

TEST_F(MisuseTest, ARowWiderThanAGcl) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    ExitExpecting(
        db.engine
            ->CreateTable("wide",
                          *storage::Schema::Create(
                              {{"blob", storage::ColumnType::kChar, 4000}}))
            .status(),
        absl::StatusCode::kInvalidArgument,
        "table wide: a row of 4000 bytes of columns does not fit one GCL");
  });
}

TEST_F(MisuseTest, UnknownIdsAskedOfTheEngine) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    if (db.engine->procedure_name(3).status().code() !=
        absl::StatusCode::kInvalidArgument) {
      std::exit(1);
    }
    ExitExpecting(db.engine->schema(12).status(),
                  absl::StatusCode::kInvalidArgument, "no table with id 12");
  });
}

TEST_F(MisuseTest, AnUnknownColumnInAnIndex) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    ExitExpecting(
        db.engine->CreateIndex("bad", db.t, {"id", "nope"}, true).status(),
        absl::StatusCode::kInvalidArgument,
        "CreateIndex bad: the table has no column nope");
  });
}

TEST_F(MisuseTest, AnUnregisteredProcedure) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    db.Start();
    ExitExpecting(db.session->Call<int64_t>("missing", int64_t{1}).status(),
                  absl::StatusCode::kUnimplemented,
                  "no procedure named missing is registered");
  });
}

TEST_F(MisuseTest, AProcedureThatThrows) {
  EXPECT_STATUS_NOT_DEATH({
    Db db;
    auto boom = *db.engine->RegisterProcedure(
        "boom",
        [](Txn&) -> absl::StatusOr<bool> { throw std::logic_error("boom"); });
    db.Start();
    ExitExpecting(db.session->Call(boom).status(), absl::StatusCode::kUnknown,
                  "procedure boom threw boom");
  });
}

TEST_F(MisuseTest, OptionsNameTheirField) {
  EXPECT_STATUS_NOT_DEATH({
    EngineOptions o = Options();
    o.cc.gcl_size = 100;
    ExitExpecting(Engine::Open(o).status(), absl::StatusCode::kInvalidArgument,
                  "EngineOptions::cc.gcl_size=100");
  });
}

}  // namespace
}  // namespace strand::engine
