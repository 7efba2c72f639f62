#include "cc/cache_sizing.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace strand::cc {

uint64_t AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> name >> kib >> unit) {
    if (name == "MemAvailable:") return kib << 10;
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_bytes = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_bytes <= 0) return uint64_t{1} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
}

uint64_t AutoCacheCapBytes(uint64_t available_bytes, int local_compute_nodes) {
  return available_bytes / 4 / std::max(1, local_compute_nodes);
}

uint64_t AutoCacheBytes(uint64_t wanted_bytes, uint32_t gcl_size,
                        uint64_t cap_bytes) {
  const uint64_t floor = uint64_t{16} * gcl_size;
  const uint64_t bytes = std::max(floor, std::min(wanted_bytes, cap_bytes));
  return bytes / gcl_size * gcl_size;
}

}  // namespace strand::cc
