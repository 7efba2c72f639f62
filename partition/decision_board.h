#ifndef STRAND_PARTITION_DECISION_BOARD_H_
#define STRAND_PARTITION_DECISION_BOARD_H_

// Where partitioned mode's commit decisions outlive their coordinator
// (failover on; docs/design/node_failure.md, "Partitioned mode"): one
// 8-byte word per (coordinator node, coordinator slot), on memory node
// (node % memory nodes), the memory node of the coordinator's redo ring
// (cc/root_words.h's kDecisionBoardOffset).
//
// A coordinator whose transaction has yes-voters first puts its ring
// record in memory (txn::Txn::RecordPrepared), then swaps the transaction's
// gtid into its slot's word (Publish), then writes its data, and only then
// tells the participants. A participant puts its own ring record in memory
// before it votes yes. The reclaimer of a failed participant decides each
// prepared record of it by Resolve: commit iff the word names its gtid,
// else it swaps in Aborted(gtid), which makes the coordinator's Publish
// fail: whoever swaps first decides. A coordinator does not publish its
// slot's next decision while a yes-voter of its last one has neither
// acknowledged COMMIT nor been resolved (Slot::WaitAcked), so a word that
// names a later transaction of the slot means that gtid did not commit.
// When the coordinator fails, once it is fenced, a prepared branch of gtid
// g commits iff its slot's word is g (Decided); otherwise presumed abort.
// Gtids of a slot grow within an incarnation (Slot::NextSequence), and the
// words are zeroed when their node (re)starts: a word never names a gtid
// that its coordinator's current incarnation did not decide.

#include <cstdint>

#include "absl/status/statusor.h"
#include "cc/root_words.h"
#include "rdma/batch.h"
#include "rdma/fabric.h"
#include "wal/two_phase_records.h"

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

// The mark a failed participant's reclaimer leaves: gtid aborted.
// Coordinator ids stay below 2^15, so no gtid has the top bit.
inline constexpr uint64_t kAbortedBit = uint64_t{1} << 63;
inline uint64_t Aborted(uint64_t gtid) { return gtid | kAbortedBit; }

// The coordinator of `gtid` publishes its commit decision at `word`, which
// it last knew to hold *last (updated): true if it may commit, false if a
// failed participant's reclaimer aborted it first.
inline absl::StatusOr<bool> Publish(rdma::Endpoint& endpoint,
                                    rdma::GlobalAddress word, uint64_t gtid,
                                    uint64_t* last) {
  while (true) {
    uint64_t old = 0;
    rdma::Batch batch;
    batch.CompareAndSwap(word, *last, gtid, &old);
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
    if (old == *last) {
      *last = gtid;
      return true;
    }
    // A reclaimer marked an earlier gtid of the slot aborted (it never
    // names a later one): try again over it, unless it is this one.
    *last = old;
    if (old == Aborted(gtid)) return false;
  }
}

// A failed participant's reclaimer decides its prepared branch of `gtid`,
// whose coordinator may be alive: true to commit. See above.
inline absl::StatusOr<bool> Resolve(rdma::Endpoint& endpoint,
                                    const rdma::Fabric& fabric, uint64_t gtid) {
  const rdma::GlobalAddress word =
      DecisionWord(fabric, wal::CoordinatorOf(gtid), SlotOfGtid(gtid));
  uint64_t seen = 0;
  if (absl::Status s = endpoint.Read(word, &seen, 8); !s.ok()) return s;
  while (true) {
    if (seen == gtid) return true;
    // Aborted already, or the slot decided a later transaction: its
    // coordinator had moved past gtid without deciding it commit.
    if ((seen & ~kAbortedBit) >= gtid) return false;
    uint64_t old = 0;
    rdma::Batch batch;
    batch.CompareAndSwap(word, seen, Aborted(gtid), &old);
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
    if (old == seen) return false;
    seen = old;
  }
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
