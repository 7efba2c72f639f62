#include "storage/heap_table.h"

#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/failure_point.h"
#include "storage/heap_page.h"
#include "storage/tuple_header.h"

namespace strand::storage {

using heap_page::Get;
using heap_page::Put;
using rdma::GlobalAddress;

namespace {

// HeapTable::instance_: a table's key in each context's cache of its
// insert pages.
std::atomic<uint64_t> next_instance{1};

}  // namespace

// Direct-mapped by table: TPC-C inserts into four tables per thread, whose
// instances are consecutive.
struct HeapTable::InsertPageCache {
  struct Entry {
    uint64_t table = 0;  // HeapTable::instance_; 0: empty
    InsertPage* insert_page = nullptr;
  };
  std::array<Entry, 16> entries;
};

// A page stores its slot count in a u16 (heap_page.h).
static_assert(TupleAddress::kMaxSlots <= UINT16_MAX);

absl::StatusOr<GlobalAddress> HeapTable::Create(cc::GclManager& manager,
                                                cc::ThreadContext& ctx,
                                                uint32_t table_id,
                                                const Schema& schema,
                                                const TableOptions& options) {
  if (heap_page::SlotsPerPage(manager.payload_bytes(), schema.tuple_bytes(),
                              TupleAddress::kMaxSlots) == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a tuple of %d bytes does not fit a GCL of "
        "EngineOptions::cc.gcl_size=%d (--gcl_size; payload %d bytes, %d of "
        "them page header)",
        schema.tuple_bytes(), manager.options().gcl_size,
        manager.payload_bytes(), heap_page::kPageHeaderBytes));
  }
  auto root = manager.Allocate(ctx);
  if (!root.ok()) return root.status();
  auto guard = manager.XLock(ctx, *root);
  if (!guard.ok()) return guard.status();
  uint8_t* p = guard->MutableRange(0, heap_page::kRootBytes);
  Put<uint32_t>(p + heap_page::kRootMagicOffset, heap_page::kRootMagic);
  Put<uint32_t>(p + heap_page::kRootTableIdOffset, table_id);
  Put<uint32_t>(p + heap_page::kTupleBytesOffset, schema.tuple_bytes());
  Put<uint32_t>(p + heap_page::kMaxRowsPerPageOffset,
                options.max_rows_per_page);
  if (absl::Status s = guard->Unlock(); !s.ok()) return s;
  return *root;
}

absl::StatusOr<std::unique_ptr<HeapTable>> HeapTable::Open(
    cc::GclManager& manager, cc::ThreadContext& ctx, GlobalAddress root,
    Schema schema, const HeapTableTuning& tuning) {
  auto guard = manager.SLock(ctx, root);
  if (!guard.ok()) return guard.status();
  const uint8_t* p = guard->data();
  if (Get<uint32_t>(p, heap_page::kRootMagicOffset) != heap_page::kRootMagic) {
    return absl::DataLossError(
        absl::StrFormat("%s is not the root of a heap table", root.ToString()));
  }
  if (Get<uint32_t>(p, heap_page::kTupleBytesOffset) != schema.tuple_bytes()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "heap table at %s stores %d-byte tuples, the schema has %d",
        root.ToString(), Get<uint32_t>(p, heap_page::kTupleBytesOffset),
        schema.tuple_bytes()));
  }
  const uint32_t table_id = Get<uint32_t>(p, heap_page::kRootTableIdOffset);
  const uint32_t max_rows_per_page =
      Get<uint32_t>(p, heap_page::kMaxRowsPerPageOffset);
  return std::unique_ptr<HeapTable>(new HeapTable(
      manager, root, table_id, std::move(schema), max_rows_per_page, tuning));
}

