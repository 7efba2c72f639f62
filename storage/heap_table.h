#ifndef STRAND_STORAGE_HEAP_TABLE_H_
#define STRAND_STORAGE_HEAP_TABLE_H_

// A heap table: fixed-size tuples (schema.h) appended in insertion order into
// GCLs ("pages", layout in heap_page.h). Every access goes through cc/
// latches, so the table is safe across threads and compute nodes.
//
// Each thread (ThreadContext) of each compute node inserts into its own
// current page, so inserts never fight over one GCL, and first takes a free
// slot of its compute node's list (ReleaseSlot's, and the unused rest of
// pages threads left behind); Delete only sets the tuple's kDeleted flag.
// A page holds as many rows as fit, or TableOptions::max_rows_per_page
// (kept in the root): the page is the unit of latching, so rows that share
// one conflict however unrelated they are.
//
// Cost in round trips (SEL: one per latch acquisition and one per release;
// SELCC: 0 on a cache hit, unlocks are free):
//   Insert  2 (X latch + write-back of the slot's bytes); a new page adds
//           Allocate + 4 (page and root latches).
//   Read    2 (S latch + release).
//   Update, Delete  2; the write-back carries only the bytes that changed.
//   Scan    2 for the root + 2 per page.
// Design (insert pages, rows per page, free slots): docs/design/storage.md.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "cc/gcl_manager.h"
#include "storage/heap_table_tuning.h"
#include "storage/schema.h"
#include "storage/table_options.h"
#include "storage/tuple_address.h"

namespace strand::storage {

class HeapTable {
 public:
  // Allocates and initializes the root GCL of a new, empty table; returns
  // its address. InvalidArgument if a tuple does not fit one GCL.
  // `options` (table_options.h) are recorded in the root.
  static absl::StatusOr<rdma::GlobalAddress> Create(
      cc::GclManager& manager, cc::ThreadContext& ctx, uint32_t table_id,
      const Schema& schema, const TableOptions& options = {});

  // The table whose root GCL is `root`, for this compute node. Checks that
  // the root is a heap table root of this schema's tuple size; takes the
  // table's options from the root.
  static absl::StatusOr<std::unique_ptr<HeapTable>> Open(
      cc::GclManager& manager, cc::ThreadContext& ctx, rdma::GlobalAddress root,
      Schema schema, const HeapTableTuning& tuning = {});

  const Schema& schema() const { return schema_; }
  rdma::GlobalAddress root() const { return root_; }
  uint32_t table_id() const { return table_id_; }
  // The options it was created with (kept in its root).
  TableOptions options() const {
    return TableOptions{.max_rows_per_page = max_rows_per_page_};
  }
  // Rows a page holds: what fits a GCL, capped by max_rows_per_page.
  uint32_t slots_per_page() const { return slots_per_page_; }
  // Where slot `slot` starts in its page's payload: for txn/, which latches
  // the page itself and edits the tuple header in place.
  uint32_t SlotOffset(uint32_t slot) const;

  // Appends `tuple` (schema().tuple_bytes() bytes; its TupleHeader part is
  // ignored and written as a fresh live header). Returns its address.
  // With `pending`, the tuple starts with TupleHeader::kPending set: it is
  // invisible to Read/Scan until its inserter clears the flag.
  // `caller_holds(page)` says whether the caller already holds a latch on
  // `page`: such a page is not used (the thread moves on to another slot),
  // since latching it again would wait for the caller itself (a 2PL
  // transaction that read a tuple of its current page). Called under the
  // table's mutex. Takes a free slot (ReleaseSlot) first; never waits for a
  // page latch another thread holds.
  absl::StatusOr<TupleAddress> Insert(
      cc::ThreadContext& ctx, absl::Span<const uint8_t> tuple,
      bool pending = false,
      absl::FunctionRef<bool(rdma::GlobalAddress page)> caller_holds =
          [](rdma::GlobalAddress) { return false; });

