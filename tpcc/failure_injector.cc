#include "tpcc/failure_injector.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace strand::tpcc {
namespace {

// How often the wait for the reclaim looks whether the run ended.
constexpr absl::Duration kReclaimPoll = absl::Milliseconds(50);

}  // namespace

FailureInjector::FailureInjector(
    engine::Engine& engine, const FailurePlan& plan, int threads_per_node,
    std::function<std::vector<uint64_t>()> commits_by_node)
    : engine_(engine),
      plan_(plan),
      threads_per_node_(threads_per_node),
      commits_by_node_(std::move(commits_by_node)) {
  events_.node = plan.node;
}

FailureInjector::~FailureInjector() { Stop(); }

void FailureInjector::Start(absl::Time window_start) {
  thread_ = std::thread([this, window_start] { Run(window_start); });
}

void FailureInjector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void FailureInjector::SessionClosed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++sessions_closed_;
  }
  changed_.notify_all();
}

bool FailureInjector::WaitUntilUp() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return up_ || stopping_; });
  return up_ && !stopping_;
}

bool FailureInjector::SleepUntil(absl::Time t) {
  std::unique_lock<std::mutex> lock(mu_);
  return !changed_.wait_until(lock, absl::ToChronoTime(t),
                              [this] { return stopping_; });
}

void FailureInjector::Run(absl::Time window_start) {
  if (!SleepUntil(window_start + plan_.at)) return;
  Fail();
  if (!events_.error.empty()) return;
  AwaitReclaim();
  if (!events_.error.empty() || plan_.rejoin_after == absl::ZeroDuration()) {
    return;
  }
  if (!SleepUntil(events_.failed_at + plan_.rejoin_after)) {
    events_.error = absl::StrCat("compute node ", plan_.node,
                                 " did not rejoin: the run ended first");
    return;
  }
  Rejoin();
}

void FailureInjector::Fail() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    up_ = false;
    sessions_closed_ = 0;
  }
  // Raised before the failure: a call it makes fail finds it raised.
  down_.store(true, std::memory_order_seq_cst);
  events_.commits_at_failure = commits_by_node_();
  events_.failed_at = absl::Now();
  if (absl::Status s = engine_.FailNode(plan_.node); !s.ok()) {
    events_.error =
        absl::StrCat("failing compute node ", plan_.node, ": ", s.ToString());
    down_.store(false, std::memory_order_seq_cst);
    {
      std::lock_guard<std::mutex> lock(mu_);
      up_ = true;
    }
    changed_.notify_all();
  }
}

void FailureInjector::AwaitReclaim() {
  for (;;) {
    absl::Status s = engine_.WaitReclaimed(plan_.node, kReclaimPoll);
    if (s.ok()) break;
    if (!absl::IsDeadlineExceeded(s)) {
      events_.error = absl::StrCat("waiting for compute node ", plan_.node,
                                   " to be reclaimed: ", s.ToString());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      events_.error = absl::StrCat("compute node ", plan_.node,
                                   " was not reclaimed before the run ended");
      return;
    }
  }
  events_.reclaimed_seen = absl::Now();
  // Before the rejoin: once the node is live again this says nothing.
  events_.declared_at = engine_.DeclaredFailedAt(plan_.node);
}

void FailureInjector::Rejoin() {
  {
    // RejoinNode needs every session of the node gone.
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] {
      return stopping_ || sessions_closed_ >= threads_per_node_;
    });
    if (stopping_) {
      events_.error = absl::StrCat(
          "compute node ", plan_.node,
          " did not rejoin: its threads had not closed their sessions when "
          "the run ended");
      return;
    }
  }
  events_.commits_at_rejoin = commits_by_node_();
  events_.rejoin_started = absl::Now();
  if (absl::Status s = engine_.RejoinNode(plan_.node); !s.ok()) {
    events_.error =
        absl::StrCat("rejoining compute node ", plan_.node, ": ", s.ToString());
    return;
  }
  events_.rejoined_at = absl::Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    up_ = true;
    sessions_closed_ = 0;
    down_.store(false, std::memory_order_seq_cst);
  }
  changed_.notify_all();
}

}  // namespace strand::tpcc
