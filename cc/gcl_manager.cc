#include "cc/gcl_manager.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "cc/cache_sizing.h"
#include "cc/sel/sel_manager.h"
#include "cc/selcc/selcc_manager.h"
#include "glog/logging.h"

namespace strand::cc {

SharedGuard::~SharedGuard() {
  if (!owns_lock()) return;
  absl::Status s = Unlock();
  LOG_IF(ERROR, !s.ok()) << "releasing shared latch of " << handle_.gcl
                         << " failed: " << s;
}

absl::Status SharedGuard::Unlock() {
  if (!owns_lock()) return absl::OkStatus();
  GclManager* manager = std::exchange(manager_, nullptr);
  return manager->UnlockShared(*ctx_, handle_);
}

LatchHandle SharedGuard::Release() {
  manager_ = nullptr;
  return handle_;
}

ExclusiveGuard::~ExclusiveGuard() {
  if (!owns_lock()) return;
  absl::Status s = Unlock();
  LOG_IF(ERROR, !s.ok()) << "releasing exclusive latch of " << handle_.gcl
                         << " failed: " << s;
}

void ExclusiveGuard::BadWrite(uint32_t offset, uint32_t length) const {
  CHECK(owns_lock()) << "write through a guard that holds no latch";
  LOG(FATAL) << "write of [" << offset << ", " << uint64_t{offset} + length
             << ") past the end of GCL " << handle_.gcl << " ("
             << payload_bytes_ << " payload bytes)";
}

absl::Status ExclusiveGuard::Unlock() {
  if (!owns_lock()) return absl::OkStatus();
  GclManager* manager = std::exchange(manager_, nullptr);
  return manager->UnlockExclusive(*ctx_, handle_, dirty_begin_, dirty_end_);
}

// Global words are not cached by any protocol: an atomic goes straight to
// the memory node.
absl::StatusOr<uint64_t> GclManager::FetchAndAdd(ThreadContext& ctx,
                                                 rdma::GlobalAddress word,
                                                 uint64_t delta) {
  return ctx.endpoint().FetchAndAdd(word, delta);
}

absl::StatusOr<uint64_t> GclManager::CompareAndSwap(ThreadContext& ctx,
                                                    rdma::GlobalAddress word,
                                                    uint64_t expected,
                                                    uint64_t desired) {
  return ctx.endpoint().CompareAndSwap(word, expected, desired);
}

// A protocol whose guard's payload is all there is (SEL's buffer): the
// guard's dirty range, whole payload when dirty_bounds is off.
std::optional<GclManager::DirtyRange> GclManager::DirtyBytes(
    const ExclusiveGuard& guard) const {
  auto [begin, end] = GuardDirty(guard);
  if (begin == end) return std::nullopt;
  if (!options().dirty_bounds) {
    begin = 0;
    end = payload_bytes();
  }
  const LatchHandle& h = HandleOf(guard);
  return DirtyRange{h.gcl + 8 + begin, h.payload + begin, end - begin};
}

void GclManager::MarkWrittenThrough(ExclusiveGuard& guard) {
  ClearGuardDirty(guard);
}

absl::StatusOr<std::unique_ptr<GclManager>> GclManager::Create(
    rdma::Fabric& fabric, rdma::ComputeNodeId node, const CcOptions& options) {
  if (absl::Status s = options.Validate(fabric.chunk_bytes()); !s.ok()) {
    return s;
  }
  switch (options.protocol) {
    case Protocol::kSel:
      return sel::SelManager::Create(fabric, node, options);
    case Protocol::kSelcc: {
      CcOptions resolved = options;
      if (resolved.cache_bytes == CcOptions::kAutoCacheBytes) {
        // Everything the pool holds, so one node alone never evicts.
        resolved.cache_bytes = AutoCacheBytes(
            fabric.memory_node_bytes() * fabric.memory_node_count(),
            options.gcl_size,
            AutoCacheCapBytes(
                AvailableMemoryBytes(),
                static_cast<int>(fabric.local_compute_nodes().size())));
      }
      return SelccManager::Create(fabric, node, resolved);
    }
  }
  return absl::InternalError("unknown protocol");
}

}  // namespace strand::cc
