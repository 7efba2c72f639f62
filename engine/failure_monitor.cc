#include "engine/failure_monitor.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "glog/logging.h"

namespace strand::engine {

FailureMonitor::FailureMonitor(const txn::Membership& membership,
                               Reclaim reclaim, FenceHere fence_here)
    : membership_(membership),
      reclaim_(std::move(reclaim)),
      fence_here_(std::move(fence_here)),
      reclaimer_of_(membership.compute_nodes(), -1),
      retry_at_(membership.compute_nodes(), absl::InfinitePast()),
      declared_at_(membership.compute_nodes(), absl::InfinitePast()),
      last_declared_at_(membership.compute_nodes(), absl::InfinitePast()),
      renewed_at_ns_(membership.compute_nodes()) {
  thread_ = std::thread([this] { Loop(); });
}

FailureMonitor::~FailureMonitor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    changed_.SignalAll();
  }
  thread_.join();
  std::vector<std::thread> reclaimers;
  {
    absl::MutexLock lock(&mu_);
    reclaimers.swap(reclaimers_);
  }
  for (std::thread& t : reclaimers) t.join();
}

void FailureMonitor::Loop() {
  const absl::Duration period = membership_.lease() / 8;
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    mu_.Unlock();
    Look();
    mu_.Lock();
    changed_.WaitWithTimeout(&mu_, period);
  }
}

void FailureMonitor::Refresh() { Look(); }

void FailureMonitor::Look() {
  absl::MutexLock look(&look_mu_);
  std::vector<Attached*> nodes;
  {
    absl::MutexLock lock(&mu_);
    for (auto& a : attached_) nodes.push_back(a.get());
  }
  Attached* observer = nullptr;
  for (Attached* a : nodes) {
    if (a->paused) continue;
    const int64_t beat_start_ns = absl::GetCurrentTimeNanos();
    absl::Status beat = membership_.Beat(a->ctx->endpoint(), a->node);
    if (beat.ok()) {
      renewed_at_ns_[a->node].store(beat_start_ns, std::memory_order_relaxed);
    }
    if (absl::IsFailedPrecondition(beat)) {
      // Declared failed while it paused: it is fenced already; it stays
      // out until it rejoins.
      LOG(WARNING) << beat;
      a->paused = true;
      TellDeclaredFailed(*a);
      continue;
    }
    if (!beat.ok()) {
      LOG_EVERY_T(WARNING, 1)
          << "heartbeat of compute node " << a->node << ": " << beat;
      continue;
    }
    if (observer == nullptr) observer = a;
  }
  if (observer == nullptr) return;
  rdma::Endpoint& endpoint = observer->ctx->endpoint();
  const absl::Time now = absl::Now();
  absl::StatusOr<txn::Membership::View> view =
      membership_.Scan(endpoint, tracker_, now);
  if (!view.ok()) {
    LOG_EVERY_T(WARNING, 1) << "membership scan: " << view.status();
    return;
  }
  const uint64_t fenced = view->fenced & ~view->live;
  const uint64_t stealable = view->stealable & ~view->live;
  // Acknowledged only once the fences hold here too.
  const bool fences_applied = ApplyFences(fenced);
  for (Attached* a : nodes) {
    a->manager->SetPeerStates(fenced, stealable);
    // Paused here, or in a process of its own that still looks.
    if (((fenced >> a->node) & 1) != 0) TellDeclaredFailed(*a);
  }
  for (Attached* a : nodes) {
    if (a->paused || !fences_applied) continue;
    absl::Status s =
        membership_.Acknowledge(a->ctx->endpoint(), a->node, view->epoch);
    LOG_IF_EVERY_N(WARNING, !s.ok(), 100) << s;
  }
  absl::MutexLock lock(&mu_);
  for (int n = 0; n < membership_.compute_nodes(); ++n) {
    const auto id = static_cast<rdma::ComputeNodeId>(n);
    if (txn::Membership::IsLive(view->live, id)) {
      declared_at_[n] = absl::InfinitePast();
    } else if (((fenced >> n) & 1) != 0 &&
               declared_at_[n] == absl::InfinitePast()) {
      MarkDeclared(n, now);  // declared by another process
    }
  }
  reclaimed_ = view->reclaimed;
  changed_.SignalAll();
  for (rdma::ComputeNodeId failed : view->expired) {
    const bool ours =
        std::any_of(nodes.begin(), nodes.end(), [failed](const Attached* a) {
          return a->node == failed && !a->paused;
        });
    if (ours) continue;  // beaten just now: an observer's clock hiccup
    absl::StatusOr<bool> won =
        membership_.DeclareFailed(endpoint, failed, observer->node);
    if (!won.ok()) {
      LOG(WARNING) << "declaring compute node " << failed
                   << " failed: " << won.status();
      continue;
    }
    MarkDeclared(failed, now);
    if (*won) {
      LOG(WARNING) << "compute node " << failed << "'s lease of "
                   << absl::FormatDuration(membership_.lease())
                   << " expired: compute node " << observer->node
                   << " reclaims it";
      StartReclaim(observer->node, failed);
    }
  }
  AdoptOrphans(*view, *observer, nodes, now);
}

