#include "cc/selcc/invalidation.h"

#include <algorithm>

#include "absl/time/clock.h"
#include "base/failure_point.h"
#include "glog/logging.h"

namespace strand::cc::selcc {

uint32_t ReplySlot::Begin(uint64_t nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++seq_;
  pending_ = nodes;
  outcome_ = Outcome();
  return seq_;
}

void ReplySlot::Deliver(const InvalidationReply& reply,
                        rdma::ComputeNodeId from) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t bit = uint64_t{1} << from;
  if (reply.seq != seq_ || (pending_ & bit) == 0) {
    // Only a requester that gave up waiting (a peer stopped answering for
    // longer than the hard bound) leaves replies behind.
    LOG(WARNING) << "stale invalidation reply for "
                 << rdma::GlobalAddress::FromRaw(reply.gcl) << " (result "
                 << static_cast<int>(reply.result) << ") discarded";
    return;
  }
  switch (reply.result) {
    case ReplyResult::kGrantedShared:
      outcome_.granted_shared = true;
      break;
    case ReplyResult::kGrantedExclusive:
      outcome_.granted_exclusive = true;
      outcome_.dirty_begin = reply.dirty_begin;
      outcome_.dirty_end = reply.dirty_end;
      break;
    case ReplyResult::kReleased:
      outcome_.released = true;
      break;
    case ReplyResult::kBusy:
      outcome_.busy = true;
      break;
    case ReplyResult::kOutdated:
      break;
  }
  pending_ &= ~bit;
  if (pending_ == 0) done_.notify_all();
}

bool ReplySlot::Wait(absl::Time deadline, const std::atomic<uint64_t>& fenced,
                     Outcome* outcome) {
  // A fenced node is noticed within this slice (the monitor that fences
  // it does not know this slot).
  constexpr absl::Duration kSlice = absl::Milliseconds(5);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const absl::Time until = std::min(deadline, absl::Now() + kSlice);
    if (done_.wait_until(lock, absl::ToChronoTime(until),
                         [this] { return pending_ == 0; })) {
      break;
    }
    if ((pending_ & ~fenced.load(std::memory_order_acquire)) == 0) {
      pending_ = 0;  // their replies, if any, are stale now
      outcome_.unanswered = true;
      break;
    }
    if (absl::Now() >= deadline) return false;
  }
  *outcome = outcome_;
  return true;
}

void ReplySlot::Forget(uint64_t nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  if ((pending_ & nodes) == 0) return;
  pending_ &= ~nodes;  // their replies, if any, are stale now
  outcome_.unanswered = true;
  if (pending_ == 0) done_.notify_all();
}

void ReplySlots::Forget(uint64_t nodes) {
  for (uint32_t i = 0; i < kMaxSlots; ++i) slots_[i].Forget(nodes);
}

ReplySlots::ReplySlots() : slots_(new ReplySlot[kMaxSlots]) {
  for (int i = kMaxSlots; i-- > 0;) free_.push_back(i);
}

int ReplySlots::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.empty()) return -1;
  int i = free_.back();
  free_.pop_back();
  return i;
}

void ReplySlots::Release(int index) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(index);
}

bool InvalidationHandler::InjectDrop() {
  const double p = state_->options.testing_faults.drop_probability;
  if (p <= 0) return false;
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
}

void InvalidationHandler::Handle(const rdma::Message& message,
                                 rdma::Endpoint& endpoint) {
  TsanAfterReceive(state_->node);
  if (message.type == kReplyMessage) {
    const auto reply = message.Load<InvalidationReply>();
    if (ReplySlot* slot = slots_->Get(reply.slot); slot != nullptr) {
      slot->Deliver(reply, message.source);
    }
    return;
  }
  if (message.type != kRequestMessage) {
    LOG(ERROR) << "compute node " << state_->node
               << " got a message of unknown type " << message.type
               << " from node " << message.source;
    return;
  }
  Serve(message.Load<InvalidationRequest>(), message.source, endpoint);
}

