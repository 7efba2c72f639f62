// The procedure API (engine/procedure.h, session.h, call_status.h): any
// callable registers; a typed handle's calls convert their arguments; an
// untyped call with other types is refused with both signatures named; a
// user abort and a conflict that exhausted its retries are told apart
// without reading messages. procedure_compile_fail.cc holds the calls that
// must not compile.

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "engine/call_status.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using ::testing::HasSubstr;
using txn::Txn;

EngineOptions Options() {
  return testing::TxnTestOptions(
      {txn::CcAlgorithm::kTwoPhaseLocking, cc::Protocol::kSel, 1});
}

absl::StatusOr<int64_t> Twice(Txn&, int64_t x) { return 2 * x; }

struct AddLength {
  int64_t base;
  absl::StatusOr<int64_t> operator()(Txn&, int64_t x,
                                     const std::string& label) const {
    return base + x + static_cast<int64_t>(label.size());
  }
};

TEST(ProcedureTest, AnyCallableRegistersAndTypedCallsConvertArguments) {
  auto engine = *Engine::Open(Options());
  auto lambda = engine->RegisterProcedure(
      "lambda", [](Txn&, int64_t a, int32_t b) -> absl::StatusOr<int64_t> {
        return a * b;
      });
  static_assert(
      std::is_same_v<decltype(lambda),
                     absl::StatusOr<Procedure<int64_t(int64_t, int32_t)>>>);
  auto pointer = engine->RegisterProcedure("pointer", &Twice);
  auto functor = engine->RegisterProcedure("functor", AddLength{100});
  static_assert(
      std::is_same_v<decltype(functor),
                     absl::StatusOr<Procedure<int64_t(int64_t, std::string)>>>);
  std::function<absl::StatusOr<bool>(Txn&)> yes =
      [](Txn&) -> absl::StatusOr<bool> { return true; };
  auto function = engine->RegisterProcedure("function", yes);
  ASSERT_TRUE(lambda.ok() && pointer.ok() && functor.ok() && function.ok());

  auto session = *engine->NewSession(0);
  // int literals for int64_t and int32_t, an int8_t for int64_t, a string
  // literal for std::string: converted, as a function call would.
  EXPECT_EQ(*session->Call(*lambda, 6, 7), 42);
  EXPECT_EQ(*session->Call(*pointer, int8_t{21}), 42);
  EXPECT_EQ(*session->Call(*functor, 1, "abc"), 104);
  EXPECT_TRUE(*session->Call<bool>(*function));
  // The handle is its ProcedureId: untyped calls reach the same procedure.
  ProcedureId id = *lambda;
  EXPECT_EQ(id, *engine->FindProcedure("lambda"));
  EXPECT_EQ(*session->Call<int64_t>(id, int64_t{2}, int32_t{3}), 6);
  EXPECT_EQ(*session->Call<int64_t>("pointer", int64_t{4}), 8);
}

TEST(ProcedureTest, UntypedCallsWithOtherTypesNameBothSignatures) {
  auto engine = *Engine::Open(Options());
  ASSERT_TRUE(engine->RegisterProcedure("twice", &Twice).ok());
  ASSERT_TRUE(engine->RegisterProcedure("add", AddLength{0}).ok());
  auto session = *engine->NewSession(0);

  auto r = session->Call<int64_t>("twice", 21);  // an int, not an int64_t
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("procedure twice is int64_t(int64_t); called as "
                        "int64_t(int32_t)"));
  auto d = session->Call<double>("twice", int64_t{21});
  EXPECT_THAT(std::string(d.status().message()),
              HasSubstr("called as double(int64_t)"));
  auto s = session->Call<int64_t>("add", int64_t{1}, "x");  // const char*
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("procedure add is int64_t(int64_t, std::string); "
                        "called as int64_t(int64_t, char const*)"));
  EXPECT_EQ(*session->Call<int64_t>("add", int64_t{1}, std::string("x")), 2);
}

