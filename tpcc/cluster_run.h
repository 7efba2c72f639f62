#ifndef STRAND_TPCC_CLUSTER_RUN_H_
#define STRAND_TPCC_CLUSTER_RUN_H_

// A TPC-C run whose compute nodes are separate processes (verbs, one
// compute node each): the steps they meet at on the cluster board
// (engine/cluster_board.h), and the figures each node publishes there for
// node 0 to combine into the deployment's report.
//
//   node 0                          every other node
//   create the tables    kSchema -> open them
//   load its warehouses and ITEM    load its warehouses     -> kLoaded
//   with --wal=on, once all loaded: start its log (node-<id>/ in its own
//                                   --wal_dir)              -> kLogging
//   once all log: checkpoint the
//     load (<wal_dir>/checkpoint-<n>/)
//                 kCheckpointed ->  wait for it
//   run (warm-up, measure)          run                     -> kRan, with
//   combine, check consistency                                 its figures
//   kChecked ->                     stay up (serving SELCC) until kChecked
//
// Each process loads the warehouses the deployment's split gives its node
// (the partitioned mode's ranges, partition/partition_map.h), so loads run
// in parallel and no row is loaded twice.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "rdma/global_address.h"
#include "tpcc/driver.h"
#include "tpcc/loader.h"

namespace strand::tpcc {

enum ClusterStep : uint64_t {
  kSchemaCreated = 1,  // node 0 created the tables: open them
  kLoaded = 2,         // this node loaded its warehouses
  kLogging = 3,        // --wal=on: this node logs every commit
  kCheckpointed = 4,   // --wal=on: node 0 checkpointed the load
  kRan = 5,            // this node ran and published its figures
  kChecked = 6,        // node 0 combined and checked: the others may stop
};

// One node's load and run, as bytes for the board. The encoding is the
// binary's own (every process of a deployment runs the same build); Merge
// refuses bytes of another layout.
std::string EncodeNodeRun(rdma::ComputeNodeId node, const LoadResult& load,
                          const RunResult& run);
// Adds the figures in `bytes` to `load` and `run` (sums; the longest load
// and measured window; latency histograms merged; per-node commits at the
// node's index). DataLoss if `bytes` are not an encoding of this build.
absl::Status MergeNodeRun(std::string_view bytes, LoadResult& load,
                          RunResult& run);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_CLUSTER_RUN_H_
