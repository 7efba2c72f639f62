#include "cc/selcc/selcc_manager.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/thread_ledger.h"
#include "cc/selcc/latch_word.h"
#include "glog/logging.h"
#include "rdma/fabric_options.h"

namespace strand::cc {

// How long a no-wait lock waits for a frame to become evictable before it
// reports the cache too small (the miss path of the frame lookup).
constexpr absl::Duration kNoWaitFrameBound = absl::Milliseconds(100);

using selcc::AtomicStats;
using selcc::Cache;
using selcc::LatchWord;
using selcc::Memo;
using selcc::ReplySlot;
using selcc::Want;

// Per-thread state: the endpoint, the reply slot invalidation replies land
// in, this thread's counters and a random source for back-off jitter.
class SelccManager::SelccThread final : public ThreadContext {
 public:
  SelccThread(SelccManager* manager, std::unique_ptr<rdma::Endpoint> endpoint,
              int slot)
      : ThreadContext(manager),
        manager_(manager),
        endpoint_(std::move(endpoint)),
        slot_index(slot),
        slot(manager->slots_.Get(slot)),
        stats(std::make_shared<AtomicStats>()),
        rng(0x5e1cc ^ (uint64_t{manager->node_} << 32) ^ slot) {
    std::lock_guard<std::mutex> lock(manager->state_->stats_mu);
    manager->state_->thread_stats.push_back(stats);
    manager->state_->worker_threads.fetch_add(1);
  }
  ~SelccThread() override {
    manager_->state_->worker_threads.fetch_sub(1);
    manager_->slots_.Release(slot_index);
  }
  rdma::Endpoint& endpoint() override { return *endpoint_; }

  SelccManager* const manager_;
  const std::unique_ptr<rdma::Endpoint> endpoint_;
  const int slot_index;
  ReplySlot* const slot;
  const std::shared_ptr<AtomicStats> stats;
  std::mt19937_64 rng;
};

// A context carries its own node's endpoint: every message it sends names
// that node as its source, and a holder's handler hands the line over (or
// adds the reader bit of a downgrade) to the SOURCE, while this manager
// does its latch-word arithmetic as node_. Mixed, the two corrupt the word
// silently: node 0's context on node 1's manager made holder node 0
// downgrade "to node 0" (Reader(0) added twice is bit 1, and node 0 kept S
// without its bit); later releases borrowed bits out of the word and a node
// that believed it held the line waited until lock_timeout. So every call
// refuses such a context before it touches anything. Only this manager
// makes contexts it owns, all of them SelccThreads: one inlined comparison
// per latch call (a dynamic_cast on each of the ~70 per transaction cost
// ~2% of the TPC-C CPU path, a StatusOr another 1%).
inline SelccManager::SelccThread* SelccManager::OwnThread(ThreadContext& ctx) {
  return ctx.owner() == this ? static_cast<SelccThread*>(&ctx) : nullptr;
}

// The fabric refuses a deployment larger than the latch word can serve.
static_assert(rdma::FabricOptions::kMaxComputeNodes <= LatchWord::kMaxNodes);

namespace {

// The managers of this process, by deployment (fabric) and node, so that a
// lock timeout can say what the holder's cache holds of the line when the
// holder runs in this process too (an embedded deployment): the only
// evidence a rare timeout leaves (TimedOut).
struct HostedManagers {
  absl::Mutex mu;
  absl::flat_hash_map<std::pair<const rdma::Fabric*, int>, SelccManager*> map
      ABSL_GUARDED_BY(mu);
};
// What a fairness hold-off waits for (WaitUntil, TimedOut's message).
constexpr absl::string_view kStarvedPeersTurn =
    "for a starved peer's turn at the line";
constexpr absl::string_view kStarvedWritersTurn =
    "while this node's readers step aside for a starved writer";

HostedManagers& Hosted() {
  static auto* hosted = new HostedManagers;
  return *hosted;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GclManager>> SelccManager::Create(
    rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options) {
  if (absl::Status s = LatchWord::CheckNodeId(node); !s.ok()) return s;
  if (fabric.compute_node_count() > LatchWord::kMaxNodes) {
    return LatchWord::CheckNodeId(fabric.compute_node_count() - 1);
  }
  auto compute_node = fabric.compute_node(node);
  if (!compute_node.ok()) return compute_node.status();
  auto allocator = rdma::BlockAllocator::Create(fabric, node, options.gcl_size);
  if (!allocator.ok()) return allocator.status();
  std::unique_ptr<SelccManager> manager(
      new SelccManager(fabric, *compute_node, options, *std::move(allocator)));
  if (absl::Status s = manager->Start(); !s.ok()) return s;
  {
    HostedManagers& hosted = Hosted();
    absl::MutexLock lock(&hosted.mu);
    hosted.map[{&fabric, static_cast<int>(node)}] = manager.get();
  }
  return std::unique_ptr<GclManager>(std::move(manager));
}

SelccManager::SelccManager(rdma::Fabric& fabric, rdma::ComputeNode* node,
                           const CcOptions& options,
                           std::unique_ptr<rdma::BlockAllocator> allocator)
    : fabric_(fabric),
      compute_node_(node),
      node_(node->id()),
      allocator_(std::move(allocator)),
      state_(std::make_unique<selcc::NodeState>(options, node->id(),
                                                fabric.memory_node_count(),
                                                fabric.memory_node_bytes())),
      handler_(state_.get(), &slots_),
      evictor_(state_.get(), node) {}

absl::Status SelccManager::Start() {
  if (absl::Status s = state_->cache.Register(*compute_node_); !s.ok()) {
    return s;
  }
  if (absl::Status s = compute_node_->AddHandler(
          selcc::kRequestMessage, selcc::kReplyMessage,
          [this](const rdma::Message& m, rdma::Endpoint& ep) {
            handler_.Handle(m, ep);
          },
          state_->options.handler_threads);
      !s.ok()) {
    return s;
  }
  return evictor_.Start();
}

SelccManager::~SelccManager() {
  {
    HostedManagers& hosted = Hosted();
    absl::MutexLock lock(&hosted.mu);
    auto it = hosted.map.find({&fabric_, static_cast<int>(node_)});
    if (it != hosted.map.end() && it->second == this) hosted.map.erase(it);
  }
  evictor_.Stop();
  // Write back and release whatever this node still holds, so the pool is
  // left as if every line had been evicted. First while the handlers still
  // answer: a peer asking for one of our lines meanwhile hears busy or
  // outdated and retries. Stopping them first left such a peer waiting
  // kReplyGrace (30 s) for an answer that never came, while we still held
  // the line (seen in the two-process bank run over verbs). Then once more
  // after they stopped, for a frame a handler had latched during the first
  // pass.
  auto endpoint = compute_node_->NewEndpoint();
  if (endpoint.ok()) (void)ReleaseEverything(**endpoint);
  compute_node_->StopHandlers();
  if (endpoint.ok()) (void)ReleaseEverything(**endpoint);
}

absl::Status SelccManager::WriteBackAll() {
  auto endpoint = compute_node_->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  if (absl::Status s = ReleaseEverything(**endpoint); !s.ok()) return s;
  const uint64_t held = state_->cache.capacity() - state_->cache.free_frames();
  if (held > 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "compute node %d still caches %d lines after writing back: a thread "
        "holds or is acquiring a latch (no transaction may run meanwhile)",
        node_, held));
  }
  return absl::OkStatus();
}

absl::Status SelccManager::ReleaseEverything(rdma::Endpoint& endpoint) {
  absl::Status first_error;
  uint64_t failed = 0;
  std::vector<Frame*> victims;
  do {
    victims.clear();
    state_->cache.TakeVictims(64, &victims);
    for (Frame* f : victims) {
      rdma::Batch b;
      state_->AppendRelease(*f, f->data, b, state_->shared_stats, true);
      absl::Status s = endpoint.Execute(b);
      if (!s.ok()) {
        // Once per line would flood the log of a failed (fenced) node.
        if (first_error.ok()) first_error = s;
        ++failed;
      }
      state_->cache.EndInFlight(f->gcl);
      f->memo = Memo::kInvalid;
      f->ClearDirty();
      f->latch.Unlock();
      state_->cache.PutFree(f);
    }
  } while (!victims.empty());
  LOG_IF(ERROR, failed > 0) << "compute node " << node_ << " could not release "
                            << failed << " cached lines: " << first_error;
  return first_error;
}

absl::StatusOr<std::unique_ptr<ThreadContext>>
SelccManager::NewThreadContext() {
  auto endpoint = compute_node_->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  const int slot = slots_.Acquire();
  if (slot < 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("compute node %d has %d thread contexts already", node_,
                        selcc::ReplySlots::kMaxSlots));
  }
  return std::make_unique<SelccThread>(this, *std::move(endpoint), slot);
}