HeapTable::HeapTable(cc::GclManager& manager, GlobalAddress root,
                     uint32_t table_id, Schema schema,
                     uint32_t max_rows_per_page, const HeapTableTuning& tuning)
    : manager_(manager),
      root_(root),
      table_id_(table_id),
      schema_(std::move(schema)),
      tuple_bytes_(schema_.tuple_bytes()),
      max_rows_per_page_(max_rows_per_page),
      unlocked_inserts_(tuning.unlocked_inserts),
      slots_per_page_(
          heap_page::SlotsPerPage(manager.payload_bytes(), tuple_bytes_,
                                  TupleAddress::kMaxSlots, max_rows_per_page)),
      instance_(next_instance.fetch_add(1, std::memory_order_relaxed)) {}

uint32_t HeapTable::SlotOffset(uint32_t slot) const {
  return heap_page::SlotOffset(slot, tuple_bytes_);
}

void HeapTable::PrefetchTuple(TupleAddress address) const {
  if (address.slot() >= slots_per_page_) return;
  // The page header too: reads check it (IsPageOf) before the tuple's.
  manager_.PrefetchLines(address.gcl(), 0, heap_page::kPageHeaderBytes);
  manager_.PrefetchLines(address.gcl(), SlotOffset(address.slot()),
                         tuple_bytes_);
}

absl::StatusOr<GlobalAddress> HeapTable::AddPage(cc::ThreadContext& ctx) {
  auto page = manager_.Allocate(ctx);
  if (!page.ok()) return page.status();
  // Root first, then the page: the only place two of a table's latches are
  // held at once, always in this order.
  auto root = manager_.XLock(ctx, root_);
  if (!root.ok()) return root.status();
  const uint64_t head =
      Get<uint64_t>(root->data(), heap_page::kFirstPageOffset);
  const uint64_t count =
      Get<uint64_t>(root->data(), heap_page::kPageCountOffset);
  {
    auto guard = manager_.XLock(ctx, *page);
    if (!guard.ok()) return guard.status();
    uint8_t* p = guard->MutableRange(0, heap_page::kPageHeaderBytes);
    Put<uint16_t>(p + heap_page::kPageMagicOffset, heap_page::kPageMagic);
    Put<uint16_t>(p + heap_page::kSlotsOffset,
                  static_cast<uint16_t>(slots_per_page_));
    Put<uint32_t>(p + heap_page::kPageTableIdOffset, table_id_);
    Put<uint64_t>(p + heap_page::kNextPageOffset, head);
    // The page is complete before the root points to it: in this node's
    // cache, and, with write_through, in memory (its unlock wrote it), so
    // a node that fails before the root's write leaves an unlinked page.
    if (absl::Status s = guard->Unlock(); !s.ok()) return s;
  }
  ReachFailurePoint(manager_.node_id(), FailurePoint::kNewPageLink);
  uint8_t* r = root->MutableRange(heap_page::kFirstPageOffset, 16);
  Put<uint64_t>(r, page->raw());
  Put<uint64_t>(r + 8, count + 1);
  if (absl::Status s = root->Unlock(); !s.ok()) return s;
  return *page;
}

absl::StatusOr<TupleAddress> HeapTable::Insert(
    cc::ThreadContext& ctx, absl::Span<const uint8_t> tuple, bool pending,
    absl::FunctionRef<bool(rdma::GlobalAddress page)> caller_holds) {
  if (tuple.size() != tuple_bytes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("insert of %d bytes into a table of %d-byte tuples",
                        tuple.size(), tuple_bytes_));
  }
  // A slot whose page's latch is busy is skipped (it goes back to the free
  // slots), never waited for: the holder may be a transaction that keeps it
  // to its commit (insert_pages_' comment). First a free slot, then the
  // thread's page, then a fresh page: at most three tries.
  for (SlotSource source = SlotSource::kFree;;
       source = static_cast<SlotSource>(static_cast<int>(source) + 1)) {
    auto slot = TakeSlot(ctx, source, caller_holds);
    if (!slot.ok()) return slot.status();
    // No one else knows a fresh page: its latch is free (a wait there
    // would be for no one).
    const bool fresh = source == SlotSource::kFreshPage;
    auto guard = manager_.XLock(ctx, slot->gcl(), {.no_wait = !fresh});
    if (!fresh && absl::IsAborted(guard.status())) {
      ReleaseSlot(*slot);
      continue;
    }
    if (!guard.ok()) return guard.status();
    uint8_t* dst = guard->MutableRange(SlotOffset(slot->slot()), tuple_bytes_);
    TupleHeader header;
    header.set_flags(pending ? TupleHeader::kLive | TupleHeader::kPending
                             : TupleHeader::kLive);
    std::memcpy(dst, &header, kTupleHeaderBytes);
    std::memcpy(dst + kTupleHeaderBytes, tuple.data() + kTupleHeaderBytes,
                tuple_bytes_ - kTupleHeaderBytes);
    if (absl::Status s = guard->Unlock(); !s.ok()) return s;
    return *slot;
  }
}

