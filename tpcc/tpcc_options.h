#ifndef STRAND_TPCC_TPCC_OPTIONS_H_
#define STRAND_TPCC_TPCC_OPTIONS_H_

// Everything a run of the tpcc binary is told: one field per flag
// (tpcc_main.cc defines each flag with the default written here and fills
// the struct), checked together by Validate before any work starts,
// turned into the engine's and the driver's options, and written into
// every --json record by AddJson, so that a knob is written once.

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/json_line.h"
#include "base/option_naming.h"
#include "cc/options.h"
#include "engine/engine_options.h"
#include "index/cpu_path_flags.h"
#include "rdma/fabric_options.h"
#include "tpcc/mix.h"
#include "tpcc/schema.h"
#include "tpcc/terminal.h"
#include "txn/cc_algorithm.h"

namespace strand::tpcc {

// Whether `wal_dir` holds a run's logs or checkpoints (node-<id>/,
// checkpoint-<n>/).
bool HoldsEarlierRun(const std::string& wal_dir);

struct TpccOptions {
  // The database.
  int warehouses = 2;
  int items = 100000;    // ITEM rows, and STOCK rows per warehouse
  int customers = 3000;  // per district
  uint64_t seed = 1;     // of the load and of the run's inputs

  // The deployment: the shared fabric flags, then the engine's.
  rdma::FabricOptions fabric;
  int threads = 1;  // per compute node
  std::string cc = "2pl";
  std::string protocol = "selcc";
  std::string mode = "shared";
  // 4 KiB: a CUSTOMER row (695 bytes) fills a 1 KiB GCL alone; at 4 KiB
  // five fit, for 8.5 MiB less per warehouse (README, Results: memory).
  // Each thread works on its home warehouse, and the runs measured there
  // lost no throughput to false page conflicts; a GCL miss moves 4x the
  // bytes.
  uint32_t gcl_size = 4096;
  uint64_t cache_mb = 0;  // per compute node; 0: sized automatically
  index::CpuPathSwitches cpu_path;
  bool optimistic_tuple_reads = true;
  bool unlocked_inserts = true;
  bool validate_index_reads = true;
  bool epochs_in_pool = false;
  bool twopc_one_phase_local = true;
  bool twopc_read_only_vote = true;
  bool twopc_parallel_prepare = true;
  double peer_timeout_s = 10;

  // The run.
  std::string mix = "standard";
  std::string home_warehouse = "thread";
  double remote_neworder = -1;  // < 0: the specification's rate
  double distributed_pct = -1;  // < 0: the specification's rates
  double duration_s = 10;
  uint64_t txns = 0;  // > 0: this many measured transactions instead
  double warmup_s = 1;

  // The write-ahead log. -1: the deployment's default (ResolvedWal).
  std::string wal = "off";
  std::string wal_dir;
  bool wal_early_lock_release = false;
  int wal_pipeline = -1;
  int wal_group_commit_us = -1;
  // Checkpoints (docs/design/checkpoints.md): one after the load, then one
  // every checkpoint_interval_s (0: none more), copying at most
  // checkpoint_read_mb_per_s MiB/s (0: no limit); logs are truncated in
  // segments of wal_segment_mb.
  double checkpoint_interval_s = 0;
  double checkpoint_read_mb_per_s = 0;
  int wal_segment_mb = 64;

  // Failover (docs/design/node_failure.md): --failover turns
  // EngineOptions::failover on, with its lease and redo ring; --fail_node
  // ("N@T") fails compute node N T seconds into the measured run
  // (Engine::FailNode) and, with rejoin_after_s > 0, brings it back that
  // many seconds later (Engine::RejoinNode).
  bool failover = false;
  int node_lease_ms = static_cast<int>(
      absl::ToInt64Milliseconds(engine::FailoverOptions().node_lease));
  int redo_ring_mb =
      static_cast<int>(engine::FailoverOptions().redo_ring_bytes >> 20);
  std::string fail_node;
  double rejoin_after_s = 0;
  // This process restarts a compute node of a running verbs deployment
  // after its process was killed (scripts/launch.sh --restart_after_s): it
  // joins once the others reclaimed the node, without a barrier or a
  // load, runs --duration_s and reports to compute node 0.
  bool rejoin = false;

  // Side files and extra reports.
  std::string acked_log;
  std::string delivery_results;
  bool memory_breakdown = false;
  std::string check_image;  // not empty: check this image instead of a run

  // Compute nodes of the whole deployment: fabric.compute_nodes, or over
  // verbs the cluster file's (one per process).
  int deployment_compute_nodes = 1;
  // With --wal=on: wal_dir held an earlier run's logs or checkpoints when
  // the options were read (HoldsEarlierRun), which this run recovers and
  // carries on from instead of loading. Decided once, before anything
  // logs: this run's own log directories, or another process's, would
  // make the directory say so later.
  bool resumes = false;
  // The flags the user set (base/command_line.h FlagsGiven): a flag that
  // has no effect in this run is refused only if it was given.
  std::set<std::string> given;

  // Every setting, alone and against the others, the machine and the file
  // system (the log directory must be writable), as `naming` names them:
  // the binary validates with OptionNaming::Flags, so its user reads
  // "--warehouses". Nothing is created or loaded.
  absl::Status Validate(
      const OptionNaming& naming = OptionNaming::Fields("TpccOptions::")) const;

  // The settings parsed (Validate said they parse).
  txn::CcAlgorithm algorithm() const;
  cc::Protocol coherence() const;
  engine::EngineMode engine_mode() const;
  Mix transaction_mix() const;
  HomeWarehouse home() const;
  Scale scale() const;
  bool logging() const { return wal == "on"; }
  // --fail_node parsed (Validate said it parses); nullopt without it.
  struct NodeFailure {
    int node = 0;
    double at_s = 0;  // into the measured window
  };
  std::optional<NodeFailure> node_failure() const;
  bool over_verbs() const { return fabric.kind == rdma::FabricKind::kVerbs; }
  // Compute nodes this process hosts: all on loopback, one over verbs.
  int local_compute_nodes() const {
    return over_verbs() ? 1 : fabric.compute_nodes;
  }

  // The log settings of this run, its -1 defaults resolved for the
  // deployment.
  struct WalPlan {
    bool early_lock_release = false;
    int pipeline = 0;  // unacknowledged commits per thread; 0: none
    int group_commit_us = 0;
  };
  WalPlan ResolvedWal() const;
  // The engine's log options of this run (ResolvedWal's, in wal_dir).
  engine::WalOptions WalOptionsForRun() const;

  // Pool bytes the load of the warehouses needs, at least, with room for
  // the rows a run inserts, over all memory nodes.
  uint64_t PoolBytesNeeded() const;
  // Sets fabric.pool_bytes for a loopback run that did not give --pool_mb:
  // room for the whole run at a generous insert rate, up to half the
  // memory available.
  void SizePool();

  // The engine's options; an automatic cache (cache_mb 0) is sized for the
  // warehouses a node works on. A run that resumes opens the engine with
  // the earlier run recovered and the log running.
  engine::EngineOptions EngineOptionsForRun() const;

  // The configuration into a --json record: every flag under its name (the
  // -1 defaults resolved), but the fabric's (rdma::AddFabricJson) and
  // those whose record field is what the run measured (duration_s) or used
  // (cache_mb).
  void AddJson(JsonLine& json) const;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_TPCC_OPTIONS_H_
