#ifndef STRAND_ENGINE_ENGINE_OPTIONS_H_
#define STRAND_ENGINE_ENGINE_OPTIONS_H_

// Everything Engine::Open needs. The defaults give the embedded deployment:
// one memory node and one compute node in this process (loopback fabric),
// SELCC, 2PL no-wait.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/option_naming.h"
#include "cc/options.h"
#include "index/blink_tree_tuning.h"
#include "partition/options.h"
#include "rdma/fabric_options.h"
#include "storage/heap_table_tuning.h"
#include "txn/cc_algorithm.h"
#include "wal/log_file.h"

namespace strand::engine {

// How a Session retries a procedure that aborted on a conflict. User
// aborts and errors are never retried.
struct RetryPolicy {
  int max_retries = 1000;
  // Exponential back-off between attempts, with jitter, up to max_backoff
  // or four times the aborted attempt's duration (at most 100 ms),
  // whichever is longer (so long transactions that abort each other do
  // not restart in step).
  absl::Duration initial_backoff = absl::Microseconds(1);
  absl::Duration max_backoff = absl::Milliseconds(1);
};

// The write-ahead log (wal/): one log per hosted compute node under `dir`.
// A commit is acknowledged (Txn::Commit OK, Session::Call returning,
// Session::CallAsync's callback) only once its redo record is durable, and
// so is every commit it may depend on (docs/design/concurrency_control.md,
// "Logging").
struct WalOptions {
  std::string dir;  // empty: no log (--wal=off)
  // Release latches when the record is appended, not when it is durable,
  // and acknowledge by the cluster's durable timestamp watermark
  // (txn/commit_watermark.h; docs/design/durable_acks.md): safe with any
  // number of compute nodes, shared or partitioned. Needed for
  // Session::CallAsync to pipeline (without it a commit holds its
  // latches, and its thread, until durable).
  bool early_lock_release = false;
  wal::LogIoMode io_mode = wal::LogIoMode::kDirect;
  uint64_t segment_bytes = uint64_t{64} << 20;
  // wal::LogWriterOptions::group_commit_window.
  absl::Duration group_commit_window = absl::ZeroDuration();
  // early_lock_release: how often an idle node's log flusher refreshes its
  // durable watermark (wal::LogWriterOptions::observer_interval), and how
  // long an acknowledgement may wait for the cluster's before the call
  // gets Unavailable (txn::CommitWatermark::Options::ack_timeout).
  absl::Duration watermark_interval = absl::Milliseconds(1);
  absl::Duration ack_timeout = absl::Seconds(30);
  // The file layer (tests inject faults and delays); null: io_uring.
  wal::LogFileFactory* file_factory = nullptr;
};

// Surviving the failure of a compute node (docs/design/node_failure.md):
// every commit writes its lines through to memory behind a record in the
// node's redo ring on a memory node, a monitor beats for the hosted nodes
// and declares failed a member whose lease expired, and the one survivor
// that declared it fences it and reclaims its share (its half-applied
// commits, its latches, its place in the durable watermark) while the
// others go on. SELCC only; with a log, early_lock_release only. Off (the
// default) none of it runs: a deployment that cannot fail pays nothing.
struct FailoverOptions {
  bool enabled = false;
  // How long a node may go without beating before it is declared failed
  // (--node_lease_ms): about what a failure costs the survivors in time.
  absl::Duration node_lease = absl::Milliseconds(500);
  // Each compute node's redo ring (txn/redo_ring.h; --redo_ring_mb).
  uint64_t redo_ring_bytes = uint64_t{8} << 20;
};

// Shared: every compute node reaches every tuple (SELCC keeps the caches
// coherent); a transaction runs entirely on its node. Partitioned: each
// node owns a range of partitions and reaches only those; a procedure's
// fragments for another node's partitions run there, and a transaction
// that touched other nodes commits with two-phase commit
// (partition/coordinator.h). 2PL only.
enum class EngineMode { kShared, kPartitioned };
absl::StatusOr<EngineMode> ParseEngineMode(const std::string& name);
const char* EngineModeName(EngineMode mode);

struct EngineOptions {
  EngineMode mode = EngineMode::kShared;
  // Partitioned mode's partitions and protocol switches.
  partition::PartitionedOptions partitioned;
  rdma::FabricOptions fabric;
  cc::CcOptions cc;
  txn::CcAlgorithm algorithm = txn::CcAlgorithm::kTwoPhaseLocking;
  // The B-link trees' CPU-path switches (index/blink_tree.h).
  index::BLinkTreeTuning index;
  // The heap tables' insert-path switches (storage/heap_table.h).
  storage::HeapTableTuning heap;
  // txn::Database::validate_index_reads: serializable scans and lookups.
  // Turn off only to measure their cost (phantoms become possible).
  bool validate_index_reads = true;
  // txn::Database::optimistic_tuple_reads: 2PL and OCC read tuples of
  // cached pages with no latch and validate them at commit. Off only for
  // the ablation; serializable either way.
  bool optimistic_tuple_reads = true;
  // Deleted rows' slots wait for readers through the memory pool's epoch
  // words, each hosted compute node with its own txn::EpochManager, even
  // when this process hosts every node (docs/design/slot_reuse.md, "Across
  // processes"): what a process does anyway when some compute node runs in
  // another. For tests of that protocol in one process, and to measure it.
  bool epochs_in_pool = false;
  RetryPolicy retry;
  WalOptions wal;
  FailoverOptions failover;
  // Checkpoints (engine/checkpointer.h; docs/design/checkpoints.md), once
  // a log runs (wal.dir, or Engine::StartLogging), taken by the process
  // hosting compute node 0, in the log's directory: every
  // `checkpoint_interval` while transactions run (0: only on demand,
  // Engine::Checkpoint), copying at most `checkpoint_read_mb_per_s` MiB/s
  // of tuples and index entries (0: no limit), keeping the newest
  // `checkpoints_kept` and the logs back to the oldest of them.
  absl::Duration checkpoint_interval = absl::ZeroDuration();
  double checkpoint_read_mb_per_s = 0;
  int checkpoints_kept = 2;
  // Recovery (engine/recovery.h). `recover_wal_dir`: rebuild the pool from
  // the newest usable checkpoint there (engine/checkpoint_load.h) or, if
  // none, from `image_path` (engine/image.h; loopback fabric only), then
  // replay the logs found there, merged in commit-timestamp order. With
  // `recover_wal_dir` == wal.dir the engine resumes in place: it
  // checkpoints the recovered pool, drops the logs that checkpoint makes
  // obsolete, and appends to the same directory. Across processes (verbs)
  // compute node 0's recovers, from every node's log gathered there; the
  // others wait for it, then log. `image_path` alone restores the image and
  // replays nothing. `recovery_threads` load a checkpoint's tables and
  // indexes in parallel (0: one per core); replay holds about
  // `recovery_batch_bytes` of log records at a time (4 KiB to 64 GiB), plus
  // ~90 bytes per record since the checkpoint.
  std::string image_path;
  std::string recover_wal_dir;
  int recovery_threads = 0;
  uint64_t recovery_batch_bytes = uint64_t{256} << 20;
  // A log damaged before its end (a corrupt or missing record that later
  // records prove was durable, wal/log_reader.h) fails Open with DataLoss
  // naming the node, segment, offset and LSN. true: replay each log only
  // up to its damage and every node's history up to the same commit
  // timestamp instead (RecoveryOptions::allow_log_data_loss): committed
  // transactions are lost, and recovery_report() says where and how many.
  bool recover_allow_log_data_loss = false;

  // Checks every setting, the fabric's and the cache's too. The message
  // names the setting to change as `naming` says (base/option_naming.h):
  // by default as a field, "EngineOptions::fabric.compute_nodes"; a binary
  // that filled the options from its flags validates with
  // OptionNaming::Flags("EngineOptions::") first, so its user reads
  // "--compute_nodes". Engine::Open validates with the default.
  absl::Status Validate() const;
  absl::Status Validate(const OptionNaming& naming) const;

 private:
  absl::Status ValidateFailover(const OptionNaming& naming) const;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_ENGINE_OPTIONS_H_
