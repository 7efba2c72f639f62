#ifndef STRAND_CC_SELCC_FRAME_MAP_H_
#define STRAND_CC_SELCC_FRAME_MAP_H_

// The map of one cache shard (cache.h): GlobalAddress -> Frame*, open
// addressing with linear probing and the key stored next to the value.
//
// Why not absl::flat_hash_map: its control bytes and its slots are two
// arrays, so a lookup of a GCL not touched lately costs two cache misses
// before the frame's own; here the probe usually ends in the slot the key
// hashes to, one miss. Most lookups that reach this map are of such cold
// GCLs (a thread's recent lines are found through FrameHints).
//
// Not thread-safe (the shard lock guards it). Erase shifts the following
// entries back instead of leaving tombstones, so probe sequences stay
// short however long the cache runs. Grows (doubling, rehash) past 3/4
// load; never shrinks.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cc/selcc/frame.h"
#include "rdma/global_address.h"

namespace strand::cc::selcc {

class FrameMap {
 public:
  // A well-mixed 64-bit hash of a GCL: the cache takes the shard from its
  // low bits and the slot from the bits above them.
  static uint64_t Hash(rdma::GlobalAddress gcl) {
    uint64_t h = gcl.raw();  // murmur3's finalizer
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  }
  // Bits of Hash() the cache uses to pick a shard (ignored here).
  static constexpr int kShardBits = 6;

  FrameMap() { Allocate(kMinSlots); }

  size_t size() const { return size_; }

  // The frame of `gcl`, or nullptr.
  Frame* Find(rdma::GlobalAddress gcl, uint64_t hash) const {
    for (size_t i = Home(hash);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == gcl.raw()) return s.frame;
      if (s.key == kEmpty) return nullptr;
    }
  }
  bool Contains(rdma::GlobalAddress gcl, uint64_t hash) const {
    return Find(gcl, hash) != nullptr;
  }
  // Adds gcl -> f; false (and no change) if `gcl` is present already.
  bool Insert(rdma::GlobalAddress gcl, uint64_t hash, Frame* f) {
    if ((size_ + 1) * 4 > (mask_ + 1) * 3) Grow();
    size_t i = Home(hash);
    for (; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      if (slots_[i].key == gcl.raw()) return false;
    }
    slots_[i] = Slot{gcl.raw(), f};
    ++size_;
    return true;
  }
  // Removes `gcl` if present.
  void Erase(rdma::GlobalAddress gcl, uint64_t hash) {
    size_t i = Home(hash);
    for (; slots_[i].key != gcl.raw(); i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) return;
    }
    // Backward shift: move each later entry of the cluster into the hole
    // unless its home lies cyclically in (hole, entry].
    for (size_t j = (i + 1) & mask_; slots_[j].key != kEmpty;
         j = (j + 1) & mask_) {
      const size_t home =
          Home(Hash(rdma::GlobalAddress::FromRaw(slots_[j].key)));
      const bool stays =
          i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = Slot{};
    --size_;
  }
  // Calls fn(frame) for every entry.
  template <typename Fn>
  void ForEach(Fn fn) const {
    for (size_t i = 0; i <= mask_; ++i) {
      if (slots_[i].key != kEmpty) fn(slots_[i].frame);
    }
  }

 private:
  // The null address (raw 0) is never a GCL, so it marks an empty slot.
  static constexpr uint64_t kEmpty = 0;
  static constexpr size_t kMinSlots = 16;
  struct Slot {
    uint64_t key = kEmpty;
    Frame* frame = nullptr;
  };

  size_t Home(uint64_t hash) const { return (hash >> kShardBits) & mask_; }
  void Allocate(size_t slots) {
    slots_ = std::make_unique<Slot[]>(slots);
    mask_ = slots - 1;
    size_ = 0;
  }
  void Grow() {
    std::unique_ptr<Slot[]> old = std::move(slots_);
    const size_t old_slots = mask_ + 1;
    Allocate(2 * old_slots);
    for (size_t i = 0; i < old_slots; ++i) {
      if (old[i].key == kEmpty) continue;
      const rdma::GlobalAddress gcl = rdma::GlobalAddress::FromRaw(old[i].key);
      Insert(gcl, Hash(gcl), old[i].frame);
    }
  }

  std::unique_ptr<Slot[]> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_FRAME_MAP_H_