absl::StatusOr<rdma::GlobalAddress> SelccManager::Allocate(ThreadContext& ctx) {
  // Blocks come zeroed: fresh chunks are zero and Free() clears a line
  // before it returns it, so no write is needed here.
  return allocator_->Allocate(ctx.endpoint());
}

absl::Status SelccManager::Free(ThreadContext& ctx, rdma::GlobalAddress gcl) {
  SelccThread* own = OwnThread(ctx);
  if (own == nullptr) return WrongContext(ctx);
  SelccThread& t = *own;
  const absl::Time deadline = absl::Now() + options().lock_timeout;
  bool exclusive = false;
  auto f =
      LatchFrame(t, gcl, Cache::Mode::kExclusive, {}, deadline, &exclusive);
  if (!f.ok()) return f.status();
  Frame* frame = *f;
  if (frame->memo != Memo::kModified) {
    // Taking M invalidates every other copy.
    if (absl::Status s = AcquireExclusive(t, frame, {}, deadline); !s.ok()) {
      frame->latch.Unlock();
      return s;
    }
  }
  rdma::Batch b;
  b.Write(gcl + 8, state_->zeros.data(), state_->payload_bytes)
      .FetchAndAdd(gcl, LatchWord::ReleaseExclusive(node_), nullptr);
  absl::Status s = Execute(t, b);
  frame->memo = Memo::kInvalid;
  frame->ClearDirty();
  frame->ResetFairness();
  state_->cache.Remove(frame);
  frame->latch.Unlock();
  state_->cache.PutFree(frame);
  if (!s.ok()) return s;
  allocator_->Free(gcl);
  return absl::OkStatus();
}

absl::Status SelccManager::Execute(SelccThread& t, const rdma::Batch& b) {
  const int64_t start = selcc::SteadyNowNanos();
  absl::Status s = t.endpoint().Execute(b);
  state_->ObserveRtt(selcc::SteadyNowNanos() - start);
  return s;
}

absl::Status SelccManager::Aborted(SelccThread& t, const char* what,
                                   rdma::GlobalAddress gcl) {
  AtomicStats::Bump(t.stats->no_wait_aborts);
  return absl::AbortedError(absl::StrFormat(
      "%s of %s is held by a running holder (no-wait)", what, gcl.ToString()));
}