TEST(ProcedureTest, FindProcedureTypesAHandleByName) {
  auto engine = *Engine::Open(Options());
  const ProcedureId id = *engine->RegisterProcedure("twice", &Twice);
  auto found = engine->FindProcedure<int64_t(int64_t)>("twice");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id(), id);
  auto wrong = engine->FindProcedure<int64_t(int32_t)>("twice");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr("procedure twice is int64_t(int64_t), not "
                        "int64_t(int32_t)"));
  // No such procedure is Unimplemented, never NotFound: that code is the
  // procedures' own ("no such key").
  EXPECT_EQ(engine->FindProcedure<int64_t(int64_t)>("nope").status().code(),
            absl::StatusCode::kUnimplemented);

  auto session = *engine->NewSession(0);
  EXPECT_EQ(*session->Call(*found, 5), 10);
  Procedure<bool()> none;  // never registered
  EXPECT_EQ(session->Call(none).status().code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(session->Call<int64_t>("nope", int64_t{1}).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ProcedureTest, UserAbortsAndExhaustedRetriesAreToldApartByReason) {
  EngineOptions options = Options();
  options.retry.max_retries = 3;
  options.retry.initial_backoff = absl::Microseconds(1);
  options.retry.max_backoff = absl::Microseconds(1);
  auto engine = *Engine::Open(options);
  auto refuse = *engine->RegisterProcedure(
      "refuse",
      [](Txn& txn) -> absl::StatusOr<bool> { return txn.UserAbort("no"); });
  // Every attempt meets a conflict, as under endless contention.
  auto contend = *engine->RegisterProcedure(
      "contend", [](Txn& txn) -> absl::StatusOr<bool> {
        txn.Abort(txn::AbortReason::kConflict);
        return absl::AbortedError("a conflict");
      });
  auto missing =
      *engine->RegisterProcedure("missing", [](Txn&) -> absl::StatusOr<bool> {
        return absl::NotFoundError("no such thing");
      });
  auto session = *engine->NewSession(0);

  absl::Status refused = session->Call(refuse).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(IsUserAbort(refused)) << refused;
  EXPECT_FALSE(IsRetriesExhausted(refused)) << refused;

  absl::Status gave_up = session->Call(contend).status();
  EXPECT_EQ(gave_up.code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(IsRetriesExhausted(gave_up)) << gave_up;
  EXPECT_FALSE(IsUserAbort(gave_up)) << gave_up;
  EXPECT_EQ(txn::AbortReasonOf(gave_up), txn::AbortReason::kConflict);
  const ProcedureStats stats = engine->Stats()[contend];
  EXPECT_EQ(stats.aborts_for(txn::AbortReason::kConflict), 4u);  // 1 + 3
  EXPECT_EQ(stats.gave_up, 1u);

  absl::Status error = session->Call(missing).status();
  EXPECT_EQ(error.code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(IsUserAbort(error));
  EXPECT_FALSE(IsRetriesExhausted(error));

  // The pipelined call's outcome carries the same reasons.
  absl::Status async_outcome;
  session->CallAsync(
      refuse, [&](absl::StatusOr<bool> r) { async_outcome = r.status(); });
  session->Drain();
  EXPECT_TRUE(IsUserAbort(async_outcome)) << async_outcome;
}

// A table of counters (id, value) with a declared unique index on id, and
// a session: what the interactive transactions below work on.
struct Counters {
  std::unique_ptr<Engine> engine;
  txn::TableId table = 0;
  txn::IndexId by_id = 0;
  std::unique_ptr<Session> session;

  explicit Counters(EngineOptions options) {
    engine = *Engine::Open(options);
    table = *engine->CreateTable(
        "counters",
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"value", storage::ColumnType::kInt64}}));
    by_id = *engine->CreateIndex("counters_by_id", table, {"id"}, true);
  }
  // Opens the session: procedures are registered before it.
  void Start() { session = *engine->NewSession(0); }
  static std::string Key(int64_t id) {
    return index::KeyBuilder().Int64(id).Build(8);
  }
  // The value of counter `id` as committed, or an error.
  absl::StatusOr<int64_t> Value(int64_t id) {
    return session->Run([&](Txn& txn) -> absl::StatusOr<int64_t> {
      auto at = txn.Lookup(by_id, Key(id));
      if (!at.ok()) return at.status();
      auto row = txn.Read(table, *at);
      if (!row.ok()) return row.status();
      return row->GetInt("value");
    });
  }
};

