#ifndef STRAND_ENGINE_CHECKPOINT_LOAD_H_
#define STRAND_ENGINE_CHECKPOINT_LOAD_H_

// Recovery's side of checkpoints: which base to start from, and loading a
// logical checkpoint into a fresh pool (docs/design/checkpoints.md).
//
// Base: the newest published checkpoint under the log directory whose
// manifest and files verify and that the logs still continue (no node
// truncated its log past its start timestamp, wal/log_truncation.h);
// each newer one passed over is named with the reason. If none, the pool
// image given, under the same condition. Never a damaged copy.
//
// Load: the catalog objects are created again in their order, then every
// table's tuples are inserted (tables in parallel, one thread context per
// thread), each logged address mapped to where it now lives, then every
// index's entries whose value maps (indexes in parallel, keys ascending,
// so a leaf fills before it splits). An entry whose tuple is not in the
// copy is dropped: its tuple was deleted after the start timestamp, or
// not yet committed when the table was copied, and the log replay settles
// it. Cost: one insert per tuple and per entry, no round trip beyond the
// cache's.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "engine/image.h"
#include "storage/catalog.h"
#include "wal/checkpoint.h"

namespace strand::engine {

struct RecoveryBase {
  enum class Kind { kCheckpoint, kImage };
  Kind kind = Kind::kCheckpoint;
  std::string path;                  // checkpoint directory or image
  wal::CheckpointManifest manifest;  // kCheckpoint
  ImageInfo image;                   // kImage: its header
  uint64_t timestamp = 0;            // S of either
  // Newer candidates not used, each with why (damaged, unfinished, logs
  // truncated past it).
  std::vector<std::string> passed_over;
  // The largest timestamp a node truncated its log to.
  uint64_t logs_truncated_ts = 0;
};

// Chooses the base for the logs in `wal_dir` (see above); `image_path`
// may be empty. DataLoss listing every candidate and why it was passed
// over when none is usable; NotFound if there is no candidate at all.
absl::StatusOr<RecoveryBase> ChooseRecoveryBase(const std::string& wal_dir,
                                                const std::string& image_path);

// What LoadCheckpoint built: the identities the logs use mapped to the
// new pool's.
struct LoadedCheckpoint {
  // Catalog id in the checkpoint (and the logs) -> in the new catalog.
  absl::flat_hash_map<uint32_t, uint32_t> object_ids;
  // Tuple address in the checkpoint (and the logs) -> in the new pool.
  absl::flat_hash_map<uint64_t, uint64_t> addresses;
  uint64_t tuples = 0;
  uint64_t index_entries = 0;
  uint64_t entries_dropped = 0;  // their tuple was not in the copy
  uint64_t bytes = 0;            // of the files read
  absl::Duration duration;
};

// Loads the (verified) checkpoint at `dir` into the empty pool `manager`
// sees, through `ctx`, creating its objects in `catalog`; `threads` load
// tables and indexes in parallel (each with a context of its own).
absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(
    cc::GclManager& manager, cc::ThreadContext& ctx, storage::Catalog& catalog,
    const std::string& dir, const wal::CheckpointManifest& manifest,
    int threads);

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CHECKPOINT_LOAD_H_
