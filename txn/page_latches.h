#ifndef STRAND_TXN_PAGE_LATCHES_H_
#define STRAND_TXN_PAGE_LATCHES_H_

// The GCL latches one transaction holds, one entry per heap page: shared,
// or exclusive (an upgrade replaces the shared guard). 2PL holds them from
// first access to commit; TO and OCC take their write pages here at commit,
// in address order, so two committers never wait for each other in a cycle.
// Not thread-safe (a transaction runs on one thread).

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"
#include "txn/thread_spares.h"

namespace strand::txn {

class PageLatches {
 public:
  PageLatches(cc::GclManager& manager, cc::ThreadContext& ctx)
      : manager_(manager), ctx_(ctx), held_(ThreadSpares<HeldMap>::Take()) {
    held_.reserve(32);  // no rehash chain for a typical transaction's pages
  }
  ~PageLatches() {
    (void)ReleaseAll();
    ThreadSpares<HeldMap>::Give(std::move(held_));
  }

  // The payload of `page` under a shared (or already exclusive) latch.
  absl::StatusOr<const uint8_t*> Shared(rdma::GlobalAddress page,
                                        cc::LockOptions lock);
  // The exclusive guard of `page`, upgrading a shared latch we hold.
  absl::StatusOr<cc::ExclusiveGuard*> Exclusive(rdma::GlobalAddress page,
                                                cc::LockOptions lock);
  // Whether we hold a latch on `page`, in either mode.
  bool Holds(rdma::GlobalAddress page) const { return held_.contains(page); }
  // The exclusive guard of `page` if we hold one, else null.
  cc::ExclusiveGuard* HeldExclusive(rdma::GlobalAddress page);

  // Calls fn(guard) for every page held exclusively.
  template <typename Fn>
  void ForEachExclusive(Fn fn) {
    for (auto& [page, h] : held_) {
      if (h.exclusive.owns_lock()) fn(h.exclusive);
    }
  }

  // Releases every latch (the first error is returned; all are released).
  absl::Status ReleaseAll();
  bool empty() const { return held_.empty(); }

 private:
  struct Held {
    cc::SharedGuard shared;
    cc::ExclusiveGuard exclusive;
  };
  using HeldMap = absl::flat_hash_map<rdma::GlobalAddress, Held>;
  cc::GclManager& manager_;
  cc::ThreadContext& ctx_;
  HeldMap held_;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_PAGE_LATCHES_H_
