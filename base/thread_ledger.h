#ifndef STRAND_BASE_THREAD_LEDGER_H_
#define STRAND_BASE_THREAD_LEDGER_H_

// Where a thread's time went, for the modeled figures benchmarks print next
// to measured ones (docs/method.md). Every thread has one ledger; the code
// that spends time on the model's behalf charges it:
//
//   fabric_model_ns     what the loopback cost model charged this thread
//                       (round trips x rtt, payload / bandwidth, message
//                       one-way delays, NIC queueing): deterministic given
//                       the counts, the same on a loaded or an idle machine
//   fabric_spin_ns      wall time this thread spent spinning to pay it
//   fabric_emulation_ns wall time the loopback spent doing a NIC's work on
//                       this thread (copies and atomics of one-sided ops)
//   busy_wait_ns        wall time in waits that keep the CPU (back-off
//                       yields, spin-waits of the coherence protocol)
//   blocked_wait_ns     wall time in waits that sleep (retry back-off)
//
// A benchmark takes each worker's ledger (ForThisThread() on the worker,
// handed to the main thread) and reads it, with the thread's CPU clock,
// at the start and end of its measured window. Charging is a relaxed load
// and store by the owning thread (no locked instruction); any thread may
// Read() at any time.

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace strand {

class ThreadLedger {
 public:
  struct Snapshot {
    int64_t cpu_ns = 0;  // the thread's CPU clock
    int64_t fabric_model_ns = 0;
    int64_t fabric_spin_ns = 0;
    int64_t fabric_emulation_ns = 0;
    int64_t busy_wait_ns = 0;
    int64_t blocked_wait_ns = 0;
    // The thread's context switches (the kernel's counts): voluntary ones
    // are waits that blocked, involuntary ones preemptions by the
    // scheduler. Both near zero per op when a run measures the protocol.
    int64_t voluntary_switches = 0;
    int64_t involuntary_switches = 0;

    Snapshot& operator+=(const Snapshot& o);
    Snapshot& operator-=(const Snapshot& o);
    friend Snapshot operator-(Snapshot a, const Snapshot& b) { return a -= b; }
  };

  // The calling thread's ledger. The pointer stays valid while the thread
  // runs; a shared_ptr holder may keep reading its last values afterwards
  // (the CPU clock then reads as its last value).
  static ThreadLedger& Mine();
  static std::shared_ptr<ThreadLedger> ForThisThread();

  void ChargeFabricModel(int64_t ns) { Bump(fabric_model_ns_, ns); }
  void ChargeFabricSpin(int64_t ns) { Bump(fabric_spin_ns_, ns); }
  // In CycleNow() units (base/cycle_clock.h): read twice per op.
  void ChargeFabricEmulationCycles(uint64_t cycles) {
    Bump(fabric_emulation_cycles_, static_cast<int64_t>(cycles));
  }
  void ChargeBusyWait(int64_t ns) { Bump(busy_wait_ns_, ns); }
  void ChargeBlockedWait(int64_t ns) { Bump(blocked_wait_ns_, ns); }

  // Every figure, with the thread's CPU time so far.
  Snapshot Read() const;

  // Called by the owning thread as it exits: freezes the CPU clock.
  void ThreadExiting();

  ThreadLedger();

 private:
  static void Bump(std::atomic<int64_t>& c, int64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  // Reads the thread's context switch counts from /proc (any thread may).
  void ReadSwitches(int64_t* voluntary, int64_t* involuntary) const;

  clockid_t cpu_clock_;
  const int tid_;
  std::atomic<bool> exited_{false};
  std::atomic<int64_t> cpu_at_exit_ns_{0};
  std::atomic<int64_t> voluntary_at_exit_{0}, involuntary_at_exit_{0};
  std::atomic<int64_t> fabric_model_ns_{0}, fabric_spin_ns_{0},
      fabric_emulation_cycles_{0}, busy_wait_ns_{0}, blocked_wait_ns_{0};
};

// CPU time of the calling thread, nanoseconds.
int64_t ThreadCpuNanos();

// Every field of Snapshot, for its arithmetic (thread_ledger.cc). A field
// added above goes here too (thread_ledger.cc checks the count).
// clang-format off
#define STRAND_LEDGER_SNAPSHOT_FIELDS(X) \
  X(cpu_ns) X(fabric_model_ns) X(fabric_spin_ns) X(fabric_emulation_ns) \
  X(busy_wait_ns) X(blocked_wait_ns) \
  X(voluntary_switches) X(involuntary_switches)
// clang-format on

}  // namespace strand

#endif  // STRAND_BASE_THREAD_LEDGER_H_
