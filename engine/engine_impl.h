#ifndef STRAND_ENGINE_ENGINE_IMPL_H_
#define STRAND_ENGINE_ENGINE_IMPL_H_

// What Engine (engine.h) is made of: the fabric, one NodeRuntime per
// hosted compute node, the epochs, the catalog's tables and indexes as
// this engine opened them, the registered procedures and fragments, the
// sessions' stats and partitioned mode's nodes. Internal to engine/:
// Engine forwards its API here; Session runs procedures from here; tools
// and tests reach below the API through engine_internals.h. Method
// contracts are Engine's. The failover's methods (EngineOptions::failover)
// are defined in engine_failover.cc.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cc/cache_stats.h"
#include "cc/gcl_manager.h"
#include "engine/checkpoint_load.h"
#include "engine/checkpointer.h"
#include "engine/engine_options.h"
#include "engine/image_info.h"
#include "engine/node_reclaim.h"
#include "engine/procedure.h"
#include "engine/procedure_stats.h"
#include "engine/recovery.h"
#include "partition/fragment_registry.h"
#include "partition/options.h"
#include "partition/partition_map.h"
#include "rdma/fabric.h"
#include "storage/catalog.h"
#include "storage/schema.h"
#include "storage/table_options.h"
#include "txn/database.h"
#include "txn/epoch_manager.h"
#include "txn/index_key.h"
#include "txn/membership.h"

namespace strand::partition {
class Node;
}  // namespace strand::partition

namespace strand::engine {

class CrashableLogFiles;
class EpochTicker;
class FailureMonitor;
class NodeRuntime;
class Session;

// One session's per-procedure stats; the engine sums them (Stats()).
struct SessionStats {
  rdma::ComputeNodeId node;
  mutable absl::Mutex mu;
  std::vector<ProcedureStats> by_procedure ABSL_GUARDED_BY(mu);
};

class EngineImpl {
 public:
  static absl::StatusOr<std::unique_ptr<EngineImpl>> Open(
      const EngineOptions& options);
  ~EngineImpl();

  const EngineOptions& options() const { return options_; }
  std::vector<rdma::ComputeNodeId> local_compute_nodes() const;

  absl::StatusOr<txn::TableId> CreateTable(
      std::string_view name, const storage::Schema& schema,
      const storage::TableOptions& options);
  absl::StatusOr<txn::TableId> OpenTable(std::string_view name);
  absl::StatusOr<txn::IndexId> CreateIndex(
      std::string_view name, txn::TableId table,
      const std::vector<std::string>& key_columns, bool unique);
  absl::StatusOr<txn::IndexId> CreateIndex(std::string_view name,
                                           txn::TableId table,
                                           uint16_t key_width, bool unique);
  absl::StatusOr<txn::IndexId> OpenIndex(std::string_view name);
  const txn::IndexKey* index_key(txn::IndexId index) const;
  absl::StatusOr<const storage::Schema*> schema(txn::TableId table) const;
  uint32_t max_row_bytes() const;

  absl::StatusOr<ProcedureId> Register(ErasedProcedure procedure);
  // A fragment's id and its erased function (valid as long as the engine).
  absl::StatusOr<
      std::pair<partition::FragmentId, const partition::ErasedFragment*>>
  RegisterFragment(std::string name, partition::ErasedFragment fn);
  absl::StatusOr<ProcedureId> FindProcedure(std::string_view name) const;
  // Checks the types too, unless nullopt.
  absl::StatusOr<ProcedureId> FindProcedureOfTypes(
      std::string_view name, const std::optional<ProcedureTypes>& types) const;
  absl::StatusOr<std::string> procedure_name(ProcedureId id) const;
  size_t procedure_count() const;
  // Procedure `id` (a valid one): fixed once the first session exists.
  const ErasedProcedure* procedure(ProcedureId id) const {
    return id < procedures_.size() ? &procedures_[id] : nullptr;
  }

  absl::StatusOr<std::unique_ptr<Session>> NewSession(rdma::ComputeNodeId node);

  std::vector<ProcedureStats> Stats() const;
  std::vector<ProcedureStats> Stats(rdma::ComputeNodeId node) const;
  const partition::PartitionMap* partition_map() const {
    return partition_map_.get();
  }
  partition::PartitionStats PartitionStats() const;
  cc::CacheStats CacheStats() const;
  rdma::FabricCounters FabricCounters() const;

  absl::StatusOr<cc::GclManager*> manager(rdma::ComputeNodeId node);
  const txn::EpochManager* epochs(rdma::ComputeNodeId node) const {
    return node < epochs_by_node_.size() ? epochs_by_node_[node] : nullptr;
  }
  rdma::Fabric& fabric() { return *fabric_; }

