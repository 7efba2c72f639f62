#include "wal/two_phase_records.h"

#include <cstring>

#include "absl/strings/str_format.h"

namespace strand::wal {
namespace {

void PutU32(std::string& out, uint32_t v) {
  char bytes[4];
  std::memcpy(bytes, &v, 4);
  out.append(bytes, 4);
}

bool GetU32(std::string_view& in, uint32_t* v) {
  if (in.size() < 4) return false;
  std::memcpy(v, in.data(), 4);
  in.remove_prefix(4);
  return true;
}

}  // namespace

std::string EncodePreparePayload(uint32_t coordinator, std::string_view redo) {
  std::string out;
  out.reserve(4 + redo.size());
  PutU32(out, coordinator);
  out.append(redo);
  return out;
}

std::string EncodeDistributedCommitPayload(
    const std::vector<uint32_t>& participants, std::string_view redo) {
  std::string out;
  out.reserve(4 + 4 * participants.size() + redo.size());
  PutU32(out, static_cast<uint32_t>(participants.size()));
  for (uint32_t p : participants) PutU32(out, p);
  out.append(redo);
  return out;
}

absl::StatusOr<PreparePayload> DecodePreparePayload(std::string_view payload) {
  PreparePayload p;
  if (!GetU32(payload, &p.coordinator)) {
    return absl::DataLossError("prepare record shorter than its prefix");
  }
  p.redo = payload;
  return p;
}

absl::StatusOr<DistributedCommitPayload> DecodeDistributedCommitPayload(
    std::string_view payload) {
  DistributedCommitPayload p;
  uint32_t count = 0;
  if (!GetU32(payload, &count) || payload.size() / 4 < count) {
    return absl::DataLossError(absl::StrFormat(
        "distributed commit record too short for its %d participants", count));
  }
  p.participants.resize(count);
  for (uint32_t& id : p.participants) GetU32(payload, &id);
  p.redo = payload;
  return p;
}

}  // namespace strand::wal
