#ifndef STRAND_BASE_HUGE_PAGE_MEMORY_H_
#define STRAND_BASE_HUGE_PAGE_MEMORY_H_

// Zero-filled memory for large arrays read at random (the GCL cache's frames
// and payload copies): aligned to 2 MiB and advised for transparent huge
// pages when it spans one, so a random access costs its cache miss without a
// page walk on top (under a hypervisor a 4 KiB TLB miss walks two page
// tables). Advisory: with transparent huge pages off it gets small pages.
// Pages are backed on first touch.

#include <cstddef>
#include <cstdint>

namespace strand {

class HugePageMemory {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  explicit HugePageMemory(size_t bytes);
  ~HugePageMemory();
  HugePageMemory(const HugePageMemory&) = delete;
  HugePageMemory& operator=(const HugePageMemory&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  size_t size_;
  uint8_t* data_;
};

}  // namespace strand

#endif  // STRAND_BASE_HUGE_PAGE_MEMORY_H_
