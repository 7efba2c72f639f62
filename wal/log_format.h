#ifndef STRAND_WAL_LOG_FORMAT_H_
#define STRAND_WAL_LOG_FORMAT_H_

// The on-disk format of strand's write-ahead log (format version 7).
//
// Versions: 1 had tuple redo ops only; 2 adds index-entry ops
// (redo_record.h), same bytes otherwise; 3 adds the two-phase commit records
// of partitioned mode (kPrepare, kDistributedCommit, kParticipantCommit);
// 4 fills record bytes 12..15 with the writer's durable watermark (below;
// zero in older versions, read as "unknown"); 5 adds kWatermark records and
// the segment header's flags (kSegmentAckedByWatermark); 6 records in each
// segment's header the largest commit timestamp of the segment before it
// (so recovery from a checkpoint skips whole segments the checkpoint
// holds without reading them), and creates segments atomically
// (log_writer.h); 7 adds kAdopted and kNodeExcluded (a failed node's
// commits taken over by a survivor, failover_records.h). A reader accepts
// every version up to its own and refuses newer ones.
//
// Layout. Each compute node writes its own log: a directory
// <wal_dir>/node-<id>/ of segment files 00000001.wal, 00000002.wal, ...
// Every segment is preallocated to a fixed size and starts with a 4 KiB
// header block; records follow back to back (8-byte aligned) and the unused
// rest of the segment is zeros. Records never straddle segments.
//
//   segment header (4096 bytes, little endian; CRC over bytes 0..63 (0..55
//   before version 6) with the crc field zero, the rest of the block zero):
//     0  magic u64 "STRANDWL"   8 format_version u32   12 header_crc u32
//    16  database_id u64       24 compute_node_id u32  28 flags u32
//    32  segment_index u64     40 first_lsn u64        48 segment_bytes u64
//    56  previous segment's largest commit timestamp + 1 u64 (kWatermark
//        records aside; 0: unknown, e.g. no previous segment)
//
//   record (40-byte header + payload, padded with zeros to 8 bytes):
//     0  crc u32 (CRC32C of bytes 4..40+payload)   4 payload_bytes u32
//     8  type u8, 3 reserved zero bytes           12 durable_distance u32
//    16  lsn u64                                   24 txn_id u64
//    32  commit_ts u64                             40 payload (for kCommit:
//                                                     the redo ops,
//                                                     redo_record.h)
//
// LSNs number one node's records 1, 2, 3, ... without gaps, across
// segments; each segment header names the LSN of its first record. The
// reader uses the gap-free numbering to tell a torn tail or stale bytes from
// the log: a record is accepted only if its CRC matches and its LSN is the
// next one.
//
// The durable watermark: durable_distance = lsn - (the writer's durable LSN
// when it appended the record), 0 if unknown (or too far to fit). Every
// record up to lsn - durable_distance had been written and synced before
// this one was even appended. So when the log stops at a bad record E and
// a valid record after it says "durable up to >= E", record E was durable
// (perhaps acknowledged) and is now damaged: data loss, not the torn tail
// of a crash (log_reader.h tells the two apart with it).
//
// Why this suffices for recovery (redo-only logging of committed work):
//  - A transaction writes nothing to the log until it commits; then its whole
//    write set goes into one kCommit record. A record is atomic (one CRC), so
//    replay never sees half a transaction and needs no undo: uncommitted
//    transactions leave no trace in the log.
//  - Each redo op names the object (table or index id), the tuple's 8-byte
//    global address and key, and the after-image of the changed bytes with
//    their offset (inserts carry the whole tuple, deletes only the address
//    and key). Reapplying after-images is idempotent, so replaying a record
//    whose effects already reached memory is harmless.
//  - The commit timestamp is the transaction's position in the global
//    serialization order (taken from the memory-node timestamp counter by
//    every concurrency-control protocol strand runs). Conflicting
//    transactions, even from different compute nodes, therefore have ordered
//    commit timestamps, and replaying all nodes' logs merged by commit
//    timestamp (log_merger.h) reproduces the committed state.
//  - database_id and format_version in every segment header make recovery
//    refuse a log of another database or of a newer format, with an error
//    naming the file, instead of replaying it.

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
  // commit_ts the commit timestamp the coordinator chose before PREPARE.
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
