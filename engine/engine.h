#ifndef STRAND_ENGINE_ENGINE_H_
#define STRAND_ENGINE_ENGINE_H_

// The embedding API: open an engine, define tables and indexes, register
// stored procedures, run them through sessions (docs/embedding.md).
//
//   EngineOptions options;                  // embedded defaults
//   options.fabric.compute_nodes = 2;
//   STRAND_ASSIGN_OR_RETURN(auto engine, Engine::Open(options));
//   STRAND_ASSIGN_OR_RETURN(TableId accounts,
//                           engine->CreateTable("accounts", schema));
//   STRAND_ASSIGN_OR_RETURN(
//       IndexId by_id, engine->CreateIndex("by_id", accounts, {"id"}, true));
//   STRAND_ASSIGN_OR_RETURN(auto transfer, engine->RegisterProcedure(
//       "transfer", [=](Txn& txn, int64_t from, int64_t to)
//                       -> absl::StatusOr<int64_t> { ... }));
//   STRAND_ASSIGN_OR_RETURN(auto session, engine->NewSession(/*node=*/0));
//   STRAND_ASSIGN_OR_RETURN(int64_t r, session->Call(transfer, 1, 2));
//
// The fabric options choose the deployment (loopback: every node in this
// process; verbs: one compute node of a cluster). Define the schema and
// register procedures before the first NewSession (FailedPrecondition
// after). Engine methods are thread-safe; a Session belongs to one thread
// at a time. Misuse returns a Status naming what to change.
// Design: docs/design/sessions.md.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cc/cache_stats.h"
#include "engine/checkpoint_result.h"
#include "engine/engine_options.h"
#include "engine/image_info.h"
#include "engine/procedure.h"
#include "engine/procedure_stats.h"
#include "partition/fragment_registry.h"
#include "partition/options.h"
#include "rdma/counters.h"
#include "rdma/global_address.h"
#include "storage/table_options.h"
#include "txn/ids.h"

namespace strand::partition {
class PartitionMap;
}  // namespace strand::partition
namespace strand::storage {
class Schema;
}  // namespace strand::storage
namespace strand::txn {
class IndexKey;
}  // namespace strand::txn

