#ifndef STRAND_TXN_TXN_STATE_H_
#define STRAND_TXN_TXN_STATE_H_

// What one transaction has touched, shared by Txn (which records it) and
// the concurrency control algorithms (which latch, validate and apply it).
// Internal to txn/.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "index/blink_tree.h"
#include "storage/schema.h"
#include "storage/tuple_address.h"
#include "txn/abort_reason.h"
#include "txn/commit_watermark.h"
#include "txn/database.h"
#include "txn/epoch_manager.h"
#include "txn/page_latches.h"
#include "txn/redo_ring.h"
#include "txn/thread_spares.h"

namespace strand::txn {

// One tuple the transaction read or wrote.
struct Access {
  TableId table = 0;
  storage::TupleAddress address;
  // The tuple (header included) as read; its header's write_ts is the
  // version OCC validates against.
  std::vector<uint8_t> original;
  // The new tuple when modified (null if only read): points to
  // `modified_buffer`, which keeps its capacity when the Access is recycled.
  storage::TupleBuffer* modified = nullptr;
  bool deleted = false;
  bool inserted = false;  // by this transaction: already in the heap, and
                          // unreachable until its index entries go in
  // Tables with declared indexes (declared_indexes.h): the keys of this
  // row's entries as the transaction's index writes have them, one per
  // declared index of the table in order; empty until the row is first
  // written. `tracked`: in TxnState::tracked (its buffer may change).
  std::vector<std::string> indexed_keys;
  bool tracked = false;
  // The first misuse of a view Read gave of `original` (storage/schema.h):
  // fails the commit, naming the table and row.
  absl::Status read_misuse;

  uint64_t version() const;  // write_ts of `original`
  bool writes() const { return modified != nullptr || deleted; }
  // Makes `modified` a copy of `bytes`.
  storage::TupleBuffer* SetModified(const storage::Schema& schema,
                                    absl::Span<const uint8_t> bytes) {
    if (modified_buffer) {
      modified_buffer->Assign(schema, bytes);
    } else {
      modified_buffer.emplace(schema, bytes);
    }
    modified = &*modified_buffer;
    return modified;
  }
  // SetModified's storage; kept across recycling.
  std::optional<storage::TupleBuffer> modified_buffer;
};

struct IndexWrite {
  IndexId index = 0;
  std::string key;
  storage::TupleAddress value;
};

// A tuple 2PL read with no latch (Database::optimistic_tuple_reads), and
// the token its commit validates (two_phase_locking.h).
struct UnlatchedRead {
  const Access* access = nullptr;
  cc::OptimisticToken token;
};

// A leaf of index `index` that a lookup or scan read (validated at commit).
struct IndexLeafRead {
  IndexId index = 0;
  index::LeafRead read;
};

struct TxnState {
  TxnState(const Database& db, cc::ThreadContext& ctx)
      : db(db),
        ctx(ctx),
        latches(*db.manager, ctx),
        accesses(ThreadSpares<decltype(accesses)>::Take()),
        by_address(ThreadSpares<decltype(by_address)>::Take()),
        index_inserts(ThreadSpares<decltype(index_inserts)>::Take()),
        index_removes(ThreadSpares<decltype(index_removes)>::Take()),
        leaf_reads(ThreadSpares<decltype(leaf_reads)>::Take()),
        leaf_scratch(ThreadSpares<decltype(leaf_scratch)>::Take()),
        unlatched_reads(ThreadSpares<decltype(unlatched_reads)>::Take()) {
    // Room up front (a no-op for spares that had it) instead of a chain of
    // regrowths and rehashes as an OLTP transaction's few dozen accesses
    // come in.
    accesses.reserve(kExpectedAccesses);
    by_address.reserve(kExpectedAccesses);
    index_inserts.reserve(16);
  }
  ~TxnState() {
    // Hand the accesses back to this thread's pool: the next transaction
    // reuses the objects and their `original` capacity (no malloc/free pair
    // per tuple touched); and the containers, with their capacity.
    for (auto& a : accesses) RecycleAccess(std::move(a));
    ThreadSpares<decltype(accesses)>::Give(std::move(accesses));
    ThreadSpares<decltype(by_address)>::Give(std::move(by_address));
    ThreadSpares<decltype(index_inserts)>::Give(std::move(index_inserts));
    ThreadSpares<decltype(index_removes)>::Give(std::move(index_removes));
    ThreadSpares<decltype(leaf_reads)>::Give(std::move(leaf_reads));
    ThreadSpares<decltype(leaf_scratch)>::Give(std::move(leaf_scratch));
    ThreadSpares<decltype(unlatched_reads)>::Give(std::move(unlatched_reads));
  }
  static constexpr size_t kExpectedAccesses = 48;