absl::Status SelccManager::TimedOut(SelccThread& t, const char* what,
                                    rdma::GlobalAddress gcl,
                                    absl::string_view waiting) {
  AtomicStats::Bump(t.stats->lock_timeouts);
  // What memory's latch word says now tells a holder that kept the line
  // (its node named) from a grant that was lost (free, or this node).
  uint64_t word = 0;
  const absl::Status read = t.endpoint().Read(gcl, &word, sizeof(word));
  // And what the holder's cache says, if it runs in this process.
  std::string holder_view;
  const int holder = read.ok() ? LatchWord::Holder(word) : -1;
  if (holder >= 0 && holder != static_cast<int>(node_)) {
    HostedManagers& hosted = Hosted();
    absl::MutexLock lock(&hosted.mu);
    auto it = hosted.map.find({&fabric_, holder});
    if (it != hosted.map.end()) {
      holder_view =
          absl::StrFormat("; compute node %d (in this process): %s", holder,
                          it->second->state_->cache.Describe(gcl));
    }
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "%s of %s not granted within %s (compute node %d, waiting %s); its "
      "latch word in memory: %s%s",
      what, gcl.ToString(), absl::FormatDuration(options().lock_timeout), node_,
      waiting,
      read.ok() ? LatchWord::ToString(word)
                : absl::StrCat("unreadable (", read.message(), ")"),
      holder_view));
}

absl::Status SelccManager::WrongContext(ThreadContext& ctx) const {
  auto* t = dynamic_cast<SelccThread*>(&ctx);
  return absl::FailedPreconditionError(absl::StrFormat(
      "a ThreadContext of %s used with compute node %d's SELCC manager; "
      "each node's threads need contexts from that node's "
      "NewThreadContext()",
      t != nullptr ? absl::StrFormat("compute node %d", t->manager_->node_)
                   : std::string("another protocol"),
      node_));
}

absl::StatusOr<SelccManager::Frame*> SelccManager::LatchFrame(
    SelccThread& t, rdma::GlobalAddress gcl, Cache::Mode mode, LockOptions lock,
    absl::Time deadline, bool* exclusive) {
  const char* what =
      mode == Cache::Mode::kShared ? "shared latch" : "exclusive latch";
  Cache& cache = state_->cache;
  // When every frame was first found latched (no victim to evict).
  absl::Time no_frame_since = absl::InfiniteFuture();
  for (int round = 0;; ++round) {
    bool latched = false;
    Frame* f = cache.Lookup(gcl, mode, &latched);
    if (f != nullptr) {
      if (!latched) {
        if (lock.no_wait) {
          Cache::Unpin(f);
          return Aborted(t, what, gcl);
        }
        if (f->lease_active.load(std::memory_order_relaxed)) {
          auto& waits =
              mode == Cache::Mode::kShared ? f->read_waits : f->write_waits;
          waits.fetch_add(1, std::memory_order_relaxed);
        }
        const bool ok = mode == Cache::Mode::kShared
                            ? f->latch.LockSharedUntil(deadline)
                            : f->latch.LockUntil(deadline);
        Cache::Unpin(f);
        if (!ok) return TimedOut(t, what, gcl, "for this node's own threads");
        if (f->gcl != gcl || !f->in_map) {  // freed while we waited
          mode == Cache::Mode::kShared ? f->latch.UnlockShared()
                                       : f->latch.Unlock();
          continue;
        }
      } else if (f->lease_active.load(std::memory_order_relaxed)) {
        NoWaitAccess(f);
      }
      *exclusive = mode == Cache::Mode::kExclusive;
      return f;
    }
    // Miss: a free frame for the GCL.
    Frame* fresh = cache.TakeFree(gcl);
    if (fresh == nullptr && options().batched_eviction && round < 64) {
      // The background evictor fell behind: let it run before paying a
      // round trip for a foreground eviction on this miss's path.
      evictor_.MaybeKick();
      std::this_thread::yield();
      continue;
    }
    if (fresh == nullptr) {
      auto evicted = evictor_.EvictOne(t.endpoint());
      if (!evicted.ok()) return evicted.status();
      if (!*evicted) {
        // Every frame is latched. Usually some holder lets go soon; but a
        // transaction that holds more lines than the cache has frames
        // never will, so a no-wait caller (2PL) hears it quickly.
        const absl::Time now = absl::Now();
        if (no_frame_since == absl::InfiniteFuture()) no_frame_since = now;
        if (now > deadline ||
            (lock.no_wait && now - no_frame_since > kNoWaitFrameBound)) {
          return absl::ResourceExhaustedError(absl::StrFormat(
              "every frame of compute node %d's cache is latched; raise "
              "--cache_mb",
              node_));
        }
        std::this_thread::yield();
      }
      continue;
    }
    evictor_.MaybeKick();
    // A thread that waited on this frame before it was freed may still
    // hold it for an instant (it then sees the GCL changed and lets go).
    if (!fresh->latch.LockUntil(deadline)) {
      cache.PutFree(fresh);
      return TimedOut(t, what, gcl, "for a free frame's last user");
    }
    fresh->memo = Memo::kInvalid;
    fresh->ClearDirty();
    fresh->ResetFairness();
    switch (cache.Insert(gcl, fresh)) {
      case Cache::InsertResult::kInserted:
        *exclusive = true;
        return fresh;
      case Cache::InsertResult::kExists:
        fresh->latch.Unlock();
        cache.PutFree(fresh);
        continue;
      case Cache::InsertResult::kInFlight:
        // Our own eviction of this GCL is releasing it: one round trip.
        fresh->latch.Unlock();
        cache.PutFree(fresh);
        if (absl::Now() > deadline) {
          return TimedOut(t, what, gcl, "for this node's eviction of it");
        }
        std::this_thread::yield();
        continue;
    }
  }
}

SelccManager::Frame* SelccManager::TryHit(SelccThread& t,
                                          rdma::GlobalAddress gcl,
                                          Cache::Mode mode, bool* latched) {
  Cache& cache = state_->cache;
  Frame* f = cache.LatchDirect(gcl, mode);
  if (f != nullptr) {
    *latched = true;
    return f;
  }
  return cache.Lookup(gcl, mode, latched);
}

void SelccManager::NoWaitAccess(Frame* f) {
  // Latched without waiting: the line is no longer hot here, so the lease
  // stops counting (5.3.1).
  f->lease_active.store(false, std::memory_order_relaxed);
  f->read_waits.store(0, std::memory_order_relaxed);
  f->write_waits.store(0, std::memory_order_relaxed);
}

