#ifndef STRAND_ENGINE_NODE_RUNTIME_H_
#define STRAND_ENGINE_NODE_RUNTIME_H_

// What the engine keeps per hosted compute node: its GclManager, timestamp
// oracle, catalog handle, its handles of every table and index (heap tables
// keep per-node insert state) and the txn::Database that points at them.
// Internal to engine/.

#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "cc/gcl_manager.h"
#include "index/blink_tree.h"
#include "storage/catalog.h"
#include "storage/heap_table.h"
#include "txn/commit_watermark.h"
#include "txn/database.h"
#include "txn/epoch_manager.h"
#include "txn/index_key.h"
#include "txn/redo_ring.h"
#include "txn/timestamp_oracle.h"
#include "wal/log_writer.h"

namespace strand::engine {

class NodeRuntime {
 public:
  static absl::StatusOr<std::unique_ptr<NodeRuntime>> Create(
      rdma::Fabric& fabric, rdma::ComputeNodeId node, const cc::CcOptions& cc,
      txn::CcAlgorithm algorithm, const index::BLinkTreeTuning& index = {});

  rdma::ComputeNodeId id() const { return id_; }
  cc::GclManager& manager() { return *manager_; }
  storage::Catalog& catalog() { return *catalog_; }
  const txn::Database& db() const { return db_; }
  // A thread context for schema operations; hold admin_mu() while using it.
  cc::ThreadContext& admin() { return *admin_; }
  absl::Mutex& admin_mu() { return admin_mu_; }

  absl::Status AddTable(const storage::TableDescriptor& table);
  // `table`: the TableId of the table it indexes (txn::kNoTable if not
  // open); `key`: its declared key, or null. `key` must outlive this.
  absl::Status AddIndex(const storage::IndexDescriptor& index,
                        txn::TableId table, const txn::IndexKey* key);

  // Commits log to `log` from now on (before the first session); `marks`
  // (`log`'s observer) tracks the node's durable timestamp marks, and
  // acknowledges the commits if `acknowledge_by_marks` (early lock
  // release).
  void SetLog(std::unique_ptr<wal::LogWriter> log,
              std::unique_ptr<txn::CommitWatermark> marks,
              bool acknowledge_by_marks);
  wal::LogWriter* log() { return log_.get(); }
  // The durable marks (null without a log): every transaction holds a
  // slot of them.
  txn::CommitWatermark* marks() { return watermark_.get(); }
  // Failover (EngineOptions::failover): commits put their record in
  // `ring` as they write through (txn::Database::ring). Before the first
  // commit; with a log, after SetLog.
  void SetRing(std::unique_ptr<txn::RedoRing> ring);
  txn::RedoRing* ring() { return ring_.get(); }
  // Transactions announce themselves in `epochs` and deleted rows' slots
  // are reused through it (txn/epoch_manager.h); null: never reused.
  // Before the first session; `epochs` outlives this.
  void SetEpochs(txn::EpochManager* epochs) { db_.epochs = epochs; }
  // txn::Database::validate_index_reads; before the first session.
  void SetValidateIndexReads(bool on) { db_.validate_index_reads = on; }
  // txn::Database::optimistic_tuple_reads; before the first session.
  void SetOptimisticTupleReads(bool on) { db_.optimistic_tuple_reads = on; }
  // Moves its table handles out, for a caller that must keep them alive
  // after this runtime goes (deleted rows' slots queued in the epoch
  // manager name them: Engine::RejoinNode).
  std::vector<std::unique_ptr<storage::HeapTable>> TakeTables() {
    return std::move(tables_);
  }
  // The insert-path switches of every table opened from now on.
  void SetHeapTuning(const storage::HeapTableTuning& tuning) {
    heap_tuning_ = tuning;
  }

 private:
  NodeRuntime() = default;
  void HoldRingForLog();

  rdma::ComputeNodeId id_ = 0;
  index::BLinkTreeTuning index_tuning_;   // every index this node opens
  storage::HeapTableTuning heap_tuning_;  // every table this node opens
  std::unique_ptr<cc::GclManager> manager_;
  std::unique_ptr<txn::TimestampOracle> oracle_;
  std::unique_ptr<cc::ThreadContext> admin_;
  absl::Mutex admin_mu_;
  std::unique_ptr<storage::Catalog> catalog_;
  std::vector<std::unique_ptr<storage::HeapTable>> tables_;
  std::vector<std::unique_ptr<index::BLinkTree>> indexes_;
  // Declared before log_, which uses it until destroyed.
  std::unique_ptr<txn::CommitWatermark> watermark_;
  std::unique_ptr<wal::LogWriter> log_;  // null: no logging
  std::unique_ptr<txn::RedoRing> ring_;  // null: no failover
  txn::Database db_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_NODE_RUNTIME_H_
