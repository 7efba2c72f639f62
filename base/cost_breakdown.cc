#include "base/cost_breakdown.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/cycle_clock.h"

namespace strand {

CostBreakdown::CostBreakdown(const ThreadLedger::Snapshot& w,
                             const RunShape& shape)
    : shape_(shape),
      cores_(static_cast<int>(std::thread::hardware_concurrency())) {
  if (shape.ops == 0) return;
  const double ops = static_cast<double>(shape.ops);
  measured_ns_ = shape.worker_threads * shape.wall_s * 1e9 / ops;
  cpu_ns_ = w.cpu_ns / ops;
  emulation_ns_ = w.fabric_emulation_ns / ops;
  spin_ns_ = w.fabric_spin_ns / ops;
  fabric_model_ns_ = w.fabric_model_ns / ops;
  wait_ns_ = (w.busy_wait_ns + w.blocked_wait_ns) / ops;
  voluntary_switches_ = w.voluntary_switches / ops;
  involuntary_switches_ = w.involuntary_switches / ops;
  // Spinning and busy waits are CPU the model accounts for on its own; a
  // preempted spin ends early in CPU terms, so this can go below zero on an
  // oversubscribed machine (then measured diverges, and the report says so).
  engine_cpu_ns_ =
      std::max(0.0, cpu_ns_ - emulation_ns_ - spin_ns_ - w.busy_wait_ns / ops);
  modeled_ns_ = engine_cpu_ns_ + fabric_model_ns_ + wait_ns_;
  if (shape.wall_s > 0) {
    cpu_percent_ = 100.0 * shape.process_cpu_s / shape.wall_s;
  }
}

double CostBreakdown::modeled_ops_per_s() const {
  return modeled_ns_ > 0 ? shape_.worker_threads * 1e9 / modeled_ns_ : 0;
}

double CostBreakdown::divergence() const {
  return modeled_ns_ > 0 ? measured_ns_ / modeled_ns_ - 1 : 0;
}

bool CostBreakdown::diverges() const {
  return std::fabs(divergence()) > kDivergence;
}

void CostBreakdown::Print(std::ostream& out, const std::string& op) const {
  if (shape_.ops == 0) return;
  const double measured_rate =
      shape_.wall_s > 0 ? shape_.ops / shape_.wall_s : 0;
  out << absl::StrFormat(
      "time per %s (per worker; docs/method.md)\n"
      "  measured   %8.2f us  %12.0f %s/s  (%d workers, %d cores, process "
      "CPU %.0f%%)\n"
      "  modeled    %8.2f us  %12.0f %s/s  = engine CPU %.2f + fabric model "
      "%.2f + waits %.2f us\n"
      "  CPU        %8.2f us  of which loopback copies/atomics %.2f, "
      "spinning for the model %.2f\n"
      "  context switches per %s: %.4f voluntary (blocked), %.4f "
      "involuntary (preempted)\n",
      op, measured_ns_ / 1e3, measured_rate, op, shape_.worker_threads, cores_,
      cpu_percent_, modeled_ns_ / 1e3, modeled_ops_per_s(), op,
      engine_cpu_ns_ / 1e3, fabric_model_ns_ / 1e3, wait_ns_ / 1e3,
      cpu_ns_ / 1e3, emulation_ns_ / 1e3, spin_ns_ / 1e3, op,
      voluntary_switches_, involuntary_switches_);
  if (diverges()) {
    out << absl::StrFormat(
        "  WARNING: measured is %+.0f%% off the model: %d busy workers on %d "
        "cores (plus background threads); this measured figure reflects the "
        "scheduler, not the protocol: quote the modeled one\n",
        100 * divergence(), shape_.worker_threads, cores_);
  }
}

void CostBreakdown::AddTo(JsonLine& json) const {
  json.Add("cost_measured_ns", measured_ns_)
      .Add("cost_modeled_ns", modeled_ns_)
      .Add("cost_cpu_ns", cpu_ns_)
      .Add("cost_engine_cpu_ns", engine_cpu_ns_)
      .Add("cost_loopback_emulation_ns", emulation_ns_)
      .Add("cost_model_spin_ns", spin_ns_)
      .Add("cost_fabric_model_ns", fabric_model_ns_)
      .Add("cost_wait_ns", wait_ns_)
      .Add("modeled_ops_per_sec", modeled_ops_per_s())
      .Add("measured_vs_modeled", divergence())
      .Add("model_diverges", diverges())
      .Add("worker_threads", shape_.worker_threads)
      .Add("cores", cores_)
      .Add("process_cpu_percent", cpu_percent_)
      .Add("voluntary_switches_per_op", voluntary_switches_)
      .Add("involuntary_switches_per_op", involuntary_switches_);
}

int64_t ProcessCpuNanos() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  auto ns = [](const timeval& t) {
    return int64_t{t.tv_sec} * 1'000'000'000 + int64_t{t.tv_usec} * 1000;
  };
  return ns(u.ru_utime) + ns(u.ru_stime);
}

WorkerWindow::WorkerWindow(int workers)
    : workers_count_(workers), ledgers_(workers), at_start_(workers) {}

void WorkerWindow::Join(int i) {
  ledgers_[i] = ThreadLedger::ForThisThread();
  joined_.fetch_add(1, std::memory_order_release);
}

void WorkerWindow::Leave() { joined_.fetch_add(1, std::memory_order_release); }

void WorkerWindow::WaitForWorkers() {
  while (joined_.load(std::memory_order_acquire) < workers_count_) {
    std::this_thread::yield();
  }
}

void WorkerWindow::Start() {
  WaitForWorkers();
  for (int i = 0; i < workers_count_; ++i) {
    if (ledgers_[i]) at_start_[i] = ledgers_[i]->Read();
  }
  start_cpu_ns_ = ProcessCpuNanos();
  start_ns_ = SteadyNanos();
}

void WorkerWindow::End() {
  wall_s_ = (SteadyNanos() - start_ns_) / 1e9;
  process_cpu_s_ = (ProcessCpuNanos() - start_cpu_ns_) / 1e9;
  workers_ = ThreadLedger::Snapshot();
  for (int i = 0; i < workers_count_; ++i) {
    if (ledgers_[i]) workers_ += ledgers_[i]->Read() - at_start_[i];
  }
}

CostBreakdown WorkerWindow::Breakdown(uint64_t ops) const {
  return CostBreakdown(workers_,
                       RunShape{workers_count_, wall_s_, process_cpu_s_, ops});
}

}  // namespace strand
