// Uses of the typed procedure API that must NOT compile (procedure.h).
// The ctest procedure_misuse_does_not_compile compiles this file and passes
// only if the compiler stops with exactly the static_asserts listed in
// tests/engine/CMakeLists.txt, one per function below (two for the
// argument types); any other error, or none, fails it. Right() holds the
// same calls done right: an error there would be one too many.

#include <cstdint>
#include <string>

#include "engine/engine.h"
#include "engine/session.h"

namespace strand::engine {

using Transfer = Procedure<bool(int64_t, int64_t, int32_t)>;

void Right(Engine& engine, Session& session, const Transfer& transfer) {
  const int64_t from = 1;
  (void)session.Call(transfer, from, 2, 3);
  (void)session.Call<bool>(transfer, from, 2, int32_t{3});
  (void)engine.RegisterProcedure(
      "t", [](txn::Txn&, int64_t) -> absl::StatusOr<bool> { return true; });
}

// A string where an integer goes.
void WrongType(Session& session, const Transfer& transfer) {
  (void)session.Call(transfer, 1, std::string("2"), 3);
}

// An int64_t narrowed to an int32_t parameter.
void Narrowing(Session& session, const Transfer& transfer) {
  const int64_t amount = 3;
  (void)session.Call(transfer, 1, 2, amount);
}

// An argument missing.
void WrongCount(Session& session, const Transfer& transfer) {
  (void)session.Call(transfer, 1, 2);
}

// A result type other than the procedure's.
void WrongResult(Session& session, const Transfer& transfer) {
  (void)session.Call<int64_t>(transfer, 1, 2, 3);
}

// A callable that does not take the transaction first.
void NoTxn(Engine& engine) {
  (void)engine.RegisterProcedure(
      "t", [](int64_t) -> absl::StatusOr<bool> { return true; });
}

}  // namespace strand::engine
