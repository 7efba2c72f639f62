#ifndef STRAND_STORAGE_HEAP_PAGE_H_
#define STRAND_STORAGE_HEAP_PAGE_H_

// Layout of the GCL payloads of a heap table (heap_table.h).
//
// Table root GCL (one per table; the catalog points to it):
//   0  u32 magic 'HTBR'   4 u32 table id   8 u32 tuple bytes  12 u32 0
//   16 u64 first page (raw GlobalAddress; pages form a singly linked list,
//          newest first)
//   24 u64 page count
//
// Heap page GCL:
//   0  u32 magic 'HPAG'   4 u32 table id   8 u32 tuple bytes  12 u32 slots
//   16 u64 next page (raw GlobalAddress, older page; 0 ends the list)
//   24 slot 0, slot 1, ... (tuple bytes each; a tuple starts with its
//          TupleHeader, whose flags say whether the slot is used)
//
// Invariants: a page's header is written once, before the page is linked
// from the root, and never changes; a slot's kLive flag is set once (by the
// insert that owns the slot) and never cleared (delete sets kDeleted).

#include <cstdint>
#include <cstring>

namespace strand::storage::heap_page {

inline constexpr uint32_t kRootMagic = 0x52425448;  // "HTBR"
inline constexpr uint32_t kPageMagic = 0x47415048;  // "HPAG"

inline constexpr uint32_t kMagicOffset = 0;
inline constexpr uint32_t kTableIdOffset = 4;
inline constexpr uint32_t kTupleBytesOffset = 8;
inline constexpr uint32_t kSlotsOffset = 12;      // page
inline constexpr uint32_t kFirstPageOffset = 16;  // root
inline constexpr uint32_t kPageCountOffset = 24;  // root
inline constexpr uint32_t kNextPageOffset = 16;   // page
inline constexpr uint32_t kRootBytes = 32;
inline constexpr uint32_t kPageHeaderBytes = 24;

// Slots a page of `payload_bytes` holds for tuples of `tuple_bytes`.
inline uint32_t SlotsPerPage(uint32_t payload_bytes, uint32_t tuple_bytes,
                             uint32_t max_slots) {
  if (payload_bytes <= kPageHeaderBytes || tuple_bytes == 0) return 0;
  const uint32_t n = (payload_bytes - kPageHeaderBytes) / tuple_bytes;
  return n < max_slots ? n : max_slots;
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

}  // namespace strand::storage::heap_page

#endif  // STRAND_STORAGE_HEAP_PAGE_H_
