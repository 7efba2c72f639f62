#ifndef STRAND_RDMA_BATCH_H_
#define STRAND_RDMA_BATCH_H_

// A Batch is a list of one-sided operations on ONE memory node that an
// endpoint posts together and waits for once: one round trip, whatever its
// length. This is how SELCC makes a miss cost one round trip (CAS + READ) and
// a release cost one (WRITE + FAA).
//
// Ordering: operations execute in the order they were added. Verbs maps a
// batch to a chain of work requests on the endpoint's queue pair to that
// memory node, posted with one doorbell (ibv_post_send of a linked list) with
// only the last request signalled; a READ or atomic that follows an atomic or
// a WRITE carries IBV_SEND_FENCE so it observes the earlier operation's
// effect (RC ordering alone does not order READ after atomic).
//
// Results of CAS and FAA (the value the word held before) are stored through
// the pointers given when the op was added, once Execute() returns OK. READ
// data lands in the caller's buffer. Buffers must stay valid until then.
//
// Usage:
//   uint64_t old_latch;
//   Batch b;
//   b.CompareAndSwap(gcl, 0, my_latch, &old_latch).Read(gcl + 8, buf, len);
//   STRAND_RETURN_IF_ERROR(endpoint.Execute(b));

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "rdma/global_address.h"

namespace strand::rdma {

class Batch {
 public:
  enum class Kind : uint8_t { kRead, kWrite, kCompareAndSwap, kFetchAndAdd };

  struct Op {
    Kind kind;
    GlobalAddress remote;
    uint32_t length = 0;           // READ / WRITE bytes; 8 for atomics
    void* local = nullptr;         // READ destination
    const void* source = nullptr;  // WRITE source
    uint64_t compare_or_add = 0;   // CAS expected value or FAA addend
    uint64_t swap = 0;             // CAS desired value
    uint64_t* result = nullptr;    // CAS / FAA old value; may be null
  };

  Batch& Read(GlobalAddress src, void* dst, uint32_t length) {
    ops_.push_back(Op{Kind::kRead, src, length, dst});
    return *this;
  }
  Batch& Write(GlobalAddress dst, const void* src, uint32_t length) {
    ops_.push_back(Op{Kind::kWrite, dst, length, nullptr, src});
    return *this;
  }
  // Atomically: old = *addr; if (old == expected) *addr = desired.
  Batch& CompareAndSwap(GlobalAddress addr, uint64_t expected, uint64_t desired,
                        uint64_t* old) {
    ops_.push_back(Op{Kind::kCompareAndSwap, addr, 8, nullptr, nullptr,
                      expected, desired, old});
    return *this;
  }
  // Atomically: old = *addr; *addr = old + delta (wrapping, two's complement).
  Batch& FetchAndAdd(GlobalAddress addr, uint64_t delta, uint64_t* old) {
    ops_.push_back(
        Op{Kind::kFetchAndAdd, addr, 8, nullptr, nullptr, delta, 0, old});
    return *this;
  }

  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  const Op& operator[](size_t i) const { return ops_[i]; }
  auto begin() const { return ops_.begin(); }
  auto end() const { return ops_.end(); }
  void Clear() { ops_.clear(); }

 private:
  absl::InlinedVector<Op, 4> ops_;
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_BATCH_H_
