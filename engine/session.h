#ifndef STRAND_ENGINE_SESSION_H_
#define STRAND_ENGINE_SESSION_H_

// A session runs stored procedures on one compute node, one at a time, on
// the thread that owns it. Each call is a transaction: the procedure runs,
// and the session commits if it returned OK. Conflict aborts are retried
// with back-off up to RetryPolicy::max_retries (then Aborted, and
// IsRetriesExhausted); user aborts (IsUserAbort) and errors are returned
// at once (call_status.h).
//
// Call(procedure, args...) on a Procedure<R(Args...)> handle is checked
// at compile time, Call<R>(id or name, args...) at run time (procedure.h).
// With a write-ahead log, Call returns once the commit is durable (one
// shared fdatasync per group); CallAsync returns after the commit in
// memory and reports the outcome later (pipelined acknowledgement).
//
// A call's own errors: Unimplemented (no such procedure; NotFound stays
// the procedures'), InvalidArgument (untyped call, wrong types), Unknown
// (the procedure threw; rolled back). Engine::Stats counts a commit, with
// its latency, when its outcome is delivered.
// Design and argument: docs/design/sessions.md.

#include <any>
#include <array>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "engine/call_status.h"
#include "engine/engine.h"
#include "engine/procedure.h"
#include "partition/coordinator.h"
#include "txn/commit_watermark.h"
#include "txn/concurrency_control.h"
#include "txn/txn.h"
#include "wal/log_format.h"

namespace strand::engine {

class EngineImpl;
struct SessionStats;

class Session {
 public:
  // A thread blocks once this many of its calls wait for the log. A flush
  // is ~0.2-2 ms on the development VM's disk, but under other I/O it
  // stalls for 25-270 ms at its p99; at ~5k transactions/s per thread,
  // 1024 rides out ~200 ms (TPC-C measured 0.92x of WAL-off throughput
  // there, 0.43-0.67x with 128). The bound keeps what a client has
  // outstanding, and the memory (a result and a callback per call),
  // finite.
  static constexpr size_t kDefaultMaxUnacknowledged = 1024;

  // Drains: every outstanding CallAsync gets its outcome first.
  ~Session();

  rdma::ComputeNodeId node() const { return node_; }
  cc::ThreadContext& thread() { return *ctx_; }

  // Typed call (procedure.h): the compiler checks the arguments against
  // the procedure's parameters (each must convert without narrowing) and,
  // if given, Expected against its result.
  //   absl::StatusOr<bool> r = session->Call(transfer, 1, 2, 50);
  template <typename Expected = void, typename Result, typename... Params,
            typename... Given>
  absl::StatusOr<Result> Call(const Procedure<Result(Params...)>& procedure,
                              Given&&... args) {
    if constexpr (procedure_internal::CallCheck<Expected, Result(Params...),
                                                std::tuple<Given...>>::kFits) {
      absl::StatusOr<std::any> r =
          CallErased(procedure.id(), TypesOf<Result, Params...>(),
                     std::tuple<Params...>(std::forward<Given>(args)...));
      if (!r.ok()) return r.status();
      return std::any_cast<Result>(*std::move(r));
    } else {
      return absl::InternalError("unreachable: CallCheck failed");
    }
  }

  // Untyped calls, by id or by name: the argument types (after decay) must
  // be exactly the registered ones and Result the registered result; a
  // mismatch is InvalidArgument naming both signatures.
  template <typename Result, typename... Args>
  absl::StatusOr<Result> Call(ProcedureId id, Args... args) {
    using ArgsTuple = std::tuple<std::decay_t<Args>...>;
    absl::StatusOr<std::any> r =
        CallErased(id, TypesOf<Result, std::decay_t<Args>...>(),
                   ArgsTuple(std::move(args)...));
    if (!r.ok()) return r.status();
    return std::any_cast<Result>(*std::move(r));
  }
  template <typename Result, typename... Args>
  absl::StatusOr<Result> Call(std::string_view name, Args... args) {
    auto id = FindProcedureId(name);
    if (!id.ok()) return id.status();
    return Call<Result>(*id, std::move(args)...);
  }

