#ifndef STRAND_RDMA_MESSAGE_H_
#define STRAND_RDMA_MESSAGE_H_

// A small fixed-size message between compute nodes (SELCC invalidations and
// their replies, 2PC votes, shipped work). Fixed size so a receive ring is an
// array of slots and a verbs receive needs no length negotiation.

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "rdma/global_address.h"

namespace strand::rdma {

struct Message {
  static constexpr int kPayloadBytes = 56;

  ComputeNodeId source = 0;  // filled in by the fabric on send
  uint16_t type = 0;         // meaning is up to the layer that sends it
  uint32_t reserved = 0;
  uint8_t payload[kPayloadBytes] = {};

  // Typed access to the payload for trivially copyable structs.
  template <typename T>
  void Store(const T& value) {
    static_assert(std::is_trivially_copyable_v<T> &&
                  sizeof(T) <= kPayloadBytes);
    std::memcpy(payload, &value, sizeof(T));
  }
  template <typename T>
  T Load() const {
    static_assert(std::is_trivially_copyable_v<T> &&
                  sizeof(T) <= kPayloadBytes);
    T value;
    std::memcpy(&value, payload, sizeof(T));
    return value;
  }
};

static_assert(sizeof(Message) == 64);
static_assert(std::is_trivially_copyable_v<Message>);

}  // namespace strand::rdma

#endif  // STRAND_RDMA_MESSAGE_H_
