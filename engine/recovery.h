#ifndef STRAND_ENGINE_RECOVERY_H_
#define STRAND_ENGINE_RECOVERY_H_

// Recovery: rebuild the pool from a base (the newest usable checkpoint,
// engine/checkpoint_load.h, or an initial image, engine/image.h) plus the
// logs of all compute nodes (wal/), merged in commit-timestamp order
// (wal/log_merger.h). Memory nodes are volatile; nothing else survives.
//
// Replay is logical: through the storage and index APIs, one record at a
// time in commit-timestamp order (over a checkpoint: tables, then indexes,
// in parallel, each object in commit order), mapping logged addresses to
// where the tuples now are. Records at or below the base's timestamp are
// skipped; afterwards the timestamp oracle is past the largest commit
// timestamp of any record read, replayed or cut. Result: every tuple and
// index entry at its last committed value. Torn tails are cut (reported
// below); a log damaged before its end fails with DataLoss unless
// RecoveryOptions::allow_log_data_loss; a log of another database or a
// newer format version fails with FailedPrecondition. Appending to the same
// log afterwards needs a checkpoint of the recovered pool first (the
// replayed addresses differ from the logged ones): Engine::Open does that
// when it resumes in place (recover_wal_dir == wal.dir, engine_options.h).
// Replay rules and why they are exact: docs/design/recovery.md (over an
// image), docs/design/checkpoints.md (over a checkpoint).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "engine/checkpoint_load.h"
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
  // Over a checkpoint: threads that replay tables, then indexes, in
  // parallel (each object's ops stay in commit order).
  int threads = 1;
  // Over a checkpoint: the redo bytes held and grouped at a time (the
  // merger keeps only each record's place, wal/log_merger.h).
  uint64_t batch_bytes = uint64_t{256} << 20;
};

struct RecoveryReport {
  // The base: "checkpoint" or "image", its path, and its timestamp (S).
  std::string base_kind;
  std::string base_path;
  uint64_t image_timestamp = 0;
  // Newer checkpoints not used, and why (engine/checkpoint_load.h).
  std::vector<std::string> bases_passed_over;
  // A checkpoint base: what loading it did.
  uint64_t checkpoint_tuples = 0;
  uint64_t checkpoint_entries = 0;
  uint64_t checkpoint_bytes = 0;
  absl::Duration load_time;    // the image or checkpoint
  absl::Duration read_time;    // reading and merging the logs
  absl::Duration replay_time;  // applying the records
  // The same phases in CPU seconds of the whole process (all threads):
  // the work, whatever else the machine runs.
  double load_cpu_s = 0, read_cpu_s = 0, replay_cpu_s = 0;
  uint64_t records_replayed = 0;
  uint64_t records_skipped = 0;   // already in the base
  uint64_t segments_skipped = 0;  // all in the base: not even read
  uint64_t replayed_bytes = 0;    // their payloads
  uint64_t ops_replayed = 0;
  uint64_t batches = 0;  // over a checkpoint: RecoveryOptions::batch_bytes'
  // Over a checkpoint: ops the idempotent rules found already applied or
  // moot (an unmapped address or value; docs/design/checkpoints.md).
  uint64_t ops_already_applied = 0;
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

// What the logs are replayed over.
struct ReplayBase {
  uint64_t timestamp = 0;  // S: records at or below it are in the base
  // A checkpoint's end timestamp E: a cluster watermark at least this
  // high was persisted (wal/log_merger.h).
  uint64_t watermark_floor = 0;
  // Compute nodes whose logs must exist (0: unknown).
  uint32_t compute_nodes = 0;
  // A checkpoint base: its identities mapped to the pool's (extended by
  // replayed inserts); null: an image, whose addresses are the pool's.
  LoadedCheckpoint* checkpoint = nullptr;
};

// Replays `wal_dir`'s logs into the pool `manager` sees (through `ctx`),
// whose catalog names every table and index the logs mention.
absl::StatusOr<RecoveryReport> ReplayLogs(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& wal_dir, uint64_t database_id, const ReplayBase& base,
    const RecoveryOptions& options = {});

}  // namespace strand::engine

#endif  // STRAND_ENGINE_RECOVERY_H_