absl::StatusOr<TupleAddress> HeapTable::TakeSlot(
    cc::ThreadContext& ctx, SlotSource source,
    absl::FunctionRef<bool(rdma::GlobalAddress page)> caller_holds) {
  InsertPage& mine = InsertPageOf(ctx);
  const bool own_page_usable =
      !mine.page.is_null() && mine.next_slot < slots_per_page_ &&
      source != SlotSource::kFreshPage && !caller_holds(mine.page);
  const bool free_slot_wanted =
      source == SlotSource::kFree &&
      free_slot_count_.load(std::memory_order_relaxed) > 0;
  // Only this thread hands out slots of its own page.
  if (unlocked_inserts_ && own_page_usable && !free_slot_wanted) {
    return TupleAddress::Encode(mine.page, mine.next_slot++);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (free_slot_wanted) {
    // A released slot, unless it is on a page the caller holds or another
    // thread inserts into.
    for (size_t i = free_slots_.size(); i-- > 0;) {
      const TupleAddress a = free_slots_[i];
      if (caller_holds(a.gcl()) || IsAnotherThreadsPage(a.gcl(), ctx)) {
        continue;
      }
      free_slots_[i] = free_slots_.back();
      free_slots_.pop_back();
      free_slot_count_.store(free_slots_.size(), std::memory_order_relaxed);
      return a;
    }
  }
  if (!own_page_usable) {
    // The rest of a page left behind is free for later inserts, and no
    // longer the thread's: if no page replaces it (the pool is full),
    // handing out its next slot too would give two inserts one slot.
    if (!mine.page.is_null()) {
      for (uint32_t slot = mine.next_slot; slot < slots_per_page_; ++slot) {
        auto a = TupleAddress::Encode(mine.page, slot);
        if (a.ok()) free_slots_.push_back(*a);
      }
      free_slot_count_.store(free_slots_.size(), std::memory_order_relaxed);
      mine = InsertPage();
    }
    auto added = AddPage(ctx);
    if (!added.ok()) return added.status();
    mine.page = *added;
    mine.next_slot = 0;
  }
  return TupleAddress::Encode(mine.page, mine.next_slot++);
}

HeapTable::InsertPage& HeapTable::InsertPageOf(cc::ThreadContext& ctx) {
  InsertPageCache& cache = ctx.Local<InsertPageCache>();
  InsertPageCache::Entry& cached =
      cache.entries[instance_ % cache.entries.size()];
  if (cached.table == instance_) return *cached.insert_page;
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<InsertPage>& entry = insert_pages_[&ctx];
  if (entry == nullptr) entry = std::make_unique<InsertPage>();
  cached = {instance_, entry.get()};
  return *entry;
}

bool HeapTable::IsAnotherThreadsPage(rdma::GlobalAddress page,
                                     const cc::ThreadContext& ctx) const {
  // A handful of inserting threads per node: a scan beats an index that
  // every page change would have to maintain.
  for (const auto& [owner, current] : insert_pages_) {
    if (current->page == page && owner != &ctx) return true;
  }
  return false;
}

void HeapTable::ReleaseSlot(TupleAddress address) {
  std::lock_guard<std::mutex> lock(mu_);
  free_slots_.push_back(address);
  free_slot_count_.store(free_slots_.size(), std::memory_order_relaxed);
}

absl::Status HeapTable::CheckAddress(TupleAddress address) const {
  if (!IsSlotOfThisTable(address)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a tuple address of this table", address.ToString()));
  }
  return absl::OkStatus();
}

absl::Status HeapTable::CheckLive(const uint8_t* payload,
                                  TupleAddress address) const {
  if (!heap_page::IsPageOf(payload, table_id_)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not in a page of table %d", address.ToString(), table_id_));
  }
  if (!TupleHeader::From(payload + SlotOffset(address.slot())).live()) {
    return absl::NotFoundError(
        absl::StrFormat("no live tuple at %s", address.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<const uint8_t*> HeapTable::TupleIn(const uint8_t* payload,
                                                  TupleAddress address) const {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (absl::Status s = CheckLive(payload, address); !s.ok()) return s;
  return payload + SlotOffset(address.slot());
}

bool HeapTable::CopyTupleUnlatched(const cc::OptimisticToken& token,
                                   TupleAddress address,
                                   std::vector<uint8_t>& out) const {
  if (!IsSlotOfThisTable(address)) return false;
  // The page header and the tuple, which CheckLive would read in place.
  uint8_t page_header[heap_page::kPageHeaderBytes];
  cc::CopyRelaxed(page_header, token.data(), sizeof(page_header));
  out.resize(tuple_bytes_);
  cc::CopyRelaxed(out.data(), token.data() + SlotOffset(address.slot()),
                  tuple_bytes_);
  if (!cc::GclManager::Validate(token)) return false;
  return heap_page::IsPageOf(page_header, table_id_) &&
         TupleHeader::From(out.data()).live();
}

absl::Status HeapTable::Read(cc::ThreadContext& ctx, TupleAddress address,
                             absl::Span<uint8_t> out) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (out.size() < tuple_bytes_) {
    return absl::InvalidArgumentError("read buffer smaller than a tuple");
  }
  auto guard = manager_.SLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (absl::Status s = CheckLive(guard->data(), address); !s.ok()) return s;
  std::memcpy(out.data(), guard->data() + SlotOffset(address.slot()),
              tuple_bytes_);
  return guard->Unlock();
}

absl::Status HeapTable::Update(cc::ThreadContext& ctx, TupleAddress address,
                               absl::Span<const uint8_t> tuple) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (tuple.size() != tuple_bytes_) {
    return absl::InvalidArgumentError("update with a tuple of the wrong size");
  }
  auto guard = manager_.XLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (absl::Status s = CheckLive(guard->data(), address); !s.ok()) return s;
  // Dirty bounds are one range per latch: the span of the changed bytes.
  const uint32_t base = SlotOffset(address.slot());
  const uint8_t* old = guard->data() + base;
  uint32_t first = tuple_bytes_, last = 0;
  for (uint32_t i = kTupleHeaderBytes; i < tuple_bytes_; ++i) {
    if (old[i] != tuple[i]) {
      if (first == tuple_bytes_) first = i;
      last = i;
    }
  }
  if (first < tuple_bytes_) {
    std::memcpy(guard->MutableRange(base + first, last - first + 1),
                tuple.data() + first, last - first + 1);
  }
  return guard->Unlock();
}

absl::Status HeapTable::UpdateRange(cc::ThreadContext& ctx,
                                    TupleAddress address, uint32_t offset,
                                    absl::Span<const uint8_t> bytes) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (offset < kTupleHeaderBytes || offset + bytes.size() > tuple_bytes_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bytes %d..%d are not within the columns of a %d-byte tuple", offset,
        offset + bytes.size(), tuple_bytes_));
  }
  auto guard = manager_.XLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (absl::Status s = CheckLive(guard->data(), address); !s.ok()) return s;
  if (!bytes.empty()) {
    std::memcpy(guard->MutableRange(SlotOffset(address.slot()) + offset,
                                    static_cast<uint32_t>(bytes.size())),
                bytes.data(), bytes.size());
  }
  return guard->Unlock();
}

