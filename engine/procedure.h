#ifndef STRAND_ENGINE_PROCEDURE_H_
#define STRAND_ENGINE_PROCEDURE_H_

// Stored procedures: callables `absl::StatusOr<Result>(txn::Txn&, Args...)`
// (lambda, function pointer, functor, std::function; not a generic lambda:
// Result and Args are read off its call operator) registered under a name.
//
//   auto transfer = engine->RegisterProcedure(
//       "transfer", [=](Txn& txn, int64_t from, int64_t to, int64_t amount)
//                       -> absl::StatusOr<bool> { ... });
//   // transfer: StatusOr<Procedure<bool(int64_t, int64_t, int64_t)>>
//   absl::StatusOr<bool> r = session->Call(*transfer, 1, 2, 50);
//
// Calling one (engine/session.h): by its typed handle, the compiler checks
// the arguments (each converts without narrowing: 7 is a fine int64_t, a
// double or a string is not) and the result. By ProcedureId or name,
// Call<Result>(id, args...), the argument types must be exactly the
// registered ones, checked at run time: a mismatch is InvalidArgument
// naming both signatures. A handle converts to its ProcedureId, and
// Engine::FindProcedure<Sig> turns a name back into a handle.
//
// A procedure returns OK to commit (the session commits for it) or an error
// to roll back. txn.UserAbort() gives the status for a deliberate rollback
// (not retried); conflict statuses from Txn calls, returned as they are,
// make the session retry. Telling the outcomes apart: engine/call_status.h.

#include <any>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>

#include "absl/status/statusor.h"
#include "base/type_name.h"

// A procedure's Txn& is all this header needs of txn/: the procedures
// themselves include txn/txn.h (strand/txn.h).
namespace strand::txn {
class Txn;
}  // namespace strand::txn

namespace strand::engine {

using ProcedureId = uint32_t;
inline constexpr ProcedureId kNoProcedure =
    std::numeric_limits<ProcedureId>::max();

// The types of a procedure or of a call, compared at run time on the
// untyped path.
struct ProcedureTypes {
  std::type_index result = typeid(void);
  std::type_index args = typeid(void);  // std::tuple<Args...>
  std::string (*describe)() = nullptr;  // "bool(int64_t, int64_t)"

  bool operator==(const ProcedureTypes& other) const {
    return result == other.result && args == other.args;
  }
};

template <typename Result, typename... Args>
ProcedureTypes TypesOf() {
  return {typeid(Result), typeid(std::tuple<Args...>),
          [] { return TypeName<Result>() + TypeListName<Args...>(); }};
}

// A registered procedure, typed: Procedure<bool(int64_t, int64_t)>. Copy it
// freely; it is an id. Converts to its ProcedureId for the untyped calls.
template <typename Signature>
class Procedure;

template <typename Result, typename... Args>
class Procedure<Result(Args...)> {
 public:
  using ResultType = Result;

  // No procedure: calls return NotFound. For members assigned later.
  Procedure() = default;

  ProcedureId id() const { return id_; }
  operator ProcedureId() const { return id_; }  // NOLINT: the untyped calls

  static ProcedureTypes types();

 private:
  friend class Engine;
  explicit Procedure(ProcedureId id) : id_(id) {}

  ProcedureId id_ = kNoProcedure;
};

template <typename Result, typename... Args>
ProcedureTypes Procedure<Result(Args...)>::types() {
  return TypesOf<Result, Args...>();
}

namespace procedure_internal {

template <typename T>
struct StatusOrValue {
  static constexpr bool kIsStatusOr = false;
  using type = void;  // EraseProcedure's static_assert says why
};
template <typename T>
struct StatusOrValue<absl::StatusOr<T>> {
  static constexpr bool kIsStatusOr = true;
  using type = T;
};

// What a call operator or function type says.
template <typename F>
struct CallSignature {
  static constexpr bool kKnown = false;
  using Return = void;
  using Handle = Procedure<void()>;  // EraseProcedure's static_assert says why
};
template <typename R, typename First, typename... Args>
struct CallSignature<R(First, Args...)> {
  static constexpr bool kKnown = true;
  static constexpr bool kTakesTxn = std::is_same_v<First, txn::Txn&>;
  using Return = R;
  using Handle =
      Procedure<typename StatusOrValue<R>::type(std::decay_t<Args>...)>;
};
template <typename R>
struct CallSignature<R()> {
  static constexpr bool kKnown = true;
  static constexpr bool kTakesTxn = false;
  using Return = R;
  using Handle = Procedure<void()>;
};
template <typename R, typename... A>
struct CallSignature<R(A...) noexcept> : CallSignature<R(A...)> {};
template <typename R, typename... A>
struct CallSignature<R (*)(A...)> : CallSignature<R(A...)> {};
template <typename R, typename... A>
struct CallSignature<R (*)(A...) noexcept> : CallSignature<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...)> : CallSignature<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...) const> : CallSignature<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...) noexcept> : CallSignature<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallSignature<R (C::*)(A...) const noexcept> : CallSignature<R(A...)> {};