void InvalidationHandler::Serve(const InvalidationRequest& request,
                                rdma::ComputeNodeId from,
                                rdma::Endpoint& endpoint) {
  AtomicStats& stats = state_->shared_stats;
  AtomicStats::Add(stats.invalidations_received);
  if (state_->options.testing_faults.message_delay > absl::ZeroDuration()) {
    absl::SleepFor(state_->options.testing_faults.message_delay);
  }
  InvalidationReply reply;
  reply.gcl = request.gcl;
  reply.slot = request.slot;
  reply.seq = request.seq;
  const rdma::GlobalAddress gcl = rdma::GlobalAddress::FromRaw(request.gcl);
  const bool handover = state_->options.priority_matching;
  const bool to_holder = (request.flags & kRequestToHolder) != 0;
  const uint64_t memo =
      handover && to_holder && request.want == Want::kExclusive &&
              (request.flags & kRequestNoWait) == 0 && from != state_->node
          ? HandoverMemo::Pack(from, request.priority, /*exclusive=*/true)
          : 0;
  bool cached = false;
  Frame* f =
      state_->cache.LatchForHandler(gcl, request.priority, memo, &cached);
  if (f == nullptr) {
    reply.result = cached ? ReplyResult::kBusy : ReplyResult::kOutdated;
    if (!cached && handover && to_holder && state_->cache.ClaimUncached(gcl)) {
      reply.result = ReleaseOrphan(gcl, endpoint);
      state_->cache.EndInFlight(gcl);
    }
  } else if (InjectDrop()) {
    f->latch.Unlock();
    reply.result = ReplyResult::kBusy;
  } else {
    ReachFailurePoint(state_->node, FailurePoint::kInvalidationLatched);
    reply.result = Act(f, request, from, endpoint, &reply);
    f->latch.Unlock();
    ReachFailurePoint(state_->node, FailurePoint::kInvalidationServed);
  }
  if (reply.result == ReplyResult::kBusy) {
    AtomicStats::Add(stats.invalidations_dropped);
  }
  Answer(endpoint, from, reply);
}