absl::Status HeapTable::Overwrite(cc::ThreadContext& ctx, TupleAddress address,
                                  absl::Span<const uint8_t> tuple) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (tuple.size() != tuple_bytes_) {
    return absl::InvalidArgumentError(
        "overwrite with a tuple of the wrong size");
  }
  auto guard = manager_.XLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (!heap_page::IsPageOf(guard->data(), table_id_)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not in a page of table %d", address.ToString(), table_id_));
  }
  uint8_t* dst = guard->MutableRange(SlotOffset(address.slot()), tuple_bytes_);
  TupleHeader header;
  header.set_flags(TupleHeader::kLive);
  std::memcpy(dst, &header, kTupleHeaderBytes);
  std::memcpy(dst + kTupleHeaderBytes, tuple.data() + kTupleHeaderBytes,
              tuple_bytes_ - kTupleHeaderBytes);
  return guard->Unlock();
}

absl::Status HeapTable::UpdateColumn(cc::ThreadContext& ctx,
                                     TupleAddress address, size_t column,
                                     absl::Span<const uint8_t> value) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  if (column >= schema_.column_count() ||
      value.size() != schema_.column(column).length) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "column %d: bad index or value size %d", column, value.size()));
  }
  auto guard = manager_.XLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (absl::Status s = CheckLive(guard->data(), address); !s.ok()) return s;
  const Column& c = schema_.column(column);
  std::memcpy(
      guard->MutableRange(SlotOffset(address.slot()) + c.offset, c.length),
      value.data(), c.length);
  return guard->Unlock();
}

