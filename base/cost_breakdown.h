#ifndef STRAND_BASE_COST_BREAKDOWN_H_
#define STRAND_BASE_COST_BREAKDOWN_H_

// The per-operation decomposition every benchmark prints next to its
// measured throughput, so that a figure taken on a small machine can be
// judged (docs/method.md):
//
//   measured   = workers x wall / ops: what a worker spent per op
//   modeled    = engine CPU + fabric model + waits, where
//     engine CPU   = worker CPU - loopback emulation - model spinning
//                    - busy waits (the CPU strand itself needs per op)
//     fabric model = what the loopback cost model charged (round trips x
//                    rtt, bytes / bandwidth, messages x one-way delay)
//     waits        = back-off, spin-waits, retry sleeps
//
// When measured and modeled differ by more than kDivergence the machine did
// not run the workers as the model assumes (more busy threads than cores,
// or other load): the measured figure then measures the scheduler, and the
// report says so. All figures are sums over the worker threads' ledgers
// (base/thread_ledger.h) divided by the operations they completed.

#include <atomic>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/json_line.h"
#include "base/thread_ledger.h"

namespace strand {

struct RunShape {
  int worker_threads = 0;
  double wall_s = 0;         // the measured window
  double process_cpu_s = 0;  // CPU of the whole process in the window
  uint64_t ops = 0;          // completed operations (e.g. commits)
};

class CostBreakdown {
 public:
  static constexpr double kDivergence = 0.25;

  // `workers`: the sum of the workers' ledger deltas over the window.
  CostBreakdown(const ThreadLedger::Snapshot& workers, const RunShape& shape);

  // Nanoseconds per op.
  double measured_ns() const { return measured_ns_; }
  double modeled_ns() const { return modeled_ns_; }
  double cpu_ns() const { return cpu_ns_; }
  double engine_cpu_ns() const { return engine_cpu_ns_; }
  double emulation_ns() const { return emulation_ns_; }
  double spin_ns() const { return spin_ns_; }
  double fabric_model_ns() const { return fabric_model_ns_; }
  double wait_ns() const { return wait_ns_; }
  // The workers' context switches per op (thread_ledger.h).
  double voluntary_switches() const { return voluntary_switches_; }
  double involuntary_switches() const { return involuntary_switches_; }
  // Operations per second of all workers together.
  double modeled_ops_per_s() const;
  // Process CPU over the window, in percent of one core.
  double cpu_percent() const { return cpu_percent_; }
  int worker_threads() const { return shape_.worker_threads; }
  int cores() const { return cores_; }
  // measured / modeled - 1.
  double divergence() const;
  bool diverges() const;

  // A few lines for the human report; `op` names the operation ("txn").
  void Print(std::ostream& out, const std::string& op) const;
  // Adds every figure under keys prefixed "cost_" (ns per op).
  void AddTo(JsonLine& json) const;

 private:
  RunShape shape_;
  int cores_ = 0;
  double measured_ns_ = 0, modeled_ns_ = 0, cpu_ns_ = 0, engine_cpu_ns_ = 0,
         emulation_ns_ = 0, spin_ns_ = 0, fabric_model_ns_ = 0, wait_ns_ = 0,
         cpu_percent_ = 0, voluntary_switches_ = 0, involuntary_switches_ = 0;
};

// CPU time of the whole process (user + system), nanoseconds.
int64_t ProcessCpuNanos();

// The measured window of a benchmark's worker threads: each worker calls
// Join() once when it starts; the main thread brackets the window with
// Start() and End() (both read every worker's ledger and the process CPU
// clock), then asks for the Breakdown of the ops counted inside it.
//
//   WorkerWindow window(threads);
//   ... each worker: window.Join(i); loop ...
//   window.Start(); sleep(duration); window.End();
//   CostBreakdown cost = window.Breakdown(ops);
class WorkerWindow {
 public:
  explicit WorkerWindow(int workers);

  // On worker `i`'s thread, before its first operation.
  void Join(int i);
  // Blocks until every worker joined (or any worker gave up: Leave).
  void WaitForWorkers();
  // A worker that ends before joining (an error) lets Start go on.
  void Leave();
  void Start();
  void End();

  double seconds() const { return wall_s_; }
  double process_cpu_s() const { return process_cpu_s_; }
  ThreadLedger::Snapshot workers() const { return workers_; }
  CostBreakdown Breakdown(uint64_t ops) const;

 private:
  const int workers_count_;
  std::vector<std::shared_ptr<ThreadLedger>> ledgers_;
  std::vector<ThreadLedger::Snapshot> at_start_;
  std::atomic<int> joined_{0};
  int64_t start_ns_ = 0, start_cpu_ns_ = 0;
  double wall_s_ = 0, process_cpu_s_ = 0;
  ThreadLedger::Snapshot workers_;
};

}  // namespace strand

#endif  // STRAND_BASE_COST_BREAKDOWN_H_
