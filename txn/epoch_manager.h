#ifndef STRAND_TXN_EPOCH_MANAGER_H_
#define STRAND_TXN_EPOCH_MANAGER_H_

// Epoch-based reuse of deleted rows' slots: a deleted slot goes back to its
// table (storage::HeapTable::ReleaseSlot) only once every transaction that
// could have looked the row up, on any compute node, has ended. One manager
// serves every compute node when this process hosts them all; otherwise
// each hosted node has its own, and they share epochs through the pool.
//
// Transactions announce the epoch E they read (Enter at Begin, Exit at
// their end); a committed delete queues its slot (Retire); every
// kBatchSlots slots are sealed as a batch at e = E, which advances E, and
// go back once every announced epoch is > e.
// Cost: Enter one load of E and one CAS on the transaction's own record,
// Exit one store, Retire a vector push; per batch one fetch_add on E and
// one scan of the records; no mutex but to add a record. In the pool: a
// seal adds at most 3 round trips, the ticker (Tick) 2 every few ms per node.
//
// Application contract: a delete removes the row's index entries in the
// same transaction (Txn::Delete does for declared indexes,
// Txn::RemoveIndexEntry for those declared by width), and an address is
// good only within the transaction that looked it up (or while the row is
// known not to be deleted): else, once the slot is reused, it may lead to
// another row. A transaction left open holds reuse back.
// Design, limits and argument: docs/design/slot_reuse.md.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rdma/fabric.h"
#include "storage/heap_table.h"
#include "storage/tuple_address.h"
#include "txn/pool_epochs.h"

namespace strand::txn {

class EpochManager {
 public:
  // A transaction's announcement record (Enter's result).
  using Slot = uint32_t;
  static constexpr Slot kNoSlot = UINT32_MAX;
  // Deleted slots per batch: one epoch advance and one scan per batch.
  static constexpr size_t kBatchSlots = 64;

  // For every compute node of the deployment, all in this process.
  EpochManager() = default;
  // For the compute node of `endpoint` alone, its epochs shared through
  // the pool with the managers of the other `compute_nodes` - 1 nodes
  // (docs/design/slot_reuse.md, "Across processes"). Tick it every few ms.
  static absl::StatusOr<std::unique_ptr<EpochManager>> InPool(
      rdma::Endpoint& endpoint, int compute_nodes);
  ~EpochManager();
  EpochManager(const EpochManager&) = delete;
  EpochManager& operator=(const EpochManager&) = delete;

  // Announces a transaction that begins now; it owns the returned record
  // until Exit. Any thread may Exit it (partitioned mode's branches).
  Slot Enter();
  // Queues the slot of a row `slot`'s transaction deleted and committed
  // (its index entries removed by that commit) for `table`, the handle of
  // the compute node that deleted it.
  void Retire(Slot slot, storage::HeapTable& table,
              storage::TupleAddress address);
  // Ends `slot`'s transaction; seals a full batch and hands back the
  // batches no active transaction can still see. `endpoint` (the calling
  // thread's) reaches the pool at a seal, in the pool only; a failed
  // round trip leaves the slots queued for a later Exit.
  void Exit(Slot slot, rdma::Endpoint& endpoint);
  // In the pool: refreshes the cached epoch from the pool's and publishes
  // this node's bound, so that an idle node lets the others reclaim. Does
  // nothing otherwise.
  absl::Status Tick(rdma::Endpoint& endpoint);

  // The current (cached) epoch, slots handed back so far, and slots in
  // sealed batches not handed back yet: for tests and reports.
  uint64_t epoch() const { return epoch_.load(std::memory_order_relaxed); }
  uint64_t reclaimed() const {
    return reclaimed_.load(std::memory_order_relaxed);
  }
  uint64_t queued() const {
    return retired_.load(std::memory_order_relaxed) - reclaimed();
  }
  // The pool's words of this manager's node; null unless InPool.
  const PoolEpochs* pool() const { return pool_.get(); }

 private:
  static constexpr uint64_t kIdle = UINT64_MAX;  // no transaction announced
  static constexpr Slot kChunkSlots = 64;
  static constexpr Slot kMaxChunks = 1024;  // 65,536 concurrent transactions

  struct Retired {
    storage::HeapTable* table;
    storage::TupleAddress address;
  };
  struct Batch {
    uint64_t epoch;  // handed back once every announcement is > epoch
    std::vector<Retired> slots;
  };
  // One per concurrently active transaction. `epoch` is read by every
  // reclaiming thread; the rest belongs to the record's current owner (the
  // CAS that claims it and the store that frees it order the owners).
  struct alignas(64) Announcement {
    std::atomic<uint64_t> epoch{kIdle};
    std::vector<Retired> open;  // retired, not yet sealed
    std::vector<Batch> sealed;  // oldest first; a few at most
  };
  struct Chunk {
    Announcement records[kChunkSlots];
  };

  Announcement& At(Slot slot) const {
    return chunks_[slot / kChunkSlots]
        .load(std::memory_order_acquire)
        ->records[slot % kChunkSlots];
  }
  bool TryClaim(Slot slot);
  // A new record, claimed, under mu_.
  Slot Grow();
  // The smallest epoch announced by a transaction other than `except`'s.
  uint64_t MinActive(Slot except) const;
  // Advances E: the epoch of the batch sealed now.
  absl::StatusOr<uint64_t> Advance(rdma::Endpoint& endpoint);
  // Batches sealed at epochs below it can go back (ignoring `except`'s
  // transaction): the smallest announcement, here or in the pool.
  absl::StatusOr<uint64_t> Horizon(Slot except, rdma::Endpoint& endpoint);
  // In the pool: raises the cached epoch to `epoch`, never lowers it.
  void Learn(uint64_t epoch);
  absl::Status Publish(Slot except, rdma::Endpoint& endpoint);
  void Reclaim(Announcement& mine, Slot slot, rdma::Endpoint& endpoint);

  // E; in the pool, this process's cached copy of the pool's.
  std::atomic<uint64_t> epoch_{1};
  std::unique_ptr<PoolEpochs> pool_;  // null: every node is in this process
  std::atomic<Slot> count_{0};        // records in use so far: [0, count_)
  std::atomic<Chunk*> chunks_[kMaxChunks] = {};
  std::mutex grow_mu_;                // serializes Grow
  std::atomic<uint64_t> retired_{0};  // slots in batches sealed so far
  std::atomic<uint64_t> reclaimed_{0};
};

}  // namespace strand::txn

#endif  // STRAND_TXN_EPOCH_MANAGER_H_
