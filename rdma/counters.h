#ifndef STRAND_RDMA_COUNTERS_H_
#define STRAND_RDMA_COUNTERS_H_

// What an endpoint did on the fabric. Benchmarks divide these by the number
// of operations or transactions they ran, so every figure they print can be
// traced to deterministic counts rather than to noisy timings.
//
// A round trip is one wait for a completion: a single op, or a whole batch
// posted with one doorbell. Messages are one-way and are not round trips.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace strand::rdma {

struct FabricCounters {
  uint64_t round_trips = 0;
  uint64_t reads = 0;
  uint64_t writes = 0;  // to memory nodes
  uint64_t cas = 0;
  uint64_t faa = 0;
  uint64_t peer_writes = 0;    // into another compute node's registered buffer
  uint64_t bytes_read = 0;     // payload bytes fetched from remote memory
  uint64_t bytes_written = 0;  // payload bytes sent by writes and peer writes
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;

  uint64_t ops() const { return reads + writes + cas + faa + peer_writes; }

  FabricCounters& operator+=(const FabricCounters& o);
  FabricCounters& operator-=(const FabricCounters& o);
  friend FabricCounters operator+(FabricCounters a, const FabricCounters& b) {
    return a += b;
  }
  friend FabricCounters operator-(FabricCounters a, const FabricCounters& b) {
    return a -= b;
  }
  friend bool operator==(const FabricCounters&,
                         const FabricCounters&) = default;

  // One line, every counter with its name.
  std::string ToString() const;
};

// Every counter of FabricCounters, for the code that treats them all alike
// (counters.cc). A counter added above goes here too (counters.cc checks
// the count).
// clang-format off
#define STRAND_FABRIC_COUNTERS_FIELDS(X) \
  X(round_trips) \
  X(reads) \
  X(writes) \
  X(cas) \
  X(faa) \
  X(peer_writes) \
  X(bytes_read) \
  X(bytes_written) \
  X(messages_sent) \
  X(messages_received)
// clang-format on

// The live counters of one endpoint. Only the owning thread adds, so an
// increment is a relaxed load and store (no locked instruction on the data
// path); any thread may take a Snapshot() at any time.
class EndpointCounters {
 public:
  void AddRoundTrip() { Bump(round_trips_, 1); }
  void AddRead(uint64_t bytes) {
    Bump(reads_, 1);
    Bump(bytes_read_, bytes);
  }
  void AddWrite(uint64_t bytes) {
    Bump(writes_, 1);
    Bump(bytes_written_, bytes);
  }
  void AddCas() { Bump(cas_, 1); }
  void AddFaa() { Bump(faa_, 1); }
  void AddPeerWrite(uint64_t bytes) {
    Bump(peer_writes_, 1);
    Bump(bytes_written_, bytes);
  }
  void AddMessageSent() { Bump(messages_sent_, 1); }
  void AddMessageReceived() { Bump(messages_received_, 1); }

  FabricCounters Snapshot() const;

 private:
  static void Bump(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> round_trips_{0}, reads_{0}, writes_{0}, cas_{0},
      faa_{0}, peer_writes_{0}, bytes_read_{0}, bytes_written_{0},
      messages_sent_{0}, messages_received_{0};
};

// The counters of every endpoint a compute node created, so the node can
// report totals that include endpoints already destroyed.
class CounterRegistry {
 public:
  std::shared_ptr<EndpointCounters> NewEndpointCounters();
  FabricCounters Sum() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<EndpointCounters>> all_ ABSL_GUARDED_BY(mu_);
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_COUNTERS_H_