void FailureMonitor::AdoptOrphans(const txn::Membership::View& view,
                                  Attached& observer,
                                  const std::vector<Attached*>& nodes,
                                  absl::Time now) {
  rdma::Endpoint& endpoint = observer.ctx->endpoint();
  // Whether `n`'s reclaim is over now: `view` may predate the last stage
  // of a reclaim that ended since (a reclaimer publishes kReclaimed before
  // it clears its entry in reclaimer_of_ under mu_, which this holds), and a
  // second reclaim of a node that may have rejoined meanwhile would take
  // its live reader bits out of latch words.
  auto reclaimed_now = [&](int n) {
    absl::StatusOr<uint64_t> reclaimed = membership_.Reclaimed(endpoint);
    return !reclaimed.ok() || ((*reclaimed >> n) & 1) != 0;
  };
  for (int n = 0; n < membership_.compute_nodes(); ++n) {
    const auto failed = static_cast<rdma::ComputeNodeId>(n);
    const uint64_t bit = uint64_t{1} << n;
    const int claimant = view.reclaimer[n];
    if (claimant < 0 || ((view.reclaimed & bit) != 0) ||
        reclaimer_of_[n] >= 0) {
      continue;
    }
    const bool live = txn::Membership::IsLive(view.live, failed);
    const bool mine =
        std::any_of(nodes.begin(), nodes.end(), [claimant](const Attached* a) {
          return a->node == claimant && !a->paused;
        });
    if (mine) {
      // Ended in an error here: run again.
      if (!live && retry_at_[n] != absl::InfinitePast() &&
          now >= retry_at_[n] && !reclaimed_now(n)) {
        StartReclaim(claimant, failed);
      }
      continue;
    }
    // A claimant that is still a member, or not yet fenced, may be at it.
    if (txn::Membership::IsLive(view.live, claimant) ||
        ((view.fenced >> claimant) & 1) == 0) {
      continue;
    }
    const bool expired = std::find(view.expired.begin(), view.expired.end(),
                                   failed) != view.expired.end();
    if (live && !expired) {
      // It claimed a node that is well (its own clock hiccuped) and
      // failed before removing it: drop the claim, or nobody could
      // declare this node failed later.
      (void)membership_.Claim(endpoint, failed, claimant, -1);
      continue;
    }
    if (reclaimed_now(n)) continue;
    absl::StatusOr<bool> won =
        membership_.Claim(endpoint, failed, claimant, observer.node);
    if (!won.ok() || !*won) continue;
    if (live) {
      // The claimant failed between claiming and removing it.
      if (absl::Status s = membership_.Remove(endpoint, failed).status();
          !s.ok()) {
        LOG(WARNING) << "removing compute node " << n << ": " << s;
      }
      MarkDeclared(n, now);
    }
    LOG(WARNING) << "compute node " << claimant
                 << " failed while reclaiming compute node " << n
                 << ": compute node " << observer.node << " takes it over";
    StartReclaim(observer.node, failed);
  }
}

