#ifndef STRAND_CC_SELCC_LATCH_WORD_H_
#define STRAND_CC_SELCC_LATCH_WORD_H_

// The global latch word of a SELCC GCL (paper 4.3.1): the first 8 bytes of
// every GCL. It is the latch AND the directory of cached copies, so one RDMA
// atomic both takes the latch and records who holds a copy.
//
//   bits 63..58  exclusive holder: compute node id + 1, or 0 for none
//   bits 57..0   reader bitmap: bit n set = node n holds (or is about to
//                give back: a transient bit) a shared copy
// Node ids 0..57 fit (58 reader bits); CheckNodeId() says so when one does
// not. Holder values 59..63 are never written.
//
// Legal values (h = holder field, R = reader bitmap):
//   (0, {})   no node holds a valid copy
//   (0, R)    every node in R holds a Shared copy
//   (h, {})   node h-1 holds the Modified copy
//   (h, T)    node h-1 holds the Modified copy and T are TRANSIENT reader
//             bits: readers whose FAA found a holder and whose undoing FAA
//             is in flight. h-1 is not in T, except for one round trip
//             after priority handover named h-1 while it was not waiting
//             and its own shared FAA found itself holder.
// No FAA carries or borrows, so a word that is not legal means a bug or a
// foreign write (IsLegal() reports it). Transitions: beside their addends
// below. Design (why they keep the word legal): docs/design/selcc.md.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace strand::cc::selcc {

class LatchWord {
 public:
  static constexpr int kReaderBits = 58;
  static constexpr int kHolderShift = kReaderBits;
  static constexpr uint64_t kReaderMask = (uint64_t{1} << kReaderBits) - 1;
  static constexpr int kMaxNodes = kReaderBits;  // ids 0..57

  // OK iff `node` fits in the latch word; otherwise says which ids do.
  static absl::Status CheckNodeId(int node) {
    if (node >= 0 && node < kMaxNodes) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d does not fit in SELCC's latch word: the reader "
        "bitmap has %d bits, so node ids must be from 0 to %d (use fewer "
        "--compute_nodes, or --protocol=sel)",
        node, kMaxNodes, kMaxNodes - 1));
  }

  static constexpr uint64_t Exclusive(int node) {
    return uint64_t(node + 1) << kHolderShift;
  }
  static constexpr uint64_t Reader(int node) { return uint64_t{1} << node; }

  // The holder's node id, or -1 if there is none.
  static constexpr int Holder(uint64_t word) {
    return static_cast<int>(word >> kHolderShift) - 1;
  }
  static constexpr uint64_t Readers(uint64_t word) {
    return word & kReaderMask;
  }
  static constexpr bool HasReader(uint64_t word, int node) {
    return (word & Reader(node)) != 0;
  }

  // Transitions (n = acting node; each is ONE atomic, batched with the data
  // transfer where noted, so each costs one round trip):
  //   exclusive acquire  CAS (0,{}) -> (n+1,{})          + READ payload
  //   shared acquire     FAA +Reader(n): succeeded iff the old h was 0;
  //                      else FAA -Reader(n) (the transient bit is undone
  //                      before any invalidation message is sent)  + READ
  //   upgrade S->M       CAS (0,{n}) -> (n+1,{})
  //   exclusive release  FAA -Exclusive(n), not a WRITE of 0 (it keeps
  //                      transient bits)                 + WRITE dirty range
  //   shared release     FAA -Reader(n)
  //   handover M->M      FAA Handover(n, to): (n+1,T) -> (to+1,T)   (4.4.1)
  //                      (priority handover, 5.3.2: WRITE dirty range +
  //                      the same FAA; `to` finds itself holder on retry)
  //   downgrade M->S,S   FAA Downgrade(n, r): (n+1,T) -> (0,T|{n,r}) + WRITE
  //                      dirty range                                 (4.4.2)
  // FAA addends (two's complement; the FAA wraps in 64 bits).
  static constexpr uint64_t ReleaseExclusive(int node) {
    return uint64_t{0} - Exclusive(node);
  }
  static constexpr uint64_t ReleaseShared(int node) {
    return uint64_t{0} - Reader(node);
  }
  static constexpr uint64_t Handover(int from, int to) {
    return Exclusive(to) - Exclusive(from);
  }
  static constexpr uint64_t Downgrade(int holder, int reader) {
    return Reader(holder) + Reader(reader) - Exclusive(holder);
  }

  // A value listed under "Legal values" above. Every reader bitmap is one
  // (the holder's own bit too, for the round trip after a priority
  // handover), so only a holder field past the last node id is not.
  static constexpr bool IsLegal(uint64_t word) {
    return Holder(word) < kMaxNodes;
  }

  // "(holder=3 readers={0,5})", "(free)".
  static std::string ToString(uint64_t word) {
    if (word == 0) return "(free)";
    std::string readers;
    for (int n = 0; n < kReaderBits; ++n) {
      if (HasReader(word, n)) {
        absl::StrAppendFormat(&readers, "%s%d", readers.empty() ? "" : ",", n);
      }
    }
    return absl::StrFormat("(holder=%d readers={%s})", Holder(word), readers);
  }
};

static_assert(LatchWord::Holder(LatchWord::Exclusive(57)) == 57);
static_assert(LatchWord::Exclusive(3) + LatchWord::Handover(3, 7) ==
              LatchWord::Exclusive(7));
static_assert(LatchWord::Exclusive(7) + LatchWord::Handover(7, 3) ==
              LatchWord::Exclusive(3));
static_assert(LatchWord::Exclusive(2) + LatchWord::Downgrade(2, 5) ==
              (LatchWord::Reader(2) | LatchWord::Reader(5)));

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_LATCH_WORD_H_
