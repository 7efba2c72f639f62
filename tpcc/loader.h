#ifndef STRAND_TPCC_LOADER_H_
#define STRAND_TPCC_LOADER_H_

// The initial database of clause 4.3, loaded through stored procedures like
// any other transaction.
//
// Work is cut into units of bounded size (a batch of items, of one
// warehouse's stock, of one district's customers or orders, of 500 entries
// of a secondary index), each one transaction; the threads of every compute
// node take units from a shared queue in warehouse order, each through a
// session on its own node, so a load of W warehouses runs on all compute
// nodes at once. Two phases: the rows with their primary keys, then the
// secondary indexes (customer_by_name, order_by_customer), whose keys are
// random in row order: each index takes one thread that inserts all its
// entries in ascending key order, one unit after the other, so its B-link
// leaves come out full instead of 70% full. That phase runs on two threads
// whatever the thread count (about 5% of a load's time on one thread).
// Every unit draws its random values from a seed derived from (--seed,
// unit) or, for what a district's units share (customer names, the O_C_ID
// permutation), from (--seed, district), so a retried unit writes the same
// rows and a load is reproducible.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/progress_line.h"
#include "engine/engine.h"
#include "partition/partition_map.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct LoadResult {
  double seconds = 0;
  uint64_t rows = 0;
  uint64_t transactions = 0;
  // Bytes the memory nodes have handed out (bump pointers) once the load
  // is done: the whole database, catalog and table roots included. Not the
  // growth during the load: the chunk a node began before it (for the
  // catalog) is then partly filled by rows yet would not be counted.
  uint64_t pool_bytes_used = 0;
};

class Loader {
 public:
  // Registers the load procedures on `engine` (before its first session).
  // InvalidArgument if `scale` exceeds what the schema's columns hold
  // (kMaxDistricts, kMaxCustomers).
  // `load_time` is the value of every date column of the initial rows.
  static absl::StatusOr<std::unique_ptr<Loader>> Register(
      engine::Engine& engine, const Tables& tables, const Scale& scale,
      const NURandConstants& constants, int32_t load_time);

  // Loads ITEM and warehouses 1..`warehouses` with `threads_per_node`
  // threads on each hosted compute node. A process that hosts only some
  // compute nodes (verbs) loads their share of the warehouses (partition/
  // partition_map.h's ranges), and ITEM if it hosts node 0: every process
  // of the deployment calls Load, in parallel, and each row is loaded once.
  // Shows progress on stderr if `show_progress`. InvalidArgument unless 1 <=
  // warehouses <= kMaxWarehouses.
  absl::StatusOr<LoadResult> Load(int warehouses, int threads_per_node,
                                  uint64_t seed, bool show_progress);

 private:
  // One unit: a call of a load procedure (one transaction).
  struct Call {
    engine::ProcedureId proc;
    int64_t w, d, first, last;
    uint64_t seed;
  };
  // Calls one thread makes in order.
  using Task = std::vector<Call>;
  struct Progress {
    const int warehouses;
    const size_t calls;  // of the whole load
    ProgressLine line;   // on stderr, if asked to show progress
    const absl::Time start;
    std::atomic<uint64_t> rows{0};
    std::atomic<size_t> done{0};  // calls
  };

  // Runs `tasks` on threads_per_node threads of every local compute node;
  // the first error stops them all.
  absl::Status Run(const std::vector<Task>& tasks,
                   const partition::PartitionMap* owners, int threads_per_node,
                   Progress& progress);
  Loader(engine::Engine& engine, const Scale& scale)
      : engine_(engine), scale_(scale) {}
  void RegisterProcedures(const Tables& tables,
                          const NURandConstants& constants, int32_t load_time,
                          absl::Status* status);

  engine::Engine& engine_;
  const Scale scale_;
  engine::ProcedureId items_ = 0, warehouse_ = 0, stock_ = 0, customers_ = 0,
                      orders_ = 0, customer_names_ = 0, order_customers_ = 0;
};

// Bytes all memory nodes have handed out so far (sum of the bump pointers
// past the first chunk): the pool the database takes.
absl::StatusOr<uint64_t> PoolBytesTaken(engine::Engine& engine);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_LOADER_H_
