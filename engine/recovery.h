#ifndef STRAND_ENGINE_RECOVERY_H_
#define STRAND_ENGINE_RECOVERY_H_

// Recovery: rebuild the pool from an initial image (engine/image.h) plus
// the logs of all compute nodes (wal/), merged in commit-timestamp order
// (wal/log_merger.h). Memory nodes are volatile; nothing else survives.
//
// Why replay is logical, not physical: heap pages allocated after the image
// and B-link node splits are not logged, so a record's tuple address may
// name a page the image does not have. Replay therefore goes through the
// storage and index APIs on an engine opened over the restored image, one
// thread, one record at a time in commit-timestamp order:
//   kInsert       HeapTable::Insert of the logged tuple; the tuple gets a
//                 new address, remembered as old -> new;
//   kIndexInsert  BLinkTree::Insert(key, mapped value);
//   kIndexRemove  Delete(key) (unique) or DeleteEntry(key, mapped value);
//   kUpdate       the after-image written at the mapped address (offset
//                 within the tuple, columns only);
//   kDelete       HeapTable::Delete at the mapped address.
// "Mapped": an address some replayed kInsert produced maps to where replay
// put it; any other address names a tuple of the image, which kept its
// address (the image restores the allocator state too). A heap slot a
// commit inserted into is never reused (only slots of aborted inserts are,
// and those are in no log), so an old address is inserted at most once in
// a log.
// Records with commit_ts <= the image's timestamp are already in it and
// skipped. Afterwards the timestamp oracle is moved past the largest
// commit timestamp of any record read, replayed or cut.
//
// Correctness: the log holds exactly the acknowledged-or-not-yet commits
// whose record became durable, each record atomic (one CRC); conflicting
// commits replay in their serialization order (txn/concurrency_control.h),
// so every tuple and index entry ends at its last committed value. Torn
// tails are cut by the reader (reported below); a log damaged before its
// end (a corrupt or missing record, wal/log_reader.h) fails recovery with
// DataLoss unless RecoveryOptions::allow_log_data_loss; a log of another
// database or a newer format version fails it too (FailedPrecondition).
//
// The replayed addresses differ from the logged ones, so the recovered pool
// must not be extended by appending to the same log: save a new image
// (strand_recover --out_image) and start a fresh log directory.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"
#include "storage/catalog.h"
#include "wal/log_merger.h"
#include "wal/log_reader.h"

namespace strand::engine {

struct RecoveryOptions {
  // Instead of failing on a log damaged before its end: replay each such
  // log up to the damage, and every node's log up to the same commit
  // timestamp (wal/log_merger.h). The transactions after it are lost and
  // the recovered state may miss some before it; the report names the
  // damage. An explicit opt-in for when the lost log cannot be restored.
  bool allow_log_data_loss = false;
};

struct RecoveryReport {
  uint64_t image_timestamp = 0;
  uint64_t records_replayed = 0;
  uint64_t records_skipped = 0;  // already in the image
  uint64_t ops_replayed = 0;
  uint64_t max_commit_ts = 0;
  uint64_t dropped_bytes = 0;  // summed over the nodes' cut tails
  std::vector<wal::LogReaderStats> nodes;
  // allow_log_data_loss only: a log was damaged (nodes[i].damage says
  // where), so every record above `damage_cut_ts` was dropped, of which
  // `records_dropped_at_cut` were readable.
  bool data_lost = false;
  uint64_t damage_cut_ts = 0;
  uint64_t records_dropped_at_cut = 0;
  // Logs that acknowledged by watermark (wal/log_merger.h): the cluster
  // watermark replay stopped at, and the durable records above it that
  // were dropped (none of them was acknowledged).
  bool acked_by_watermark = false;
  uint64_t watermark_cut_ts = 0;
  uint64_t records_above_watermark = 0;
  // Partitioned mode: prepared branches replayed because their decision
  // (or a participant's commit marker) is in a log, and those presumed
  // aborted because none is (wal/log_merger.h).
  wal::TwoPhaseStats two_phase;

  // One line per node: records, how the log ended, bytes dropped, damage.
  std::string Summary() const;
};

// Replays `wal_dir`'s logs into the pool `manager` sees (through `ctx`),
// whose catalog names every table and index the logs mention.
absl::StatusOr<RecoveryReport> ReplayLogs(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& wal_dir, uint64_t database_id, uint64_t image_timestamp,
    const RecoveryOptions& options = {});

}  // namespace strand::engine

#endif  // STRAND_ENGINE_RECOVERY_H_
