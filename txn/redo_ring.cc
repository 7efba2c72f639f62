#include "txn/redo_ring.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/coding.h"
#include "cc/root_words.h"
#include "rdma/batch.h"
#include "rdma/memory_node_layout.h"
#include "txn/node_words.h"
#include "wal/crc32c.h"

namespace strand::txn {
namespace {

constexpr uint64_t kRingMagic = 0x474e49524f444552;  // "REDORING"
constexpr uint32_t kRecordMagic = 0x52444f52;        // "RODR"
constexpr uint32_t kDoneOffset = 8;
constexpr uint32_t kCrcFrom = 16;  // the CRC covers the record from here
constexpr uint32_t kWriteHeaderBytes = 16;
// Zeroing and reading go in pieces of this many bytes.
constexpr uint32_t kPieceBytes = 256 << 10;

uint64_t Pad8(uint64_t bytes) { return (bytes + 7) / 8 * 8; }

absl::StatusOr<NodeWords> RingWords(int compute_nodes) {
  return NodeWords::At(cc::kRedoRingsOffset, cc::kRedoRingsBytes,
                       compute_nodes);
}

// Writes zeros over [base, base + bytes), several pieces per round trip.
absl::Status Zero(rdma::Endpoint& endpoint, rdma::GlobalAddress base,
                  uint64_t bytes) {
  static const std::vector<uint8_t> zeros(kPieceBytes, 0);
  constexpr int kPiecesPerBatch = 8;
  for (uint64_t at = 0; at < bytes;) {
    rdma::Batch batch;
    for (int i = 0; i < kPiecesPerBatch && at < bytes; ++i) {
      const auto length =
          static_cast<uint32_t>(std::min<uint64_t>(kPieceBytes, bytes - at));
      batch.Write(base + at, zeros.data(), length);
      at += length;
    }
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RedoRing>> RedoRing::Open(
    rdma::Fabric& fabric, rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
    const Options& options) {
  if (options.bytes < kMinBytes || options.bytes % kUnitBytes != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a redo ring of %d bytes: it needs at least %d KiB, in multiples of "
        "%d bytes",
        options.bytes, kMinBytes >> 10, kUnitBytes));
  }
  absl::StatusOr<NodeWords> words = RingWords(fabric.compute_node_count());
  if (!words.ok()) return words.status();
  absl::StatusOr<uint64_t> raw = words->Read(endpoint, node);
  if (!raw.ok()) return raw.status();
  rdma::GlobalAddress base = rdma::GlobalAddress::FromRaw(*raw);
  if (!base.is_null()) {
    uint64_t header[2] = {0, 0};
    if (absl::Status s = endpoint.Read(base, header, sizeof(header)); !s.ok()) {
      return s;
    }
    if (header[0] != kRingMagic || header[1] != options.bytes) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "compute node %d's redo ring at %s holds %d bytes, not %d: restart "
          "it with the ring size the deployment started with",
          node, base.ToString(), header[1], options.bytes));
    }
  } else {
    // Whole chunks from the bump pointer, so no GCL allocator ever hands
    // out its bytes (memory_node_layout.h).
    const auto mn = static_cast<rdma::MemoryNodeId>(
        node % static_cast<uint32_t>(fabric.memory_node_count()));
    const uint64_t chunk = fabric.chunk_bytes();
    const uint64_t span = (options.bytes + chunk - 1) / chunk * chunk;
    absl::StatusOr<uint64_t> offset = endpoint.FetchAndAdd(
        rdma::GlobalAddress(mn, rdma::kNextChunkWordOffset), span);
    if (!offset.ok()) return offset.status();
    const uint64_t region = fabric.memory_node_bytes();
    if (*offset > region || span > region - *offset) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "no room for compute node %d's redo ring of %d MiB on memory node "
          "%d: raise --pool_mb or lower --redo_ring_mb",
          node, options.bytes >> 20, mn));
    }
    base = rdma::GlobalAddress(mn, *offset);
    if (absl::Status s = words->Set(endpoint, node, base.raw()); !s.ok()) {
      return s;
    }
  }
  // Records of an earlier incarnation were taken over by whoever
  // reclaimed it; none may be read as this one's.
  if (absl::Status s = Zero(endpoint, base, options.bytes); !s.ok()) return s;
  const uint64_t header[3] = {kRingMagic, options.bytes, node};
  if (absl::Status s = endpoint.Write(base, header, sizeof(header)); !s.ok()) {
    return s;
  }
  return std::unique_ptr<RedoRing>(new RedoRing(base, options));
}