bool FailureMonitor::ApplyFences(uint64_t fenced) {
  if (fence_here_ == nullptr) return true;
  for (int n = 0; n < membership_.compute_nodes(); ++n) {
    const uint64_t bit = uint64_t{1} << n;
    const bool want = (fenced & bit) != 0;
    if (want == ((fenced_here_ & bit) != 0)) continue;
    if (absl::Status s = fence_here_(static_cast<rdma::ComputeNodeId>(n), want);
        !s.ok()) {
      LOG_EVERY_T(WARNING, 1) << (want ? "fencing" : "readmitting")
                              << " compute node " << n << " here: " << s;
      return false;
    }
    fenced_here_ ^= bit;
  }
  return true;
}

void FailureMonitor::TellDeclaredFailed(Attached& a) {
  if (a.told) return;
  a.told = true;
  if (a.declared_failed == nullptr) return;
  a.declared_failed(absl::UnavailableError(absl::StrFormat(
      "compute node %d was declared failed (its lease of %s expired) and "
      "is fenced or about to be: nothing it ran since its last "
      "acknowledgement is acknowledged, and it may or may not survive",
      a.node, absl::FormatDuration(membership_.lease()))));
}

void FailureMonitor::StartReclaim(rdma::ComputeNodeId reclaimer,
                                  rdma::ComputeNodeId failed) {
  reclaimer_of_[failed] = reclaimer;
  reclaimers_.emplace_back([this, reclaimer, failed] {
    absl::StatusOr<ReclaimReport> report = reclaim_(reclaimer, failed);
    if (report.ok()) {
      LOG(WARNING) << report->ToString();
    } else {
      LOG(ERROR) << "reclaiming compute node " << failed << " (run again in "
                 << absl::FormatDuration(membership_.lease())
                 << " while compute node " << reclaimer
                 << " is up, else taken over): " << report.status();
    }
    {
      absl::MutexLock lock(&mu_);
      if (report.ok()) reports_.push_back(*report);
      retry_at_[failed] = report.ok() ? absl::InfinitePast()
                                      : absl::Now() + membership_.lease();
      reclaimer_of_[failed] = -1;
      changed_.SignalAll();
    }
    Refresh();
  });
}

absl::Status FailureMonitor::WaitReclaimsBy(rdma::ComputeNodeId node,
                                            absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  while (std::find(reclaimer_of_.begin(), reclaimer_of_.end(),
                   static_cast<int>(node)) != reclaimer_of_.end()) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "a reclaim run by compute node %d did not end within %s", node,
          absl::FormatDuration(timeout)));
    }
  }
  return absl::OkStatus();
}

absl::Status FailureMonitor::Attach(rdma::ComputeNodeId node,
                                    cc::GclManager& manager,
                                    DeclaredFailed declared_failed) {
  absl::StatusOr<std::unique_ptr<cc::ThreadContext>> ctx =
      manager.NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  rdma::Endpoint& endpoint = (*ctx)->endpoint();
  const int64_t join_start_ns = absl::GetCurrentTimeNanos();
  if (absl::Status s = membership_.Join(endpoint, node); !s.ok()) return s;
  // Join checked `node`.
  renewed_at_ns_[node].store(join_start_ns, std::memory_order_relaxed);
  txn::Membership::Tracker scratch;
  absl::StatusOr<txn::Membership::View> joined =
      membership_.Scan(endpoint, scratch, absl::Now());
  if (!joined.ok()) return joined.status();
  {
    absl::MutexLock look(&look_mu_);
    absl::MutexLock lock(&mu_);
    auto a = std::make_unique<Attached>();
    a->node = node;
    a->manager = &manager;
    a->ctx = *std::move(ctx);
    a->declared_failed = std::move(declared_failed);
    attached_.push_back(std::move(a));
  }
  Refresh();
  // Every member must have applied a view in which `node` is live (its
  // caches no longer steal from it) before it takes a latch.
  const absl::Time deadline = absl::Now() + 20 * membership_.lease();
  for (;;) {
    absl::StatusOr<bool> all;
    {
      // The endpoint is the monitor's now, and an endpoint is one
      // thread's at a time (a verbs endpoint's queue pairs and CQ are not
      // shared): Look beats with it under look_mu_.
      absl::MutexLock look(&look_mu_);
      all = membership_.AllAcknowledged(endpoint, joined->live, joined->epoch);
    }
    if (!all.ok()) return all.status();
    if (*all) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "compute node %d joined, but not every member acknowledged it "
          "within %s",
          node, absl::FormatDuration(20 * membership_.lease())));
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
}

