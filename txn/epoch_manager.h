#ifndef STRAND_TXN_EPOCH_MANAGER_H_
#define STRAND_TXN_EPOCH_MANAGER_H_

// Epoch-based reuse of deleted rows' slots. When this process hosts every
// compute node, the engine owns one EpochManager and every node's Database
// points at it; otherwise each hosted node has one of its own, and the
// managers of all processes share their epochs through the memory pool
// ("Across processes" below).
//
// Why: a committed delete removes the row's index entries and marks the
// tuple deleted, but a transaction that looked the key up before the
// commit may still hold the row's address and read the slot later (OCC
// and TO read without a latch held since the lookup; 2PL too may look up
// now and read later), on any compute node. If the slot were handed to an
// insert at once, that reader would find another row's contents under
// the key it looked up. So a deleted slot goes back to its table
// (storage::HeapTable::ReleaseSlot) only once every transaction that
// could have looked it up has ended.
//
// How: a global epoch counter E (starts at 1; 0 in the pool). Every
// transaction, at Begin, announces the epoch it read (Enter); it withdraws at
// its end (Exit). A committed delete queues its slot (Retire) in its
// transaction's announcement record; when 64 are queued they are sealed as a
// batch with e = E, and E advances (one fetch_add per batch). A batch goes back
// to the tables once every announced epoch is > e (ignoring the sealer's own
// transaction, which has ended).
//
// Why no reader can see another row through a reused slot, per
// algorithm and across processes, and why the redo log replays a delete
// before the insert that reuses its slot: docs/design/slot_reuse.md.
//
// Cost on the hot path: Enter is one load of E and one CAS on the
// transaction's own announcement record (a thread gets the record it used
// last, so the line stays in its core's cache), Exit one store. Retire is
// a vector push; every 64 retired slots cost one fetch_add on E and one
// scan of the announcement records (one load per concurrently active
// transaction the process has seen at once), amortized over the batch.
// No mutex except to add announcement records (once per concurrent
// transaction ever). Across processes Enter and Exit cost the same; a seal
// costs a round trip for its FAA, one for the publish (if the bound grew)
// and one to read every bound; the ticker two every few ms per hosted node.
//
// Across processes: a reader in another process announces where this one cannot
// see it, so there (and with EngineOptions::epochs_in_pool, which makes one
// process run it for tests) each compute node's manager keeps its own
// announcements and the epochs meet in the pool (pool_epochs.h): E is a pool
// word advanced by FAA at each seal, and every compute node n has a bound word
// B[n].
//   - epoch_ is this process's cached copy of E: it only takes values E had
//     (read from the pool, or e + 1 after a seal's FAA returned e) and never
//     decreases, so it is <= E at all times. Enter announces it as before: no
//     round trip on Begin.
//   - Publish loads c = epoch_ first, then scans the announcements, and raises
//     B[self] to P = min(c, every announcement but a sealer's own, as above).
//     The engine's ticker refreshes epoch_ from E and publishes every few ms
//     (an idle node must not hold the others back); a seal publishes before it
//     reclaims.
//   - A batch sealed at e goes back once every B[n] > e (one round trip reads
//     them all), in place of every local announcement > e.
//
// Limits: a transaction that stays open holds back every batch sealed
// after it began (the slots wait, nothing breaks). A record's sealed
// batches are handed back when that record seals its next batch, so with
// short transactions each record keeps about two batches (and the open
// one) waiting: a few hundred slots per concurrent transaction. Across
// processes a batch also waits for every other node's next publish (a few
// ms), and a compute node that does not publish (not started, crashed, or
// its process gone) holds back every batch sealed after its last bound;
// an engine that closes publishes a last bound first. Slots queued but not
// yet reclaimed when the engine closes are not reused (they stay deleted
// in the pool).
//
// Application contract: a delete must remove the row's index entries in
// the same transaction (Txn::Delete does it for declared indexes;
// Txn::RemoveIndexEntry for those declared by width), and an address is only
// good within the transaction that looked it up (or, across transactions,
// while the row is known not to be deleted): a stale entry or a remembered
// address of a deleted row may lead to another row once its slot is
// reused.

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
  // ("Across processes"). Tick it every few ms.
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