template <typename Fn>
struct CallableSignature : CallSignature<std::decay_t<Fn>> {};
template <typename Fn>
requires requires { &std::decay_t<Fn>::operator(); }
struct CallableSignature<Fn>
    : CallSignature<decltype(&std::decay_t<Fn>::operator())> {};

template <typename To, typename From>
concept ConvertsWithoutNarrowing = requires(From&& from) {
  To{std::forward<From>(from)};
};

// Whether each of the arguments Given converts to its parameter (false
// for another count).
template <typename... Params, typename... Given>
constexpr bool EachArgumentFits(std::tuple<Params...>*, std::tuple<Given...>*) {
  if constexpr (sizeof...(Params) != sizeof...(Given)) {
    return false;
  } else {
    return (ConvertsWithoutNarrowing<Params, Given> && ...);
  }
}

// The compile-time check of a typed call Call<Expected>(procedure of
// `Signature`, Given...): kFits says whether it is right, and using it
// stops the build with a message saying what is wrong otherwise.
template <typename Expected, typename Signature, typename Given>
struct CallCheck;
template <typename Expected, typename Result, typename... Params,
          typename... Given>
struct CallCheck<Expected, Result(Params...), std::tuple<Given...>> {
  static constexpr bool kResultFits =
      std::is_void_v<Expected> || std::is_same_v<Expected, Result>;
  static constexpr bool kCountFits = sizeof...(Params) == sizeof...(Given);
  static constexpr bool kArgumentsFit =
      EachArgumentFits(static_cast<std::tuple<Params...>*>(nullptr),
                       static_cast<std::tuple<Given...>*>(nullptr));
  static constexpr bool kFits = kResultFits && kArgumentsFit;

  static_assert(kResultFits,
                "strand procedure result type mismatch: Call<R>(procedure, "
                "...) with R other than the procedure's result type");
  static_assert(kCountFits,
                "strand procedure called with the wrong number of arguments");
  static_assert(!kCountFits || kArgumentsFit,
                "strand procedure argument type mismatch: each argument must "
                "convert to its parameter's type without narrowing");
};

}  // namespace procedure_internal

// A procedure with its types erased: arguments travel as a std::tuple in a
// std::any, the result comes back in a std::any.
struct ErasedProcedure {
  std::string name;
  ProcedureTypes types;
  std::function<absl::StatusOr<std::any>(txn::Txn&, const std::any& args)> body;
};

namespace procedure_internal {

template <typename Fn, typename Result, typename... Args>
ErasedProcedure ErasedTyped(std::string name, Fn fn,
                            Procedure<Result(Args...)>*) {
  ErasedProcedure p;
  p.name = std::move(name);
  p.types = TypesOf<Result, Args...>();
  static_assert(std::is_copy_constructible_v<Result> &&
                    (std::is_copy_constructible_v<Args> && ...),
                "a strand procedure's result and parameter types must be "
                "copyable (they travel in a std::any)");
  static_assert(
      std::is_invocable_r_v<absl::StatusOr<Result>, const Fn&, txn::Txn&,
                            const Args&...>,
      "a strand procedure runs on many sessions at once: its call operator "
      "must be const (no mutable lambda), its parameters by value or const "
      "reference");
  p.body = [fn = std::move(fn)](
               txn::Txn& txn,
               const std::any& args) -> absl::StatusOr<std::any> {
    const auto& tuple = std::any_cast<const std::tuple<Args...>&>(args);
    absl::StatusOr<Result> result =
        std::apply([&](const auto&... a) { return fn(txn, a...); }, tuple);
    if (!result.ok()) return result.status();
    return std::any(*std::move(result));
  };
  return p;
}

}  // namespace procedure_internal

template <typename Fn>
ErasedProcedure EraseProcedure(std::string name, Fn fn) {
  using Signature = procedure_internal::CallableSignature<Fn>;
  static_assert(Signature::kKnown,
                "a strand procedure needs one call operator with declared "
                "parameter types (not a generic lambda or an overload set)");
  if constexpr (Signature::kKnown) {
    static_assert(Signature::kTakesTxn,
                  "a strand procedure's first parameter is txn::Txn&");
    static_assert(procedure_internal::StatusOrValue<
                      typename Signature::Return>::kIsStatusOr,
                  "a strand procedure returns absl::StatusOr<Result>");
    if constexpr (Signature::kTakesTxn &&
                  procedure_internal::StatusOrValue<
                      typename Signature::Return>::kIsStatusOr) {
      return procedure_internal::ErasedTyped(
          std::move(name), std::move(fn),
          static_cast<typename Signature::Handle*>(nullptr));
    }
  }
  return {};
}

}  // namespace strand::engine

#endif  // STRAND_ENGINE_PROCEDURE_H_
