#ifndef STRAND_RDMA_LOOPBACK_MEMORY_POPULATOR_H_
#define STRAND_RDMA_LOOPBACK_MEMORY_POPULATOR_H_

// Committing the loopback fabric's memory ahead of use (PopulateMode in
// fabric_options.h): what an RDMA NIC's registration does to the regions it
// pins, emulated so that the kernel's first-touch page zeroing does not land
// inside transactions.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"

namespace strand::rdma::loopback {

// Faults in the pages of [base, base + bytes) writable without changing
// their contents (MADV_POPULATE_WRITE, Linux 5.14). Advisory: on an older
// kernel the pages are faulted on first touch as before.
void PopulateMemory(void* base, uint64_t bytes);

// Populates queued regions on a thread of its own, one after another in
// the order queued, each from its lowest address up (the order in which
// memory nodes hand out chunks and the cache fills its arena), a few MiB
// at a time so Stop() is prompt. Populating a page already in use is
// harmless: contents never change. The thread starts with the first Add.
class MemoryPopulator {
 public:
  MemoryPopulator() = default;
  ~MemoryPopulator() { Stop(); }
  MemoryPopulator(const MemoryPopulator&) = delete;
  MemoryPopulator& operator=(const MemoryPopulator&) = delete;

  // Queues a region. The region must stay mapped until Stop() or until
  // it is populated (a region unmapped sooner is harmless to this process's
  // data: populating only faults in pages of whatever is mapped there).
  void Add(void* base, uint64_t bytes);

  // Blocks until every queued region is populated or Stop() was called.
  void WaitUntilIdle();

  // Abandons what is left and joins the thread; later Adds are ignored.
  // Owners call it before unmapping the regions they queued.
  void Stop();

 private:
  struct Region {
    uint8_t* next;
    uint8_t* end;
  };
  void Run();

  // std::mutex rather than absl::Mutex: Debian's abseil is not built for
  // ThreadSanitizer, which would then see the queue as unguarded.
  std::mutex mu_;
  std::condition_variable changed_;  // queue_, busy_ or stopped_
  std::deque<Region> queue_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // the thread holds a region
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first Add, under mu_
};

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_MEMORY_POPULATOR_H_
