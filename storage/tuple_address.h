#ifndef STRAND_STORAGE_TUPLE_ADDRESS_H_
#define STRAND_STORAGE_TUPLE_ADDRESS_H_

// Where a tuple lives: the GCL of its heap page and its slot in that page,
// packed in 8 bytes so an index value can hold it:
//
//   bits 63..56  memory node id  (8 bits: FabricOptions::kMaxMemoryNodes=256)
//   bits 55..12  GCL offset      (44 bits: 16 TiB per memory node)
//   bits 11..0   slot            (12 bits: up to 4096 tuples per GCL)
//
// The null address (0) names no tuple: a GCL offset is never 0 (offset 0
// of a memory node is its header). Encode() refuses what does not fit, so a
// decoded address is always the one encoded.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "rdma/global_address.h"

namespace strand::storage {

class TupleAddress {
 public:
  static constexpr int kSlotBits = 12;
  static constexpr int kOffsetBits = 44;
  static constexpr uint32_t kMaxSlots = 1u << kSlotBits;
  static constexpr uint64_t kMaxOffset = (uint64_t{1} << kOffsetBits) - 1;
  static constexpr int kMaxMemoryNode = 255;

  constexpr TupleAddress() = default;

  static absl::StatusOr<TupleAddress> Encode(rdma::GlobalAddress gcl,
                                             uint32_t slot) {
    if (gcl.is_null() || gcl.node() > kMaxMemoryNode ||
        gcl.offset() > kMaxOffset || slot >= kMaxSlots) {
      return absl::OutOfRangeError(absl::StrFormat(
          "tuple (%s, slot %d) does not fit an 8-byte tuple address",
          gcl.ToString(), slot));
    }
    return TupleAddress((uint64_t{gcl.node()} << 56) |
                        (gcl.offset() << kSlotBits) | slot);
  }
  static constexpr TupleAddress FromRaw(uint64_t raw) {
    return TupleAddress(raw);
  }

  constexpr uint64_t raw() const { return raw_; }
  constexpr bool is_null() const { return raw_ == 0; }
  constexpr rdma::GlobalAddress gcl() const {
    return rdma::GlobalAddress(static_cast<rdma::MemoryNodeId>(raw_ >> 56),
                               (raw_ >> kSlotBits) & kMaxOffset);
  }
  constexpr uint32_t slot() const { return raw_ & (kMaxSlots - 1); }

  friend constexpr auto operator<=>(TupleAddress, TupleAddress) = default;
  template <typename H>
  friend H AbslHashValue(H h, TupleAddress a) {
    return H::combine(std::move(h), a.raw_);
  }
  std::string ToString() const {
    return absl::StrFormat("%s#%d", gcl().ToString(), slot());
  }

 private:
  explicit constexpr TupleAddress(uint64_t raw) : raw_(raw) {}
  uint64_t raw_ = 0;
};

static_assert(sizeof(TupleAddress) == 8);

}  // namespace strand::storage

#endif  // STRAND_STORAGE_TUPLE_ADDRESS_H_
