#ifndef STRAND_WAL_FAILOVER_RECORDS_H_
#define STRAND_WAL_FAILOVER_RECORDS_H_

// Payloads of the records a survivor logs when it reclaims a failed
// compute node (log_format.h, kAdopted and kNodeExcluded;
// docs/design/node_failure.md), little endian.
//
//   kAdopted       original node u32, original type u8, 3 zero bytes,
//                  then the original payload
//   kNodeExcluded  node_mark u64, oracle u64 (the excluded node is the
//                  record's txn_id)

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "wal/log_format.h"

namespace strand::wal {

struct AdoptedPayload {
  uint32_t node = 0;
  RecordType type = RecordType::kCommit;
  std::string_view payload;  // into the decoded payload
};
std::string EncodeAdoptedPayload(uint32_t node, RecordType type,
                                 std::string_view payload);
// DataLoss if cut short or the original type is not one a commit logs.
absl::StatusOr<AdoptedPayload> DecodeAdoptedPayload(std::string_view payload);

// Node `txn_id` of a kNodeExcluded record: its records with
// node_mark < commit_ts <= oracle are not part of the history.
struct Exclusion {
  uint32_t node = 0;
  uint64_t node_mark = 0;
  uint64_t oracle = 0;
  bool Drops(uint32_t record_node, uint64_t commit_ts) const {
    return record_node == node && commit_ts > node_mark && commit_ts <= oracle;
  }
};
std::string EncodeExclusionPayload(uint64_t node_mark, uint64_t oracle);
absl::StatusOr<Exclusion> DecodeExclusion(uint64_t txn_id,
                                          std::string_view payload);

}  // namespace strand::wal

#endif  // STRAND_WAL_FAILOVER_RECORDS_H_