int64_t RedoRing::Place(uint32_t units) const {
  if (entries_.empty()) {
    return tail_units_ + units <= capacity_units_ ? tail_units_ : 0;
  }
  const uint64_t first = entries_.front().offset_units;
  const uint64_t end = tail_units_;
  if (end > first) {  // live records in [first, end): room after, or before
    if (end + units <= capacity_units_) return static_cast<int64_t>(end);
    if (units <= first) return 0;
    return -1;
  }
  // Wrapped: live records in [first, cap) and [0, end).
  if (end + units <= first) return static_cast<int64_t>(end);
  return -1;
}

void RedoRing::Retire() {
  const uint64_t mark = durable_mark_ ? durable_mark_() : ~uint64_t{0};
  while (!entries_.empty() && entries_.front().done &&
         entries_.front().ts <= mark) {
    entries_.pop_front();
    ++first_id_;
  }
}

absl::StatusOr<RedoRing::Slot> RedoRing::Encode(uint64_t ts,
                                                absl::Span<const Write> writes,
                                                const Logged& logged,
                                                std::string* record) {
  uint64_t write_bytes = 0;
  for (const Write& w : writes) {
    write_bytes += kWriteHeaderBytes + Pad8(w.bytes.size());
  }
  const uint64_t bytes =
      kHeaderBytes + write_bytes + Pad8(logged.payload.size());
  const uint64_t units = (bytes + kUnitBytes - 1) / kUnitBytes;
  if (units > capacity_units_ / 2) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "a commit of %d bytes does not fit in half the redo ring of %d MiB: "
        "raise --redo_ring_mb",
        bytes, options_.bytes >> 20));
  }
  record->assign(units * kUnitBytes, '\0');
  EncodeFixed<uint32_t>(record->data(), kRecordMagic);
  EncodeFixed<uint64_t>(record->data() + 16, ts);
  EncodeFixed<uint64_t>(record->data() + 24, logged.txn_id);
  EncodeFixed<uint32_t>(record->data() + 32, static_cast<uint32_t>(units));
  EncodeFixed<uint8_t>(record->data() + 36, static_cast<uint8_t>(logged.type));
  EncodeFixed<uint32_t>(record->data() + 40,
                        static_cast<uint32_t>(writes.size()));
  EncodeFixed<uint32_t>(record->data() + 44,
                        static_cast<uint32_t>(logged.payload.size()));
  EncodeFixed<uint32_t>(record->data() + 48,
                        static_cast<uint32_t>(write_bytes));
  size_t at = kHeaderBytes;
  for (const Write& w : writes) {
    EncodeFixed<uint64_t>(record->data() + at, w.remote.raw());
    EncodeFixed<uint32_t>(record->data() + at + 8,
                          static_cast<uint32_t>(w.bytes.size()));
    if (!w.bytes.empty()) {  // memcpy's pointers may not be null
      std::memcpy(record->data() + at + kWriteHeaderBytes, w.bytes.data(),
                  w.bytes.size());
    }
    at += kWriteHeaderBytes + Pad8(w.bytes.size());
  }
  if (!logged.payload.empty()) {
    std::memcpy(record->data() + at, logged.payload.data(),
                logged.payload.size());
  }
  EncodeFixed<uint32_t>(
      record->data() + 4,
      wal::Crc32c(std::string_view(*record).substr(kCrcFrom)));

  const absl::Time deadline = absl::Now() + options_.full_timeout;
  absl::MutexLock lock(&mu_);
  int64_t offset;
  for (;;) {
    Retire();
    offset = Place(static_cast<uint32_t>(units));
    if (offset >= 0) break;
    // The node mark moves on the log's flusher, which does not signal:
    // look again soon.
    freed_.WaitWithTimeout(&mu_, absl::Microseconds(100));
    if (absl::Now() > deadline) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the redo ring of %d MiB (--redo_ring_mb) stayed full for %s: its "
          "%d records wait for their commits or for the log to make them "
          "durable",
          options_.bytes >> 20, absl::FormatDuration(options_.full_timeout),
          entries_.size()));
    }
  }
  entries_.push_back(
      {static_cast<uint64_t>(offset), static_cast<uint32_t>(units), ts, false});
  tail_units_ = static_cast<uint64_t>(offset) + units;
  Slot slot;
  slot.id = first_id_ + entries_.size() - 1;
  slot.record =
      base_ + kHeaderBytes + static_cast<uint64_t>(offset) * kUnitBytes;
  slot.done = slot.record + kDoneOffset;
  return slot;
}

void RedoRing::Done(const Slot& slot) {
  absl::MutexLock lock(&mu_);
  if (slot.id < first_id_) return;
  entries_[slot.id - first_id_].done = true;
  freed_.SignalAll();
}

