#include "rdma/loopback/remote_memory.h"

#include <atomic>
#include <cstring>

#if defined(__SANITIZE_THREAD__)
#define STRAND_REMOTE_ATOMIC_COPY 1
#endif

namespace strand::rdma::loopback {

#ifdef STRAND_REMOTE_ATOMIC_COPY
namespace {

// Copies word by word where `remote` is 8-byte aligned, byte by byte at the
// unaligned edges; every access to `remote` is a relaxed atomic.
template <bool kToRemote>
void AtomicCopy(void* remote_void, void* local_void, size_t length) {
  auto* remote = static_cast<uint8_t*>(remote_void);
  auto* local = static_cast<uint8_t*>(local_void);
  size_t i = 0;
  auto byte = [&](size_t k) {
    std::atomic_ref<uint8_t> r(remote[k]);
    if constexpr (kToRemote) {
      r.store(local[k], std::memory_order_relaxed);
    } else {
      local[k] = r.load(std::memory_order_relaxed);
    }
  };
  for (; i < length && reinterpret_cast<uintptr_t>(remote + i) % 8 != 0; ++i) {
    byte(i);
  }
  for (; i + 8 <= length; i += 8) {
    std::atomic_ref<uint64_t> r(*reinterpret_cast<uint64_t*>(remote + i));
    uint64_t word;
    if constexpr (kToRemote) {
      std::memcpy(&word, local + i, 8);
      r.store(word, std::memory_order_relaxed);
    } else {
      word = r.load(std::memory_order_relaxed);
      std::memcpy(local + i, &word, 8);
    }
  }
  for (; i < length; ++i) byte(i);
}

}  // namespace

void CopyFromRemote(void* local, const void* remote, size_t length) {
  AtomicCopy<false>(const_cast<void*>(remote), local, length);
}
void CopyToRemote(void* remote, const void* local, size_t length) {
  AtomicCopy<true>(remote, const_cast<void*>(local), length);
}
#else
void CopyFromRemote(void* local, const void* remote, size_t length) {
  std::memcpy(local, remote, length);
}
void CopyToRemote(void* remote, const void* local, size_t length) {
  std::memcpy(remote, local, length);
}
#endif

}  // namespace strand::rdma::loopback
