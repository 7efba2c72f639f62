#include "engine/session.h"

#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "txn/txn.h"

namespace strand::engine {

Session::Session(Engine& engine, rdma::ComputeNodeId node,
                 const txn::Database& db,
                 std::unique_ptr<cc::ThreadContext> ctx,
                 std::shared_ptr<Engine::SessionStats> stats)
    : engine_(engine),
      node_(node),
      db_(db),
      ctx_(std::move(ctx)),
      cc_(txn::ConcurrencyControl::Create(db.algorithm)),
      stats_(std::move(stats)) {}

Session::~Session() = default;

void Session::BackOff(int attempt) {
  const RetryPolicy& policy = engine_.options().retry;
  absl::Duration wait = policy.initial_backoff * (1 << std::min(attempt, 20));
  wait = std::min(wait, policy.max_backoff);
  // Jitter, so transactions that collided do not collide again in step.
  wait = absl::Nanoseconds(
      absl::Uniform<int64_t>(rng_, 0, absl::ToInt64Nanoseconds(wait) + 1));
  if (wait < absl::Microseconds(50)) {
    const absl::Time until = absl::Now() + wait;
    while (absl::Now() < until) std::this_thread::yield();
  } else {
    absl::SleepFor(wait);
  }
}

absl::StatusOr<std::any> Session::CallErased(ProcedureId id,
                                             std::type_index args_type,
                                             std::type_index result_type,
                                             const std::any& args) {
  if (id >= engine_.procedures_.size()) {
    return absl::NotFoundError(absl::StrFormat("no procedure with id %d", id));
  }
  const ErasedProcedure& procedure = engine_.procedures_[id];
  if (procedure.args_type != args_type ||
      procedure.result_type != result_type) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "procedure %s called with argument or result types other than it "
        "was registered with",
        procedure.name));
  }
  const RetryPolicy& policy = engine_.options().retry;
  const absl::Time start = absl::Now();
  ProcedureStats local;
  local.calls = 1;
  absl::StatusOr<std::any> outcome;
  for (int attempt = 0;; ++attempt) {
    txn::Txn txn(db_, *ctx_, *cc_);
    absl::Status status = txn.Begin();
    if (status.ok()) {
      outcome = procedure.body(txn, args);
      status = outcome.ok() ? txn.Commit() : outcome.status();
    }
    if (status.ok()) {
      local.commits = 1;
      local.latency.Record(absl::ToInt64Nanoseconds(absl::Now() - start));
      break;
    }
    // An error the procedure returned without the transaction aborting is
    // the procedure's decision: a user abort.
    if (txn.active()) txn.Abort(txn::AbortReason::kUser);
    const txn::AbortReason reason = txn.abort_reason();
    local.aborts[static_cast<int>(reason)]++;
    if (!txn::IsRetryable(reason)) {
      outcome = status;
      break;
    }
    if (attempt >= policy.max_retries) {
      local.gave_up = 1;
      outcome = absl::AbortedError(
          absl::StrFormat("procedure %s gave up after %d retries; last: %s",
                          procedure.name, attempt, status.message()));
      break;
    }
    BackOff(attempt);
  }
  {
    absl::MutexLock lock(&stats_->mu);
    stats_->by_procedure[id].Merge(local);
  }
  return outcome;
}

}  // namespace strand::engine
