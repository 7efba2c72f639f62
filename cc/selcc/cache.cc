#include "cc/selcc/cache.h"

#include <cstdlib>

#include "absl/hash/hash.h"
#include "glog/logging.h"

namespace strand::cc::selcc {

Cache::Cache(uint64_t cache_bytes, uint32_t frame_bytes)
    : frames_count_(cache_bytes / frame_bytes),
      frame_bytes_(frame_bytes),
      frames_(new Frame[cache_bytes / frame_bytes]),
      shards_(new Shard[kShards]) {
  CHECK_GT(frames_count_, 0u);
  const uint64_t arena_bytes =
      (frames_count_ * frame_bytes_ + 4095) / 4096 * 4096;
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(4096, arena_bytes));
  CHECK(arena_ != nullptr) << "cannot allocate a cache of " << arena_bytes
                           << " bytes";
  free_.reserve(frames_count_);
  // Hand out low frames first (push in reverse, pop from the back).
  for (uint64_t i = frames_count_; i-- > 0;) {
    frames_[i].data = arena_ + i * frame_bytes_;
    free_.push_back(&frames_[i]);
  }
  free_count_ = frames_count_;
}

Cache::~Cache() { std::free(arena_); }

absl::Status Cache::Register(rdma::ComputeNode& node) {
  auto region = node.RegisterLocalMemory(arena_, frames_count_ * frame_bytes_);
  if (!region.ok()) return region.status();
  for (uint64_t i = 0; i < frames_count_; ++i) {
    frames_[i].peer = region->At(i * frame_bytes_);
  }
  return absl::OkStatus();
}

Cache::Shard& Cache::ShardOf(rdma::GlobalAddress gcl) {
  return shards_[absl::HashOf(gcl) % kShards];
}

void Cache::LinkHead(Shard& s, Frame* f) {
  f->lru_prev = nullptr;
  f->lru_next = s.lru_head;
  if (s.lru_head != nullptr) s.lru_head->lru_prev = f;
  s.lru_head = f;
  if (s.lru_tail == nullptr) s.lru_tail = f;
}

void Cache::Unlink(Shard& s, Frame* f) {
  if (f->lru_prev != nullptr) {
    f->lru_prev->lru_next = f->lru_next;
  } else {
    s.lru_head = f->lru_next;
  }
  if (f->lru_next != nullptr) {
    f->lru_next->lru_prev = f->lru_prev;
  } else {
    s.lru_tail = f->lru_prev;
  }
  f->lru_prev = f->lru_next = nullptr;
}

Frame* Cache::Lookup(rdma::GlobalAddress gcl, Mode mode, bool* latched) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  auto it = s.map.find(gcl);
  if (it == s.map.end()) return nullptr;
  Frame* f = it->second;
  *latched =
      mode == Mode::kShared ? f->latch.TryLockShared() : f->latch.TryLock();
  if (!*latched) f->pins.fetch_add(1);
  if (s.lru_head != f) {
    Unlink(s, f);
    LinkHead(s, f);
  }
  return f;
}

Frame* Cache::LatchForHandler(rdma::GlobalAddress gcl, uint32_t priority,
                              uint64_t memo, bool* cached) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  auto it = s.map.find(gcl);
  *cached = it != s.map.end();
  if (!*cached) return nullptr;
  Frame* f = it->second;
  if (f->latch.TryLockIdle()) return f;
  f->lease_active.store(true, std::memory_order_relaxed);
  if (f->starved_priority.load(std::memory_order_relaxed) < priority) {
    f->starved_priority.store(priority, std::memory_order_relaxed);
  }
  if (memo != 0) {
    const uint32_t p = HandoverMemo::Unpack(memo).priority;
    uint64_t old = f->handover_memo.load(std::memory_order_relaxed);
    while ((old == 0 || HandoverMemo::Unpack(old).priority < p) &&
           !f->handover_memo.compare_exchange_weak(old, memo,
                                                   std::memory_order_relaxed)) {
    }
  }
  return nullptr;
}

bool Cache::ClaimUncached(rdma::GlobalAddress gcl) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  if (s.map.contains(gcl) || s.in_flight.contains(gcl)) return false;
  s.in_flight.insert(gcl);
  return true;
}

Frame* Cache::TakeFree() {
  std::lock_guard<std::mutex> lock(free_mu_);
  if (free_.empty()) return nullptr;
  Frame* f = free_.back();
  free_.pop_back();
  free_count_.store(free_.size(), std::memory_order_relaxed);
  return f;
}

void Cache::PutFree(Frame* f) {
  DCHECK(!f->in_map);
  std::lock_guard<std::mutex> lock(free_mu_);
  free_.push_back(f);
  free_count_.store(free_.size(), std::memory_order_relaxed);
}

Cache::InsertResult Cache::Insert(rdma::GlobalAddress gcl, Frame* fresh) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  if (s.in_flight.contains(gcl)) return InsertResult::kInFlight;
  auto [it, inserted] = s.map.try_emplace(gcl, fresh);
  if (!inserted) return InsertResult::kExists;
  fresh->gcl = gcl;
  fresh->in_map = true;
  LinkHead(s, fresh);
  return InsertResult::kInserted;
}

void Cache::TakeVictims(size_t n, std::vector<Frame*>* out) {
  // Walk the shards round robin from their LRU tails, a few frames deep
  // each, skipping frames in use; two rounds at most.
  constexpr int kDepth = 8;
  size_t taken = 0;
  for (int visited = 0; visited < 2 * kShards && taken < n; ++visited) {
    Shard& s = shards_[next_victim_shard_.fetch_add(1) % kShards];
    ShardLockGuard lock(&s.mu);
    Frame* f = s.lru_tail;
    for (int d = 0; d < kDepth && f != nullptr && taken < n; ++d) {
      Frame* prev = f->lru_prev;
      if (f->pins.load() == 0 && f->latch.TryLockIdle()) {
        Unlink(s, f);
        s.map.erase(f->gcl);
        f->in_map = false;
        s.in_flight.insert(f->gcl);
        out->push_back(f);
        ++taken;
      }
      f = prev;
    }
  }
}

void Cache::EndInFlight(rdma::GlobalAddress gcl) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  s.in_flight.erase(gcl);
}

bool Cache::InFlight(rdma::GlobalAddress gcl) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  return s.in_flight.contains(gcl);
}

void Cache::Remove(Frame* f) {
  Shard& s = ShardOf(f->gcl);
  ShardLockGuard lock(&s.mu);
  if (!f->in_map) return;
  Unlink(s, f);
  s.map.erase(f->gcl);
  f->in_map = false;
}

void Cache::ForEach(absl::FunctionRef<void(const Frame&)> fn) {
  for (int i = 0; i < kShards; ++i) {
    ShardLockGuard lock(&shards_[i].mu);
    for (const auto& [gcl, f] : shards_[i].map) fn(*f);
  }
}

}  // namespace strand::cc::selcc
