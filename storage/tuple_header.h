#ifndef STRAND_STORAGE_TUPLE_HEADER_H_
#define STRAND_STORAGE_TUPLE_HEADER_H_

// The first bytes of every tuple, reserved for concurrency control and kept
// algorithm-neutral: TO uses both timestamps, OCC uses write_ts as the
// version, 2PL-no-wait ignores them (the GCL latch is the lock). storage/
// only sets `flags` (live, deleted, pending) and zeroes the rest on insert;
// txn/ owns the timestamps and clears kPending when an insert commits.

#include <cstddef>
#include <cstdint>

namespace strand::storage {

struct TupleHeader {
  static constexpr uint32_t kLive = 1;     // the slot holds a tuple
  static constexpr uint32_t kDeleted = 2;  // ... that has been deleted
  // ... that an uncommitted transaction inserted: invisible until its
  // commit clears the flag; an abort leaves it set forever, so an aborted
  // insert never needs undoing.
  static constexpr uint32_t kPending = 4;

  uint64_t read_ts = 0;   // largest timestamp that read the tuple (TO)
  uint64_t write_ts = 0;  // timestamp / version of the last write
  uint32_t flags = 0;
  uint32_t reserved = 0;  // txn/ may use it (e.g. a lock owner)

  bool live() const {
    return (flags & kLive) != 0 && (flags & (kDeleted | kPending)) == 0;
  }
};

static_assert(sizeof(TupleHeader) == 24);
inline constexpr uint32_t kTupleHeaderBytes = sizeof(TupleHeader);
inline constexpr uint32_t kTupleFlagsOffset = offsetof(TupleHeader, flags);

}  // namespace strand::storage

#endif  // STRAND_STORAGE_TUPLE_HEADER_H_