absl::StatusOr<ReplySlot::Outcome> SelccManager::Invalidate(
    SelccThread& t, Frame* f, uint64_t targets, Want want, uint32_t priority,
    uint8_t flags) {
  const int nodes = fabric_.compute_node_count();
  absl::InlinedVector<rdma::ComputeNodeId, 4> to;
  for (uint64_t rest = targets; rest != 0; rest &= rest - 1) {
    const int n = std::countr_zero(rest);
    if (n < nodes && n != node_) {
      // A fenced peer answers nothing: as if it had said kOutdated.
      if (!state_->IsFenced(n)) to.push_back(n);
    } else {
      LOG(ERROR) << "latch word of " << f->gcl << " names compute node " << n
                 << ", which does not exist";
    }
  }
  ReplySlot::Outcome outcome;
  if (to.empty()) return outcome;
  selcc::InvalidationRequest request;
  request.gcl = f->gcl.raw();
  request.forward_to = f->peer;
  request.slot = t.slot_index;
  uint64_t asked = 0;
  for (int n : to) asked |= uint64_t{1} << n;
  request.seq = t.slot->Begin(asked);
  request.priority = priority;
  request.want = want;
  request.flags = flags;
  rdma::Message m;
  m.type = selcc::kRequestMessage;
  m.Store(request);
  for (int n : to) selcc::TsanBeforeSend(n);
  // One multicast: the requests to several holders overlap.
  absl::InlinedVector<absl::Status, 4> sent(to.size());
  t.endpoint().Multicast(to, m, absl::MakeSpan(sent));
  bool send_failed = false;
  for (size_t i = 0; i < to.size(); ++i) {
    if (!sent[i].ok()) {
      send_failed = true;  // maybe sent all the same (verbs)
      LOG(ERROR) << "invalidation of " << f->gcl << " to node " << to[i] << ": "
                 << sent[i];
      selcc::InvalidationReply none;
      none.slot = request.slot;
      none.seq = request.seq;
      none.result = selcc::ReplyResult::kOutdated;
      t.slot->Deliver(none, to[i]);
      continue;
    }
    AtomicStats::Bump(t.stats->invalidations_sent);
  }
  // Every reply must be in before the frame may be used for anything else
  // (a late forward would land in it), so this wait ignores lock_timeout.
  const absl::Time hard_deadline =
      absl::Now() + kReplyGrace + 2 * options().testing_faults.message_delay;
  if (!t.slot->Wait(hard_deadline, state_->fenced_peers, &outcome)) {
    return absl::UnavailableError(absl::StrFormat(
        "compute node(s) did not answer an invalidation of %s within %s; "
        "a peer stopped handling messages",
        f->gcl.ToString(), absl::FormatDuration(kReplyGrace)));
  }
  outcome.unanswered |= send_failed;
  return outcome;
}

absl::Status SelccManager::BackOff(SelccThread& t, uint32_t attempt,
                                   absl::Time deadline, const char* what,
                                   rdma::GlobalAddress gcl) {
  AtomicStats::Bump(t.stats->lock_retries);
  if (absl::Now() > deadline) {
    return TimedOut(t, what, gcl,
                    absl::StrFormat("to retry, after %d attempts", attempt));
  }
  // T = C * RTT / N_r (5.1.2), with +-50% jitter so two symmetric
  // requesters (e.g. two upgraders) fall out of step.
  const int64_t base =
      kBackOffRtts * std::max<int64_t>(state_->rtt_ns.load(), 200) / attempt;
  const int64_t wait = base / 2 + static_cast<int64_t>(t.rng() % (base + 1));
  const int64_t start = selcc::SteadyNowNanos();
  const int64_t until = start + wait;
  // Yield rather than spin: the holder we wait for may share our core.
  int64_t now;
  do {
    std::this_thread::yield();
    now = selcc::SteadyNowNanos();
  } while (now < until);
  ThreadLedger::Mine().ChargeBusyWait(now - start);
  return absl::OkStatus();
}

absl::Status SelccManager::WaitUntil(SelccThread& t,
                                     const std::atomic<int64_t>& until_ns,
                                     absl::Time deadline, const char* what,
                                     rdma::GlobalAddress gcl,
                                     absl::string_view waiting) {
  const int64_t until = until_ns.load(std::memory_order_relaxed);
  const int64_t start = selcc::SteadyNowNanos();
  if (start >= until) return absl::OkStatus();
  // Charged even on a timeout: the thread spent it.
  struct Charge {
    int64_t start;
    ~Charge() {
      ThreadLedger::Mine().ChargeBusyWait(selcc::SteadyNowNanos() - start);
    }
  } charge{start};
  while (selcc::SteadyNowNanos() < until) {
    if (absl::Now() > deadline) return TimedOut(t, what, gcl, waiting);
    std::this_thread::yield();
  }
  return absl::OkStatus();
}

