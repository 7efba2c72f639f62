#include "txn/page_latches.h"

namespace strand::txn {

absl::StatusOr<const uint8_t*> PageLatches::Shared(rdma::GlobalAddress page,
                                                   cc::LockOptions lock) {
  auto it = held_.find(page);
  if (it != held_.end()) {
    Held& h = it->second;
    return h.exclusive.owns_lock() ? h.exclusive.data() : h.shared.data();
  }
  auto guard = manager_.SLock(ctx_, page, lock);
  if (!guard.ok()) return guard.status();
  Held& h = held_[page];
  h.shared = *std::move(guard);
  return h.shared.data();
}

absl::StatusOr<cc::ExclusiveGuard*> PageLatches::Exclusive(
    rdma::GlobalAddress page, cc::LockOptions lock) {
  auto it = held_.find(page);
  if (it != held_.end() && it->second.exclusive.owns_lock()) {
    return &it->second.exclusive;
  }
  absl::StatusOr<cc::ExclusiveGuard> guard;
  if (it != held_.end()) {
    guard = manager_.Upgrade(ctx_, it->second.shared, lock);
    if (!guard.ok()) {
      // A failed upgrade may have released the shared latch: forget it.
      if (!it->second.shared.owns_lock()) held_.erase(it);
      return guard.status();
    }
  } else {
    guard = manager_.XLock(ctx_, page, lock);
    if (!guard.ok()) return guard.status();
  }
  Held& h = held_[page];
  h.exclusive = *std::move(guard);
  return &h.exclusive;
}

cc::ExclusiveGuard* PageLatches::HeldExclusive(rdma::GlobalAddress page) {
  auto it = held_.find(page);
  if (it == held_.end() || !it->second.exclusive.owns_lock()) return nullptr;
  return &it->second.exclusive;
}

absl::Status PageLatches::ReleaseAll() {
  absl::Status first;
  for (auto& [page, h] : held_) {
    absl::Status s = h.exclusive.Unlock();
    if (first.ok() && !s.ok()) first = s;
    s = h.shared.Unlock();
    if (first.ok() && !s.ok()) first = s;
  }
  held_.clear();
  return first;
}

}  // namespace strand::txn