namespace strand::engine {

class EngineImpl;
class EngineInternals;
class Session;
struct ReclaimReport;
struct RecoveryReport;

class Engine {
 public:
  static absl::StatusOr<std::unique_ptr<Engine>> Open(
      const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineOptions& options() const;
  std::vector<rdma::ComputeNodeId> local_compute_nodes() const;

  // Tables and indexes, by name in the shared catalog. Create fails with
  // AlreadyExists for a taken name; Open with NotFound for an unknown one.
  // `options` fix the table's layout (storage/table_options.h: e.g. one
  // row per page for small rows that different nodes update); Open takes
  // them from the table. A row may have at most max_row_bytes() bytes of
  // columns (InvalidArgument naming the table and
  // EngineOptions::cc.gcl_size otherwise).
  absl::StatusOr<txn::TableId> CreateTable(
      std::string_view name, const storage::Schema& schema,
      const storage::TableOptions& options = {});
  absl::StatusOr<txn::TableId> OpenTable(std::string_view name);
  // An index over `table` whose key is the values of `key_columns` (names
  // of the table's columns, in key order; txn/index_key.h says how they
  // encode): transactions keep its entries as they write rows.
  // The catalog records the columns: OpenIndex on any node knows them.
  absl::StatusOr<txn::IndexId> CreateIndex(
      std::string_view name, txn::TableId table,
      const std::vector<std::string>& key_columns, bool unique);
  // An index over `table` whose `key_width`-byte keys the procedures build
  // themselves (index/key_codec.h) and add with Txn::AddIndexEntry.
  absl::StatusOr<txn::IndexId> CreateIndex(std::string_view name,
                                           txn::TableId table,
                                           uint16_t key_width, bool unique);
  // An index of either kind. One with key columns needs its table open
  // first (FailedPrecondition otherwise), to build keys from its tuples.
  absl::StatusOr<txn::IndexId> OpenIndex(std::string_view name);
  // The key of an index created with key columns (null otherwise); valid
  // as long as the engine.
  const txn::IndexKey* index_key(txn::IndexId index) const;
  // The schema of a table this engine created or opened, valid as long as
  // the engine; InvalidArgument for an unknown id. (Txn::NewRow gives an
  // empty row of a table without it.)
  absl::StatusOr<const storage::Schema*> schema(txn::TableId table) const;
  // The most bytes of columns a row may have: a row lives in one GCL
  // (EngineOptions::cc.gcl_size, less the GCL's and the page's headers and
  // the row's own 16). CreateTable refuses wider rows.
  uint32_t max_row_bytes() const;

  // Registers `fn`, any callable absl::StatusOr<Result>(txn::Txn&,
  // Args...) (procedure.h), under `name` (AlreadyExists if taken). Returns
  // its typed handle, Procedure<Result(Args...)> (Args decayed), which
  // converts to its ProcedureId. Sessions call it concurrently: `fn` must
  // be safe to run on many threads at once.
  template <typename Fn>
  absl::StatusOr<typename procedure_internal::CallableSignature<Fn>::Handle>
  RegisterProcedure(std::string name, Fn fn) {
    using Handle = typename procedure_internal::CallableSignature<Fn>::Handle;
    absl::StatusOr<ProcedureId> id =
        Register(EraseProcedure(std::move(name), std::move(fn)));
    if (!id.ok()) return id.status();
    return Handle(*id);
  }
  // Registers a fragment (partition/fragment.h): a piece of a procedure
  // that runs where a partition lives. Like procedures, before the first
  // session. `fn` is StatusOr<Out>(txn::Txn&, const In&).
  template <typename In, typename Out, typename Fn>
  absl::StatusOr<partition::Fragment<In, Out>> RegisterFragment(
      std::string name, Fn fn) {
    auto registered = RegisterErasedFragment(
        std::move(name), partition::EraseFragment<In, Out>(std::move(fn)));
    if (!registered.ok()) return registered.status();
    partition::Fragment<In, Out> f;
    f.id = registered->first;
    f.fn = registered->second;
    return f;
  }
  // Unimplemented if no procedure has this name.
  absl::StatusOr<ProcedureId> FindProcedure(std::string_view name) const;
  // The typed handle of procedure `name`: Unimplemented if there is none,
  // InvalidArgument naming both signatures if it is not `Signature`.
  //   auto transfer = engine->FindProcedure<bool(int64_t, int64_t)>("t");
  template <typename Signature>
  absl::StatusOr<Procedure<Signature>> FindProcedure(
      std::string_view name) const {
    absl::StatusOr<ProcedureId> id =
        FindProcedureOfTypes(name, Procedure<Signature>::types());
    if (!id.ok()) return id.status();
    return Procedure<Signature>(*id);
  }
  // InvalidArgument for an id no procedure has.
  absl::StatusOr<std::string> procedure_name(ProcedureId id) const;
  size_t procedure_count() const;

  // A session on compute node `node` (hosted by this process).
  absl::StatusOr<std::unique_ptr<Session>> NewSession(rdma::ComputeNodeId node);

  // Per-procedure stats summed over every session so far, by ProcedureId.
  std::vector<ProcedureStats> Stats() const;
  // Per-procedure stats of the sessions of one compute node.
  std::vector<ProcedureStats> Stats(rdma::ComputeNodeId node) const;
  // Partitioned mode: who owns which partition (null in shared mode;
  // partition/partition_map.h), and the two-phase commit counters of the
  // hosted nodes.
  const partition::PartitionMap* partition_map() const;
  partition::PartitionStats PartitionStats() const;
  // Coherence and fabric counters of the hosted compute nodes.
  cc::CacheStats CacheStats() const;
  rdma::FabricCounters FabricCounters() const;

  // Write-ahead log (EngineOptions::wal). The pool's database id (set by
  // the first Open of a pool, RootWord::kDatabaseId), and what recovery
  // did at Open (null unless EngineOptions::recover_wal_dir and this
  // process hosts compute node 0, which recovers; engine/recovery.h).
  uint64_t database_id() const;
  const RecoveryReport* recovery_report() const;

  // A pool image while the compute processes of a cluster stay up
  // (engine/image.h): each writes back and gives up every line its hosted
  // compute nodes cache (WriteBackCaches), one writes the image
  // (WriteImage) once all have, then each starts its log (StartLogging).
  // No session may be running a transaction meanwhile.
  absl::Status WriteBackCaches();
  absl::StatusOr<ImageInfo> WriteImage(const std::string& path);
  // Starts the write-ahead log on every hosted compute node of an engine
  // opened without one, as EngineOptions::wal would have at Open.
  // FailedPrecondition if a log runs already.
  absl::Status StartLogging(const WalOptions& wal);

  // Checkpoints (engine/checkpointer.h, docs/design/checkpoints.md): takes
  // one now, while sessions run, publishes it in wal.dir and truncates the
  // logs it makes obsolete. `kind`: "on_demand", or "initial" for one
  // taken before any transaction was logged (after a load: nothing older
  // is needed, so the logs may be truncated at once). FailedPrecondition
  // without a log, or in a process that does not host compute node 0
  // (which takes every checkpoint of a deployment).
  absl::StatusOr<CheckpointResult> Checkpoint(
      std::string_view kind = "on_demand");
  // Every checkpoint this engine took (periodic ones too), oldest first,
  // and whether one is being taken now.
  std::vector<CheckpointResult> CheckpointHistory() const;
  bool checkpoint_running() const;

  // Failover (EngineOptions::failover; docs/design/node_failure.md).
  // FailNode is in-process failure injection: hosted compute node `node`
  // stops at once, as a process killed -9: its operations reach no memory
  // node or peer and what is sent to it is lost, its log keeps what was
  // durable, and every call of its sessions fails from now on (NewSession
  // on it: Unavailable). The survivors declare it failed after its lease
  // and one of them reclaims it. The loopback fabric, or verbs with the
  // whole deployment in this process (FabricOptions::in_process_address).
  absl::Status FailNode(rdma::ComputeNodeId node);
  // Blocks until `node` was reclaimed (DeadlineExceeded after `timeout`).
  absl::Status WaitReclaimed(rdma::ComputeNodeId node, absl::Duration timeout);
  // After FailNode: waits until the survivors reclaimed `node` (at most
  // `timeout`), then brings it back with an empty cache and its log
  // continued; it takes work (NewSession) once every member saw it join.
  // Its old sessions must be gone (FailedPrecondition otherwise), and no
  // thread may open a session on it meanwhile, nor take a checkpoint if
  // it is compute node 0 (whose checkpointer starts again with it).
  // Shared mode only, with each hosted node's epochs in this process
  // (not EngineOptions::epochs_in_pool).
  absl::Status RejoinNode(rdma::ComputeNodeId node,
                          absl::Duration timeout = absl::Seconds(30));
  // For tests of a node that pauses: its heartbeats stop while its
  // threads go on (the survivors declare it failed after its lease and
  // fence it: whatever it does then fails); ResumeHeartbeats beats again.
  absl::Status PauseHeartbeats(rdma::ComputeNodeId node);
  absl::Status ResumeHeartbeats(rdma::ComputeNodeId node);
  // The reclaims this process ran, oldest first (engine/node_reclaim.h
  // defines ReclaimReport), and when it first saw `node` declared failed,
  // by itself or another process (InfinitePast: it did not, or the node is
  // live again).
  std::vector<ReclaimReport> ReclaimReports() const;
  absl::Time DeclaredFailedAt(rdma::ComputeNodeId node) const;
  // The last time it was seen declared failed, even if it rejoined since.
  absl::Time LastDeclaredFailedAt(rdma::ComputeNodeId node) const;
  // When hosted node `node` last renewed its lease (InfiniteFuture: it
  // holds none, e.g. failover is off). Far behind now means this process
  // was stopped or starved past its lease: the others declared the node
  // failed and fenced it, whatever its own operations say yet.
  absl::Time LeaseRenewedAt(rdma::ComputeNodeId node) const;

  // Writes the pool image (engine/image.h) to `path` and CLOSES the
  // engine: every log is closed (all appended records durable), every
  // compute-node runtime destroyed (caches written back), then the memory
  // nodes are copied. Every session must be gone and no thread may use the
  // engine afterwards except to destroy it. Loopback fabric only.
  absl::StatusOr<ImageInfo> SaveImage(const std::string& path);

 private:
  friend class EngineInternals;
  explicit Engine(std::unique_ptr<EngineImpl> impl);
  absl::StatusOr<ProcedureId> Register(ErasedProcedure procedure);
  absl::StatusOr<ProcedureId> FindProcedureOfTypes(
      std::string_view name, const std::optional<ProcedureTypes>& types) const;
  absl::StatusOr<
      std::pair<partition::FragmentId, const partition::ErasedFragment*>>
  RegisterErasedFragment(std::string name, partition::ErasedFragment fn);

  std::unique_ptr<EngineImpl> impl_;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_ENGINE_H_