  uint64_t database_id() const { return database_id_; }
  wal::LogWriter* log(rdma::ComputeNodeId node);
  const RecoveryReport* recovery_report() const {
    return recovery_report_ ? &*recovery_report_ : nullptr;
  }

  absl::Status WriteBackCaches();
  absl::Status StartLogging(const WalOptions& wal);
  absl::StatusOr<ImageInfo> SaveImage(const std::string& path);
  absl::StatusOr<CheckpointResult> Checkpoint(std::string_view kind);
  std::vector<CheckpointResult> CheckpointHistory() const;
  bool checkpoint_running() const;

  // Failover (EngineOptions::failover; docs/design/node_failure.md).
  absl::Status FailNode(rdma::ComputeNodeId node);
  absl::Status WaitReclaimed(rdma::ComputeNodeId node, absl::Duration timeout);
  absl::Status RejoinNode(rdma::ComputeNodeId node, absl::Duration timeout);
  absl::Status PauseHeartbeats(rdma::ComputeNodeId node);
  absl::Status ResumeHeartbeats(rdma::ComputeNodeId node);
  std::vector<ReclaimReport> ReclaimReports() const;
  absl::Time DeclaredFailedAt(rdma::ComputeNodeId node) const;
  absl::Time LastDeclaredFailedAt(rdma::ComputeNodeId node) const;
  absl::Time LeaseRenewedAt(rdma::ComputeNodeId node) const;
  // Whether `node` failed (FailNode) or learned it was declared failed, and
  // has not rejoined: its sessions stop retrying, for a conflict on a
  // failed node may never clear (latches its aborts could not release).
  bool NodeDown(rdma::ComputeNodeId node) const {
    return ((down_nodes_.load(std::memory_order_relaxed) >> node) & 1) != 0;
  }

