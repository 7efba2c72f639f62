#ifndef STRAND_WAL_LOG_FORMAT_H_
#define STRAND_WAL_LOG_FORMAT_H_

// The on-disk format of strand's write-ahead log (format version 7). Each
// compute node writes its own log, <wal_dir>/node-<id>/ of segment files
// 00000001.wal, 00000002.wal, ..., each preallocated to a fixed size: a
// 4 KiB header block, then records back to back (8-byte aligned), zeros
// after; records never straddle segments. A record is a 40-byte header
// (CRC32C, type, LSN, txn id, commit timestamp, durable distance) and a
// payload (kCommit: the transaction's whole write set as redo ops,
// redo_record.h), atomic by its one CRC: redo only, no undo.
//
// Invariants: LSNs number one node's records 1, 2, 3, ... without gaps
// across segments, each segment header naming its first; a record is
// accepted only if its CRC matches and its LSN is the next one. Each record
// carries the writer's durable LSN at its append (RecordHeader::
// durable_lsn), which lets a reader tell a crash's torn tail from damage
// (log_reader.h).
// Every segment header names the database and format version: a reader
// accepts every version up to its own and refuses newer ones and other
// databases' logs, naming the file.
//
// Byte layout, version history, and why redo-only logging replayed in
// commit-timestamp order suffices for recovery: docs/design/wal.md.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strand::wal {

// Log sequence number: 1, 2, 3, ... per compute node; 0 means "none".
using Lsn = uint64_t;

inline constexpr uint64_t kSegmentMagic = 0x4c57444e41525453;  // "STRANDWL"
inline constexpr uint32_t kFormatVersion = 7;
// Unit of O_DIRECT I/O and of the segment header.
inline constexpr size_t kBlockBytes = 4096;
inline constexpr size_t kSegmentHeaderBytes = kBlockBytes;
inline constexpr size_t kRecordHeaderBytes = 40;
inline constexpr size_t kRecordAlignment = 8;
// The smallest segment that holds a header and some records.
inline constexpr uint64_t kMinSegmentBytes = 4 * kBlockBytes;

// SegmentHeader::flags. kSegmentAckedByWatermark: the writer acknowledged
// commits by the cluster's durable timestamp watermark (kWatermark records;
// docs/design/durable_acks.md), not one by one as each became durable, so
// recovery replays this segment's records only up to the largest cluster
// watermark any log persisted: the ones above were never acknowledged and
// may depend on another node's lost records.
inline constexpr uint32_t kSegmentAckedByWatermark = 1;

struct SegmentHeader {
  uint32_t format_version = kFormatVersion;
  uint64_t database_id = 0;
  uint32_t compute_node_id = 0;
  uint32_t flags = 0;
  uint64_t segment_index = 0;  // 1, 2, 3, ... (the file name)
  Lsn first_lsn = 0;           // LSN of the segment's first record
  uint64_t segment_bytes = 0;  // preallocated size, header included
  // Version 6: the largest commit timestamp (kWatermark records aside) of
  // the segment before this one, plus one; 0: unknown.
  uint64_t previous_max_commit_ts_plus_one = 0;
};

// Writes the header block (kSegmentHeaderBytes bytes) to `block`.
void EncodeSegmentHeader(const SegmentHeader& header, char* block);

// Decodes a header block, `path` only for messages. Errors:
//   InvalidArgument     not a strand log (bad magic);
//   FailedPrecondition  written by a newer format version, or belongs to a
//                       database other than `expected_database_id`;
//   DataLoss            the header's CRC does not match.
absl::StatusOr<SegmentHeader> DecodeSegmentHeader(std::string_view block,
                                                  uint64_t expected_database_id,
                                                  std::string_view path);

