#include "cc/sel/sel_manager.h"

#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/thread_ledger.h"
#include "cc/sel/sel_latch.h"

namespace strand::cc::sel {

// Per-thread state: the endpoint and a pool of payload buffers, one per
// latch the thread holds (SEL has no cache, a guard points into one).
class SelManager::SelThread : public ThreadContext {
 public:
  SelThread(const SelManager* manager, std::unique_ptr<rdma::Endpoint> endpoint,
            uint32_t payload_bytes)
      : ThreadContext(manager),
        endpoint_(std::move(endpoint)),
        payload_bytes_(payload_bytes) {}

  rdma::Endpoint& endpoint() override { return *endpoint_; }

  uint8_t* TakeBuffer() {
    if (free_.empty()) {
      owned_.push_back(std::make_unique<uint8_t[]>(payload_bytes_));
      return owned_.back().get();
    }
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  void ReturnBuffer(uint8_t* b) { free_.push_back(b); }

 private:
  const std::unique_ptr<rdma::Endpoint> endpoint_;
  const uint32_t payload_bytes_;
  std::vector<std::unique_ptr<uint8_t[]>> owned_;
  std::vector<uint8_t*> free_;
};

namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Spins for about 2^attempt pauses (capped), yielding the core now and then
// so a latch holder sharing it can finish.
void BackOff(int attempt) {
  const int64_t start = SteadyNanos();
  const int spins = 1 << std::min(attempt, 10);
  for (int i = 0; i < spins; ++i) __builtin_ia32_pause();
  if (attempt > 4) std::this_thread::yield();
  ThreadLedger::Mine().ChargeBusyWait(SteadyNanos() - start);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GclManager>> SelManager::Create(
    rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options) {
  if (node > SelLatch::kMaxNodeId) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d does not fit in SEL's latch word (ids 0 to %d)", node,
        SelLatch::kMaxNodeId));
  }
  auto compute_node = fabric.compute_node(node);
  if (!compute_node.ok()) return compute_node.status();
  auto allocator = rdma::BlockAllocator::Create(fabric, node, options.gcl_size);
  if (!allocator.ok()) return allocator.status();
  return std::unique_ptr<GclManager>(
      new SelManager(*compute_node, options, *std::move(allocator)));
}

SelManager::SelManager(rdma::ComputeNode* node, const CcOptions& options,
                       std::unique_ptr<rdma::BlockAllocator> allocator)
    : compute_node_(node),
      node_(node->id()),
      options_(options),
      allocator_(std::move(allocator)) {}

absl::StatusOr<std::unique_ptr<ThreadContext>> SelManager::NewThreadContext() {
  auto endpoint = compute_node_->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  return std::make_unique<SelThread>(this, *std::move(endpoint),
                                     options_.payload_bytes());
}

absl::StatusOr<rdma::GlobalAddress> SelManager::Allocate(ThreadContext& ctx) {
  auto gcl = allocator_->Allocate(ctx.endpoint());
  if (!gcl.ok()) return gcl.status();
  // A reused GCL holds its previous payload: zero it (latch word included,
  // which is free since nobody may use a freed GCL).
  std::vector<uint8_t> zeros(options_.gcl_size, 0);
  if (absl::Status s = ctx.endpoint().Write(*gcl, zeros.data(), zeros.size());
      !s.ok()) {
    return s;
  }
  return *gcl;
}

absl::Status SelManager::Free(ThreadContext&, rdma::GlobalAddress gcl) {
  allocator_->Free(gcl);
  return absl::OkStatus();
}

template <typename Attempt>
absl::Status SelManager::Retry(const char* what, rdma::GlobalAddress gcl,
                               LockOptions lock, Attempt attempt) {
  const absl::Time deadline = absl::Now() + options_.lock_timeout;
  for (int i = 0;; ++i) {
    absl::StatusOr<bool> done = attempt();
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
    if (lock.no_wait) {
      counters_.no_wait_aborts++;
      return absl::AbortedError(
          absl::StrFormat("%s of %s is held (no-wait)", what, gcl.ToString()));
    }
    counters_.lock_retries++;
    if ((i & 15) == 15 && absl::Now() > deadline) {
      counters_.lock_timeouts++;
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s of %s not granted within %s", what, gcl.ToString(),
          absl::FormatDuration(options_.lock_timeout)));
    }
    BackOff(i);
  }
}

absl::StatusOr<SharedGuard> SelManager::SLock(ThreadContext& ctx,
                                              rdma::GlobalAddress gcl,
                                              LockOptions lock) {
  auto& thread = static_cast<SelThread&>(ctx);
  rdma::Endpoint& ep = thread.endpoint();
  uint8_t* buffer = thread.TakeBuffer();
  absl::Status s =
      Retry("shared latch", gcl, lock, [&]() -> absl::StatusOr<bool> {
        uint64_t old = 0;
        rdma::Batch b;
        b.FetchAndAdd(gcl, 1, &old)
            .Read(gcl + 8, buffer, options_.payload_bytes());
        if (absl::Status e = ep.Execute(b); !e.ok()) return e;
        if (!SelLatch::HasWriter(old)) return true;
        // A writer holds it: take our increment back.
        if (auto e = ep.FetchAndAdd(gcl, static_cast<uint64_t>(-1)); !e.ok()) {
          return e.status();
        }
        return false;
      });
  if (!s.ok()) {
    thread.ReturnBuffer(buffer);
    return s;
  }
  counters_.shared_locks++;
  return SharedGuard(this, &ctx, LatchHandle{gcl, buffer, nullptr});
}

