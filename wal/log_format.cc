#include "wal/log_format.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/coding.h"
#include "wal/crc32c.h"

namespace strand::wal {
namespace {

constexpr size_t kHeaderCrcOffset = 12;
// The CRC covers bytes 0..55 up to version 5, 0..63 from version 6 (the
// previous segment's largest commit timestamp).
constexpr size_t kHeaderCoveredBytesV5 = 56;
constexpr size_t kHeaderCoveredBytes = 64;

size_t CoveredBytes(uint32_t format_version) {
  return format_version >= 6 ? kHeaderCoveredBytes : kHeaderCoveredBytesV5;
}

template <typename T>
void Put(char* dst, size_t offset, T value) {
  EncodeFixed<T>(dst + offset, value);
}

template <typename T>
T Get(const char* src, size_t offset) {
  return DecodeFixed<T>(src + offset);
}

uint32_t SegmentHeaderCrc(const char* block, size_t covered) {
  char copy[kHeaderCoveredBytes];
  std::memcpy(copy, block, covered);
  Put<uint32_t>(copy, kHeaderCrcOffset, 0);
  return Crc32c(std::string_view(copy, covered));
}

// Bytes 12..15 of a record: how far behind its LSN the durable LSN was;
// 0 (unknown) if it does not fit, never a value that claims more.
uint32_t DurableDistance(const RecordHeader& h) {
  if (h.durable_lsn == 0 || h.durable_lsn >= h.lsn) return 0;
  const uint64_t distance = h.lsn - h.durable_lsn;
  return distance > UINT32_MAX ? 0 : static_cast<uint32_t>(distance);
}

}  // namespace

void EncodeSegmentHeader(const SegmentHeader& h, char* block) {
  std::memset(block, 0, kSegmentHeaderBytes);
  Put<uint64_t>(block, 0, kSegmentMagic);
  Put<uint32_t>(block, 8, h.format_version);
  Put<uint64_t>(block, 16, h.database_id);
  Put<uint32_t>(block, 24, h.compute_node_id);
  Put<uint32_t>(block, 28, h.flags);
  Put<uint64_t>(block, 32, h.segment_index);
  Put<uint64_t>(block, 40, h.first_lsn);
  Put<uint64_t>(block, 48, h.segment_bytes);
  if (h.format_version >= 6) {
    Put<uint64_t>(block, 56, h.previous_max_commit_ts_plus_one);
  }
  Put<uint32_t>(block, kHeaderCrcOffset,
                SegmentHeaderCrc(block, CoveredBytes(h.format_version)));
}

absl::StatusOr<SegmentHeader> DecodeSegmentHeader(std::string_view block,
                                                  uint64_t expected_database_id,
                                                  std::string_view path) {
  if (block.size() < kHeaderCoveredBytes ||
      Get<uint64_t>(block.data(), 0) != kSegmentMagic) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a strand log segment (bad magic or too short)", path));
  }
  // Magic and version never move, so a newer format is recognized before
  // anything of its layout is assumed.
  SegmentHeader h;
  h.format_version = Get<uint32_t>(block.data(), 8);
  if (h.format_version > kFormatVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has log format version %d, newer than version %d this binary "
        "reads; recover it with a newer strand",
        path, h.format_version, kFormatVersion));
  }
  if (Get<uint32_t>(block.data(), kHeaderCrcOffset) !=
      SegmentHeaderCrc(block.data(), CoveredBytes(h.format_version))) {
    return absl::DataLossError(
        absl::StrFormat("%s: segment header CRC mismatch", path));
  }
  h.database_id = Get<uint64_t>(block.data(), 16);
  h.compute_node_id = Get<uint32_t>(block.data(), 24);
  h.flags = Get<uint32_t>(block.data(), 28);  // reserved zero before v5
  h.segment_index = Get<uint64_t>(block.data(), 32);
  h.first_lsn = Get<uint64_t>(block.data(), 40);
  h.segment_bytes = Get<uint64_t>(block.data(), 48);
  h.previous_max_commit_ts_plus_one =
      h.format_version >= 6 ? Get<uint64_t>(block.data(), 56) : 0;
  if (h.database_id != expected_database_id) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s belongs to database %#x, not to this database %#x; refusing to "
        "replay another database's log",
        path, h.database_id, expected_database_id));
  }
  return h;
}

