#ifndef STRAND_ENGINE_PROCEDURE_H_
#define STRAND_ENGINE_PROCEDURE_H_

// Stored procedures: typed callables `StatusOr<Result>(txn::Txn&, Args...)`
// registered under a name. The registry erases their types so one table
// holds them all; a call whose argument or result types differ from the
// registration gets InvalidArgument, not undefined behaviour.
//
// A procedure returns OK to commit (the session commits for it), or an
// error: the transaction is rolled back. txn.UserAbort() gives the status
// for a deliberate rollback (not retried); conflict statuses from Txn
// calls, returned as they are, make the session retry.

#include <any>
#include <functional>
#include <string>
#include <tuple>
#include <typeindex>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "txn/txn.h"

namespace strand::engine {

using ProcedureId = uint32_t;

// A procedure with its types erased: arguments travel as a std::tuple in a
// std::any, the result comes back in a std::any.
struct ErasedProcedure {
  std::string name;
  std::type_index args_type = typeid(void);
  std::type_index result_type = typeid(void);
  std::function<absl::StatusOr<std::any>(txn::Txn&, const std::any& args)> body;
};

template <typename Result, typename... Args>
ErasedProcedure EraseProcedure(
    std::string name,
    std::function<absl::StatusOr<Result>(txn::Txn&, Args...)> fn) {
  using ArgsTuple = std::tuple<std::decay_t<Args>...>;
  ErasedProcedure p;
  p.name = std::move(name);
  p.args_type = typeid(ArgsTuple);
  p.result_type = typeid(Result);
  p.body = [fn = std::move(fn)](
               txn::Txn& txn,
               const std::any& args) -> absl::StatusOr<std::any> {
    const auto& tuple = std::any_cast<const ArgsTuple&>(args);
    absl::StatusOr<Result> result =
        std::apply([&](const auto&... a) { return fn(txn, a...); }, tuple);
    if (!result.ok()) return result.status();
    return std::any(*std::move(result));
  };
  return p;
}

}  // namespace strand::engine

#endif  // STRAND_ENGINE_PROCEDURE_H_