absl::Status SelccManager::AcquireShared(SelccThread& t, Frame* f,
                                         LockOptions lock,
                                         absl::Time deadline) {
  const rdma::GlobalAddress gcl = f->gcl;
  if (absl::Status s = WaitUntil(t, f->local_hold_off_until_ns, deadline,
                                 "shared latch", gcl, kStarvedPeersTurn);
      !s.ok()) {
    return s;
  }
  bool invalidated = false;
  for (uint32_t attempt = 1;; ++attempt) {
    if (options().spin_wait) {
      // A starved writer asked this node to step aside (5.3.2).
      if (absl::Status s = WaitUntil(t, f->readers_hold_off_until_ns, deadline,
                                     "shared latch", gcl, kStarvedWritersTurn);
          !s.ok()) {
        return s;
      }
    }
    uint64_t old = 0;
    rdma::Batch b;
    b.FetchAndAdd(gcl, LatchWord::Reader(node_), &old)
        .Read(gcl + 8, f->data, state_->payload_bytes);
    if (absl::Status s = Execute(t, b); !s.ok()) return s;
    const int holder = LatchWord::Holder(old);
    if (holder < 0) {
      f->memo = Memo::kShared;
      if (invalidated) AtomicStats::Bump(t.stats->invalidating_locks);
      return absl::OkStatus();
    }
    const bool handed_to_us = holder == node_;
    // A writer holds it: undo our transient bit BEFORE asking the writer,
    // whose downgrade adds the bit for us (latch_word.h).
    if (auto s = t.endpoint().FetchAndAdd(gcl, LatchWord::ReleaseShared(node_));
        !s.ok()) {
      return s.status();
    }
    if (StealFromFailedPeers(t, gcl, old)) continue;
    if (handed_to_us) {
      // A peer handed us the line while we held no copy (priority
      // handover, docs/design/selcc.md): memory was current before the FAA
      // that named us, so the READ batched with our FAA has the line. M
      // serves reads.
      f->memo = Memo::kModified;
      f->ClearDirty();
      if (invalidated) AtomicStats::Bump(t.stats->invalidating_locks);
      return absl::OkStatus();
    }
    {
      const uint8_t flags =
          selcc::kRequestToHolder | (lock.no_wait ? selcc::kRequestNoWait : 0);
      auto outcome = Invalidate(t, f, LatchWord::Reader(holder), Want::kShared,
                                attempt, flags);
      if (!outcome.ok()) return outcome.status();
      invalidated = true;
      bool granted = outcome->granted_shared;
      if (!granted && outcome->unanswered) {
        auto kept = HasShare(t, f);
        if (!kept.ok()) return kept.status();
        granted = *kept;
      }
      if (granted) {
        f->memo = Memo::kShared;
        AtomicStats::Bump(t.stats->invalidating_locks);
        return absl::OkStatus();
      }
      if (lock.no_wait && (outcome->busy ||
                           attempt >= static_cast<uint32_t>(kNoWaitAttempts))) {
        return Aborted(t, "shared latch", gcl);
      }
      if (outcome->released) {
        AtomicStats::Bump(t.stats->lock_retries);
        continue;  // the holder let go: retry at once
      }
    }
    if (absl::Status s = BackOff(t, attempt, deadline, "shared latch", gcl);
        !s.ok()) {
      return s;
    }
  }
}

absl::StatusOr<bool> SelccManager::HasShare(SelccThread& t, Frame* f) {
  // Only a holder's downgrade for us adds our bit while we hold no share
  // (the frame is latched exclusively here), and it flushed the line in
  // the FAA's batch: memory has the line, and our bit keeps writers out.
  uint64_t word = 0;
  rdma::Batch b;
  b.Read(f->gcl, &word, 8).Read(f->gcl + 8, f->data, state_->payload_bytes);
  if (absl::Status s = Execute(t, b); !s.ok()) return s;
  return (LatchWord::Readers(word) & LatchWord::Reader(node_)) != 0;
}

absl::Status SelccManager::AcquireExclusive(SelccThread& t, Frame* f,
                                            LockOptions lock,
                                            absl::Time deadline) {
  const rdma::GlobalAddress gcl = f->gcl;
  if (absl::Status s = WaitUntil(t, f->local_hold_off_until_ns, deadline,
                                 "exclusive latch", gcl, kStarvedPeersTurn);
      !s.ok()) {
    return s;
  }
  bool invalidated = false;
  uint32_t upgrade_failures = 0;
  for (uint32_t attempt = 1;; ++attempt) {
    uint64_t old = 0;
    bool won = false;
    if (f->memo == Memo::kShared) {
      if (upgrade_failures >= static_cast<uint32_t>(kUpgradeAttempts)) {
        // Two upgraders would wait for each other forever: give the share
        // back and take the latch from scratch (4.3.2).
        auto s = t.endpoint().FetchAndAdd(gcl, LatchWord::ReleaseShared(node_));
        if (!s.ok()) return s.status();
        f->memo = Memo::kInvalid;
        continue;
      }
      rdma::Batch b;
      b.CompareAndSwap(gcl, LatchWord::Reader(node_),
                       LatchWord::Exclusive(node_), &old);
      if (absl::Status s = Execute(t, b); !s.ok()) return s;
      won = old == LatchWord::Reader(node_);
      if (!won) ++upgrade_failures;
    } else {
      rdma::Batch b;
      b.CompareAndSwap(gcl, 0, LatchWord::Exclusive(node_), &old)
          .Read(gcl + 8, f->data, state_->payload_bytes);
      if (absl::Status s = Execute(t, b); !s.ok()) return s;
      // Or a peer handed us the line while we retried (priority handover,
      // docs/design/selcc.md): the READ after the CAS has the current line.
      won = old == 0 || LatchWord::Holder(old) == node_;
    }
    if (won) {
      f->memo = Memo::kModified;
      f->ClearDirty();
      if (invalidated) AtomicStats::Bump(t.stats->invalidating_locks);
      return absl::OkStatus();
    }
    if (StealFromFailedPeers(t, gcl, old)) continue;
    const int holder = LatchWord::Holder(old);
    // An exclusive holder is asked alone (case 1); readers only matter once
    // it is gone (their transient bits vanish by themselves).
    const uint64_t targets =
        holder >= 0 ? (holder == node_ ? 0 : LatchWord::Reader(holder))
                    : LatchWord::Readers(old) & ~LatchWord::Reader(node_);
    if (targets != 0) {
      const uint8_t flags = (holder >= 0 ? selcc::kRequestToHolder : 0) |
                            (lock.no_wait ? selcc::kRequestNoWait : 0);
      auto outcome =
          Invalidate(t, f, targets, Want::kExclusive, attempt, flags);
      if (!outcome.ok()) return outcome.status();
      invalidated = true;
      if (outcome->granted_exclusive) {
        f->memo = Memo::kModified;
        f->dirty_begin = outcome->dirty_begin;
        f->dirty_end = outcome->dirty_end;
        AtomicStats::Bump(t.stats->invalidating_locks);
        return absl::OkStatus();
      }
      if (lock.no_wait && (outcome->busy ||
                           attempt >= static_cast<uint32_t>(kNoWaitAttempts))) {
        return Aborted(t, "exclusive latch", gcl);
      }
      if (outcome->released && !outcome->busy) {
        AtomicStats::Bump(t.stats->lock_retries);
        continue;
      }
    } else if (lock.no_wait &&
               attempt >= static_cast<uint32_t>(kNoWaitAttempts)) {
      return Aborted(t, "exclusive latch", gcl);
    }
    if (absl::Status s = BackOff(t, attempt, deadline, "exclusive latch", gcl);
        !s.ok()) {
      return s;
    }
  }
}

