#include "cc/selcc/evictor.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "base/failure_point.h"
#include "glog/logging.h"

namespace strand::cc::selcc {
namespace {

// Forgets what a victim held; the caller then unlatches and frees it.
void ResetVictim(Frame* f) {
  f->memo = Memo::kInvalid;
  f->ClearDirty();
  f->ResetFairness();
  f->readers_hold_off_until_ns.store(0, std::memory_order_relaxed);
  f->local_hold_off_until_ns.store(0, std::memory_order_relaxed);
}

}  // namespace

Evictor::Evictor(NodeState* state, rdma::ComputeNode* node)
    : state_(state),
      node_(node),
      low_watermark_(
          std::clamp<size_t>(state->cache.capacity() / 8, 4, kRingSlots)) {}

absl::Status Evictor::Start() {
  if (!state_->options.batched_eviction) return absl::OkStatus();
  auto endpoint = node_->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  endpoint_ = *std::move(endpoint);
  ring_.resize(kRingSlots * state_->payload_bytes);
  running_ = true;
  thread_ = std::thread(&Evictor::Loop, this);
  return absl::OkStatus();
}

void Evictor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_ = false;
}

void Evictor::MaybeKick() {
  if (!running_.load(std::memory_order_relaxed) ||
      state_->cache.free_frames() >= low_watermark_ ||
      kick_pending_.load(std::memory_order_relaxed)) {
    return;
  }
  kick_pending_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    kicked_ = true;
  }
  wake_.notify_one();
}

void Evictor::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      // The timeout only guards against a missed kick. With the free list
      // at or above the low watermark no kick is due, so the guard is long:
      // a cache that fits its working set then costs no wake-ups at all.
      const auto guard = state_->cache.free_frames() < low_watermark_
                             ? std::chrono::milliseconds(20)
                             : std::chrono::milliseconds(1000);
      wake_.wait_for(lock, guard, [this] { return kicked_ || stop_; });
      if (stop_) return;
      kicked_ = false;
    }
    kick_pending_.store(false, std::memory_order_relaxed);
    while (state_->cache.free_frames() < high_watermark()) {
      auto freed = RunPass();
      if (!freed.ok()) {
        LOG(ERROR) << "compute node " << state_->node
                   << " eviction failed: " << freed.status();
        break;
      }
      if (*freed == 0) break;  // everything is in use; wait for a kick
    }
  }
}

absl::StatusOr<size_t> Evictor::RunPass() {
  NodeState& st = *state_;
  const size_t free = st.cache.free_frames();
  if (free >= high_watermark()) return 0;
  std::vector<Frame*> victims;
  st.cache.TakeVictims(std::min(high_watermark() - free, kRingSlots), &victims);
  if (victims.empty()) return 0;
  // Counted before the frames go back to the free list: a thread that
  // takes one and then reads the counters must find its eviction counted.
  AtomicStats::Add(st.shared_stats.evictions, victims.size());

  // Stage every release, grouped by memory node, and free the frames now.
  absl::flat_hash_map<rdma::MemoryNodeId, rdma::Batch> batches;
  std::vector<rdma::GlobalAddress> released;
  released.reserve(victims.size());
  for (size_t i = 0; i < victims.size(); ++i) {
    Frame* f = victims[i];
    uint8_t* slot = ring_.data() + i * st.payload_bytes;
    if (f->memo == Memo::kModified && f->dirty()) {
      // Only the dirty range is flushed, so only it needs copying.
      std::memcpy(slot + f->dirty_begin, f->data + f->dirty_begin,
                  f->dirty_end - f->dirty_begin);
      if (!st.options.dirty_bounds) {
        std::memcpy(slot, f->data, st.payload_bytes);
      }
    }
    st.AppendRelease(*f, slot, batches[f->gcl.node()], st.shared_stats,
                     /*shared_stats_block=*/true);
    released.push_back(f->gcl);
    ResetVictim(f);
    f->latch.Unlock();
    st.cache.PutFree(f);
  }
  ReachFailurePoint(st.node, FailurePoint::kEvictionStaged);
  absl::Status status;
  for (auto& [node, batch] : batches) {
    if (absl::Status s = endpoint_->Execute(batch); !s.ok()) status = s;
  }
  for (rdma::GlobalAddress gcl : released) st.cache.EndInFlight(gcl);
  if (!status.ok()) return status;
  return victims.size();
}

absl::StatusOr<bool> Evictor::EvictOne(rdma::Endpoint& endpoint) {
  NodeState& st = *state_;
  std::vector<Frame*> victims;
  st.cache.TakeVictims(1, &victims);
  if (victims.empty()) return false;
  Frame* f = victims[0];
  const rdma::GlobalAddress gcl = f->gcl;
  rdma::Batch b;
  st.AppendRelease(*f, f->data, b, st.shared_stats,
                   /*shared_stats_block=*/true);
  ReachFailurePoint(st.node, FailurePoint::kEvictionStaged);
  absl::Status s = endpoint.Execute(b);
  ResetVictim(f);
  f->latch.Unlock();
  st.cache.PutFree(f);
  st.cache.EndInFlight(gcl);
  AtomicStats::Add(st.shared_stats.evictions);
  if (!s.ok()) return s;
  return true;
}

}  // namespace strand::cc::selcc
