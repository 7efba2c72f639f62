#include "cc/selcc/cache.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

namespace strand::cc::selcc {

Cache::Cache(uint64_t cache_bytes, uint32_t frame_bytes,
             const FrameTable::Geometry& pool, bool identity_frames)
    : frames_count_(cache_bytes / frame_bytes),
      frame_bytes_(frame_bytes),
      identity_frames_(identity_frames),
      // Both on huge pages: transactions touch random frames and their
      // payloads all over them, and with 4 KiB pages nearly every such
      // access also missed the TLB (a page walk on top of the cache miss).
      arena_memory_(frames_count_ * frame_bytes_),
      frame_memory_(frames_count_ * sizeof(Frame)),
      arena_(arena_memory_.data()),
      frames_(reinterpret_cast<Frame*>(frame_memory_.data())),
      shards_(new Shard[kShards]),
      table_(pool) {
  CHECK_GT(frames_count_, 0u);
  std::uninitialized_default_construct_n(frames_, frames_count_);
  free_.reserve(frames_count_);
  // Hand out low frames first (push in reverse, pop from the back).
  for (uint64_t i = frames_count_; i-- > 0;) {
    frames_[i].data = arena_ + i * frame_bytes_;
    frames_[i].free_at = free_.size();
    free_.push_back(&frames_[i]);
  }
  free_count_ = frames_count_;
}

Cache::~Cache() {
  if (registered_with_ != nullptr) {
    // A failed node's cache goes while its node stays (the rejoin makes a
    // new one): no peer may write into the freed arena.
    if (absl::Status s = registered_with_->UnregisterLocalMemory(arena_);
        !s.ok()) {
      LOG(ERROR) << "cache of compute node " << registered_with_->id() << ": "
                 << s;
    }
  }
  std::destroy_n(frames_, frames_count_);
}

absl::Status Cache::Register(rdma::ComputeNode& node) {
  auto region = node.RegisterLocalMemory(arena_, frames_count_ * frame_bytes_);
  if (!region.ok()) return region.status();
  registered_with_ = &node;
  for (uint64_t i = 0; i < frames_count_; ++i) {
    frames_[i].peer = region->At(i * frame_bytes_);
  }
  return absl::OkStatus();
}

Cache::Shard& Cache::ShardOf(rdma::GlobalAddress gcl) {
  return shards_[absl::HashOf(gcl) % kShards];
}

void Cache::LinkHead(Shard& s, Frame* f) {
  f->clock_prev = nullptr;
  f->clock_next = s.clock_head;
  if (s.clock_head != nullptr) s.clock_head->clock_prev = f;
  s.clock_head = f;
  if (s.clock_tail == nullptr) s.clock_tail = f;
}

void Cache::Unlink(Shard& s, Frame* f) {
  if (f->clock_prev != nullptr) {
    f->clock_prev->clock_next = f->clock_next;
  } else {
    s.clock_head = f->clock_next;
  }
  if (f->clock_next != nullptr) {
    f->clock_next->clock_prev = f->clock_prev;
  } else {
    s.clock_tail = f->clock_prev;
  }
  f->clock_prev = f->clock_next = nullptr;
}

Frame* Cache::Lookup(rdma::GlobalAddress gcl, Mode mode, bool* latched) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  auto it = s.map.find(gcl);
  if (it == s.map.end()) return nullptr;
  Frame* f = it->second;
  PrefetchData(f);
  // Re-publish: the slot may name another GCL's frame (off the grid,
  // frame_table.h); the next hit then skips the shard lock again.
  table_.Set(gcl, f);
  *latched =
      mode == Mode::kShared ? f->latch.TryLockShared() : f->latch.TryLock();
  if (!*latched) f->pins.fetch_add(1);
  f->MarkReferenced();
  return f;
}