absl::StatusOr<SharedGuard> SelccManager::SLock(ThreadContext& ctx,
                                                rdma::GlobalAddress gcl,
                                                LockOptions lock) {
  SelccThread* own = OwnThread(ctx);
  if (own == nullptr) return WrongContext(ctx);
  SelccThread& t = *own;
  // Hit: the shared latch on the frame the frame table names for the GCL
  // (no shard lock), else taken under the shard lock; memo S or M.
  bool latched = false;
  Frame* f = TryHit(t, gcl, Cache::Mode::kShared, &latched);
  if (f != nullptr && latched && f->memo != Memo::kInvalid) {
    if (f->lease_active.load(std::memory_order_relaxed)) NoWaitAccess(f);
    AtomicStats::Bump(t.stats->shared_locks);
    AtomicStats::Bump(t.stats->hits);
    return SharedGuard(this, &ctx, LatchHandle{gcl, f->data, f});
  }
  if (f != nullptr) {
    latched ? f->latch.UnlockShared() : Cache::Unpin(f);
  }
  const absl::Time deadline = absl::Now() + options().lock_timeout;
  bool exclusive = false;
  auto frame =
      LatchFrame(t, gcl, Cache::Mode::kShared, lock, deadline, &exclusive);
  if (!frame.ok()) return frame.status();
  f = *frame;
  bool remote = false;
  if (!exclusive && f->memo == Memo::kInvalid) {
    // Only an exclusive local latch may change the memo.
    f->latch.UnlockShared();
    frame =
        LatchFrame(t, gcl, Cache::Mode::kExclusive, lock, deadline, &exclusive);
    if (!frame.ok()) return frame.status();
    f = *frame;
  }
  if (exclusive) {
    if (f->memo == Memo::kInvalid) {
      if (absl::Status s = AcquireShared(t, f, lock, deadline); !s.ok()) {
        f->latch.Unlock();
        return s;
      }
      remote = true;
    }
    f->latch.Downgrade();
  }
  AtomicStats::Bump(t.stats->shared_locks);
  if (!remote) AtomicStats::Bump(t.stats->hits);
  return SharedGuard(this, &ctx, LatchHandle{gcl, f->data, f});
}

absl::StatusOr<ExclusiveGuard> SelccManager::XLock(ThreadContext& ctx,
                                                   rdma::GlobalAddress gcl,
                                                   LockOptions lock) {
  SelccThread* own = OwnThread(ctx);
  if (own == nullptr) return WrongContext(ctx);
  SelccThread& t = *own;
  const uint32_t payload = state_->payload_bytes;
  bool latched = false;
  Frame* f = TryHit(t, gcl, Cache::Mode::kExclusive, &latched);
  if (f != nullptr && latched && f->memo == Memo::kModified) {
    if (f->lease_active.load(std::memory_order_relaxed)) NoWaitAccess(f);
    AtomicStats::Bump(t.stats->exclusive_locks);
    AtomicStats::Bump(t.stats->hits);
    return ExclusiveGuard(this, &ctx, LatchHandle{gcl, f->data, f}, payload);
  }
  if (f != nullptr) {
    latched ? f->latch.Unlock() : Cache::Unpin(f);
  }
  const absl::Time deadline = absl::Now() + options().lock_timeout;
  bool exclusive = false;
  auto frame =
      LatchFrame(t, gcl, Cache::Mode::kExclusive, lock, deadline, &exclusive);
  if (!frame.ok()) return frame.status();
  f = *frame;
  if (f->memo == Memo::kModified) {
    AtomicStats::Bump(t.stats->hits);
  } else {
    const bool upgrade = f->memo == Memo::kShared;
    if (absl::Status s = AcquireExclusive(t, f, lock, deadline); !s.ok()) {
      f->latch.Unlock();
      return s;
    }
    if (upgrade) AtomicStats::Bump(t.stats->upgrades);
  }
  AtomicStats::Bump(t.stats->exclusive_locks);
  return ExclusiveGuard(this, &ctx, LatchHandle{gcl, f->data, f}, payload);
}

