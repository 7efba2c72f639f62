#include "txn/epoch_manager.h"

#include <algorithm>

#include "glog/logging.h"

namespace strand::txn {

absl::StatusOr<std::unique_ptr<EpochManager>> EpochManager::InPool(
    rdma::Endpoint& endpoint, int compute_nodes) {
  absl::StatusOr<std::unique_ptr<PoolEpochs>> pool =
      PoolEpochs::Open(endpoint, compute_nodes);
  if (!pool.ok()) return pool.status();
  absl::StatusOr<uint64_t> epoch = (*pool)->ReadEpoch(endpoint);
  if (!epoch.ok()) return epoch.status();
  auto epochs = std::make_unique<EpochManager>();
  epochs->pool_ = *std::move(pool);
  epochs->epoch_.store(*epoch, std::memory_order_relaxed);
  return epochs;
}

EpochManager::~EpochManager() {
  // Queued slots are dropped, not handed back: the tables may be gone.
  for (auto& chunk : chunks_) delete chunk.load(std::memory_order_relaxed);
}

bool EpochManager::TryClaim(Slot slot) {
  std::atomic<uint64_t>& announced = At(slot).epoch;
  if (announced.load(std::memory_order_relaxed) != kIdle) return false;
  uint64_t idle = kIdle;
  // The epoch read here may be stale by the time the CAS lands: an older
  // announcement only holds back more (see the header for why it must be
  // no newer than the epoch in force at this transaction's first lookup:
  // the CAS comes before every read the transaction makes).
  return announced.compare_exchange_strong(
      idle, epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
}

EpochManager::Slot EpochManager::Enter() {
  // The record this thread used last: its line stays in this core's cache.
  thread_local Slot last = 0;
  const Slot count = count_.load(std::memory_order_acquire);
  for (Slot i = 0; i < count; ++i) {
    const Slot slot = (last + i) % count;
    if (TryClaim(slot)) {
      last = slot;
      return slot;
    }
  }
  last = Grow();
  return last;
}

EpochManager::Slot EpochManager::Grow() {
  std::lock_guard<std::mutex> lock(grow_mu_);
  const Slot slot = count_.load(std::memory_order_relaxed);
  CHECK_LT(slot / kChunkSlots, kMaxChunks)
      << "more than " << kMaxChunks * kChunkSlots
      << " transactions active at once in one process";
  if (slot % kChunkSlots == 0) {
    chunks_[slot / kChunkSlots].store(new Chunk, std::memory_order_release);
  }
  At(slot).epoch.store(epoch_.load(std::memory_order_seq_cst),
                       std::memory_order_seq_cst);
  // Published after its announcement: a scan that sees the count sees it.
  count_.store(slot + 1, std::memory_order_seq_cst);
  return slot;
}

void EpochManager::Retire(Slot slot, storage::HeapTable& table,
                          storage::TupleAddress address) {
  At(slot).open.push_back({&table, address});
}

void EpochManager::Exit(Slot slot, rdma::Endpoint& endpoint) {
  Announcement& mine = At(slot);
  if (mine.open.size() >= kBatchSlots) {
    // Every slot in it was deleted by a commit that ended before this
    // advance, so every transaction that may hold one announced <= e.
    absl::StatusOr<uint64_t> e = Advance(endpoint);
    if (e.ok()) {
      retired_.fetch_add(mine.open.size(), std::memory_order_relaxed);
      mine.sealed.push_back({*e, std::move(mine.open)});
      mine.open.clear();
      mine.open.reserve(kBatchSlots);
      Reclaim(mine, slot, endpoint);
    } else {
      LOG_EVERY_N(WARNING, 1000)
          << "deleted slots wait: sealing a batch failed: " << e.status();
    }
  }
  mine.epoch.store(kIdle, std::memory_order_release);
}

absl::StatusOr<uint64_t> EpochManager::Advance(rdma::Endpoint& endpoint) {
  if (pool_ == nullptr) return epoch_.fetch_add(1, std::memory_order_seq_cst);
  absl::StatusOr<uint64_t> e = pool_->Advance(endpoint);
  if (e.ok()) Learn(*e + 1);
  return e;
}

void EpochManager::Learn(uint64_t epoch) {
  uint64_t cached = epoch_.load(std::memory_order_relaxed);
  while (cached < epoch && !epoch_.compare_exchange_weak(
                               cached, epoch, std::memory_order_seq_cst)) {
  }
}

absl::Status EpochManager::Tick(rdma::Endpoint& endpoint) {
  if (pool_ == nullptr) return absl::OkStatus();
  absl::StatusOr<uint64_t> epoch = pool_->ReadEpoch(endpoint);
  if (!epoch.ok()) return epoch.status();
  Learn(*epoch);
  return Publish(kNoSlot, endpoint);
}

absl::Status EpochManager::Publish(Slot except, rdma::Endpoint& endpoint) {
  // The cached epoch before the announcements (the header's "Across
  // processes" needs a transaction this scan misses to have claimed its
  // record after this load).
  const uint64_t cached = epoch_.load(std::memory_order_seq_cst);
  return pool_->Publish(endpoint, std::min(cached, MinActive(except)));
}

absl::StatusOr<uint64_t> EpochManager::Horizon(Slot except,
                                               rdma::Endpoint& endpoint) {
  if (pool_ == nullptr) return MinActive(except);
  if (absl::Status s = Publish(except, endpoint); !s.ok()) return s;
  return pool_->MinBound(endpoint);
}

uint64_t EpochManager::MinActive(Slot except) const {
  uint64_t min = kIdle;
  const Slot count = count_.load(std::memory_order_seq_cst);
  for (Slot i = 0; i < count; ++i) {
    if (i == except) continue;
    min = std::min(min, At(i).epoch.load(std::memory_order_seq_cst));
  }
  return min;
}

void EpochManager::Reclaim(Announcement& mine, Slot slot,
                           rdma::Endpoint& endpoint) {
  absl::StatusOr<uint64_t> horizon = Horizon(slot, endpoint);
  if (!horizon.ok()) {
    LOG_EVERY_N(WARNING, 1000)
        << "deleted slots wait: reading the epoch bounds failed: "
        << horizon.status();
    return;
  }
  const uint64_t min = *horizon;
  // Sealed in epoch order: the ones old enough are a prefix.
  size_t done = 0;
  uint64_t handed_back = 0;
  for (; done < mine.sealed.size() && mine.sealed[done].epoch < min; ++done) {
    for (const Retired& r : mine.sealed[done].slots) {
      r.table->ReleaseSlot(r.address);
    }
    handed_back += mine.sealed[done].slots.size();
  }
  if (done == 0) return;
  mine.sealed.erase(mine.sealed.begin(), mine.sealed.begin() + done);
  reclaimed_.fetch_add(handed_back, std::memory_order_relaxed);
}

}  // namespace strand::txn
