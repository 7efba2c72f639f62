#include "base/huge_page_memory.h"

#include <sys/mman.h>

#include <cstring>

#include "glog/logging.h"

namespace strand {

HugePageMemory::HugePageMemory(size_t bytes) : size_(bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 4096;
  const size_t rounded = (bytes + align - 1) / align * align;
  // Anonymous mmap rather than aligned_alloc: zero-filled without a pass
  // over it, and returned to the kernel at once on destruction. Over-map by
  // one alignment unit to place the start on a huge-page boundary.
  const size_t mapped = rounded + align;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  PCHECK(raw != MAP_FAILED) << "cannot map " << mapped << " bytes";
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + align - 1) / align * align;
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + mapped;
  if (end > aligned + rounded) {
    munmap(reinterpret_cast<void*>(aligned + rounded),
           end - (aligned + rounded));
  }
  data_ = reinterpret_cast<uint8_t*>(aligned);
  size_ = rounded;
  if (align == kHugePage) madvise(data_, size_, MADV_HUGEPAGE);
}

HugePageMemory::~HugePageMemory() { munmap(data_, size_); }

}  // namespace strand