absl::StatusOr<ExclusiveGuard> SelccManager::Upgrade(ThreadContext& ctx,
                                                     SharedGuard& guard,
                                                     LockOptions lock) {
  if (!guard.owns_lock()) {
    return absl::FailedPreconditionError("upgrade of a guard without a latch");
  }
  SelccThread* own = OwnThread(ctx);
  if (own == nullptr) return WrongContext(ctx);
  SelccThread& t = *own;
  const LatchHandle handle = TakeHandle(guard);
  auto* f = static_cast<Frame*>(handle.frame);
  if (f->latch.TryUpgrade()) {
    // Still the same copy: the memo is S or M, as under the shared latch.
    if (f->memo != Memo::kModified) {
      const absl::Time deadline = absl::Now() + options().lock_timeout;
      if (absl::Status s = AcquireExclusive(t, f, lock, deadline); !s.ok()) {
        f->latch.Unlock();
        return s;
      }
    } else {
      AtomicStats::Bump(t.stats->hits);
    }
    AtomicStats::Bump(t.stats->upgrades);
    AtomicStats::Bump(t.stats->exclusive_locks);
    return ExclusiveGuard(this, &ctx, handle, state_->payload_bytes);
  }
  // Other local readers hold the line: let go, then lock afresh.
  if (absl::Status s = UnlockShared(ctx, handle); !s.ok()) return s;
  if (lock.no_wait) return Aborted(t, "upgrade", handle.gcl);
  auto x = XLock(ctx, handle.gcl, lock);
  if (x.ok()) AtomicStats::Bump(t.stats->upgrades);
  return x;
}

bool SelccManager::LeaseExpired(const Frame& f) const {
  const int64_t gamma = options().lease_gamma;
  if (gamma == CcOptions::kInfiniteLease) return false;
  if (f.starved_priority.load(std::memory_order_relaxed) >=
      selcc::kLeaseBreakPriority) {
    return true;  // a peer has retried long enough: it goes first
  }
  if (!f.lease_active.load(std::memory_order_relaxed)) return false;
  const int64_t p = std::max(1, state_->worker_threads.load());
  const int64_t a = f.read_waits.load(std::memory_order_relaxed) / p +
                    f.write_waits.load(std::memory_order_relaxed);
  return a >= gamma;
}

absl::Status SelccManager::ReleaseGlobal(SelccThread& t, Frame* f) {
  if (f->starved_priority.load(std::memory_order_relaxed) >=
      selcc::kLeaseBreakPriority) {
    // Keep our own threads off the latch long enough for the starved
    // peer's next retry (its back-off is below C * RTT / 16).
    const int64_t window = std::clamp<int64_t>(16 * state_->rtt_ns.load(),
                                               50'000, selcc::kMaxHoldOffNanos);
    f->local_hold_off_until_ns.store(selcc::SteadyNowNanos() + window);
  }
  // Priority handover (5.3.2, invalidation.h): the most urgent writer we
  // dropped gets the line instead of whoever retries first.
  const selcc::HandoverMemo memo = selcc::HandoverMemo::Unpack(
      f->handover_memo.exchange(0, std::memory_order_relaxed));
  rdma::Batch b;
  if (options().priority_matching && f->memo == Memo::kModified &&
      memo.node >= 0 && memo.node != node_ && memo.exclusive &&
      !state_->IsFenced(memo.node)) {
    state_->AppendHandover(*f, memo.node, b, *t.stats, false);
  } else {
    state_->AppendRelease(*f, f->data, b, *t.stats, false);
  }
  absl::Status s = Execute(t, b);
  f->memo = Memo::kInvalid;
  f->ClearDirty();
  f->ResetFairness();
  return s;
}

absl::Status SelccManager::UnlockShared(ThreadContext& ctx,
                                        const LatchHandle& handle) {
  auto* f = static_cast<Frame*>(handle.frame);
  if (!LeaseExpired(*f)) {
    f->latch.UnlockShared();
    return absl::OkStatus();
  }
  // The lease ran out: hand the line to the peers that keep asking, if no
  // other local thread is using it right now.
  f->latch.UnlockShared();
  if (!f->latch.TryLock()) return absl::OkStatus();
  absl::Status s;
  if (f->gcl == handle.gcl && f->memo != Memo::kInvalid && LeaseExpired(*f)) {
    s = ReleaseGlobal(static_cast<SelccThread&>(ctx), f);
  }
  f->latch.Unlock();
  return s;
}

absl::Status SelccManager::UnlockExclusive(ThreadContext& ctx,
                                           const LatchHandle& handle,
                                           uint32_t dirty_begin,
                                           uint32_t dirty_end) {
  auto* f = static_cast<Frame*>(handle.frame);
  f->AddDirty(dirty_begin, dirty_end);
  absl::Status s;
  if (state_->options.write_through && f->dirty()) {
    s = WriteThrough(static_cast<SelccThread&>(ctx), f);
  }
  if (s.ok() && LeaseExpired(*f)) {
    s = ReleaseGlobal(static_cast<SelccThread&>(ctx), f);
  }
  f->latch.Unlock();
  return s;
}

absl::Status SelccManager::WriteThrough(SelccThread& t, Frame* f) {
  rdma::Batch b;
  state_->AppendFlush(*f, f->data, b, *t.stats, false);
  if (absl::Status s = Execute(t, b); !s.ok()) return s;
  f->ClearDirty();
  return absl::OkStatus();
}

void SelccManager::SetPeerStates(uint64_t fenced, uint64_t stealable) {
  // This node itself fenced (it paused past its lease): a peer's answer to
  // it is lost at the fabric, so a wait for one would last kReplyGrace.
  // Every peer counts as fenced from now on, for good: this incarnation
  // never comes back (a rejoin makes a new manager), and what its threads
  // do next fails at the fabric.
  const uint64_t self = uint64_t{1} << node_;
  if (((fenced | state_->fenced_peers.load(std::memory_order_relaxed)) &
       self) != 0) {
    fenced = ~uint64_t{0};
  }
  const uint64_t was_fenced =
      state_->fenced_peers.exchange(fenced, std::memory_order_seq_cst);
  // The fabric fenced them before this was published: a request sent from
  // now on fails at once. Those sent before wait for them no more, even if
  // they are readmitted before the waiter's next look.
  if (const uint64_t newly = fenced & ~was_fenced; newly != 0) {
    slots_.Forget(newly);
  }
  const uint64_t before =
      state_->stealable_peers.exchange(stealable, std::memory_order_seq_cst);
  if ((before & ~stealable) == 0) return;
  // Dekker with StealFromFailedPeers: a stealer either counted itself
  // before the exchange (waited for here) or reads the narrower mask.
  while (state_->stealers.load(std::memory_order_seq_cst) > 0) {
    std::this_thread::yield();
  }
}

bool SelccManager::StealFromFailedPeers(SelccThread& t, rdma::GlobalAddress gcl,
                                        uint64_t word) {
  if (state_->stealable_peers.load(std::memory_order_relaxed) == 0) {
    return false;
  }
  state_->stealers.fetch_add(1, std::memory_order_seq_cst);
  const uint64_t mask = state_->stealable_peers.load(std::memory_order_seq_cst);
  uint64_t remove = LatchWord::Readers(word) & mask;
  const int holder = LatchWord::Holder(word);
  if (holder >= 0 && ((mask >> holder) & 1) != 0) {
    remove += LatchWord::Exclusive(holder);
  }
  if (remove != 0) {
    // A failed node's share never comes back, and memory holds its
    // finished writes (write-through; its unfinished commits were
    // completed before it became stealable). A lost race means the word
    // changed: the caller looks again either way.
    auto old = t.endpoint().CompareAndSwap(gcl, word, word - remove);
    if (old.ok() && *old == word)
      AtomicStats::Bump(t.stats->failed_peer_steals);
  }
  state_->stealers.fetch_sub(1, std::memory_order_release);
  return remove != 0;
}

std::optional<GclManager::DirtyRange> SelccManager::DirtyBytes(
    const ExclusiveGuard& guard) const {
  const auto* f = static_cast<const Frame*>(HandleOf(guard).frame);
  auto [begin, end] = GuardDirty(guard);
  if (f->dirty()) {
    begin = begin == end ? f->dirty_begin : std::min(begin, f->dirty_begin);
    end = std::max(end, f->dirty_end);
  }
  if (begin == end) return std::nullopt;
  if (!state_->options.dirty_bounds) {
    begin = 0;
    end = state_->payload_bytes;
  }
  return DirtyRange{f->gcl + 8 + begin, f->data + begin, end - begin};
}

void SelccManager::MarkWrittenThrough(ExclusiveGuard& guard) {
  static_cast<Frame*>(HandleOf(guard).frame)->ClearDirty();
  ClearGuardDirty(guard);
}

OptimisticToken SelccManager::OptimisticRead(ThreadContext& ctx,
                                             rdma::GlobalAddress gcl) {
  SelccThread* own = OwnThread(ctx);
  if (own == nullptr) return OptimisticToken();
  SelccThread& t = *own;
  Frame* f = state_->cache.FrameHint(gcl);
  std::optional<uint64_t> begin;
  if (f != nullptr) begin = f->latch.OptimisticBegin();
  if (!begin) {
    AtomicStats::Bump(t.stats->optimistic_refusals);
    return OptimisticToken();
  }
  // gcl, in_map and memo change only under the exclusive latch (frame.h),
  // which moves the version `begin` holds: read here without the latch,
  // they are covered by the caller's Validate like the payload, so a token
  // for a frame that was freed, reused for another GCL or invalidated
  // since `begin` never validates. (The frame table may name a frame that
  // now caches another GCL, stably: the gcl check is what refuses it.)
  const auto gcl_raw =
      cc::LoadRelaxed<uint64_t>(reinterpret_cast<const uint8_t*>(&f->gcl));
  const auto in_map =
      cc::LoadRelaxed<bool>(reinterpret_cast<const uint8_t*>(&f->in_map));
  const auto memo =
      cc::LoadRelaxed<Memo>(reinterpret_cast<const uint8_t*>(&f->memo));
  if (gcl_raw != gcl.raw() || !in_map || memo == Memo::kInvalid) {
    AtomicStats::Bump(t.stats->optimistic_refusals);
    return OptimisticToken();
  }
  f->MarkReferenced();  // CLOCK: a line read this way is in use
  AtomicStats::Bump(t.stats->optimistic_reads);
  return OptimisticToken(f->data, &f->latch.word(), *begin,
                         selcc::LocalLatch::kValidationMask);
}

void SelccManager::PrefetchEntry(rdma::GlobalAddress gcl) const {
  state_->cache.PrefetchEntry(gcl);
}

void SelccManager::PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                                 uint32_t bytes) const {
  state_->cache.PrefetchLines(gcl, offset, bytes);
}

