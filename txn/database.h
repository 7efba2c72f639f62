#ifndef STRAND_TXN_DATABASE_H_
#define STRAND_TXN_DATABASE_H_

// What transactions on one compute node run against: that node's
// GclManager, its handles of every table and index (by dense id, so a
// procedure names a table by an integer, never by a string on the hot
// path), and the timestamp oracle. Built by engine/; the tables and indexes
// outlive every transaction.

#include <cstdint>
#include <string>
#include <vector>

#include "cc/gcl_manager.h"
#include "storage/heap_table.h"
#include "txn/cc_algorithm.h"
#include "txn/ids.h"
#include "txn/timestamp_oracle.h"
#include "wal/log_writer.h"

namespace strand::index {
class BLinkTree;
}  // namespace strand::index

namespace strand::txn {

class CommitWatermark;
class EpochManager;
class IndexKey;
class RedoRing;

struct Database {
  cc::GclManager* manager = nullptr;
  TimestampOracle* oracle = nullptr;
  CcAlgorithm algorithm = CcAlgorithm::kTwoPhaseLocking;
  std::vector<storage::HeapTable*> tables;  // by TableId
  std::vector<index::BLinkTree*> indexes;   // by IndexId
  // Catalog id of each index, by IndexId: what the redo log names an index
  // by (tables: HeapTable::table_id()), stable across engines.
  std::vector<uint32_t> index_catalog_ids;
  // By IndexId: the table it indexes (kNoTable if not open here), and for
  // an index declared with key columns how its keys are built from that
  // table's tuples (null: by hand). Txn keeps declared indexes with them.
  std::vector<TableId> index_tables;
  std::vector<const IndexKey*> index_keys;
  // By TableId: the indexes declared with key columns on the table, which
  // every Insert, Update, Modify and Delete keeps (Txn).
  std::vector<std::vector<IndexId>> declared_indexes;
  // Names, for the messages of errors a procedure can cause.
  std::vector<std::string> table_names;  // by TableId
  std::vector<std::string> index_names;  // by IndexId

  // The compute node's write-ahead log, or null (no logging). With a log,
  // a commit is acknowledged only once it is durable, and so is every
  // commit it may depend on (docs/design/concurrency_control.md,
  // "Logging").
  wal::LogWriter* log = nullptr;
  // With a log: the node's durable timestamp marks (commit_watermark.h).
  // Every transaction holds one of its slots while it may log, so the
  // cluster mark C says "every commit with a timestamp <= C, on every node,
  // is durable and applied": what a checkpoint waits for
  // (docs/design/checkpoints.md). Kept in both commit modes.
  CommitWatermark* marks = nullptr;
  // With a log and early lock release: `marks` again, and commits are
  // acknowledged by it. A commit releases its latches once its record is
  // appended and is acknowledged once the cluster mark covers its
  // timestamp. Null: a commit holds its latches until its own record is
  // durable, and is acknowledged then.
  CommitWatermark* watermark = nullptr;
  // Record the index leaves every Lookup, LookupBatch and Scan read, and
  // validate them at commit: what makes scans and absent-key lookups
  // serializable (docs/design/concurrency_control.md, "Index reads"). Off
  // only to measure what that costs: phantoms become possible again.
  bool validate_index_reads = true;
  // Read tuples that are not written with no latch (GclManager::
  // OptimisticRead) where the page is cached, and validate them at commit
  // instead of holding a shared latch to it: 2PL and OCC
  // (two_phase_locking.h, optimistic.h; TO's reads write read_ts). Off
  // only for the ablation (--optimistic_reads): serializable either way.
  bool optimistic_tuple_reads = true;
  // Where transactions announce themselves and committed deletes queue
  // their slots for reuse (epoch_manager.h): shared by every compute node
  // when this process hosts them all, this node's own otherwise. Null:
  // deleted rows' slots are never reused (a Database built by hand).
  EpochManager* epochs = nullptr;
  // With manager->options().write_through: the node's redo ring, which
  // every commit's write-through batch carries its record to
  // (redo_ring.h); null: the data alone is written through.
  RedoRing* ring = nullptr;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_DATABASE_H_
