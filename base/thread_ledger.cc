#include "base/thread_ledger.h"

#include <unistd.h>

#include <cstdio>

#include "base/cycle_clock.h"

namespace strand {
namespace {

int64_t ClockNanos(clockid_t clock, bool* ok) {
  timespec ts;
  *ok = clock_gettime(clock, &ts) == 0;
  return *ok ? int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec : 0;
}

// Owns the thread's ledger; its destructor runs as the thread exits, before
// the thread's CPU clock goes away.
struct LedgerHolder {
  std::shared_ptr<ThreadLedger> ledger = std::make_shared<ThreadLedger>();
  ~LedgerHolder() { ledger->ThreadExiting(); }
};

LedgerHolder& Holder() {
  thread_local LedgerHolder holder;
  return holder;
}

}  // namespace

#define STRAND_ONE(f) +1
static_assert(sizeof(ThreadLedger::Snapshot) ==
                  (0 STRAND_LEDGER_SNAPSHOT_FIELDS(STRAND_ONE)) *
                      sizeof(int64_t),
              "a Snapshot field is missing from STRAND_LEDGER_SNAPSHOT_FIELDS");
#undef STRAND_ONE

ThreadLedger::Snapshot& ThreadLedger::Snapshot::operator+=(const Snapshot& o) {
#define STRAND_ADD(f) f += o.f;
  STRAND_LEDGER_SNAPSHOT_FIELDS(STRAND_ADD)
#undef STRAND_ADD
  return *this;
}

ThreadLedger::Snapshot& ThreadLedger::Snapshot::operator-=(const Snapshot& o) {
#define STRAND_SUB(f) f -= o.f;
  STRAND_LEDGER_SNAPSHOT_FIELDS(STRAND_SUB)
#undef STRAND_SUB
  return *this;
}

ThreadLedger::ThreadLedger() : tid_(static_cast<int>(gettid())) {
  if (pthread_getcpuclockid(pthread_self(), &cpu_clock_) != 0) {
    cpu_clock_ = CLOCK_THREAD_CPUTIME_ID;  // readable by this thread only
  }
}

ThreadLedger& ThreadLedger::Mine() { return *Holder().ledger; }

std::shared_ptr<ThreadLedger> ThreadLedger::ForThisThread() {
  return Holder().ledger;
}

void ThreadLedger::ReadSwitches(int64_t* voluntary,
                                int64_t* involuntary) const {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid_);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return;
  char line[256];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long n = 0;
    if (std::sscanf(line, "voluntary_ctxt_switches: %lld", &n) == 1) {
      *voluntary = n;
    } else if (std::sscanf(line, "nonvoluntary_ctxt_switches: %lld", &n) == 1) {
      *involuntary = n;
    }
  }
  std::fclose(f);
}

void ThreadLedger::ThreadExiting() {
  bool ok = false;
  cpu_at_exit_ns_.store(ClockNanos(cpu_clock_, &ok), std::memory_order_relaxed);
  int64_t voluntary = 0, involuntary = 0;
  ReadSwitches(&voluntary, &involuntary);
  voluntary_at_exit_.store(voluntary, std::memory_order_relaxed);
  involuntary_at_exit_.store(involuntary, std::memory_order_relaxed);
  exited_.store(true, std::memory_order_release);
}

ThreadLedger::Snapshot ThreadLedger::Read() const {
  Snapshot s;
  bool ok = false;
  if (!exited_.load(std::memory_order_acquire)) {
    s.cpu_ns = ClockNanos(cpu_clock_, &ok);
    ReadSwitches(&s.voluntary_switches, &s.involuntary_switches);
  }
  if (!ok) {
    s.cpu_ns = cpu_at_exit_ns_.load(std::memory_order_relaxed);
    s.voluntary_switches = voluntary_at_exit_.load(std::memory_order_relaxed);
    s.involuntary_switches =
        involuntary_at_exit_.load(std::memory_order_relaxed);
  }
  s.fabric_model_ns = fabric_model_ns_.load(std::memory_order_relaxed);
  s.fabric_spin_ns = fabric_spin_ns_.load(std::memory_order_relaxed);
  s.fabric_emulation_ns = static_cast<int64_t>(
      CyclesToNanos(fabric_emulation_cycles_.load(std::memory_order_relaxed)));
  s.busy_wait_ns = busy_wait_ns_.load(std::memory_order_relaxed);
  s.blocked_wait_ns = blocked_wait_ns_.load(std::memory_order_relaxed);
  return s;
}

int64_t ThreadCpuNanos() {
  bool ok = false;
  return ClockNanos(CLOCK_THREAD_CPUTIME_ID, &ok);
}

}  // namespace strand