 private:
  explicit EngineImpl(const EngineOptions& options);
  absl::Status CheckNotFrozen(std::string_view what) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<NodeRuntime*> runtime(rdma::ComputeNodeId node) const;
  // Adds a table or index to every hosted node's Database.
  absl::StatusOr<txn::TableId> AddTable(const storage::TableDescriptor& table)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<txn::IndexId> AddIndex(const storage::IndexDescriptor& index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Both CreateIndex: records `spec` (its key width set) under `name`.
  absl::StatusOr<txn::IndexId> CreateIndexWithSpec(std::string_view name,
                                                   storage::IndexSpec spec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Loads the base, replays logs, resumes in place if asked, and opens the
  // logs (Open's steps).
  absl::Status StartRecoveryAndLogging(const std::optional<RecoveryBase>& base);
  // A process without compute node 0, opened to recover: waits until
  // node 0's process published the recovered database, and takes its id.
  absl::Status AwaitRecoveryByNodeZero();
  // The checkpointer of a process hosting compute node 0 (created on
  // first use; `marks` null: quiescent checkpoints only until attached).
  absl::Status StartCheckpointer(const std::string& log_dir,
                                 txn::CommitWatermark* marks);
  // Resume in place: a quiescent checkpoint of the recovered pool, then
  // every log's records at or below it dropped (engine_options.h).
  absl::Status ResumeInPlace();
  // Truncates the logs this process writes up to `ts` (the checkpointer's
  // step 4, and other processes' poller).
  absl::StatusOr<wal::LogTruncationStats> TruncateLogs(
      uint64_t ts, const std::function<void()>& after_each_delete);
  // Processes without compute node 0: truncates their logs as the
  // checkpointer's word rises (engine/checkpointer.h).
  void PollLogTruncation();
  // Stops the checkpointer and the poller.
  void StopBackground();
  // EngineOptions::recovery_threads, 0 resolved to the cores.
  int RecoveryThreads() const;
  // Partitioned mode: the partition map and every hosted node's side of it.
  absl::Status StartPartitioned();
  // `node`'s side of partitioned mode (StartPartitioned's step for each
  // hosted node, and a rejoining node's).
  absl::StatusOr<std::unique_ptr<partition::Node>> StartPartitionNode(
      NodeRuntime& node);
  // The epoch managers of the hosted nodes (and their ticker, in the pool).
  absl::Status StartEpochs();
  // Hosted compute node `id`'s runtime, set up as the options say (Open's
  // step for each hosted node, and a rejoining node's).
  absl::StatusOr<std::unique_ptr<NodeRuntime>> CreateNodeRuntime(
      rdma::ComputeNodeId id) const;
  // `node`'s log and durable marks as `wal` says (StartLogging's step for
  // each hosted node, and a rejoining node's).
  absl::Status StartNodeLogging(NodeRuntime& node, const WalOptions& wal);
  // Failover: every hosted node's redo ring, the membership and the
  // failure monitor; StopFailover: the hosted nodes leave, the monitor
  // stops.
  absl::Status StartFailover();
  void StopFailover();
  absl::Status OpenRing(NodeRuntime& node);
  // A process restarted after its node failed (FabricOptions::
  // join_running): waits until the survivors reclaimed the node's earlier
  // incarnation, which its redo ring and latch words still belong to.
  absl::Status WaitEarlierIncarnation(NodeRuntime& node);
  // FailureMonitor::Attach's `declared_failed` for `node`.
  std::function<void(const absl::Status&)> OnDeclaredFailed(NodeRuntime& node);
  absl::StatusOr<ReclaimReport> Reclaim(rdma::ComputeNodeId reclaimer,
                                        rdma::ComputeNodeId failed);
  absl::Status CheckFailover(rdma::ComputeNodeId node) const;

  const EngineOptions options_;
  std::unique_ptr<rdma::Fabric> fabric_;
  uint64_t database_id_ = 0;
  std::optional<RecoveryReport> recovery_report_;
  bool closed_ = false;  // by SaveImage
  // The table handles of failed nodes' dead incarnations (RejoinNode):
  // slots queued in epochs_ may name them. Declared before epochs_: they
  // outlive it. Under runtimes_mu_.
  std::vector<std::unique_ptr<storage::HeapTable>> dead_tables_;
  // One shared by every hosted node, or one per hosted node in the pool;
  // declared before nodes_, so they outlive their tables and transactions.
  std::vector<std::unique_ptr<txn::EpochManager>> epochs_;
  std::vector<txn::EpochManager*> epochs_by_node_;  // by node id
  // In the pool only. Reset before nodes_ (its contexts are theirs).
  std::unique_ptr<EpochTicker> epoch_ticker_;
  // One per hosted compute node, indexed by node id (null if not hosted).
  std::vector<std::unique_ptr<NodeRuntime>> nodes_;
  // Runs catalog operations: a hosted node that has not failed (FailNode
  // moves it, under mu_, while other threads read it).
  std::atomic<NodeRuntime*> first_node_{nullptr};
  NodeRuntime& FirstNode() const {
    return *first_node_.load(std::memory_order_acquire);
  }

  mutable absl::Mutex mu_;
  bool frozen_ ABSL_GUARDED_BY(mu_) = false;
  // unique_ptr: schema() hands out pointers that must survive later tables
  // being added.
  std::vector<std::unique_ptr<storage::Schema>> schemas_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, txn::TableId> tables_by_name_
      ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> table_catalog_ids_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, txn::IndexId> indexes_by_name_
      ABSL_GUARDED_BY(mu_);
  // By IndexId; null for an index without key columns. unique_ptr: every
  // node's Database points at them.
  std::vector<std::unique_ptr<txn::IndexKey>> index_keys_ ABSL_GUARDED_BY(mu_);
  std::vector<ErasedProcedure> procedures_;  // fixed once frozen
  absl::flat_hash_map<std::string, ProcedureId> procedures_by_name_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<SessionStats>> session_stats_
      ABSL_GUARDED_BY(mu_);
  partition::FragmentRegistry fragments_;
  std::unique_ptr<partition::PartitionMap> partition_map_;
  std::vector<std::unique_ptr<partition::Node>> partition_nodes_;  // by id

  // Failover (EngineOptions::failover).
  std::optional<txn::Membership> membership_;
  std::unique_ptr<FailureMonitor> monitor_;
  // By node id, with a log: what FailNode stops.
  std::vector<std::unique_ptr<CrashableLogFiles>> log_files_;
  std::optional<WalOptions> wal_started_;  // for a rejoining node's log
  uint64_t failed_nodes_ ABSL_GUARDED_BY(mu_) = 0;  // by FailNode
  std::atomic<uint64_t> down_nodes_{0};  // NodeDown's, one bit per node
  // What a rejoining node's runtime opens again.
  std::vector<storage::TableDescriptor> table_descriptors_ ABSL_GUARDED_BY(mu_);
  struct IndexAdded {
    storage::IndexDescriptor index;
    txn::TableId table;
    const txn::IndexKey* key;
  };
  std::vector<IndexAdded> index_descriptors_ ABSL_GUARDED_BY(mu_);
  cc::CacheStats retired_cache_stats_;  // of runtimes replaced by a rejoin
  // Held by RejoinNode while it replaces a runtime in nodes_, and by
  // TruncateLogs (the checkpointer's thread) while it walks them.
  absl::Mutex runtimes_mu_;

  // Declared last: stopped first, while the logs and nodes are up.
  std::string log_dir_;  // where checkpoints go (the log's directory)
  std::unique_ptr<Checkpointer> checkpointer_;
  absl::Mutex truncation_mu_;
  bool stopping_ ABSL_GUARDED_BY(truncation_mu_) = false;
  std::thread truncation_poller_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_ENGINE_IMPL_H_