ReplyResult InvalidationHandler::Act(Frame* f,
                                     const InvalidationRequest& request,
                                     rdma::ComputeNodeId from,
                                     rdma::Endpoint& endpoint,
                                     InvalidationReply* reply) {
  NodeState& st = *state_;
  AtomicStats& stats = st.shared_stats;
  const int me = st.node;
  auto fail = [&](const absl::Status& s) {
    // The fabric failed under us; the latch word may be half-updated.
    LOG(ERROR) << "compute node " << me << " serving " << f->gcl << " for node "
               << from << ": " << s;
    return ReplyResult::kOutdated;
  };
  auto release = [&]() -> ReplyResult {
    rdma::Batch b;
    st.AppendRelease(*f, f->data, b, stats, /*shared_stats_block=*/true);
    if (absl::Status s = endpoint.Execute(b); !s.ok()) return fail(s);
    f->memo = Memo::kInvalid;
    f->ClearDirty();
    f->ResetFairness();
    return ReplyResult::kReleased;
  };

  if (f->memo == Memo::kModified && st.options.priority_matching) {
    // Priority handover (invalidation.h): a more urgent writer was dropped
    // earlier; it gets the line, and this requester asks it next.
    const HandoverMemo memo =
        HandoverMemo::Unpack(f->handover_memo.load(std::memory_order_relaxed));
    if (memo.node >= 0 && memo.node != me && memo.node != from &&
        memo.priority > request.priority && !st.IsFenced(memo.node)) {
      rdma::Batch b;
      st.AppendHandover(*f, memo.node, b, stats, /*shared_stats_block=*/true);
      if (absl::Status s = endpoint.Execute(b); !s.ok()) return fail(s);
      f->memo = Memo::kInvalid;
      f->ClearDirty();
      f->ResetFairness();
      return ReplyResult::kReleased;
    }
  }
  if (f->memo == Memo::kModified && request.want == Want::kExclusive) {
    // Case 1: hand the line and its dirty range over; nothing is flushed.
    if (!st.options.gcl_forwarding) return release();
    // Posted, not waited for: it lands before the reply sent below is
    // handled (rdma/fabric.h), so the FAA's round trip covers it.
    if (absl::Status s = endpoint.PostWriteToPeer(request.forward_to, f->data,
                                                  st.payload_bytes);
        !s.ok()) {
      return fail(s);
    }
    if (auto s = endpoint.FetchAndAdd(f->gcl, LatchWord::Handover(me, from));
        !s.ok()) {
      return fail(s.status());
    }
    reply->dirty_begin = f->dirty_begin;
    reply->dirty_end = f->dirty_end;
    f->memo = Memo::kInvalid;
    f->ClearDirty();
    f->ResetFairness();
    AtomicStats::Add(stats.forwards);
    return ReplyResult::kGrantedExclusive;
  }
  if (f->memo == Memo::kModified && request.want == Want::kShared) {
    // Case 2: downgrade both to shared, flushing in the same round trip.
    if (!st.options.gcl_forwarding) return release();
    rdma::Batch b;
    uint32_t begin = f->dirty_begin, end = f->dirty_end;
    if (begin != end && !st.options.dirty_bounds) {
      begin = 0;
      end = st.payload_bytes;
    }
    if (begin != end) {
      b.Write(f->gcl + 8 + begin, f->data + begin, end - begin);
      AtomicStats::Add(stats.flushes);
      AtomicStats::Add(stats.flushed_bytes, end - begin);
    }
    b.FetchAndAdd(f->gcl, LatchWord::Downgrade(me, from), nullptr);
    // The forward is posted first, so the flush's round trip covers it.
    if (absl::Status s = endpoint.PostWriteToPeer(request.forward_to, f->data,
                                                  st.payload_bytes);
        !s.ok()) {
      return fail(s);
    }
    if (absl::Status s = endpoint.Execute(b); !s.ok()) return fail(s);
    f->memo = Memo::kShared;
    f->ClearDirty();
    f->handover_memo.store(0, std::memory_order_relaxed);
    AtomicStats::Add(stats.forwards);
    return ReplyResult::kGrantedShared;
  }
  if (f->memo == Memo::kShared && request.want == Want::kExclusive) {
    // Case 3: give our share back; the writer retries its CAS.
    if (st.options.spin_wait && request.priority >= kStarvedPriority) {
      const int64_t hold_off =
          std::min(int64_t{request.priority} * 4 * st.rtt_ns.load() + 1000,
                   kMaxHoldOffNanos);
      f->readers_hold_off_until_ns.store(SteadyNowNanos() + hold_off);
    }
    return release();
  }
  if (f->memo == Memo::kInvalid && st.options.priority_matching &&
      (request.flags & kRequestToHolder) != 0) {
    // We hold the latch, so no local thread is acquiring the line.
    return ReleaseOrphan(f->gcl, endpoint);
  }
  return ReplyResult::kOutdated;
}

ReplyResult InvalidationHandler::ReleaseOrphan(rdma::GlobalAddress gcl,
                                               rdma::Endpoint& endpoint) {
  const int me = state_->node;
  uint64_t word = 0;
  if (absl::Status s = endpoint.Read(gcl, &word, 8); !s.ok()) {
    LOG(ERROR) << "compute node " << me << " reading " << gcl << ": " << s;
    return ReplyResult::kOutdated;
  }
  if (LatchWord::Holder(word) != me) return ReplyResult::kOutdated;
  // Only this node changes its holder field, so it still names us.
  if (auto s = endpoint.FetchAndAdd(gcl, LatchWord::ReleaseExclusive(me));
      !s.ok()) {
    LOG(ERROR) << "compute node " << me << " releasing " << gcl << ": "
               << s.status();
    return ReplyResult::kOutdated;
  }
  return ReplyResult::kReleased;
}

void InvalidationHandler::Answer(rdma::Endpoint& endpoint,
                                 rdma::ComputeNodeId to,
                                 InvalidationReply reply) {
  rdma::Message m;
  m.type = kReplyMessage;
  m.Store(reply);
  TsanBeforeSend(to);
  if (absl::Status s = endpoint.Send(to, m); !s.ok()) {
    LOG(ERROR) << "compute node " << state_->node << " cannot answer node "
               << to << ": " << s;
  }
}

}  // namespace strand::cc::selcc
