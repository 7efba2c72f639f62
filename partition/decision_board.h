#ifndef STRAND_PARTITION_DECISION_BOARD_H_
#define STRAND_PARTITION_DECISION_BOARD_H_

// Where partitioned mode's commit decisions outlive their coordinator
// (failover on; docs/design/node_failure.md, "Partitioned mode"): one
// 8-byte word per (coordinator node, coordinator slot), on memory node
// (node % memory nodes), the memory node of the coordinator's redo ring
// (cc/root_words.h's kDecisionBoardOffset).
//
// A coordinator whose transaction has yes-voters writes the transaction's
// gtid into its slot's word in the first batch of its commit's
// write-through (txn/write_through.h): after its ring record, before any
// of its data, before any participant hears COMMIT. A slot runs one
// transaction at a time, so the word names the last transaction of that
// slot that decided to commit. When the coordinator fails, once it is
// fenced (it can write no more), a prepared branch of gtid g commits iff
// its slot's word is g; otherwise it was never decided, and presumed
// abort applies. The word is zeroed when its node (re)starts: gtids
// restart with a node's sessions.

#include <cstdint>

#include "absl/status/statusor.h"
#include "cc/root_words.h"
#include "rdma/fabric.h"

namespace strand::partition {

// The coordinator slot a gtid names (partition/coordinator.cc's Begin).
inline uint32_t SlotOfGtid(uint64_t gtid) {
  return static_cast<uint32_t>(gtid & 0xff);
}

inline rdma::GlobalAddress DecisionWord(const rdma::Fabric& fabric,
                                        rdma::ComputeNodeId coordinator,
                                        uint32_t slot) {
  const auto mn = static_cast<rdma::MemoryNodeId>(
      coordinator % static_cast<uint32_t>(fabric.memory_node_count()));
  return rdma::GlobalAddress(
      mn, cc::kDecisionBoardOffset +
              (uint64_t{coordinator} * cc::kDecisionBoardSlots + slot) * 8);
}

// The decision of gtid, whose coordinator is fenced: true to commit.
inline absl::StatusOr<bool> Decided(rdma::Endpoint& endpoint,
                                    const rdma::Fabric& fabric, uint64_t gtid,
                                    rdma::ComputeNodeId coordinator) {
  uint64_t word = 0;
  if (absl::Status s = endpoint.Read(
          DecisionWord(fabric, coordinator, SlotOfGtid(gtid)), &word, 8);
      !s.ok()) {
    return s;
  }
  return word == gtid;
}

// Zeroes `coordinator`'s words (its start, or its rejoin).
inline absl::Status ClearDecisions(rdma::Endpoint& endpoint,
                                   const rdma::Fabric& fabric,
                                   rdma::ComputeNodeId coordinator) {
  static const uint64_t kZeros[cc::kDecisionBoardSlots] = {};
  return endpoint.Write(DecisionWord(fabric, coordinator, 0), kZeros,
                        sizeof(kZeros));
}

}  // namespace strand::partition

#endif  // STRAND_PARTITION_DECISION_BOARD_H_
