#ifndef STRAND_ENGINE_SESSION_H_
#define STRAND_ENGINE_SESSION_H_

// A session runs stored procedures on one compute node, one at a time, on
// the thread that owns it. Each call is a transaction: the procedure runs,
// and the session commits if it returned OK. Conflict aborts are retried
// with back-off up to RetryPolicy::max_retries (then Aborted "gave up");
// user aborts and errors are returned at once.

#include <any>
#include <memory>
#include <string_view>
#include <typeindex>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"
#include "engine/engine.h"
#include "txn/concurrency_control.h"

namespace strand::engine {

class Session {
 public:
  ~Session();

  rdma::ComputeNodeId node() const { return node_; }
  cc::ThreadContext& thread() { return *ctx_; }

  template <typename Result, typename... Args>
  absl::StatusOr<Result> Call(ProcedureId id, Args... args) {
    using ArgsTuple = std::tuple<std::decay_t<Args>...>;
    absl::StatusOr<std::any> r = CallErased(
        id, typeid(ArgsTuple), typeid(Result), ArgsTuple(std::move(args)...));
    if (!r.ok()) return r.status();
    return std::any_cast<Result>(*std::move(r));
  }
  template <typename Result, typename... Args>
  absl::StatusOr<Result> Call(std::string_view name, Args... args) {
    auto id = engine_.FindProcedure(name);
    if (!id.ok()) return id.status();
    return Call<Result>(*id, std::move(args)...);
  }

 private:
  friend class Engine;
  Session(Engine& engine, rdma::ComputeNodeId node, const txn::Database& db,
          std::unique_ptr<cc::ThreadContext> ctx,
          std::shared_ptr<Engine::SessionStats> stats);

  absl::StatusOr<std::any> CallErased(ProcedureId id, std::type_index args_type,
                                      std::type_index result_type,
                                      const std::any& args);
  void BackOff(int attempt);

  Engine& engine_;
  const rdma::ComputeNodeId node_;
  const txn::Database& db_;
  const std::unique_ptr<cc::ThreadContext> ctx_;
  const std::unique_ptr<txn::ConcurrencyControl> cc_;
  const std::shared_ptr<Engine::SessionStats> stats_;
  absl::BitGen rng_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_SESSION_H_