void EncodeRecord(const RecordHeader& h, std::string_view payload, char* dst) {
  const size_t total = EncodedRecordBytes(payload.size());
  std::memset(dst, 0, kRecordHeaderBytes);
  Put<uint32_t>(dst, 4, static_cast<uint32_t>(payload.size()));
  Put<uint8_t>(dst, 8, static_cast<uint8_t>(h.type));
  Put<uint32_t>(dst, 12, DurableDistance(h));
  Put<uint64_t>(dst, 16, h.lsn);
  Put<uint64_t>(dst, 24, h.txn_id);
  Put<uint64_t>(dst, 32, h.commit_ts);
  if (!payload.empty()) {
    std::memcpy(dst + kRecordHeaderBytes, payload.data(), payload.size());
  }
  const size_t used = kRecordHeaderBytes + payload.size();
  std::memset(dst + used, 0, total - used);
  Put<uint32_t>(dst, 0, Crc32c(std::string_view(dst + 4, used - 4)));
}

DecodeResult DecodeRecord(std::string_view bytes, RecordHeader* header,
                          std::string_view* payload) {
  if (bytes.size() < kRecordHeaderBytes) {
    return bytes.find_first_not_of('\0') == std::string_view::npos
               ? DecodeResult::kEnd
               : DecodeResult::kCorrupt;
  }
  const char* p = bytes.data();
  const uint32_t crc = Get<uint32_t>(p, 0);
  const uint32_t length = Get<uint32_t>(p, 4);
  if (crc == 0 && length == 0 && Get<uint64_t>(p, 8) == 0 &&
      Get<uint64_t>(p, 16) == 0) {
    return DecodeResult::kEnd;
  }
  if (length > bytes.size() - kRecordHeaderBytes) return DecodeResult::kCorrupt;
  const std::string_view covered(p + 4, kRecordHeaderBytes - 4 + length);
  if (Crc32c(covered) != crc) return DecodeResult::kCorrupt;
  const uint8_t type = Get<uint8_t>(p, 8);
  if (type < static_cast<uint8_t>(RecordType::kCommit) ||
      type > kMaxRecordType) {
    return DecodeResult::kBadType;
  }
  header->type = static_cast<RecordType>(type);
  header->payload_bytes = length;
  header->lsn = Get<uint64_t>(p, 16);
  header->txn_id = Get<uint64_t>(p, 24);
  header->commit_ts = Get<uint64_t>(p, 32);
  const uint32_t distance = Get<uint32_t>(p, 12);
  header->durable_lsn =
      distance == 0 || distance > header->lsn ? 0 : header->lsn - distance;
  *payload = std::string_view(p + kRecordHeaderBytes, length);
  return DecodeResult::kOk;
}

std::string EncodeWatermarkPayload(uint64_t cluster_watermark) {
  std::string out(sizeof(cluster_watermark), '\0');
  Put<uint64_t>(out.data(), 0, cluster_watermark);
  return out;
}

absl::StatusOr<uint64_t> DecodeWatermarkPayload(std::string_view payload) {
  if (payload.size() != sizeof(uint64_t)) {
    return absl::DataLossError(absl::StrFormat(
        "watermark record of %d bytes, expected 8", payload.size()));
  }
  return Get<uint64_t>(payload.data(), 0);
}

std::string NodeDirectory(std::string_view wal_dir, uint32_t compute_node_id) {
  return absl::StrFormat("%s/node-%d", wal_dir, compute_node_id);
}

std::string SegmentPath(std::string_view node_dir, uint64_t segment_index) {
  return absl::StrFormat("%s/%08d.wal", node_dir, segment_index);
}

}  // namespace strand::wal
