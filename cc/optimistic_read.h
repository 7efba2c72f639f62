#ifndef STRAND_CC_OPTIMISTIC_READ_H_
#define STRAND_CC_OPTIMISTIC_READ_H_

// Optimistic reads of cached GCLs (GclManager::OptimisticRead): read a
// payload with no latch at all, then ask whether anything changed.
//
//   cc::OptimisticToken t = manager.OptimisticRead(ctx, gcl);
//   if (t.ok()) {
//     const uint64_t v = cc::LoadRelaxed<uint64_t>(t.data() + 16);
//     if (manager.Validate(t)) { ... v is what a shared latch would have
//                                shown at some moment of the read ... }
//   }
//
// The payload may change under the reader, so:
//   - read it only through LoadRelaxed (below) or other relaxed atomic
//     loads: plain reads of memory another thread writes are data races;
//   - treat every value as garbage until Validate says otherwise: bound
//     every count and index before addressing the payload with it, and
//     never follow a pointer, return a value or write anything on the
//     strength of an unvalidated read;
//   - validate after the last read the decision depends on.
// Validate covers every read since OptimisticRead, so one token can serve
// several validations; once one fails, the token is spent. Cost: no write
// to shared memory. Design: docs/design/selcc.md, "Optimistic reads".

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "absl/base/attributes.h"
#include "absl/base/dynamic_annotations.h"

// The loads below rely on x86-64: misaligned loads, and loads and stores
// that are not reordered with each other (TSO; docs/design/selcc.md).
#if !defined(__x86_64__)
#error "optimistic reads are written for x86-64"
#endif

namespace strand::cc {

// What OptimisticRead hands out: the payload and what Validate compares.
// A default token is "not available" (ok() == false).
class OptimisticToken {
 public:
  OptimisticToken() = default;
  // For GclManager implementations: the payload copy, and the word whose
  // bits under `mask` must still equal `seen` for the read to be valid.
  OptimisticToken(const uint8_t* payload, const std::atomic<uint64_t>* word,
                  uint64_t seen, uint64_t mask)
      : payload_(payload), word_(word), seen_(seen), mask_(mask) {}

  bool ok() const { return payload_ != nullptr; }
  // The payload, to be read only as the rules above say.
  const uint8_t* data() const { return payload_; }

 private:
  friend class GclManager;
  const uint8_t* payload_ = nullptr;
  const std::atomic<uint64_t>* word_ = nullptr;
  uint64_t seen_ = 0;
  uint64_t mask_ = 0;
};

// The unsigned integer of a size, as loads see it: may alias whatever the
// writers stored there (memcpy of keys, values, whole lines), and may sit
// at any address (keys and values of an index node mostly do not fall on
// their natural alignment).
template <size_t kBytes>
using PayloadWord __attribute__((may_alias, aligned(1))) = std::conditional_t<
    kBytes == 8, uint64_t,
    std::conditional_t<kBytes == 4, uint32_t,
                       std::conditional_t<kBytes == 2, uint16_t, uint8_t>>>;

// A T of 1, 2, 4 or 8 bytes (trivially copyable) at `p`, at any alignment,
// read with one relaxed atomic load: one plain mov on x86-64, as cheap as
// the memcpy a latched reader uses. (Two aligned loads and a shift per
// field, the portable way, cost 9% more instructions per TPC-C
// transaction.) A value that straddles a cache line may come out torn,
// like any value read while a writer changes it: the caller validates.
// Always inlined: a call per field read costs more than the read.
// Under TSan, the writers' plain stores and these relaxed loads would be
// reported as races (TSan knows nothing of seqlocks); the loads are wrapped
// in TSan's ignore-reads annotations, which is the precise scope of what
// the seqlock makes safe. Nothing changes in other builds.
template <typename T>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline T LoadRelaxed(const uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 ||
                sizeof(T) == 8);
  ABSL_ANNOTATE_IGNORE_READS_BEGIN();
  const auto bits = __atomic_load_n(
      reinterpret_cast<const PayloadWord<sizeof(T)>*>(p), __ATOMIC_RELAXED);
  ABSL_ANNOTATE_IGNORE_READS_END();
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

// `n` bytes at `src` copied to `dst` with LoadRelaxed, 8 at a time: a
// record taken out of an optimistic read's payload whole (a tuple), to be
// used once Validate says the copy is one state. Always inlined, like
// LoadRelaxed: the copy loop is short.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CopyRelaxed(uint8_t* dst,
                                                     const uint8_t* src,
                                                     size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const auto word = LoadRelaxed<uint64_t>(src + i);
    std::memcpy(dst + i, &word, 8);
  }
  for (; i < n; ++i) dst[i] = LoadRelaxed<uint8_t>(src + i);
}

}  // namespace strand::cc

#endif  // STRAND_CC_OPTIMISTIC_READ_H_
