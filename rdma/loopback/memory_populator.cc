#include "rdma/loopback/memory_populator.h"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

namespace strand::rdma::loopback {
namespace {

// The step between checks for Stop(): a few milliseconds of zero-filling
// on the development VM (1-2 s per GiB).
constexpr uint64_t kStepBytes = uint64_t{4} << 20;

constexpr uintptr_t kPageBytes = 4096;

// The whole pages inside [base, base + bytes): madvise wants a page-aligned
// start, and a page only partly inside may not be mapped.
std::pair<uintptr_t, uintptr_t> WholePages(void* base, uint64_t bytes) {
  const uintptr_t begin =
      (reinterpret_cast<uintptr_t>(base) + kPageBytes - 1) & ~(kPageBytes - 1);
  const uintptr_t end =
      (reinterpret_cast<uintptr_t>(base) + bytes) & ~(kPageBytes - 1);
  return {begin, std::max(begin, end)};
}

}  // namespace

void PopulateMemory(void* base, uint64_t bytes) {
  const auto [begin, end] = WholePages(base, bytes);
  if (end > begin) {
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  }
}

void MemoryPopulator::Add(void* base, uint64_t bytes) {
  const auto [begin, end] = WholePages(base, bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_ || end == begin) return;
  queue_.push_back(
      {reinterpret_cast<uint8_t*>(begin), reinterpret_cast<uint8_t*>(end)});
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  changed_.notify_all();
}

void MemoryPopulator::WaitUntilIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock,
                [this] { return stopped_ || (queue_.empty() && !busy_); });
}

void MemoryPopulator::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void MemoryPopulator::Run() {
  for (;;) {
    Region region;
    {
      std::unique_lock<std::mutex> lock(mu_);
      busy_ = false;
      changed_.notify_all();
      changed_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      region = queue_.front();
      queue_.pop_front();
      busy_ = true;
    }
    while (region.next < region.end) {
      const uint64_t step = std::min<uint64_t>(
          kStepBytes, static_cast<uint64_t>(region.end - region.next));
      PopulateMemory(region.next, step);
      region.next += step;
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
    }
  }
}

}  // namespace strand::rdma::loopback