size_t RedoRing::live_records() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

absl::StatusOr<RedoRing::Span> RedoRing::Where(rdma::Endpoint& endpoint,
                                               rdma::ComputeNodeId node,
                                               uint64_t chunk_bytes) {
  Span span;
  absl::StatusOr<NodeWords> words = RingWords(node + 1);
  if (!words.ok()) return words.status();
  absl::StatusOr<uint64_t> raw = words->Read(endpoint, node);
  if (!raw.ok()) return raw.status();
  span.start = rdma::GlobalAddress::FromRaw(*raw);
  if (span.start.is_null()) return span;
  uint64_t header[2] = {0, 0};
  if (absl::Status s = endpoint.Read(span.start, header, sizeof(header));
      !s.ok()) {
    return s;
  }
  if (header[0] != kRingMagic) {
    return absl::DataLossError(
        absl::StrFormat("compute node %d's redo ring at %s has no ring header",
                        node, span.start.ToString()));
  }
  span.bytes = (header[1] + chunk_bytes - 1) / chunk_bytes * chunk_bytes;
  return span;
}

absl::StatusOr<std::vector<RedoRing::Record>> RedoRing::Read(
    rdma::Endpoint& endpoint, rdma::ComputeNodeId node) {
  std::vector<Record> records;
  // The words cover every node id the fabric allows.
  absl::StatusOr<NodeWords> words = RingWords(node + 1);
  if (!words.ok()) return words.status();
  absl::StatusOr<uint64_t> raw = words->Read(endpoint, node);
  if (!raw.ok()) return raw.status();
  const rdma::GlobalAddress base = rdma::GlobalAddress::FromRaw(*raw);
  if (base.is_null()) return records;
  uint64_t header[2] = {0, 0};
  if (absl::Status s = endpoint.Read(base, header, sizeof(header)); !s.ok()) {
    return s;
  }
  if (header[0] != kRingMagic) {
    return absl::DataLossError(
        absl::StrFormat("compute node %d's redo ring at %s has no ring header",
                        node, base.ToString()));
  }
  const uint64_t bytes = header[1];
  std::vector<uint8_t> ring(bytes);
  for (uint64_t at = 0; at < bytes;) {
    const auto length =
        static_cast<uint32_t>(std::min<uint64_t>(kPieceBytes, bytes - at));
    if (absl::Status s = endpoint.Read(base + at, ring.data() + at, length);
        !s.ok()) {
      return s;
    }
    at += length;
  }
  const uint64_t capacity_units = (bytes - kHeaderBytes) / kUnitBytes;
  const uint8_t* units = ring.data() + kHeaderBytes;
  for (uint64_t u = 0; u < capacity_units;) {
    const uint8_t* r = units + u * kUnitBytes;
    const uint32_t count = DecodeFixed<uint32_t>(r + 32);
    if (DecodeFixed<uint32_t>(r) != kRecordMagic || count == 0 ||
        count > capacity_units - u ||
        DecodeFixed<uint32_t>(r + 4) !=
            wal::Crc32c(std::string_view(reinterpret_cast<const char*>(r),
                                         uint64_t{count} * kUnitBytes)
                            .substr(kCrcFrom))) {
      ++u;
      continue;
    }
    Record record;
    record.commit_ts = DecodeFixed<uint64_t>(r + 16);
    record.txn_id = DecodeFixed<uint64_t>(r + 24);
    record.type = static_cast<wal::RecordType>(DecodeFixed<uint8_t>(r + 36));
    record.done = DecodeFixed<uint64_t>(r + kDoneOffset) == record.commit_ts;
    const uint32_t write_count = DecodeFixed<uint32_t>(r + 40);
    const uint32_t redo_bytes = DecodeFixed<uint32_t>(r + 44);
    const uint32_t write_bytes = DecodeFixed<uint32_t>(r + 48);
    const uint8_t* w = r + kHeaderBytes;
    for (uint32_t i = 0; i < write_count; ++i) {
      const uint32_t length = DecodeFixed<uint32_t>(w + 8);
      record.writes.push_back(
          {rdma::GlobalAddress::FromRaw(DecodeFixed<uint64_t>(w)),
           std::string(reinterpret_cast<const char*>(w) + kWriteHeaderBytes,
                       length)});
      w += kWriteHeaderBytes + Pad8(length);
    }
    const uint8_t* redo = r + kHeaderBytes + write_bytes;
    record.redo.assign(reinterpret_cast<const char*>(redo), redo_bytes);
    records.push_back(std::move(record));
    u += count;
  }
  return records;
}

}  // namespace strand::txn