absl::StatusOr<ExclusiveGuard> SelManager::XLock(ThreadContext& ctx,
                                                 rdma::GlobalAddress gcl,
                                                 LockOptions lock) {
  auto& thread = static_cast<SelThread&>(ctx);
  rdma::Endpoint& ep = thread.endpoint();
  uint8_t* buffer = thread.TakeBuffer();
  const uint64_t mine = SelLatch::Exclusive(node_);
  absl::Status s =
      Retry("exclusive latch", gcl, lock, [&]() -> absl::StatusOr<bool> {
        uint64_t old = 0;
        rdma::Batch b;
        b.CompareAndSwap(gcl, 0, mine, &old)
            .Read(gcl + 8, buffer, options_.payload_bytes());
        if (absl::Status e = ep.Execute(b); !e.ok()) return e;
        return old == 0;
      });
  if (!s.ok()) {
    thread.ReturnBuffer(buffer);
    return s;
  }
  counters_.exclusive_locks++;
  return ExclusiveGuard(this, &ctx, LatchHandle{gcl, buffer, nullptr},
                        options_.payload_bytes());
}

absl::StatusOr<ExclusiveGuard> SelManager::Upgrade(ThreadContext& ctx,
                                                   SharedGuard& guard,
                                                   LockOptions lock) {
  if (!guard.owns_lock()) {
    return absl::FailedPreconditionError("upgrade of a guard without a latch");
  }
  auto& thread = static_cast<SelThread&>(ctx);
  rdma::Endpoint& ep = thread.endpoint();
  const LatchHandle handle = TakeHandle(guard);
  const uint64_t mine = SelLatch::Exclusive(node_);
  // We are one of the readers; the upgrade succeeds once we are the only
  // one. Two upgraders would wait for each other forever, so after a few
  // tries give the share back and take the latch from scratch.
  constexpr int kUpgradeTries = 4;
  for (int i = 0; i < (lock.no_wait ? 1 : kUpgradeTries); ++i) {
    auto old = ep.CompareAndSwap(handle.gcl, 1, mine);
    if (!old.ok()) return old.status();
    if (*old == 1) {
      counters_.upgrades++;
      counters_.exclusive_locks++;
      return ExclusiveGuard(this, &ctx, handle, options_.payload_bytes());
    }
    BackOff(i);
  }
  absl::Status released = UnlockShared(ctx, handle);
  if (!released.ok()) return released;
  if (lock.no_wait) {
    counters_.no_wait_aborts++;
    return absl::AbortedError(
        absl::StrFormat("upgrade of %s: other readers hold it (no-wait)",
                        handle.gcl.ToString()));
  }
  return XLock(ctx, handle.gcl, lock);
}

absl::Status SelManager::UnlockShared(ThreadContext& ctx,
                                      const LatchHandle& handle) {
  auto& thread = static_cast<SelThread&>(ctx);
  thread.ReturnBuffer(handle.payload);
  return thread.endpoint()
      .FetchAndAdd(handle.gcl, static_cast<uint64_t>(-1))
      .status();
}

absl::Status SelManager::UnlockExclusive(ThreadContext& ctx,
                                         const LatchHandle& handle,
                                         uint32_t dirty_begin,
                                         uint32_t dirty_end) {
  auto& thread = static_cast<SelThread&>(ctx);
  if (!options_.dirty_bounds && dirty_begin != dirty_end) {
    dirty_begin = 0;
    dirty_end = options_.payload_bytes();
  }
  rdma::Batch b;
  if (dirty_begin != dirty_end) {
    b.Write(handle.gcl + 8 + dirty_begin, handle.payload + dirty_begin,
            dirty_end - dirty_begin);
    counters_.flushes++;
    counters_.flushed_bytes += dirty_end - dirty_begin;
  }
  b.FetchAndAdd(handle.gcl, -SelLatch::Exclusive(node_), nullptr);
  absl::Status s = thread.endpoint().Execute(b);
  thread.ReturnBuffer(handle.payload);
  return s;
}

CacheStats SelManager::Stats() const {
  CacheStats s;
  s.shared_locks = counters_.shared_locks;
  s.exclusive_locks = counters_.exclusive_locks;
  s.upgrades = counters_.upgrades;
  s.lock_retries = counters_.lock_retries;
  s.lock_timeouts = counters_.lock_timeouts;
  s.no_wait_aborts = counters_.no_wait_aborts;
  s.flushes = counters_.flushes;
  s.flushed_bytes = counters_.flushed_bytes;
  return s;
}

}  // namespace strand::cc::sel
