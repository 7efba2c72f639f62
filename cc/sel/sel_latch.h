#ifndef STRAND_CC_SEL_SEL_LATCH_H_
#define STRAND_CC_SEL_SEL_LATCH_H_

// The latch word of the SEL baseline (one-sided shared-exclusive latch, no
// cache). SEL releases eagerly, so it needs no directory of holders, only a
// count of readers (several threads of one node may read at once):
//
//   bits 63..58  exclusive holder: compute node id + 1, or 0 if none
//   bits 57..0   number of shared holders (and of readers' transient
//                increments, see below)
//
// Legal values: 0 (free); (0, n) n readers; (h, 0) one writer; (h, n) a
// writer plus n readers that incremented, saw the writer, and are about to
// decrement again. Transitions, each one RDMA atomic:
//   shared acquire   FAA(+1); succeeded iff the old holder field was 0,
//                    otherwise FAA(-1) and retry
//   shared release   FAA(-1)
//   exclusive acq.   CAS(0 -> (h, 0))
//   exclusive rel.   FAA(-(h, 0)): leaves readers' transient increments
//                    intact (a WRITE of 0 would erase them and a later
//                    decrement would borrow into the holder field)
//   upgrade          CAS((0, 1) -> (h, 0)) by a reader that holds a share
// The count never borrows or carries into the holder field: every decrement
// follows its own increment, and 58 bits cannot overflow.

#include <cstdint>

namespace strand::cc::sel {

struct SelLatch {
  static constexpr int kHolderShift = 58;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kHolderShift) - 1;
  static constexpr int kMaxNodeId = 62;  // holder field 1..63

  static constexpr uint64_t Exclusive(uint32_t node_id) {
    return uint64_t{node_id + 1} << kHolderShift;
  }
  static constexpr bool HasWriter(uint64_t word) {
    return (word >> kHolderShift) != 0;
  }
  static constexpr uint64_t Readers(uint64_t word) { return word & kCountMask; }
};

}  // namespace strand::cc::sel

#endif  // STRAND_CC_SEL_SEL_LATCH_H_
