#include "wal/failover_records.h"

#include "absl/strings/str_format.h"
#include "base/coding.h"

namespace strand::wal {
namespace {

constexpr size_t kAdoptedPrefixBytes = 8;
constexpr size_t kExclusionBytes = 16;

}  // namespace

std::string EncodeAdoptedPayload(uint32_t node, RecordType type,
                                 std::string_view payload) {
  std::string out;
  out.reserve(kAdoptedPrefixBytes + payload.size());
  PutFixed<uint32_t>(&out, node);
  PutFixed<uint32_t>(&out, static_cast<uint8_t>(type));
  out.append(payload);
  return out;
}

absl::StatusOr<AdoptedPayload> DecodeAdoptedPayload(std::string_view payload) {
  if (payload.size() < kAdoptedPrefixBytes) {
    return absl::DataLossError(absl::StrFormat(
        "an adopted record of %d bytes has no prefix", payload.size()));
  }
  AdoptedPayload p;
  p.node = DecodeFixed<uint32_t>(payload.data());
  const uint32_t type = DecodeFixed<uint32_t>(payload.data() + 4);
  if (type != static_cast<uint8_t>(RecordType::kCommit) &&
      type != static_cast<uint8_t>(RecordType::kPrepare) &&
      type != static_cast<uint8_t>(RecordType::kDistributedCommit)) {
    return absl::DataLossError(
        absl::StrFormat("an adopted record of type %d", type));
  }
  p.type = static_cast<RecordType>(type);
  p.payload = payload.substr(kAdoptedPrefixBytes);
  return p;
}

std::string EncodeExclusionPayload(uint64_t node_mark, uint64_t oracle) {
  std::string out;
  PutFixed<uint64_t>(&out, node_mark);
  PutFixed<uint64_t>(&out, oracle);
  return out;
}

absl::StatusOr<Exclusion> DecodeExclusion(uint64_t txn_id,
                                          std::string_view payload) {
  if (payload.size() != kExclusionBytes) {
    return absl::DataLossError(
        absl::StrFormat("an exclusion record of %d bytes, not %d",
                        payload.size(), kExclusionBytes));
  }
  Exclusion e;
  e.node = static_cast<uint32_t>(txn_id);
  e.node_mark = DecodeFixed<uint64_t>(payload.data());
  e.oracle = DecodeFixed<uint64_t>(payload.data() + 8);
  return e;
}

}  // namespace strand::wal
