#ifndef STRAND_CC_ROOT_WORDS_H_
#define STRAND_CC_ROOT_WORDS_H_

// Well-known 8-byte words in memory node 0's root area (see
// rdma/memory_node_layout.h): how a compute node finds what another node
// created without asking anyone. Every layer's word is listed here, so no
// two layers ever pick the same one. Words start at zero; a layer installs
// its value with GclManager::CompareAndSwap(word, 0, value) and whoever loses
// the race uses the winner's.

#include <cstdint>

#include "rdma/global_address.h"
#include "rdma/memory_node_layout.h"

namespace strand::cc {

enum class RootWord : uint32_t {
  kCatalog = 0,          // storage/: address of the catalog's first GCL
  kTimestampOracle = 1,  // txn/: the global timestamp counter (FAA)
  kDatabaseId = 2,       // wal/: id of the database the pool holds
  kReclaimEpoch = 3,     // txn/: the epoch of deleted slots' reuse (FAA)
  // engine/: every compute node may delete its log's records up to this
  // commit timestamp (a verified checkpoint holds them; only grows).
  kLogTruncateTs = 4,
  // engine/: the database's id, once the process hosting compute node 0
  // has recovered the pool (and, resuming in place, checkpointed it and
  // dropped the logs that covers); other processes wait for it before they
  // log. 0 until then.
  kRecoveredDatabase = 5,
};

inline rdma::GlobalAddress RootWordAddress(RootWord word) {
  return rdma::GlobalAddress(
      0, rdma::kRootAreaOffset + 8 * static_cast<uint64_t>(word));
}

// engine/cluster_board.h: the board where the compute processes of a
// deployment that spans processes meet (steps, heartbeats, results), a
// fixed slot per compute node.
inline constexpr uint64_t kClusterBoardOffset = rdma::kRootAreaOffset + 1024;
inline constexpr uint64_t kClusterBoardBytes = 4096;
static_assert(kClusterBoardOffset + kClusterBoardBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/pool_epochs.h: one 8-byte word per compute node, by node id, the
// epoch bound that node's process published last.
inline constexpr uint64_t kEpochBoundsOffset =
    kClusterBoardOffset + kClusterBoardBytes;
inline constexpr uint64_t kEpochBoundsBytes = 512;
static_assert(kEpochBoundsOffset + kEpochBoundsBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/commit_watermark.h: one 8-byte word per compute node, by node id, the
// durable timestamp watermark that node published last.
inline constexpr uint64_t kDurableMarksOffset =
    kEpochBoundsOffset + kEpochBoundsBytes;
inline constexpr uint64_t kDurableMarksBytes = 512;
static_assert(kDurableMarksOffset + kDurableMarksBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/membership.h: the live compute nodes (a bitmap word), the membership
// epoch, the reclaim stages of failed nodes (three bitmap words), then one
// heartbeat word per compute node.
inline constexpr uint64_t kMembershipOffset =
    kDurableMarksOffset + kDurableMarksBytes;
inline constexpr uint64_t kMembershipBytes = 512;
static_assert(kMembershipOffset + kMembershipBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/redo_ring.h: one 8-byte word per compute node, by node id, the
// address of that node's redo ring (0: none yet).
inline constexpr uint64_t kRedoRingsOffset =
    kMembershipOffset + kMembershipBytes;
inline constexpr uint64_t kRedoRingsBytes = 512;
static_assert(kRedoRingsOffset + kRedoRingsBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/membership.h: one 8-byte word per compute node, by node id, the
// membership epoch whose view that node applied last.
inline constexpr uint64_t kSeenEpochsOffset =
    kRedoRingsOffset + kRedoRingsBytes;
inline constexpr uint64_t kSeenEpochsBytes = 512;
static_assert(kSeenEpochsOffset + kSeenEpochsBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// partition/decision_board.h: partitioned mode's commit decisions, one
// 8-byte word per (coordinator node, coordinator slot), on memory node
// (node % memory nodes) like that node's redo ring.
inline constexpr uint64_t kDecisionBoardOffset =
    kSeenEpochsOffset + kSeenEpochsBytes;
inline constexpr uint64_t kDecisionBoardSlots = 64;  // per coordinator node
inline constexpr uint64_t kDecisionBoardBytes = 64 * kDecisionBoardSlots * 8;
static_assert(kDecisionBoardOffset + kDecisionBoardBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

// txn/membership.h: one 8-byte word per compute node, by node id, the
// survivor that claimed the reclaim of that node's last failure, plus one
// (0: nobody yet).
inline constexpr uint64_t kReclaimersOffset =
    kDecisionBoardOffset + kDecisionBoardBytes;
inline constexpr uint64_t kReclaimersBytes = 512;
static_assert(kReclaimersOffset + kReclaimersBytes <=
              rdma::kRootAreaOffset + rdma::kRootAreaBytes);

}  // namespace strand::cc

#endif  // STRAND_CC_ROOT_WORDS_H_
