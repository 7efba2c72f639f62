#ifndef STRAND_RDMA_GLOBAL_ADDRESS_H_
#define STRAND_RDMA_GLOBAL_ADDRESS_H_

// A GlobalAddress names a byte in the disaggregated memory pool: the memory
// node that holds it and the offset inside that node's registered region.
// It is 8 bytes so it can be stored in tuples, index nodes and latch-free
// words: 16 bits of memory node id, 48 bits of offset (256 TiB per node).
//
// The all-zero address is null. It can never name data: offset 0 of every
// memory node holds the node's header (memory_node_layout.h).

#include <compare>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/str_format.h"

namespace strand::rdma {

using MemoryNodeId = uint16_t;
using ComputeNodeId = uint16_t;

class GlobalAddress {
 public:
  static constexpr int kOffsetBits = 48;
  static constexpr uint64_t kMaxOffset = (uint64_t{1} << kOffsetBits) - 1;
  static constexpr int kMaxMemoryNodes = 1 << (64 - kOffsetBits);

  constexpr GlobalAddress() = default;
  constexpr GlobalAddress(MemoryNodeId node, uint64_t offset)
      : raw_((uint64_t{node} << kOffsetBits) | (offset & kMaxOffset)) {}

  static constexpr GlobalAddress FromRaw(uint64_t raw) {
    GlobalAddress a;
    a.raw_ = raw;
    return a;
  }

  constexpr uint64_t raw() const { return raw_; }
  constexpr MemoryNodeId node() const {
    return static_cast<MemoryNodeId>(raw_ >> kOffsetBits);
  }
  constexpr uint64_t offset() const { return raw_ & kMaxOffset; }
  constexpr bool is_null() const { return raw_ == 0; }

  // The address `bytes` further into the same memory node.
  constexpr GlobalAddress operator+(uint64_t bytes) const {
    return GlobalAddress(node(), offset() + bytes);
  }

  friend constexpr auto operator<=>(GlobalAddress, GlobalAddress) = default;

  template <typename H>
  friend H AbslHashValue(H h, GlobalAddress a) {
    return H::combine(std::move(h), a.raw_);
  }
  friend std::ostream& operator<<(std::ostream& os, GlobalAddress a) {
    return os << a.ToString();
  }
  // "mn<node>:0x<offset>", e.g. "mn1:0x10040"; "null" for the null address.
  std::string ToString() const {
    if (is_null()) return "null";
    return absl::StrFormat("mn%d:0x%x", node(), offset());
  }

 private:
  uint64_t raw_ = 0;
};

static_assert(sizeof(GlobalAddress) == 8);

}  // namespace strand::rdma

#endif  // STRAND_RDMA_GLOBAL_ADDRESS_H_
