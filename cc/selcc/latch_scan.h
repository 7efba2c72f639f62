#ifndef STRAND_CC_SELCC_LATCH_SCAN_H_
#define STRAND_CC_SELCC_LATCH_SCAN_H_

// The last step of reclaiming a failed compute node
// (docs/design/node_failure.md): take its holder field and reader bit out
// of the latch word of every GCL of the pool, so that none names it when
// it rejoins (its new incarnation's FAA +Reader would carry into the next
// bit otherwise) and no line it held waits for a survivor to meet it.
//
// Which words: every memory node's chunks from the first to its bump
// pointer (rdma/memory_node_layout.h), a latch word every gcl_size bytes,
// except the ranges in `skip` (memory that is not GCLs: the redo
// rings, txn/redo_ring.h). Each word that names the node loses that part
// by CAS, retried against the value the CAS found, so it composes with
// survivors' acquisitions and steals running meanwhile
// (SelccManager::SetPeerStates). Only for a node that is fenced and whose
// unfinished commits are complete in memory: memory is then current for
// every line it held.
//
// Cost: one round trip per kWordsPerBatch lines, plus one CAS per word
// that names the node.

#include <cstdint>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rdma/fabric.h"

namespace strand::cc::selcc {

struct LatchScanResult {
  uint64_t lines = 0;          // latch words read
  uint64_t holder_fields = 0;  // lines it held exclusive (Modified)
  uint64_t reader_bits = 0;    // lines it held shared
};

inline constexpr int kWordsPerBatch = 512;

// A range of a memory node that is not GCLs: [start, start + bytes).
struct SkipRange {
  rdma::GlobalAddress start;
  uint64_t bytes = 0;
};

absl::StatusOr<LatchScanResult> ClearNodeFromLatchWords(
    rdma::Endpoint& endpoint, rdma::Fabric& fabric, int node, uint32_t gcl_size,
    absl::Span<const SkipRange> skip);

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_LATCH_SCAN_H_