absl::Status HeapTable::Delete(cc::ThreadContext& ctx, TupleAddress address) {
  if (absl::Status s = CheckAddress(address); !s.ok()) return s;
  auto guard = manager_.XLock(ctx, address.gcl());
  if (!guard.ok()) return guard.status();
  if (absl::Status s = CheckLive(guard->data(), address); !s.ok()) return s;
  const uint32_t at = SlotOffset(address.slot()) + kTupleFlagsOffset;
  const uint8_t flags = Get<uint8_t>(guard->data(), at);
  Put<uint8_t>(guard->MutableRange(at, 1), flags | TupleHeader::kDeleted);
  return guard->Unlock();
}

absl::StatusOr<uint64_t> HeapTable::PageCount(cc::ThreadContext& ctx) {
  auto guard = manager_.SLock(ctx, root_);
  if (!guard.ok()) return guard.status();
  return Get<uint64_t>(guard->data(), heap_page::kPageCountOffset);
}

absl::Status HeapTable::Scan(cc::ThreadContext& ctx, const Visitor& visit) {
  uint64_t next = 0;
  {
    auto root = manager_.SLock(ctx, root_);
    if (!root.ok()) return root.status();
    next = Get<uint64_t>(root->data(), heap_page::kFirstPageOffset);
  }
  std::vector<uint8_t> copy(manager_.payload_bytes());
  while (next != 0) {
    const GlobalAddress page = GlobalAddress::FromRaw(next);
    {
      auto guard = manager_.SLock(ctx, page);
      if (!guard.ok()) return guard.status();
      std::memcpy(copy.data(), guard->data(), copy.size());
    }
    if (!heap_page::IsPageOf(copy.data(), table_id_) ||
        Get<uint16_t>(copy.data(), heap_page::kSlotsOffset) !=
            slots_per_page_) {
      return absl::DataLossError(absl::StrFormat(
          "%s in the page list of table %d is not one of its pages",
          page.ToString(), table_id_));
    }
    next = Get<uint64_t>(copy.data(), heap_page::kNextPageOffset);
    for (uint32_t slot = 0; slot < slots_per_page_; ++slot) {
      const uint8_t* tuple = copy.data() + SlotOffset(slot);
      if (!TupleHeader::From(tuple).live()) continue;
      auto address = TupleAddress::Encode(page, slot);
      if (!address.ok()) return address.status();
      if (!visit(*address, tuple)) return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace strand::storage