std::string Cache::Describe(rdma::GlobalAddress gcl) {
  Shard& s = ShardOf(gcl);
  ShardLockGuard lock(&s.mu);
  auto it = s.map.find(gcl);
  if (it == s.map.end()) return "not cached";
  Frame* f = it->second;
  std::string memo = "unknown (latched)";
  if (f->latch.TryLockIdle()) {
    memo = absl::StrCat(MemoName(f->memo), f->dirty() ? ", dirty" : "");
    f->latch.Unlock();
  }
  return absl::StrFormat(
      "memo %s, local latch word 0x%x, %d pin(s), lease %s, starved "
      "priority %d, handover memo 0x%x, %d read and %d write wait(s)",
      memo, f->latch.word().load(), f->pins.load(),
      f->lease_active.load() ? "active" : "inactive",
      f->starved_priority.load(), f->handover_memo.load(), f->read_waits.load(),
      f->write_waits.load());
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

void Cache::PrefetchLines(rdma::GlobalAddress gcl, uint32_t offset,
                          uint32_t bytes) const {
  // The identity frame, with no load at all: when it caches another GCL,
  // these prefetches are wasted, nothing else.
  const Frame* f = IdentityFrame(gcl);
  if (f == nullptr) f = table_.Get(gcl);
  if (f == nullptr) return;
  __builtin_prefetch(f);  // its latch, which the caller takes next
  if (offset >= frame_bytes_) return;
  const uintptr_t copy = reinterpret_cast<uintptr_t>(CopyOf(f));
  const uintptr_t end =
      copy + std::min<uint64_t>(uint64_t{offset} + bytes, frame_bytes_);
  for (uintptr_t line = (copy + offset) & ~uintptr_t{63}; line < end;
       line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

void Cache::UnlistFree(Frame* f) {
  Frame* last = free_.back();
  free_[f->free_at] = last;
  last->free_at = f->free_at;
  free_.pop_back();
  f->free_at = Frame::kNotFree;
  free_count_.store(free_.size(), std::memory_order_relaxed);
}

Frame* Cache::TakeFree() {
  std::lock_guard<std::mutex> lock(free_mu_);
  if (free_.empty()) return nullptr;
  Frame* f = free_.back();
  UnlistFree(f);
  return f;
}

Frame* Cache::TakeFree(rdma::GlobalAddress gcl) {
  Frame* identity = IdentityFrame(gcl);
  std::lock_guard<std::mutex> lock(free_mu_);
  if (free_.empty()) return nullptr;
  Frame* f = identity != nullptr && identity->free_at != Frame::kNotFree
                 ? identity
                 : free_.back();
  UnlistFree(f);
  return f;
}

void Cache::PutFree(Frame* f) {
  DCHECK(!f->in_map);
  std::lock_guard<std::mutex> lock(free_mu_);
  CHECK_EQ(f->free_at, Frame::kNotFree) << "a frame freed twice";
  f->free_at = free_.size();
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
  table_.Set(gcl, fresh);
  // Unreferenced: a line used once goes before one used again, but only
  // after a whole trip of the hand through the shard.
  fresh->referenced.store(false, std::memory_order_relaxed);
  LinkHead(s, fresh);
  return InsertResult::kInserted;
}

size_t Cache::SweepShard(Shard& s, size_t n, std::vector<Frame*>* out,
                         bool* swept) {
  // Per visit at most kCandidates frames are tried for eviction and at most
  // kSweep looked at, so the shard lock is held for a bounded walk even
  // when every frame was referenced since the hand last passed.
  constexpr int kCandidates = 8;
  constexpr int kSweep = 256;
  ShardLockGuard lock(&s.mu);
  // Never more than the shard holds, so a frame sent back to the head is
  // not met again in the same visit.
  const size_t budget = std::min<size_t>(kSweep, s.map.size());
  size_t taken = 0;
  int candidates = 0;
  Frame* f = s.clock_tail;
  for (size_t i = 0;
       i < budget && f != nullptr && taken < n && candidates < kCandidates;
       ++i) {
    Frame* prev = f->clock_prev;
    if (f->referenced.exchange(false, std::memory_order_relaxed)) {
      Unlink(s, f);  // second chance
      LinkHead(s, f);
      *swept = true;
    } else {
      ++candidates;
      if (f->pins.load() == 0 && f->latch.TryLockIdle()) {
        Unlink(s, f);
        s.map.erase(f->gcl);
        table_.Clear(f->gcl, f);
        f->in_map = false;
        s.in_flight.insert(f->gcl);
        out->push_back(f);
        ++taken;
      }
    }
    f = prev;
  }
  return taken;
}

void Cache::TakeVictims(size_t n, std::vector<Frame*>* out) {
  // Visit the shards round robin, while the last round found a victim or
  // cleared a reference bit, but at most kMaxRounds rounds: hits on other
  // threads may set bits again as fast as the hand clears them, and a
  // caller must not spin here (a miss waits for a frame with a deadline).
  constexpr int kMaxRounds = 8;
  size_t taken = 0;
  bool progress = true;
  for (int round = 0; round < kMaxRounds && taken < n && progress; ++round) {
    progress = false;
    for (int visited = 0; visited < kShards && taken < n; ++visited) {
      Shard& s = shards_[next_victim_shard_.fetch_add(1) % kShards];
      bool swept = false;
      const size_t got = SweepShard(s, n - taken, out, &swept);
      taken += got;
      progress = progress || swept || got > 0;
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
  table_.Clear(f->gcl, f);
  f->in_map = false;
}

void Cache::ForEach(absl::FunctionRef<void(const Frame&)> fn) {
  for (int i = 0; i < kShards; ++i) {
    ShardLockGuard lock(&shards_[i].mu);
    for (const auto& [gcl, f] : shards_[i].map) fn(*f);
  }
}

}  // namespace strand::cc::selcc