  // Hands back a slot no thread can reach any more: an Insert that never
  // became visible (a pending tuple whose transaction aborted, named by no
  // index entry), or a deleted tuple once no transaction may still hold
  // its address (txn/epoch_manager.h). A later insert on this compute node
  // overwrites it. No thread may use the old address afterwards.
  void ReleaseSlot(TupleAddress address);

  // Copies the whole tuple (header included) into `out`, which must hold
  // tuple_bytes(). NotFound if the slot is empty or deleted.
  absl::Status Read(cc::ThreadContext& ctx, TupleAddress address,
                    absl::Span<uint8_t> out);

  // Replaces the columns (not the header) with those of `tuple`. Only the
  // span from the first to the last changed byte is marked dirty, so the
  // write-back carries exactly that. NotFound if empty or deleted.
  absl::Status Update(cc::ThreadContext& ctx, TupleAddress address,
                      absl::Span<const uint8_t> tuple);
  // Writes `bytes` at `offset` within the live tuple at `address` (past its
  // header); marks dirty only them. One latch, no copy of the tuple: a
  // logged after-image replayed (engine/recovery.h). NotFound if the slot
  // holds no live tuple; InvalidArgument if the range leaves the columns.
  absl::Status UpdateRange(cc::ThreadContext& ctx, TupleAddress address,
                           uint32_t offset, absl::Span<const uint8_t> bytes);
  // Overwrites one column; marks dirty only that column's bytes.
  absl::Status UpdateColumn(cc::ThreadContext& ctx, TupleAddress address,
                            size_t column, absl::Span<const uint8_t> value);

  // Writes the whole of `tuple` into the slot at `address` with a fresh
  // live header, whatever the slot held (a live, deleted or pending
  // tuple). For recovery's idempotent replay only
  // (docs/design/checkpoints.md): an insert of a logged address that
  // recovery already placed makes that tuple live with the logged bytes.
  absl::Status Overwrite(cc::ThreadContext& ctx, TupleAddress address,
                         absl::Span<const uint8_t> tuple);

  // Marks the tuple deleted (only its flags byte is written back). NotFound
  // if it already is, or the slot is empty.
  absl::Status Delete(cc::ThreadContext& ctx, TupleAddress address);

  // Calls `visit` for every live tuple (header included) until it returns
  // false, walking the page list from the root, newest page first, and
  // within a page in slot (insertion) order. A scan sees every tuple
  // inserted before it started and not deleted; tuples inserted during it
  // may or may not appear. Each page is read under one shared latch, so a
  // tuple is never seen half-written. `visit` runs with no latch held, so
  // it may use the table.
  using Visitor =
      std::function<bool(TupleAddress address, const uint8_t* tuple)>;
  absl::Status Scan(cc::ThreadContext& ctx, const Visitor& visit);

  // Pages this table holds (one S latch on the root).
  absl::StatusOr<uint64_t> PageCount(cc::ThreadContext& ctx);

  // GclManager's prefetch hints for the tuple at `address`, for txn/ to
  // batch before reading several tuples: first its page's cache entry,
  // then (a second pass) the page's latch and the tuple's lines. Hints
  // only; any address is safe.
  void PrefetchEntry(TupleAddress address) const {
    manager_.PrefetchEntry(address.gcl());
  }
  void PrefetchTuple(TupleAddress address) const;

  // The live tuple at `address` inside `payload`, the caller's latched copy
  // of its page (txn/ reads tuples under latches it holds). The checks of
  // Read: InvalidArgument if `address` is not a slot of this table's pages,
  // NotFound if the slot holds no live tuple.
  absl::StatusOr<const uint8_t*> TupleIn(const uint8_t* payload,
                                         TupleAddress address) const;
  // TupleIn for a page read with no latch (cc::GclManager::OptimisticRead):
  // copies the tuple at `address` out of `token`'s payload into `out`.
  // True if the copy is one state of the page (`token` validated after it)
  // that TupleIn would accept; false otherwise (the page changed during
  // the copy, or the checks fail): the caller then reads under a latch,
  // which also says what is wrong with the address.
  bool CopyTupleUnlatched(const cc::OptimisticToken& token,
                          TupleAddress address,
                          std::vector<uint8_t>& out) const;