TEST(ProcedureTest, RunIsAnInteractiveTransactionRetriedOnConflicts) {
  EngineOptions options = Options();
  options.retry.initial_backoff = absl::Microseconds(1);
  options.retry.max_backoff = absl::Microseconds(1);
  Counters c(options);
  c.Start();
  // Defined after the first session: no registration needed.
  absl::Status created = c.session->Run([&](Txn& txn) -> absl::Status {
    auto row = txn.NewRow(c.table);
    if (!row.ok()) return row.status();
    row->SetInt("id", 1);
    row->SetInt("value", 10);
    return txn.Insert(c.table, *row).status();
  });
  ASSERT_TRUE(created.ok()) << created;
  EXPECT_EQ(*c.Value(1), 10);

  // Two conflicts, then a commit: fn ran three times, and only the last
  // attempt's writes stayed.
  int attempts = 0;
  absl::StatusOr<int64_t> r =
      c.session->Run([&](Txn& txn) -> absl::StatusOr<int64_t> {
        ++attempts;
        auto at = txn.Lookup(c.by_id, Counters::Key(1));
        if (!at.ok()) return at.status();
        auto row = txn.Modify(c.table, *at);
        if (!row.ok()) return row.status();
        (*row)->SetInt("value", (*row)->view().GetInt("value") + 1);
        if (attempts < 3) {
          txn.Abort(txn::AbortReason::kConflict);
          return absl::AbortedError("a conflict");
        }
        return (*row)->view().GetInt("value");
      });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 11);
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(*c.Value(1), 11);

  // A user abort is not retried and rolls back.
  attempts = 0;
  absl::Status refused = c.session->Run([&](Txn& txn) -> absl::Status {
    ++attempts;
    auto at = txn.Lookup(c.by_id, Counters::Key(1));
    if (!at.ok()) return at.status();
    if (absl::Status s = txn.Delete(c.table, *at); !s.ok()) return s;
    return txn.UserAbort("changed my mind");
  });
  EXPECT_TRUE(IsUserAbort(refused)) << refused;
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(*c.Value(1), 11);
  // A missing key is NotFound, as the procedure returned it.
  EXPECT_EQ(c.Value(2).status().code(), absl::StatusCode::kNotFound);
}

// An exception thrown by a procedure or by Run's function rolls its
// transaction back and comes back as a Status; the session goes on.
TEST(ProcedureTest, AnExceptionAbortsTheTransactionAndBecomesAStatus) {
  Counters c(Options());
  auto throwing = *c.engine->RegisterProcedure(
      "throwing", [](Txn&, int64_t n) -> absl::StatusOr<int64_t> {
        if (n > 0) throw 42;  // not even a std::exception
        return n;
      });
  c.Start();
  ASSERT_TRUE(c.session
                  ->Run([&](Txn& txn) -> absl::Status {
                    auto row = txn.NewRow(c.table);
                    row->SetInt("id", 1);
                    return txn.Insert(c.table, *row).status();
                  })
                  .ok());
  auto bump_then_throw = [&](Txn& txn) -> absl::Status {
    auto at = txn.Lookup(c.by_id, Counters::Key(1));
    if (!at.ok()) return at.status();
    auto row = txn.Modify(c.table, *at);
    if (!row.ok()) return row.status();
    (*row)->SetInt("value", 99);
    throw std::runtime_error("out of cheese");
  };
  absl::Status thrown = c.session->Run(bump_then_throw);
  EXPECT_EQ(thrown.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(thrown.message()),
              HasSubstr("an interactive transaction threw out of cheese"));
  EXPECT_EQ(*c.Value(1), 0);

  auto session = *c.engine->NewSession(0);
  absl::Status from_call = session->Call(throwing, 1).status();
  EXPECT_EQ(from_call.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(from_call.message()),
              HasSubstr("procedure throwing threw an exception"));
  EXPECT_EQ(c.engine->Stats()[throwing].aborts_for(txn::AbortReason::kError),
            1u);
  EXPECT_EQ(*session->Call(throwing, 0), 0);  // the session still works
}

// A CallAsync callback that calls its own session gets FailedPrecondition
// instead of ending the process.
TEST(ProcedureTest, ACallbackThatCallsItsSessionIsRefused) {
  auto engine = *Engine::Open(Options());
  auto twice = *engine->RegisterProcedure("twice", &Twice);
  auto session = *engine->NewSession(0);
  absl::Status nested_call, nested_async, nested_run;
  session->CallAsync(
      twice,
      [&](absl::StatusOr<int64_t> r) {
        EXPECT_EQ(*r, 4);
        nested_call = session->Call(twice, 3).status();
        session->CallAsync(
            twice,
            [&](absl::StatusOr<int64_t> inner) {
              nested_async = inner.status();
            },
            5);
        nested_run = session->Run([](Txn&) { return absl::OkStatus(); });
        EXPECT_EQ(session->Poll(), 0u);
        session->Drain();
      },
      2);
  session->Drain();
  for (const absl::Status& s : {nested_call, nested_async, nested_run}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  }
  EXPECT_EQ(*session->Call(twice, 21), 42);
}

}  // namespace
}  // namespace strand::engine
