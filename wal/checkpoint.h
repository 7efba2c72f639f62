#ifndef STRAND_WAL_CHECKPOINT_H_
#define STRAND_WAL_CHECKPOINT_H_

// Checkpoints on disk: <wal_dir>/checkpoint-<sequence, 8 digits>/, holding
// data files and a MANIFEST that names each file with its size and CRC32C.
// What the files hold and why a fuzzy logical copy plus idempotent replay
// recovers exactly: docs/design/checkpoints.md (engine/checkpointer.h
// writes them, engine/checkpoint_load.h reads them).
//
// Contract:
//  - A checkpoint exists once its MANIFEST does: the files are written and
//    fsynced first, then the manifest (temporary name, fsync, rename, fsync
//    of the directory). A directory without one is an unfinished
//    checkpoint, which ListCheckpoints reports for deletion.
//  - Nothing is trusted unverified: ReadManifest checks the manifest's own
//    CRC, VerifyCheckpoint every file's size and CRC; either failure is
//    DataLoss naming the file, and recovery then falls back to an older
//    checkpoint (kept until a newer one verified) or fails.
//  - start_ts S: every commit with timestamp <= S is in the checkpoint;
//    end_ts E >= S: every effect the copy may hold is of a commit with
//    timestamp <= E, durable in the logs before the manifest was written.
//    Recovery loads the files and replays the records above S.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace strand::wal {

inline constexpr uint32_t kCheckpointFormatVersion = 1;

struct CheckpointFile {
  std::string name;  // in the checkpoint's directory
  uint64_t bytes = 0;
  uint32_t crc = 0;  // CRC32C of the whole file
  friend bool operator==(const CheckpointFile&,
                         const CheckpointFile&) = default;
};

struct CheckpointManifest {
  uint32_t format_version = kCheckpointFormatVersion;
  uint64_t sequence = 0;  // the directory's number, 1, 2, ...
  uint64_t database_id = 0;
  uint64_t start_ts = 0;  // S
  uint64_t end_ts = 0;    // E
  // The compute nodes whose logs continue it: node-0 ... node-(n-1) must
  // all exist at recovery.
  uint32_t compute_nodes = 0;
  // "initial" (after a load), "periodic", "on_demand", "resume" (of a
  // recovered pool, which starts a new address space: older checkpoints
  // and logs cannot continue it).
  std::string kind;
  // The pool it was taken from (recovery's default layout).
  uint32_t memory_nodes = 0;
  uint64_t region_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint32_t gcl_size = 0;
  std::vector<CheckpointFile> files;

  friend bool operator==(const CheckpointManifest&,
                         const CheckpointManifest&) = default;
};

// "<wal_dir>/checkpoint-00000007" and its manifest's path.
std::string CheckpointDirectory(const std::string& wal_dir, uint64_t sequence);
std::string ManifestPath(const std::string& checkpoint_dir);

struct CheckpointEntry {
  uint64_t sequence = 0;
  std::string dir;
  bool published = false;  // has a MANIFEST
};
// Every checkpoint directory under `wal_dir`, newest (largest sequence)
// first. An empty list if there is none or `wal_dir` does not exist.
absl::StatusOr<std::vector<CheckpointEntry>> ListCheckpoints(
    const std::string& wal_dir);

// The manifest of `checkpoint_dir`. NotFound if it has none (unfinished);
// DataLoss if it is damaged; FailedPrecondition if of a newer format.
absl::StatusOr<CheckpointManifest> ReadManifest(
    const std::string& checkpoint_dir);

// Every file the manifest names exists with its size and CRC (reads them
// all). DataLoss naming the first that does not.
absl::Status VerifyCheckpoint(const std::string& checkpoint_dir,
                              const CheckpointManifest& manifest);

// Publishes: writes the manifest atomically (the files must be fsynced).
absl::Status PublishCheckpoint(const std::string& checkpoint_dir,
                               const CheckpointManifest& manifest);

// Deletes a checkpoint: its manifest first (it stops existing at once),
// then its files and directory.
absl::Status DeleteCheckpoint(const std::string& checkpoint_dir);

}  // namespace strand::wal

#endif  // STRAND_WAL_CHECKPOINT_H_