CacheStats SelccManager::Stats() const {
  CacheStats s;
  state_->shared_stats.AddTo(s);
  std::lock_guard<std::mutex> lock(state_->stats_mu);
  for (const auto& t : state_->thread_stats) t->AddTo(s);
  return s;
}

selcc::HandoverMemo SelccManager::DebugHandoverMemo(rdma::GlobalAddress gcl) {
  bool latched = false;
  Frame* f = state_->cache.Lookup(gcl, Cache::Mode::kShared, &latched);
  if (f == nullptr) return {};
  const uint64_t w = f->handover_memo.load();
  latched ? f->latch.UnlockShared() : Cache::Unpin(f);
  return selcc::HandoverMemo::Unpack(w);
}

SelccManager::DebugFrame SelccManager::DebugState(rdma::GlobalAddress gcl) {
  DebugFrame d;
  bool latched = false;
  Frame* f = state_->cache.Lookup(gcl, Cache::Mode::kShared, &latched);
  if (f == nullptr) return d;
  if (!latched) {
    latched = f->latch.LockSharedUntil(absl::Now() + absl::Seconds(5));
    Cache::Unpin(f);
    if (!latched) return d;
  }
  if (f->gcl == gcl && f->in_map) {
    d.cached = true;
    d.memo = f->memo;
    d.dirty_begin = f->dirty_begin;
    d.dirty_end = f->dirty_end;
    d.lease_active = f->lease_active.load();
  }
  f->latch.UnlockShared();
  return d;
}

}  // namespace strand::cc
