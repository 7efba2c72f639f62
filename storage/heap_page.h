#ifndef STRAND_STORAGE_HEAP_PAGE_H_
#define STRAND_STORAGE_HEAP_PAGE_H_

// Layout of the GCL payloads of a heap table (heap_table.h): one root GCL
// per table (the catalog points to it) heads a singly linked list of heap
// pages, newest first. Each payload's offsets are listed beside its
// constants below.
//
// The magic and the table id together are the sanity check of a tuple
// address (IsPageOf); the tuple bytes are the table's, in its root. A
// page's `slots` (<= TupleAddress::kMaxSlots, 4096) is the table's
// slots_per_page (what fits, capped by the root's max rows per page),
// which a scan checks too before it trusts a page it reached by a
// next-page link. Why the page header is 16 bytes: docs/design/storage.md.
//
// Invariants: a page's header is written once, before the page is linked
// from the root, and never changes; a slot's kLive flag is set by the
// insert that owns the slot and never cleared (delete sets kDeleted); an
// insert into a slot handed back (HeapTable::ReleaseSlot: an aborted
// insert's, or a deleted tuple's no transaction can still reach) writes
// a fresh header, which clears kDeleted and kPending.

#include <cstdint>
#include <cstring>

namespace strand::storage::heap_page {

inline constexpr uint32_t kRootMagic = 0x52425448;  // "HTBR"
inline constexpr uint16_t kPageMagic = 0x5048;      // "HP"

// Table root GCL:
//   0  u32 magic 'HTBR'   4 u32 table id   8 u32 tuple bytes
//   12 u32 max rows per page (TableOptions; 0 = as many as fit, which is
//          also what a root written before the option existed holds)
//   16 u64 first page (raw GlobalAddress; pages form a singly linked list,
//          newest first)
//   24 u64 page count
inline constexpr uint32_t kRootMagicOffset = 0;
inline constexpr uint32_t kRootTableIdOffset = 4;
inline constexpr uint32_t kTupleBytesOffset = 8;
inline constexpr uint32_t kMaxRowsPerPageOffset = 12;
inline constexpr uint32_t kFirstPageOffset = 16;
inline constexpr uint32_t kPageCountOffset = 24;
inline constexpr uint32_t kRootBytes = 32;
// Heap page GCL:
//   0  u16 magic 'HP'    2 u16 slots   4 u32 table id
//   8  u64 next page (raw GlobalAddress, older page; 0 ends the list)
//   16 slot 0, slot 1, ... (tuple bytes each; a tuple starts with its
//          TupleHeader, whose flags say whether the slot is used)
inline constexpr uint32_t kPageMagicOffset = 0;
inline constexpr uint32_t kSlotsOffset = 2;
inline constexpr uint32_t kPageTableIdOffset = 4;
inline constexpr uint32_t kNextPageOffset = 8;
inline constexpr uint32_t kPageHeaderBytes = 16;

// Slots a page of `payload_bytes` holds for tuples of `tuple_bytes`.
inline uint32_t SlotsPerPage(uint32_t payload_bytes, uint32_t tuple_bytes,
                             uint32_t max_slots) {
  if (payload_bytes <= kPageHeaderBytes || tuple_bytes == 0) return 0;
  const uint32_t n = (payload_bytes - kPageHeaderBytes) / tuple_bytes;
  return n < max_slots ? n : max_slots;
}

// Slots a page holds under a table's max rows per page (0: no limit).
inline uint32_t SlotsPerPage(uint32_t payload_bytes, uint32_t tuple_bytes,
                             uint32_t max_slots, uint32_t max_rows_per_page) {
  const uint32_t fit = SlotsPerPage(payload_bytes, tuple_bytes, max_slots);
  return max_rows_per_page != 0 && max_rows_per_page < fit ? max_rows_per_page
                                                           : fit;
}

inline uint32_t SlotOffset(uint32_t slot, uint32_t tuple_bytes) {
  return kPageHeaderBytes + slot * tuple_bytes;
}

template <typename T>
T Get(const uint8_t* payload, uint32_t offset) {
  T v;
  std::memcpy(&v, payload + offset, sizeof(T));
  return v;
}

template <typename T>
void Put(uint8_t* dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

// Whether `payload` is a heap page of table `table_id`.
inline bool IsPageOf(const uint8_t* payload, uint32_t table_id) {
  return Get<uint16_t>(payload, kPageMagicOffset) == kPageMagic &&
         Get<uint32_t>(payload, kPageTableIdOffset) == table_id;
}

}  // namespace strand::storage::heap_page

#endif  // STRAND_STORAGE_HEAP_PAGE_H_
