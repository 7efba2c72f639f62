#ifndef STRAND_ENGINE_CHECKPOINTER_H_
#define STRAND_ENGINE_CHECKPOINTER_H_

// Checkpointer: takes logical fuzzy checkpoints while transactions run,
// publishes them (wal/checkpoint.h), then truncates the logs and deletes
// the checkpoints no recovery needs any more:
//  1. S = the oracle's value; wait for a persisted cluster durable mark >= S
//     (txn/commit_watermark.h): every commit <= S is durable and applied.
//  2. Copy the catalog, live tuples (with addresses) and index entries
//     through this node's cache with latched reads (coherent under SELCC
//     and SEL, over any fabric), at most `read_mb_per_s`.
//  3. E = the oracle's value; wait for a persisted cluster mark >= E, so
//     recovery's cut keeps all the copy holds; publish (fsync, rename the
//     manifest into place), then re-read and verify every CRC.
//  4. Raise RootWord::kLogTruncateTs to the start T of the oldest checkpoint
//     kept (the newest `keep`, or the newest alone if it starts an address
//     space): every process's nodes delete their segments at or below T;
//     then delete older checkpoints.
// A quiescent checkpoint (recovery's resume, a load before any session)
// skips the waits: S = E.
// Only the process hosting compute node 0 takes checkpoints. Thread-safe;
// one checkpoint at a time (Take serializes).
// Design: docs/design/checkpoints.md (why each step is needed).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "engine/checkpoint_result.h"
#include "storage/catalog.h"
#include "txn/commit_watermark.h"
#include "txn/timestamp_oracle.h"
#include "wal/checkpoint.h"
#include "wal/log_writer.h"

namespace strand::engine {

struct CheckpointerOptions {
  std::string wal_dir;
  uint64_t database_id = 0;
  uint32_t compute_nodes = 0;
  // The pool's layout, recorded in the manifest.
  uint32_t memory_nodes = 0;
  uint64_t region_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint32_t gcl_size = 0;
  // Periodic checkpoints (0: on demand only).
  absl::Duration interval = absl::ZeroDuration();
  // The copy's rate limit in MiB/s of tuples and entries (0: none).
  double read_mb_per_s = 0;
  // Checkpoints kept; the logs are kept back to the oldest.
  int keep = 2;
};

class Checkpointer {
 public:
  // Truncates the logs this process hosts up to a commit timestamp;
  // `after_each_delete` runs after each deleted segment (crash tests).
  using TruncateLogs = std::function<absl::StatusOr<wal::LogTruncationStats>(
      uint64_t ts, const std::function<void()>& after_each_delete)>;

  // Reads through `manager` (compute node 0's). Until AttachMarks, only
  // quiescent checkpoints can be taken.
  static absl::StatusOr<std::unique_ptr<Checkpointer>> Create(
      cc::GclManager& manager, storage::Catalog& catalog,
      const txn::TimestampOracle& oracle, TruncateLogs truncate_logs,
      const CheckpointerOptions& options);
  ~Checkpointer();  // stops the periodic thread

  // Compute node 0's durable marks, once its log runs.
  void AttachMarks(txn::CommitWatermark* marks);
  // Starts periodic checkpoints if options.interval > 0 (once).
  void StartPeriodic();

  // Takes, publishes and verifies a checkpoint, then truncates. `kind`:
  // wal::CheckpointManifest::kind. `quiescent`: no transaction runs (S =
  // E, no waits).
  absl::StatusOr<CheckpointResult> Take(const std::string& kind,
                                        bool quiescent = false);

  // Every checkpoint taken so far, oldest first; the last error of a
  // periodic one, if any.
  std::vector<CheckpointResult> history() const;
  absl::Status last_error() const;
  // Whether a checkpoint is being taken now (progress reports).
  bool running() const { return running_.load(std::memory_order_relaxed); }

 private:
  Checkpointer(cc::GclManager& manager, storage::Catalog& catalog,
               const txn::TimestampOracle& oracle, TruncateLogs truncate_logs,
               const CheckpointerOptions& options,
               std::unique_ptr<cc::ThreadContext> ctx);

  // Steps 2 and 3 into `dir`; fills the manifest's files.
  absl::Status Copy(const std::string& dir, wal::CheckpointManifest& manifest,
                    CheckpointResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Step 4.
  absl::Status TruncateAfter(CheckpointResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PeriodicLoop();

  cc::GclManager& manager_;
  storage::Catalog& catalog_;
  const txn::TimestampOracle& oracle_;
  const TruncateLogs truncate_logs_;
  const CheckpointerOptions options_;

  absl::Mutex mu_;  // one Take at a time
  txn::CommitWatermark* marks_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::unique_ptr<cc::ThreadContext> ctx_ ABSL_GUARDED_BY(mu_);
  // This engine's checkpoints (one address space), oldest first, with
  // their start timestamps, still on disk.
  struct Kept {
    uint64_t sequence;
    std::string dir;
    uint64_t start_ts;
    bool starts_address_space;
  };
  std::vector<Kept> kept_ ABSL_GUARDED_BY(mu_);

  mutable absl::Mutex results_mu_;
  std::vector<CheckpointResult> history_ ABSL_GUARDED_BY(results_mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(results_mu_);
  std::atomic<bool> running_{false};

  absl::Mutex stop_mu_;
  bool stopping_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread periodic_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CHECKPOINTER_H_
