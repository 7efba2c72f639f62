#ifndef STRAND_TXN_TXN_STATE_H_
#define STRAND_TXN_TXN_STATE_H_

// What one transaction has touched, shared by Txn (which records it) and
// the concurrency control algorithms (which latch, validate and apply it).
// Internal to txn/.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "storage/schema.h"
#include "storage/tuple_address.h"
#include "txn/abort_reason.h"
#include "txn/database.h"
#include "txn/page_latches.h"

namespace strand::txn {

// One tuple the transaction read or wrote.
struct Access {
  TableId table = 0;
  storage::TupleAddress address;
  // The tuple (header included) as read; its header's write_ts is the
  // version OCC validates against.
  std::vector<uint8_t> original;
  // The new tuple when modified (null if only read).
  std::unique_ptr<storage::TupleBuffer> modified;
  bool deleted = false;
  bool inserted = false;  // by this transaction: already in the heap, and
                          // unreachable until its index entries go in

  uint64_t version() const;  // write_ts of `original`
  bool writes() const { return modified != nullptr || deleted; }
};

struct IndexWrite {
  IndexId index = 0;
  std::string key;
  storage::TupleAddress value;
};

struct TxnState {
  TxnState(const Database& db, cc::ThreadContext& ctx)
      : db(db), ctx(ctx), latches(*db.manager, ctx) {
    // One allocation each up front instead of a chain of regrowths (and
    // rehashes) as an OLTP transaction's few dozen accesses come in.
    accesses.reserve(kExpectedAccesses);
    by_address.reserve(kExpectedAccesses);
    index_inserts.reserve(16);
  }
  ~TxnState() {
    // Hand the accesses back to this thread's pool: the next transaction
    // reuses the objects and their `original` capacity (no malloc/free pair
    // per tuple touched).
    for (auto& a : accesses) RecycleAccess(std::move(a));
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

  uint64_t start_ts = 0;    // TO: the transaction's timestamp
  uint64_t commit_ts = 0;   // every algorithm: orders the redo log
  uint64_t commit_lsn = 0;  // the commit's redo record (0: none logged)
  AbortReason abort_reason = AbortReason::kNone;

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
    a->modified.reset();
    a->deleted = false;
    a->inserted = false;
    pool.push_back(std::move(a));
  }
};

}  // namespace strand::txn

#endif  // STRAND_TXN_TXN_STATE_H_