void FailureMonitor::Detach(rdma::ComputeNodeId node) {
  absl::MutexLock look(&look_mu_);
  absl::MutexLock lock(&mu_);
  if (node < renewed_at_ns_.size()) renewed_at_ns_[node].store(0);
  std::erase_if(attached_, [node](const std::unique_ptr<Attached>& a) {
    return a->node == node;
  });
}

absl::Status FailureMonitor::Leave(rdma::ComputeNodeId node) {
  absl::MutexLock look(&look_mu_);
  absl::MutexLock lock(&mu_);
  if (node < renewed_at_ns_.size()) renewed_at_ns_[node].store(0);
  for (auto it = attached_.begin(); it != attached_.end(); ++it) {
    if ((*it)->node != node) continue;
    absl::Status s = membership_.Leave((*it)->ctx->endpoint(), node);
    attached_.erase(it);
    return s;
  }
  return absl::NotFoundError(
      absl::StrFormat("compute node %d is not attached here", node));
}

void FailureMonitor::Pause(rdma::ComputeNodeId node) {
  absl::MutexLock look(&look_mu_);
  absl::MutexLock lock(&mu_);
  for (auto& a : attached_) {
    if (a->node == node) a->paused = true;
  }
}

void FailureMonitor::Resume(rdma::ComputeNodeId node) {
  absl::MutexLock look(&look_mu_);
  absl::MutexLock lock(&mu_);
  for (auto& a : attached_) {
    if (a->node == node) a->paused = false;
  }
}

absl::Status FailureMonitor::WaitReclaimed(rdma::ComputeNodeId node,
                                           absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::MutexLock lock(&mu_);
  while (((reclaimed_ >> node) & 1) == 0) {
    if (changed_.WaitWithDeadline(&mu_, deadline)) {
      if (((reclaimed_ >> node) & 1) != 0) break;
      return absl::DeadlineExceededError(
          absl::StrFormat("compute node %d was not reclaimed within %s", node,
                          absl::FormatDuration(timeout)));
    }
  }
  return absl::OkStatus();
}

std::vector<ReclaimReport> FailureMonitor::reports() const {
  absl::MutexLock lock(&mu_);
  return reports_;
}

void FailureMonitor::MarkDeclared(int node, absl::Time now) {
  declared_at_[node] = now;
  last_declared_at_[node] = now;
}

absl::Time FailureMonitor::last_declared_at(rdma::ComputeNodeId node) const {
  absl::MutexLock lock(&mu_);
  return node < last_declared_at_.size() ? last_declared_at_[node]
                                         : absl::InfinitePast();
}

absl::Time FailureMonitor::declared_at(rdma::ComputeNodeId node) const {
  absl::MutexLock lock(&mu_);
  return node < declared_at_.size() ? declared_at_[node] : absl::InfinitePast();
}

absl::Time FailureMonitor::lease_renewed_at(rdma::ComputeNodeId node) const {
  const int64_t ns = node < renewed_at_ns_.size()
                         ? renewed_at_ns_[node].load(std::memory_order_relaxed)
                         : 0;
  return ns == 0 ? absl::InfiniteFuture() : absl::FromUnixNanos(ns);
}

}  // namespace strand::engine
