#include "wal/failover_records.h"

#include <cstring>

#include "absl/strings/str_format.h"

namespace strand::wal {
namespace {

constexpr size_t kAdoptedPrefixBytes = 8;
constexpr size_t kExclusionBytes = 16;

template <typename T>
void Append(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}
template <typename T>
T Get(std::string_view in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return value;
}

}  // namespace

std::string EncodeAdoptedPayload(uint32_t node, RecordType type,
                                 std::string_view payload) {
  std::string out;
  out.reserve(kAdoptedPrefixBytes + payload.size());
  Append<uint32_t>(out, node);
  Append<uint32_t>(out, static_cast<uint8_t>(type));
  out.append(payload);
  return out;
}

absl::StatusOr<AdoptedPayload> DecodeAdoptedPayload(std::string_view payload) {
  if (payload.size() < kAdoptedPrefixBytes) {
    return absl::DataLossError(absl::StrFormat(
        "an adopted record of %d bytes has no prefix", payload.size()));
  }
  AdoptedPayload p;
  p.node = Get<uint32_t>(payload, 0);
  const uint32_t type = Get<uint32_t>(payload, 4);
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
  Append<uint64_t>(out, node_mark);
  Append<uint64_t>(out, oracle);
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
  e.node_mark = Get<uint64_t>(payload, 0);
  e.oracle = Get<uint64_t>(payload, 8);
  return e;
}

}  // namespace strand::wal
