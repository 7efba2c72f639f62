#ifndef STRAND_WAL_TWO_PHASE_RECORDS_H_
#define STRAND_WAL_TWO_PHASE_RECORDS_H_

// Payloads of the two-phase commit records (log_format.h, RecordType
// kPrepare and kDistributedCommit): a small prefix before the usual redo
// ops (redo_record.h), little endian.
//
//   kPrepare            coordinator node id u32, then redo ops
//   kDistributedCommit  participant count u32, participant ids u32 each,
//                       then the coordinator's redo ops
//
// A global transaction id (the records' txn_id) names the coordinator in
// its top 16 bits and the coordinator's sequence number below, so ids of
// different coordinators never collide.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strand::wal {

inline uint64_t GlobalTxnId(uint32_t coordinator, uint64_t sequence) {
  return uint64_t{coordinator} << 48 | (sequence & ((uint64_t{1} << 48) - 1));
}
inline uint32_t CoordinatorOf(uint64_t global_txn_id) {
  return static_cast<uint32_t>(global_txn_id >> 48);
}

std::string EncodePreparePayload(uint32_t coordinator, std::string_view redo);
std::string EncodeDistributedCommitPayload(
    const std::vector<uint32_t>& participants, std::string_view redo);

struct PreparePayload {
  uint32_t coordinator = 0;
  std::string_view redo;  // into the decoded payload
};
struct DistributedCommitPayload {
  std::vector<uint32_t> participants;
  std::string_view redo;
};

// DataLoss if the prefix is cut short (the record's CRC matched, so this
// is a writer's bug, not a torn write).
absl::StatusOr<PreparePayload> DecodePreparePayload(std::string_view payload);
absl::StatusOr<DistributedCommitPayload> DecodeDistributedCommitPayload(
    std::string_view payload);

}  // namespace strand::wal

#endif  // STRAND_WAL_TWO_PHASE_RECORDS_H_