  // Pipelined call: runs and commits the procedure in memory, then returns,
  // and the thread goes on with its next call. `on_acknowledged` gets the
  // outcome exactly once, on this thread, from a later CallAsync, Poll,
  // Drain, Call or the destructor, once the cluster's durable watermark
  // covers what the call depends on (Txn::AckTimestamp): its own commit,
  // or for a call that committed nothing, every commit before it ended.
  // Outcomes come in call order. At most max_unacknowledged() calls wait
  // when CallAsync returns; past that it blocks for the oldest. If the log
  // fails, every waiting call gets the log's error, never OK; a wait past
  // WalOptions::ack_timeout gets Unavailable. Without a log the outcome is
  // delivered before CallAsync returns; without
  // EngineOptions::wal.early_lock_release it waits as long as Call. The
  // callback must not use the session (FailedPrecondition). Typed, as Call.
  //   session->CallAsync<Out>(id, [&](absl::StatusOr<Out> r) { ... }, in);
  //   session->Drain();  // every outcome delivered
  template <typename Expected = void, typename Result, typename... Params,
            typename... Given>
  void CallAsync(
      const Procedure<Result(Params...)>& procedure,
      std::type_identity_t<absl::AnyInvocable<void(absl::StatusOr<Result>)>>
          on_acknowledged,
      Given&&... args) {
    if constexpr (procedure_internal::CallCheck<Expected, Result(Params...),
                                                std::tuple<Given...>>::kFits) {
      CallAsyncErased(procedure.id(), TypesOf<Result, Params...>(),
                      std::tuple<Params...>(std::forward<Given>(args)...),
                      TypedCallback(std::move(on_acknowledged)));
    }
  }
  // Untyped, as Call by id.
  template <typename Result, typename... Args>
  void CallAsync(
      ProcedureId id,
      absl::AnyInvocable<void(absl::StatusOr<Result>)> on_acknowledged,
      Args... args) {
    using ArgsTuple = std::tuple<std::decay_t<Args>...>;
    CallAsyncErased(id, TypesOf<Result, std::decay_t<Args>...>(),
                    ArgsTuple(std::move(args)...),
                    TypedCallback(std::move(on_acknowledged)));
  }

  // An interactive transaction (as FoundationDB's db.run): runs
  // fn(txn::Txn&) as one transaction on this session's node and commits
  // it if fn returns OK, retrying conflicts as Call does, so fn may run
  // more than once and must not have effects outside the transaction
  // that a retry would repeat. fn returns absl::Status or
  // absl::StatusOr<T>, and so does Run. Unlike procedures, fn needs no
  // registration and may be any callable, defined at any time; it runs on
  // this thread, and Engine::Stats does not count it. With a log, Run
  // returns once the commit is durable, as Call.
  //   absl::StatusOr<int64_t> balance = session->Run(
  //       [&](txn::Txn& txn) -> absl::StatusOr<int64_t> { ... });
  template <typename Fn>
  std::invoke_result_t<Fn&, txn::Txn&> Run(Fn&& fn) {
    using Result = std::invoke_result_t<Fn&, txn::Txn&>;
    if constexpr (std::is_same_v<Result, absl::Status>) {
      return RunErased(fn);
    } else {
      static_assert(procedure_internal::StatusOrValue<Result>::kIsStatusOr,
                    "Session::Run's function returns absl::Status or "
                    "absl::StatusOr<T>");
      std::optional<typename Result::value_type> value;
      absl::Status status = RunErased([&](txn::Txn& txn) -> absl::Status {
        Result r = fn(txn);
        if (!r.ok()) return r.status();
        value.emplace(*std::move(r));
        return absl::OkStatus();
      });
      if (!status.ok()) return status;
      return *std::move(value);
    }
  }

  // Delivers the outcomes whose wait is over, without blocking. Returns
  // how many it delivered.
  size_t Poll();
  // Blocks until every outstanding outcome is delivered.
  void Drain();
  // Calls whose outcome is not delivered yet.
  size_t unacknowledged() const { return pending_.size(); }
  size_t max_unacknowledged() const { return max_unacknowledged_; }
  // 0: CallAsync returns only once its own outcome is delivered.
  void set_max_unacknowledged(size_t n) { max_unacknowledged_ = n; }

 private:
  friend class EngineImpl;
  using ErasedCallback = absl::AnyInvocable<void(absl::StatusOr<std::any>)>;

  // What running a call (every attempt) gave.
  struct Ran {
    absl::StatusOr<std::any> outcome;
    ProcedureId id = 0;
    bool committed = false;
    uint64_t ack_ts = 0;  // Txn::AckTimestamp of the last attempt
    absl::Time start;
  };
  struct PendingCall {
    Ran ran;
    ErasedCallback done;
  };

