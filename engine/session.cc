#include "engine/session.h"

#include <array>
#include <exception>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/thread_ledger.h"
#include "engine/engine_impl.h"
#include "glog/logging.h"
#include "txn/txn.h"

namespace strand::engine {
void Session::AckLater(txn::Txn& txn, Ran& ran) {
  absl::StatusOr<uint64_t> ts = txn.AckTimestamp();
  if (ts.ok()) {
    ran.ack_ts = *ts;
  } else if (!ran.committed) {
    ran.outcome = ts.status();
  }
}

void Session::AckNow(txn::Txn& txn, Ran& ran) {
  AckLater(txn, ran);
  if (ran.ack_ts == 0 || txn.db().watermark == nullptr) return;
  if (absl::Status s = txn.db().watermark->WaitAcknowledged(ran.ack_ts);
      !s.ok()) {
    ran.outcome = s;
  }
}

Session::Session(EngineImpl& engine, rdma::ComputeNodeId node,
                 const txn::Database& db,
                 std::unique_ptr<cc::ThreadContext> ctx,
                 txn::CommitWatermark::Slot* watermark_slot,
                 std::shared_ptr<SessionStats> stats,
                 std::unique_ptr<partition::Coordinator> coordinator)
    : engine_(engine),
      node_(node),
      db_(db),
      ctx_(std::move(ctx)),
      watermark_slot_(watermark_slot),
      cc_(txn::ConcurrencyControl::Create(db.algorithm)),
      stats_(std::move(stats)),
      coordinator_(std::move(coordinator)) {}

Session::~Session() {
  Drain();
  if (watermark_slot_ != nullptr) db_.marks->FreeSlot(watermark_slot_);
}

absl::Time Session::BackOff(int attempt, absl::Time attempt_start) {
  const absl::Time start = absl::Now();
  const absl::Duration attempt_took = start - attempt_start;
  const RetryPolicy& policy = engine_.options().retry;
  absl::Duration wait = policy.initial_backoff * (1 << std::min(attempt, 20));
  // Never a bound shorter than a few times the attempt itself: two long
  // transactions that abort each other (two scans that each latch every
  // leaf they pass, under TO) restarted within a millisecond of each
  // other would overlap again, for minutes; drawn from four times their
  // length, one usually starts after the other has finished. Capped, so
  // an attempt that ended on a timeout (a stalled disk, a lost reply)
  // does not make the next one wait seconds.
  constexpr absl::Duration kLongestBackoff = absl::Milliseconds(100);
  wait = std::min(wait, std::max(policy.max_backoff,
                                 std::min(4 * attempt_took, kLongestBackoff)));
  // Jitter, so transactions that collided do not collide again in step.
  wait = absl::Nanoseconds(
      absl::Uniform<int64_t>(rng_, 0, absl::ToInt64Nanoseconds(wait) + 1));
  if (wait < absl::Microseconds(50)) {
    const absl::Time until = start + wait;
    absl::Time now;
    while ((now = absl::Now()) < until) std::this_thread::yield();
    ThreadLedger::Mine().ChargeBusyWait(absl::ToInt64Nanoseconds(now - start));
    return now;
  }
  absl::SleepFor(wait);
  const absl::Time now = absl::Now();
  ThreadLedger::Mine().ChargeBlockedWait(absl::ToInt64Nanoseconds(now - start));
  return now;
}

namespace {

// How messages name what ran: a procedure by its name, an interactive
// transaction (empty name) as such.
std::string WhatRan(std::string_view name) {
  return name.empty() ? std::string("an interactive transaction")
                      : "procedure " + std::string(name);
}

absl::Status CallbackUsedSession() {
  return absl::FailedPreconditionError(
      "a CallAsync callback used its own session: callbacks run inside the "
      "session's calls and must not call it");
}

}  // namespace

absl::StatusOr<ProcedureId> Session::FindProcedureId(
    std::string_view name) const {
  return engine_.FindProcedure(name);
}

absl::StatusOr<std::any> Session::CallErased(ProcedureId id,
                                             const ProcedureTypes& types,
                                             const std::any& args) {
  if (delivering_) return CallbackUsedSession();
  Ran ran = RunProcedure(id, types, args, /*wait_durable=*/true);
  // Earlier pipelined calls waited for smaller LSNs than this one: report
  // them before this call returns, so outcomes stay in call order.
  if (!pending_.empty()) Poll();
  return std::move(ran.outcome);
}

void Session::CallAsyncErased(ProcedureId id, const ProcedureTypes& types,
                              const std::any& args, ErasedCallback done) {
  if (delivering_) {
    done(CallbackUsedSession());
    return;
  }
  if (db_.log == nullptr || max_unacknowledged_ == 0) {
    // Nothing to pipeline: the outcome is due before we return anyway. Run
    // it as Call does (no queue entry, stats counted once), after every
    // earlier call's outcome, so outcomes stay in call order.
    Drain();
    absl::StatusOr<std::any> outcome = CallErased(id, types, args);
    delivering_ = true;
    done(std::move(outcome));
    delivering_ = false;
    return;
  }
  pending_.push_back(
      {RunProcedure(id, types, args, /*wait_durable=*/false), std::move(done)});
  Poll();
  while (pending_.size() > max_unacknowledged_) WaitForOldest();
}

size_t Session::Poll() {
  if (delivering_) {
    LOG(ERROR) << CallbackUsedSession();
    return 0;
  }
  if (pending_.empty()) return 0;
  wal::LogWriter* const log = db_.log;
  txn::CommitWatermark* const watermark = db_.watermark;
  auto acknowledged = [watermark] {
    return watermark == nullptr ? ~uint64_t{0} : watermark->acknowledged();
  };
  uint64_t acked = acknowledged();
  absl::Status failure;
  if (log != nullptr && log->failed()) {
    failure = log->status();
    // Final now (a failed log persists no more marks), and possibly newer
    // than the value read above.
    acked = acknowledged();
  }
  ready_.clear();
  while (!pending_.empty() &&
         (pending_.front().ran.ack_ts <= acked || !failure.ok())) {
    ready_.push_back(std::move(pending_.front()));
    pending_.pop_front();
  }
  // An idle node persists a cluster mark only when someone waits for it.
  if (!pending_.empty() && watermark != nullptr) {
    watermark->Want(pending_.front().ran.ack_ts);
  }
  if (ready_.empty()) return 0;
  Deliver(ready_, acked, failure);
  const size_t delivered = ready_.size();
  ready_.clear();
  return delivered;
}

void Session::Deliver(std::vector<PendingCall>& calls, uint64_t acknowledged,
                      const absl::Status& failure) {
  const absl::Time now = absl::Now();
  {
    absl::MutexLock lock(&stats_->mu);
    for (PendingCall& call : calls) {
      Ran& ran = call.ran;
      if (ran.ack_ts > acknowledged) {
        // Not reported as it ended: a commit's record may be lost, and a
        // rollback may rest on reads of lost writes.
        ran.outcome = failure;
        if (ran.committed) {
          stats_->by_procedure[ran.id]
              .aborts[static_cast<int>(txn::AbortReason::kError)]++;
        }
      } else if (ran.committed) {
        ProcedureStats& stats = stats_->by_procedure[ran.id];
        stats.commits++;
        stats.latency.Record(absl::ToInt64Nanoseconds(now - ran.start));
      }
    }
  }
  delivering_ = true;
  for (PendingCall& call : calls) call.done(std::move(call.ran.outcome));
  delivering_ = false;
}

void Session::WaitForOldest() {
  const uint64_t ts = pending_.front().ran.ack_ts;
  txn::CommitWatermark* const watermark = db_.watermark;
  if (watermark != nullptr && ts > watermark->acknowledged()) {
    // The log's failure is what Poll delivers; a timeout is this call's.
    absl::Status waited = watermark->WaitAcknowledged(ts);
    if (!waited.ok() && !(db_.log != nullptr && db_.log->failed())) {
      ready_.clear();
      ready_.push_back(std::move(pending_.front()));
      pending_.pop_front();
      Deliver(ready_, /*acknowledged=*/0, waited);
      ready_.clear();
      return;
    }
  }
  CHECK_GT(Poll(), 0u) << "the watermark neither reached " << ts
                       << " nor did the log fail";
}

void Session::Drain() {
  if (delivering_) {
    LOG(ERROR) << CallbackUsedSession();
    return;
  }
  while (!pending_.empty()) WaitForOldest();
}

absl::Status Session::RunErased(
    absl::FunctionRef<absl::Status(txn::Txn&)> body) {
  if (delivering_) return CallbackUsedSession();
  Ran ran;
  ran.start = absl::Now();
  CallCounts counts;
  const absl::Status status =
      Attempts(/*name=*/"", body, /*wait_durable=*/true, ran, counts);
  // As Call: earlier pipelined calls' outcomes come first.
  if (!pending_.empty()) Poll();
  return status;
}

Session::Ran Session::RunProcedure(ProcedureId id, const ProcedureTypes& types,
                                   const std::any& args, bool wait_durable) {
  Ran ran;
  ran.id = id;
  ran.start = absl::Now();
  const ErasedProcedure* registered = engine_.procedure(id);
  if (registered == nullptr) {
    ran.outcome = absl::UnimplementedError(
        absl::StrFormat("no procedure with id %d is registered (%d are)", id,
                        engine_.procedure_count()));
    ran.id = 0;  // stats are by valid id; nothing is counted for this one
    return ran;
  }
  const ErasedProcedure& procedure = *registered;
  if (!(procedure.types == types)) {
    ran.outcome = absl::InvalidArgumentError(absl::StrFormat(
        "procedure %s is %s; called as %s (an untyped call passes exactly "
        "the registered types; a Procedure<> handle converts them)",
        procedure.name, procedure.types.describe(), types.describe()));
    return ran;
  }
  CallCounts counts;
  const absl::Status status = Attempts(
      procedure.name,
      [&](txn::Txn& txn) {
        ran.outcome = procedure.body(txn, args);
        return ran.outcome.status();
      },
      wait_durable, ran, counts);
  if (!status.ok()) ran.outcome = status;
  {
    absl::MutexLock lock(&stats_->mu);
    ProcedureStats& stats = stats_->by_procedure[id];
    stats.calls++;
    for (size_t i = 0; i < counts.aborts.size(); ++i) {
      stats.aborts[i] += counts.aborts[i];
    }
    stats.gave_up += counts.gave_up ? 1 : 0;
    if (counts.commit_latency_ns) {
      stats.commits++;
      stats.latency.Record(*counts.commit_latency_ns);
    }
  }
  return ran;
}

absl::Status Session::Attempts(std::string_view name,
                               absl::FunctionRef<absl::Status(txn::Txn&)> body,
                               bool wait_durable, Ran& ran,
                               CallCounts& counts) {
  const RetryPolicy& policy = engine_.options().retry;
  absl::Time attempt_start = ran.start;
  for (int attempt = 0;; ++attempt) {
    if (watermark_slot_ == nullptr && db_.marks != nullptr) {
      // The log started after this session opened (Engine::StartLogging):
      // every transaction of a logging node holds a slot of its marks.
      auto slot = db_.marks->NewSlot();
      if (!slot.ok()) return slot.status();
      watermark_slot_ = *slot;
    }
    txn::Txn txn(db_, *ctx_, *cc_);
    txn.set_watermark_slot(watermark_slot_);
    if (coordinator_ != nullptr) {
      coordinator_->Begin();
      txn.set_remote(coordinator_.get());
    }
    absl::Status status = txn.Begin();
    if (status.ok()) {
      status = RunBody(name, body, txn);
      if (status.ok()) {
        status = wait_durable ? txn.Commit() : txn.CommitNoWait();
      }
    }
    if (status.ok()) {
      ran.committed = true;
      if (wait_durable) {
        counts.commit_latency_ns =
            absl::ToInt64Nanoseconds(absl::Now() - ran.start);
      } else {
        AckLater(txn, ran);
      }
      return absl::OkStatus();
    }
    // An error the procedure returned without the transaction aborting is
    // the procedure's decision: a user abort.
    if (txn.active()) txn.Abort(txn::AbortReason::kUser);
    const txn::AbortReason reason = txn.abort_reason();
    counts.aborts[static_cast<int>(reason)]++;
    const bool node_down = txn::IsRetryable(reason) && engine_.NodeDown(node_);
    if (!txn::IsRetryable(reason) || attempt >= policy.max_retries ||
        node_down) {
      ran.outcome = status;
      if (node_down) {
        ran.outcome = absl::UnavailableError(absl::StrFormat(
            "%s: compute node %d failed, its calls fail until it rejoins "
            "(last attempt: %s)",
            WhatRan(name), node_, status.message()));
      } else if (txn::IsRetryable(reason)) {
        counts.gave_up = true;
        ran.outcome =
            txn::WithAbortReason(absl::AbortedError(absl::StrFormat(
                                     "%s gave up after %d retries; last: %s",
                                     WhatRan(name), attempt, status.message())),
                                 reason);
      }
      // The decision may rest on writes not durable yet
      // (Txn::AckTimestamp): the outcome may become the reason it cannot
      // be reported.
      if (wait_durable) {
        AckNow(txn, ran);
      } else {
        AckLater(txn, ran);
      }
      return ran.outcome.status();
    }
    attempt_start = BackOff(attempt, attempt_start);
  }
}

absl::Status Session::RunBody(std::string_view name,
                              absl::FunctionRef<absl::Status(txn::Txn&)> body,
                              txn::Txn& txn) {
  // An exception must not leave the session (or skip the rollback): it
  // ends the transaction like an error the procedure returned.
  try {
    return body(txn);
  } catch (const std::exception& e) {
    txn.Abort(txn::AbortReason::kError);
    return absl::UnknownError(
        absl::StrFormat("%s threw %s", WhatRan(name), e.what()));
  } catch (...) {
    txn.Abort(txn::AbortReason::kError);
    return absl::UnknownError(absl::StrFormat(
        "%s threw an exception that is no std::exception", WhatRan(name)));
  }
}

}  // namespace strand::engine