  // A fresh Access (default state), from this thread's pool if it has one.
  static std::unique_ptr<Access> NewAccess() {
    std::vector<std::unique_ptr<Access>>& pool = AccessPool();
    if (pool.empty()) return std::make_unique<Access>();
    std::unique_ptr<Access> a = std::move(pool.back());
    pool.pop_back();
    return a;
  }

  const Database& db;
  cc::ThreadContext& ctx;
  PageLatches latches;

  // Accesses in first-touch order; `by_address` indexes them.
  std::vector<std::unique_ptr<Access>> accesses;
  absl::flat_hash_map<storage::TupleAddress, Access*> by_address;
  std::vector<IndexWrite> index_inserts;
  std::vector<IndexWrite> index_removes;
  // Every index leaf a Lookup, LookupBatch or Scan read, with its version.
  std::vector<IndexLeafRead> leaf_reads;
  std::vector<index::LeafRead> leaf_scratch;   // one call's, before tagging
  std::vector<UnlatchedRead> unlatched_reads;  // 2PL's, in read order
  // Rows of tables with declared indexes whose buffer the procedure may
  // still change (Modify, Insert): their keys are compared with
  // indexed_keys before the table's indexes are read and at commit.
  std::vector<Access*> tracked;
  // own_writes.h: how many entries of index_inserts and index_removes
  // have each hash of (index, key), counted once they are long (a bulk
  // insert), so that most searches of them are one probe.
  absl::flat_hash_map<uint64_t, uint32_t> own_key_counts;
  bool own_keys_counted = false;
  // A unique key was added by AddIndexEntry, which checks the tree only at
  // commit (index_writes.h, PrepareIndexWritesOrConflict).
  bool unchecked_unique_adds = false;
  // Leaves read to find a unique key absent before adding it (own_writes.h,
  // LookupOwnView): validated only if the addition is cancelled, since the
  // commit checks an added key's absence itself.
  struct AbsentKeyRead {
    IndexId index = 0;
    std::string key;
    index::LeafRead read;
  };
  std::vector<AbsentKeyRead> absent_key_reads;
  // During commit: the index leaves its changes go to, latched exclusively
  // (index_writes.h), and those changes by index.
  index::LeafGuards index_leaves;
  std::vector<index::BLinkTree::Change> index_changes;
  std::vector<std::pair<IndexId, size_t>> index_change_runs;  // (index, end)

  uint64_t start_ts = 0;    // TO: the transaction's timestamp
  uint64_t commit_ts = 0;   // every algorithm: orders the redo log
  uint64_t commit_lsn = 0;  // the commit's redo record (0: none logged)
  AbortReason abort_reason = AbortReason::kNone;
  // The transaction's announcement (db.epochs) while it runs.
  EpochManager::Slot epoch_slot = EpochManager::kNoSlot;
  // With db.marks: the slot that holds back the node's durable mark
  // below every timestamp this transaction may still log (Txn::Begin to
  // its end; commit_watermark.h). Owned by whoever runs the transaction.
  CommitWatermark::Slot* watermark_slot = nullptr;
  // With db.ring: what the commit logged (its log record's type, id and
  // payload), which its ring record carries (redo_ring.h).
  wal::RecordType logged_type = wal::RecordType::kCommit;
  uint64_t logged_txn_id = 0;
  std::string logged_payload;
  // With db.ring, a prepared branch of a distributed transaction
  // (Txn::RecordPrepared): its ring record, in memory before its vote or
  // its coordinator's decision. Its commit writes the data and then this
  // record's done word; its abort only the done word (Txn::Abort).
  std::optional<RedoRing::Slot> prepared_record;
  wal::RecordType prepared_type = wal::RecordType::kCommit;

  storage::HeapTable& table(TableId id) const { return *db.tables[id]; }

 private:
  static constexpr size_t kAccessPoolMax = 256;
  static std::vector<std::unique_ptr<Access>>& AccessPool() {
    thread_local std::vector<std::unique_ptr<Access>> pool;
    return pool;
  }
  static void RecycleAccess(std::unique_ptr<Access> a) {
    if (a == nullptr) return;
    std::vector<std::unique_ptr<Access>>& pool = AccessPool();
    if (pool.size() >= kAccessPoolMax || a->original.capacity() > 4096) return;
    a->table = 0;
    a->address = storage::TupleAddress();
    a->original.clear();  // keeps the capacity
    a->modified = nullptr;
    a->deleted = false;
    a->inserted = false;
    a->indexed_keys.clear();
    a->tracked = false;
    a->read_misuse = absl::OkStatus();
    pool.push_back(std::move(a));
  }
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TXN_STATE_H_
