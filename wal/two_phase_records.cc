#include "wal/two_phase_records.h"

#include "absl/strings/str_format.h"
#include "base/coding.h"

namespace strand::wal {

std::string EncodePreparePayload(uint32_t coordinator, std::string_view redo) {
  std::string out;
  out.reserve(4 + redo.size());
  PutFixed<uint32_t>(&out, coordinator);
  out.append(redo);
  return out;
}

std::string EncodeDistributedCommitPayload(
    const std::vector<uint32_t>& participants, std::string_view redo) {
  std::string out;
  out.reserve(4 + 4 * participants.size() + redo.size());
  PutFixed<uint32_t>(&out, static_cast<uint32_t>(participants.size()));
  for (uint32_t p : participants) PutFixed<uint32_t>(&out, p);
  out.append(redo);
  return out;
}

absl::StatusOr<PreparePayload> DecodePreparePayload(std::string_view payload) {
  PreparePayload p;
  if (!GetFixed(&payload, &p.coordinator)) {
    return absl::DataLossError("prepare record shorter than its prefix");
  }
  p.redo = payload;
  return p;
}

absl::StatusOr<DistributedCommitPayload> DecodeDistributedCommitPayload(
    std::string_view payload) {
  DistributedCommitPayload p;
  uint32_t count = 0;
  if (!GetFixed(&payload, &count) || payload.size() / 4 < count) {
    return absl::DataLossError(absl::StrFormat(
        "distributed commit record too short for its %d participants", count));
  }
  p.participants.resize(count);
  for (uint32_t& id : p.participants) GetFixed(&payload, &id);
  p.redo = payload;
  return p;
}

}  // namespace strand::wal
