#ifndef STRAND_STORAGE_TUPLE_HEADER_H_
#define STRAND_STORAGE_TUPLE_HEADER_H_

// The first 16 bytes of every tuple, reserved for concurrency control and
// kept algorithm-neutral: TO uses both timestamps, OCC uses write_ts as the
// version, 2PL-no-wait only the flags (the GCL latch is the lock). storage/
// only sets the flags (live, deleted, pending) and zeroes the rest on
// insert; txn/ owns the timestamps and clears kPending when an insert
// commits.
//
//   0  u64 read_ts    largest timestamp that read the tuple (TO)
//   8  56-bit write_ts, little-endian: timestamp / version of the last write
//   15 u8  flags
//
// Why 16 bytes: the header is paid by every row (about 530,000 per TPC-C
// warehouse), and 8 bytes decide how many rows fit a page (3 STOCK rows in
// a 1 KiB GCL with 16, 2 with the former 24). 56 bits of timestamp last
// 2000 years at a million timestamps a second. One header for every algorithm
// keeps tuple offsets, redo records and pool images independent of --cc.
// The flags share the write_ts word, so a commit that clears kPending and
// stamps write_ts writes one 8-byte word.

#include <bit>
#include <cstdint>
#include <cstring>

namespace strand::storage {

class TupleHeader {
 public:
  static constexpr uint8_t kLive = 1;     // the slot holds a tuple
  static constexpr uint8_t kDeleted = 2;  // ... that has been deleted
  // ... that an uncommitted transaction inserted: invisible until its
  // commit clears the flag; an abort leaves it set forever, so an aborted
  // insert never needs undoing.
  static constexpr uint8_t kPending = 4;
  static constexpr uint64_t kMaxTimestamp = (uint64_t{1} << 56) - 1;

  // The header at the start of `tuple` (which need not be aligned).
  static TupleHeader From(const uint8_t* tuple) {
    TupleHeader h;
    std::memcpy(&h, tuple, sizeof(h));
    return h;
  }

  uint64_t read_ts() const { return read_ts_; }
  uint64_t write_ts() const { return write_word_ & kMaxTimestamp; }
  uint8_t flags() const { return static_cast<uint8_t>(write_word_ >> 56); }
  // write_ts and flags as stored at kTupleWriteWordOffset.
  uint64_t write_word() const { return write_word_; }
  bool live() const {
    return (flags() & kLive) != 0 && (flags() & (kDeleted | kPending)) == 0;
  }

  void set_read_ts(uint64_t ts) { read_ts_ = ts; }
  // `ts` <= kMaxTimestamp; the timestamp oracle starts at 1 and counts up.
  void set_write_ts(uint64_t ts) {
    write_word_ = (write_word_ & ~kMaxTimestamp) | (ts & kMaxTimestamp);
  }
  void set_flags(uint8_t flags) {
    write_word_ = (write_word_ & kMaxTimestamp) | (uint64_t{flags} << 56);
  }

 private:
  uint64_t read_ts_ = 0;
  uint64_t write_word_ = 0;  // write_ts in the low 56 bits, flags above
};

static_assert(sizeof(TupleHeader) == 16);
// The flags byte is the top byte of the little-endian write word.
static_assert(std::endian::native == std::endian::little);
inline constexpr uint32_t kTupleHeaderBytes = sizeof(TupleHeader);
inline constexpr uint32_t kTupleReadTsOffset = 0;     // u64
inline constexpr uint32_t kTupleWriteWordOffset = 8;  // u64: write_ts, flags
inline constexpr uint32_t kTupleFlagsOffset = 15;     // u8

}  // namespace strand::storage

#endif  // STRAND_STORAGE_TUPLE_HEADER_H_