enum class RecordType : uint8_t {
  // A committed transaction: its redo ops (redo_record.h) as payload.
  kCommit = 1,
  // Partitioned mode's presumed-abort two-phase commit
  // (partition/coordinator.h). txn_id is the global transaction id,
  // commit_ts the commit timestamp the coordinator chose before PREPARE;
  // only the two together name one transaction (a restarted coordinator's
  // gtids repeat).
  // "Forced" below: made durable before the next step, unless the log
  // acknowledges by watermark (kSegmentAckedByWatermark), which makes the
  // wait unnecessary (docs/design/durable_acks.md).
  //   kPrepare            a participant's vote yes, forced before it votes:
  //                       payload = coordinator node id (u32) + the
  //                       participant's redo ops. Replayed only if the
  //                       transaction committed (a kDistributedCommit in the
  //                       coordinator's log or a kParticipantCommit here);
  //                       otherwise it was in doubt and is presumed aborted.
  //   kDistributedCommit  the coordinator's decision, forced before anyone
  //                       learns it: payload = participant count (u32), their
  //                       node ids (u32 each), then the coordinator's redo.
  //   kParticipantCommit  a participant learned the decision (unforced; no
  //                       payload): lets recovery commit a prepared branch
  //                       without the coordinator's log.
  // Aborts are not logged (presumed abort).
  kPrepare = 2,
  kDistributedCommit = 3,
  kParticipantCommit = 4,
  // The durable watermarks of a log that acknowledges by watermark
  // (kSegmentAckedByWatermark), written with every flush: commit_ts = the
  // node's watermark (every record of this node with a commit timestamp up
  // to it is durable once this record is, and none will follow), payload =
  // the cluster's watermark as a u64 (the same holds for every compute
  // node). txn_id is 0. Recovery's cut (log_merger.h) reads them.
  kWatermark = 5,
  // A failed compute node's record, logged again by the survivor that
  // reclaimed it (docs/design/node_failure.md): the failed node's log may
  // not have made it durable, and survivors may depend on it. txn_id and
  // commit_ts are the original's; payload = the original node and type,
  // then the original payload (failover_records.h). Recovery replays it
  // as the original; the original's own copy, if durable, falls in its
  // node's excluded range (kNodeExcluded) and is dropped. Exempt from the
  // node watermark check (log_writer.h): it is covered by the failed
  // node's exclusion, not by this node's marks.
  kAdopted = 6,
  // Compute node txn_id failed and was excluded from the cluster's
  // watermark: recovery drops its records with node_mark < commit_ts <=
  // oracle (payload, failover_records.h). Those it made durable below
  // node_mark stay; those above were either adopted (kAdopted) or never
  // reached memory. commit_ts is the top of that range (the oracle), so
  // that truncation and recovery from a checkpoint, which drop or step
  // over whole segments by their commit timestamps, keep this record as
  // long as any record it drops may still be read.
  kNodeExcluded = 7,
};
inline constexpr uint8_t kMaxRecordType = 7;

// kWatermark's payload.
std::string EncodeWatermarkPayload(uint64_t cluster_watermark);
absl::StatusOr<uint64_t> DecodeWatermarkPayload(std::string_view payload);

struct RecordHeader {
  RecordType type = RecordType::kCommit;
  uint32_t payload_bytes = 0;
  Lsn lsn = 0;
  uint64_t txn_id = 0;
  uint64_t commit_ts = 0;
  // Every record up to this LSN was durable when this one was appended; 0:
  // unknown (format < 4, or more than 2^32 - 1 records apart). Must be
  // below lsn.
  Lsn durable_lsn = 0;
};

// Bytes a record with `payload_bytes` of payload takes in the log.
constexpr size_t EncodedRecordBytes(size_t payload_bytes) {
  return (kRecordHeaderBytes + payload_bytes + kRecordAlignment - 1) /
         kRecordAlignment * kRecordAlignment;
}

// Writes header, payload and zero padding (EncodedRecordBytes(payload.size())
// bytes) to `dst`; header.payload_bytes is taken from `payload`.
void EncodeRecord(const RecordHeader& header, std::string_view payload,
                  char* dst);

// What DecodeRecord found at a position in a segment.
enum class DecodeResult {
  kOk,       // a record with a matching CRC
  kEnd,      // zeros: the clean end of the segment's records
  kCorrupt,  // CRC mismatch, impossible length, or too few bytes: torn tail
  kBadType,  // CRC matches but the type is unknown: not a torn write
};

// Decodes the record at the start of `bytes` (the rest of the segment).
// On kOk fills `header` and `payload` (a view into `bytes`).
DecodeResult DecodeRecord(std::string_view bytes, RecordHeader* header,
                          std::string_view* payload);

// "<wal_dir>/node-<id>" and "<node_dir>/<index, 8 digits>.wal".
std::string NodeDirectory(std::string_view wal_dir, uint32_t compute_node_id);
std::string SegmentPath(std::string_view node_dir, uint64_t segment_index);

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_FORMAT_H_