  Session(EngineImpl& engine, rdma::ComputeNodeId node, const txn::Database& db,
          std::unique_ptr<cc::ThreadContext> ctx,
          txn::CommitWatermark::Slot* watermark_slot,
          std::shared_ptr<SessionStats> stats,
          std::unique_ptr<partition::Coordinator> coordinator);
  // Engine::FindProcedure, for the calls by name.
  absl::StatusOr<ProcedureId> FindProcedureId(std::string_view name) const;

  template <typename Result>
  static ErasedCallback TypedCallback(
      absl::AnyInvocable<void(absl::StatusOr<Result>)> done) {
    return [done = std::move(done)](absl::StatusOr<std::any> r) mutable {
      if (!r.ok()) {
        done(r.status());
      } else {
        done(std::any_cast<Result>(*std::move(r)));
      }
    };
  }

  absl::StatusOr<std::any> CallErased(ProcedureId id,
                                      const ProcedureTypes& types,
                                      const std::any& args);
  void CallAsyncErased(ProcedureId id, const ProcedureTypes& types,
                       const std::any& args, ErasedCallback done);
  // What a call's attempts add to its procedure's stats.
  struct CallCounts {
    std::array<uint64_t, txn::kAbortReasonCount> aborts{};
    bool gave_up = false;
    std::optional<int64_t> commit_latency_ns;
  };
  // Runs the call's attempts. `wait_durable`: commit with Txn::Commit (the
  // commit is counted here) rather than CommitNoWait (counted at delivery).
  Ran RunProcedure(ProcedureId id, const ProcedureTypes& types,
                   const std::any& args, bool wait_durable);
  absl::Status RunErased(absl::FunctionRef<absl::Status(txn::Txn&)> body);
  // Attempts of `body` (procedure `name`; empty: an interactive
  // transaction), each a transaction committed if it returns OK, retried
  // on conflicts with back-off: OK once one committed, else the last
  // attempt's error (which also becomes ran.outcome). Fills
  // ran.committed and ran.ack_ts, and `counts`.
  absl::Status Attempts(std::string_view name,
                        absl::FunctionRef<absl::Status(txn::Txn&)> body,
                        bool wait_durable, Ran& ran, CallCounts& counts);
  // body(txn), with an exception turned into the transaction's abort and
  // an Unknown status.
  static absl::Status RunBody(std::string_view name,
                              absl::FunctionRef<absl::Status(txn::Txn&)> body,
                              txn::Txn& txn);
  // The timestamp `ran`'s outcome waits for (Txn::AckTimestamp); an
  // uncommitted outcome that cannot learn it becomes that error.
  static void AckLater(txn::Txn& txn, Ran& ran);
  // AckLater, then blocks until an uncommitted outcome may be reported
  // (Call's path; a commit waited in Txn::Commit); else the outcome
  // becomes the reason it may not.
  static void AckNow(txn::Txn& txn, Ran& ran);
  // Blocks until the oldest outstanding call's wait is over, then Poll.
  void WaitForOldest();
  // Hands each of `calls` its outcome, or `failure` for those whose
  // acknowledgement timestamp is above `acknowledged`; counts the stats.
  void Deliver(std::vector<PendingCall>& calls, uint64_t acknowledged,
               const absl::Status& failure);
  // Waits before attempt `attempt` + 1 (RetryPolicy); the aborted one
  // started at `attempt_start`. Returns the time it stopped waiting.
  absl::Time BackOff(int attempt, absl::Time attempt_start);

  EngineImpl& engine_;
  const rdma::ComputeNodeId node_;
  const txn::Database& db_;
  const std::unique_ptr<cc::ThreadContext> ctx_;
  // With db_.watermark: this session's slot (the engine's to give back).
  // Taken at the first transaction if the log started after the session.
  txn::CommitWatermark::Slot* watermark_slot_;
  const std::unique_ptr<txn::ConcurrencyControl> cc_;
  const std::shared_ptr<SessionStats> stats_;
  // Partitioned mode: the coordinator of this session's transactions.
  const std::unique_ptr<partition::Coordinator> coordinator_;
  absl::BitGen rng_;

  size_t max_unacknowledged_ = kDefaultMaxUnacknowledged;
  std::deque<PendingCall> pending_;  // in call order
  std::vector<PendingCall> ready_;   // Poll's scratch, kept for its capacity
  bool delivering_ = false;          // catches a callback using the session
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_SESSION_H_
