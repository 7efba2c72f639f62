// The procedure API (engine/procedure.h, session.h, call_status.h): any
// callable registers; a typed handle's calls convert their arguments; an
// untyped call with other types is refused with both signatures named; a
// user abort and a conflict that exhausted its retries are told apart
// without reading messages. procedure_compile_fail.cc holds the calls that
// must not compile.

#include <functional>
#include <string>
#include <type_traits>

#include "engine/call_status.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
  EXPECT_EQ(engine->FindProcedure<int64_t(int64_t)>("nope").status().code(),
            absl::StatusCode::kNotFound);

  auto session = *engine->NewSession(0);
  EXPECT_EQ(*session->Call(*found, 5), 10);
  Procedure<bool()> none;  // never registered
  EXPECT_EQ(session->Call(none).status().code(), absl::StatusCode::kNotFound);
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

}  // namespace
}  // namespace strand::engine