 private:
  HeapTable(cc::GclManager& manager, rdma::GlobalAddress root,
            uint32_t table_id, Schema schema, uint32_t max_rows_per_page,
            const HeapTableTuning& tuning);

  // Address validity and the bytes of its slot in a latched payload.
  bool IsSlotOfThisTable(TupleAddress address) const {
    return !address.is_null() && address.slot() < slots_per_page_;
  }
  absl::Status CheckAddress(TupleAddress address) const;
  // Whether `page` is the current insert page of another context than
  // `ctx` (docs/design/storage.md, "Free slots"). Called under mu_.
  bool IsAnotherThreadsPage(rdma::GlobalAddress page,
                            const cc::ThreadContext& ctx) const;
  absl::Status CheckLive(const uint8_t* payload, TupleAddress address) const;
  // Where TakeSlot looks for a slot, in the order Insert tries them.
  enum class SlotSource {
    kFree,       // a released slot, else the thread's page
    kOwnPage,    // the thread's page (a new one when full or held)
    kFreshPage,  // a new page, which becomes the thread's page
  };
  absl::StatusOr<TupleAddress> TakeSlot(
      cc::ThreadContext& ctx, SlotSource source,
      absl::FunctionRef<bool(rdma::GlobalAddress page)> caller_holds);
  // Allocates a page, links it at the head of the list.
  absl::StatusOr<rdma::GlobalAddress> AddPage(cc::ThreadContext& ctx);

  cc::GclManager& manager_;
  const rdma::GlobalAddress root_;
  const uint32_t table_id_;
  const Schema schema_;
  const uint32_t tuple_bytes_;
  const uint32_t max_rows_per_page_;
  const bool unlocked_inserts_;
  const uint32_t slots_per_page_;

  // Each inserting thread's current page and the next slot to hand out in
  // it, by the thread's context. A context that goes leaves its page to
  // whichever context later gets its address: the page just goes on
  // filling. Only the context's own thread changes its entry; `page`
  // changes under mu_ too, since other threads read it (under mu_).
  struct InsertPage {
    rdma::GlobalAddress page;
    uint32_t next_slot = 0;
  };
  // `ctx`'s entry, found without mu_ once `ctx` has used it (a cache on
  // the context): the common insert, a next slot on the thread's own page
  // with no free slot waiting, then takes no table-wide lock, which at two
  // threads cost 5% of TPC-C's CPU in futex waits.
  InsertPage& InsertPageOf(cc::ThreadContext& ctx);
  // That cache (cc::ThreadContext::Local), for every table `ctx` inserts
  // into.
  struct InsertPageCache;

  // Keys the contexts' caches; unique in the process, never reused, so a
  // cache entry of a table that is gone never matches again.
  const uint64_t instance_;
  // std::mutex, not absl::Mutex: the distribution's abseil is not built
  // with TSan, which then could not see what this mutex orders.
  std::mutex mu_;
  // Entries are never erased while the table lives: their addresses are
  // what the per-thread cache holds.
  absl::flat_hash_map<const cc::ThreadContext*, std::unique_ptr<InsertPage>>
      insert_pages_;                      // guarded by mu_
  std::vector<TupleAddress> free_slots_;  // guarded by mu_
  // free_slots_.size(), read without mu_: an insert looks for a free slot
  // only where there may be one. A stale zero costs a slot of the
  // thread's own page instead; nothing is handed out twice.
  std::atomic<size_t> free_slot_count_{0};
};

}  // namespace strand::storage

#endif  // STRAND_STORAGE_HEAP_TABLE_H_
