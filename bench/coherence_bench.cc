// coherence_bench: the GAM-style coherence micro-benchmark of the SELCC
// paper (7.1). Every compute node runs --threads workers; each operation
// picks a GCL and takes a shared latch and reads (--read_ratio) or an
// exclusive latch and writes 8 bytes. A --sharing_ratio share of the GCLs
// is accessible by every node, the rest is split into private parts, one
// per node; picks follow a Zipf law (--zipf_theta, 0 = uniform) over the
// GCLs a node may touch, and with probability --locality an operation
// re-accesses the previous GCL.
//
//   coherence_bench                                  # 1 node, defaults
//   coherence_bench --compute_nodes=4 --threads=2 --rtt_ns=2000
//       --zipf_theta=0.99 --read_ratio=0.95 --protocol=sel   (one line)
//   coherence_bench --json | jq .                    # one JSON object

#include <gflags/gflags.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/cost_breakdown.h"
#include "base/cycle_clock.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/run_output.h"
#include "base/status_macros.h"
#include "bench/coherence_options.h"
#include "cc/gcl_manager.h"
#include "rdma/fabric.h"
#include "rdma/fabric_flags.h"

namespace {
// Every flag's default is the options struct's (bench/coherence_options.h).
const strand::CoherenceOptions kDefaults;
}  // namespace

DEFINE_int32(threads, kDefaults.threads, "Worker threads per compute node");
DEFINE_uint64(gcls, kDefaults.gcls,
              "GCLs in the data set (all nodes together)");
DEFINE_uint32(gcl_size, kDefaults.gcl_size,
              "Bytes per GCL including its 8-byte latch word (multiple of "
              "64, >= 128)");
DEFINE_double(read_ratio, kDefaults.read_ratio,
              "Share of operations that read under a shared latch; the rest "
              "write under an exclusive latch");
DEFINE_double(sharing_ratio, kDefaults.sharing_ratio,
              "Share of the GCLs every compute node accesses; the rest is "
              "split into one private part per node (2 or more nodes)");
DEFINE_double(locality, kDefaults.locality,
              "Probability that an operation re-accesses the previous GCL");
DEFINE_double(zipf_theta, kDefaults.zipf_theta,
              "Zipf skew of the GCL picks (0 = uniform; 0.99 = YCSB hot)");
DEFINE_uint64(cache_mb, kDefaults.cache_mb,
              "SELCC cache per compute node, MiB; 0 (default): as large as "
              "the pool, at most a quarter of the memory available split "
              "among this process's compute nodes (the report prints the "
              "size used)");
DEFINE_string(protocol, kDefaults.protocol.c_str(),
              "Coherence protocol: selcc or sel");
DEFINE_double(duration_s, kDefaults.duration_s,
              "Seconds measured (after --warmup_s)");
DEFINE_double(warmup_s, kDefaults.warmup_s, "Seconds run before measuring");
DEFINE_uint64(seed, kDefaults.seed, "Seed of the workers' random choices");
// SELCC switches (paper Figure 15's ablation).
DEFINE_bool(gcl_forwarding, kDefaults.gcl_forwarding,
            "SELCC: ownership handover + GCL forwarding (4.4.1)");
DEFINE_bool(batched_eviction, kDefaults.batched_eviction,
            "SELCC: background eviction batched per memory node (5.2.1)");
DEFINE_bool(dirty_bounds, kDefaults.dirty_bounds,
            "Flush only the dirty range (5.2.2)");
DEFINE_string(lease_gamma, kDefaults.lease_gamma.c_str(),
              "SELCC lease threshold gamma (5.3.1): a count, 0, or inf");
DEFINE_bool(spin_wait, kDefaults.spin_wait,
            "SELCC: readers step aside for starved writers");
DEFINE_bool(priority_matching, kDefaults.priority_matching,
            "SELCC: only as-urgent readers take a starved writer's line");
DEFINE_int32(handler_threads, kDefaults.handler_threads,
             "SELCC message handler threads per node");
DEFINE_int64(lock_timeout_ms, kDefaults.lock_timeout_ms,
             "A lock that waits longer reports DeadlineExceeded (counted)");

namespace strand {
namespace {

// Zipf over [0, n) by the method of Gray et al. (as in YCSB); theta 0 is
// uniform. Rank 0 is the hottest item.
class Zipf {
 public:
  Zipf(uint64_t n, double theta) : n_(n), theta_(theta) {
    if (theta_ == 0 || n_ < 2) return;
    double zetan = 0;
    for (uint64_t i = 1; i <= n_; ++i) zetan += 1.0 / std::pow(i, theta_);
    const double zeta2 = 1 + 1.0 / std::pow(2, theta_);
    alpha_ = 1.0 / (1 - theta_);
    eta_ = (1 - std::pow(2.0 / n_, 1 - theta_)) / (1 - zeta2 / zetan);
    zetan_ = zetan;
    half_pow_ = 1 + std::pow(0.5, theta_);
  }
  // `u` uniform in [0, 1).
  uint64_t Next(double u) const {
    if (theta_ == 0 || n_ < 2) return static_cast<uint64_t>(u * n_) % n_;
    const double uz = u * zetan_;
    if (uz < 1) return 0;
    if (uz < half_pow_) return 1;
    return static_cast<uint64_t>(n_ * std::pow(eta_ * u - eta_ + 1, alpha_)) %
           n_;
  }

 private:
  uint64_t n_;
  double theta_;
  double alpha_ = 0, eta_ = 0, zetan_ = 0, half_pow_ = 0;
};

// splitmix64: a few ns per draw, enough for picking GCLs.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return (Next() >> 11) * 0x1.0p-53; }
};

// Ops whose latency is taken: one in this many (a sample of millions).
constexpr uint64_t kTimedEvery = 16;

struct NodeResult {
  uint64_t ops = 0;
  uint64_t timeouts = 0;
  uint64_t checksum = 0;
  // Of the measured ops timed (one in kTimedEvery): lock, access, unlock.
  LatencyHistogram latency;
};

// The options from the flags, validated: exits with status 2 naming the
// flag on any misuse, before anything is opened.
CoherenceOptions OptionsFromFlags() {
  CoherenceOptions o;
  o.threads = FLAGS_threads;
  o.gcls = FLAGS_gcls;
  o.gcl_size = FLAGS_gcl_size;
  o.read_ratio = FLAGS_read_ratio;
  o.sharing_ratio = FLAGS_sharing_ratio;
  o.locality = FLAGS_locality;
  o.zipf_theta = FLAGS_zipf_theta;
  o.cache_mb = FLAGS_cache_mb;
  o.protocol = FLAGS_protocol;
  o.duration_s = FLAGS_duration_s;
  o.warmup_s = FLAGS_warmup_s;
  o.seed = FLAGS_seed;
  o.gcl_forwarding = FLAGS_gcl_forwarding;
  o.batched_eviction = FLAGS_batched_eviction;
  o.dirty_bounds = FLAGS_dirty_bounds;
  o.lease_gamma = FLAGS_lease_gamma;
  o.spin_wait = FLAGS_spin_wait;
  o.priority_matching = FLAGS_priority_matching;
  o.handler_threads = FLAGS_handler_threads;
  o.lock_timeout_ms = FLAGS_lock_timeout_ms;
  o.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  o.given = FlagsGiven();
  ExitIfUsageError(o.Validate(OptionNaming::Flags("CoherenceOptions::")));
  return o;
}

// The fabric's compute nodes with a manager each, node 0's threads'
// contexts, and the data set node 0 allocated: shared part first, then
// the private parts.
struct Cluster {
  std::unique_ptr<rdma::Fabric> fabric;
  std::vector<std::unique_ptr<cc::GclManager>> managers;
  std::vector<rdma::GlobalAddress> gcls;
};

absl::StatusOr<Cluster> OpenCluster(const CoherenceOptions& o) {
  Cluster c;
  STRAND_ASSIGN_OR_RETURN(c.fabric, rdma::CreateFabric(o.fabric));
  for (int n = 0; n < o.fabric.compute_nodes; ++n) {
    STRAND_ASSIGN_OR_RETURN(
        auto m, cc::GclManager::Create(*c.fabric, n, o.CcOptionsForRun()));
    c.managers.push_back(std::move(m));
  }
  STRAND_ASSIGN_OR_RETURN(auto ctx, c.managers[0]->NewThreadContext());
  const uint64_t total =
      o.shared_gcls() + o.private_gcls_per_node() * o.fabric.compute_nodes;
  c.gcls.reserve(total);
  for (uint64_t i = 0; i < total; ++i) {
    STRAND_ASSIGN_OR_RETURN(const rdma::GlobalAddress g,
                            c.managers[0]->Allocate(*ctx));
    c.gcls.push_back(g);
  }
  return c;
}

// What the measured window saw: each worker's counts, the caches' and the
// fabric's counters over it.
struct Measured {
  std::vector<NodeResult> per_thread;
  cc::CacheStats cache;
  rdma::FabricCounters workers_fabric;  // the workers' endpoints only
  rdma::FabricCounters fabric;          // every endpoint, handlers too
  double seconds = 0;
  std::optional<CostBreakdown> cost;  // set once the ops are counted
};

// One worker's loop: pick a GCL, latch it shared and read, or exclusive
// and write 8 bytes; count and time (one in kTimedEvery) what the measured
// phase does. Stops at phase 2, or at an error other than a timeout.
void Work(const CoherenceOptions& o, const Cluster& c, const Zipf& zipf,
          int node, int worker, cc::ThreadContext& ctx, std::atomic<int>& phase,
          std::atomic<bool>& failed, NodeResult& out) {
  cc::GclManager& m = *c.managers[node];
  const uint64_t shared = o.shared_gcls();
  const uint64_t private_per_node = o.private_gcls_per_node();
  const uint32_t payload = m.options().payload_bytes();
  Rng rng{o.seed * 0x100000001B3ULL + worker};
  uint64_t prev = UINT64_MAX, checksum = 0, op_number = 0;
  for (;;) {
    const int p = phase.load(std::memory_order_relaxed);
    if (p == 2) break;
    uint64_t index;
    if (prev != UINT64_MAX && rng.Uniform() < o.locality) {
      index = prev;
    } else {
      const uint64_t rank = zipf.Next(rng.Uniform());
      index = rank < shared
                  ? rank
                  : shared + node * private_per_node + (rank - shared);
    }
    prev = index;
    const uint32_t offset = (rng.Next() % (payload / 8)) * 8;
    // One op in kTimedEvery is timed: around every op, the clock reads
    // cost ~40% of a cached op's throughput.
    const bool timed = ++op_number % kTimedEvery == 0;
    const uint64_t begin = timed ? CycleNow() : 0;
    absl::Status s;
    if (rng.Uniform() < o.read_ratio) {
      auto g = m.SLock(ctx, c.gcls[index]);
      if (g.ok()) {
        uint64_t v;
        std::memcpy(&v, g->data() + offset, 8);
        checksum += v;
      } else {
        s = g.status();
      }
    } else {
      auto g = m.XLock(ctx, c.gcls[index]);
      if (g.ok()) {
        uint64_t v;
        std::memcpy(&v, g->data() + offset, 8);
        ++v;
        std::memcpy(g->MutableRange(offset, 8), &v, 8);
      } else {
        s = g.status();
      }
    }
    const bool counting = p == 1;
    if (s.ok()) {
      if (counting) ++out.ops;
      if (counting && timed) {
        out.latency.Record(
            static_cast<uint64_t>(CyclesToNanos(CycleNow() - begin)));
      }
    } else if (s.code() == absl::StatusCode::kDeadlineExceeded) {
      if (counting) ++out.timeouts;
    } else {
      std::cerr << "coherence_bench: " << s.message() << "\n";
      failed = true;
      phase = 2;
    }
  }
  out.checksum = checksum;  // keeps the reads from being optimized out
}

// Runs every worker through the warm-up and the measured window.
absl::StatusOr<Measured> Measure(const CoherenceOptions& o, Cluster& c) {
  const int nodes = o.fabric.compute_nodes;
  const int workers_count = nodes * o.threads;
  std::vector<std::unique_ptr<cc::ThreadContext>> contexts;
  for (int w = 0; w < workers_count; ++w) {
    STRAND_ASSIGN_OR_RETURN(auto ctx,
                            c.managers[w / o.threads]->NewThreadContext());
    contexts.push_back(std::move(ctx));
  }
  const Zipf zipf(o.shared_gcls() + o.private_gcls_per_node(), o.zipf_theta);
  std::atomic<int> phase{0};  // 0 warm-up, 1 measuring, 2 stop
  std::atomic<bool> failed{false};
  Measured r;
  r.per_thread.resize(workers_count);
  WorkerWindow window(workers_count);
  CyclesToNanos(1);  // measures the clock's rate here, not in a worker's op
  std::vector<std::thread> workers;
  for (int w = 0; w < workers_count; ++w) {
    workers.emplace_back([&, w] {
      window.Join(w);
      Work(o, c, zipf, w / o.threads, w, *contexts[w], phase, failed,
           r.per_thread[w]);
    });
  }
  absl::SleepFor(absl::Seconds(o.warmup_s));
  c.fabric->WaitUntilPopulated();  // no populating thread beside the run
  std::vector<cc::CacheStats> stats_before;
  for (auto& m : c.managers) stats_before.push_back(m->Stats());
  std::vector<rdma::FabricCounters> worker_before;
  for (auto& ctx : contexts)
    worker_before.push_back(ctx->endpoint().Counters());
  const rdma::FabricCounters fabric_before = c.fabric->Counters();
  window.Start();
  phase = 1;
  absl::SleepFor(absl::Seconds(o.duration_s));
  phase = 2;
  window.End();
  for (auto& t : workers) t.join();
  if (failed) return absl::InternalError("a worker failed (its error above)");
  // Counters are read after the workers stopped: a few operations of the
  // stop race are in them, against millions measured.
  for (int n = 0; n < nodes; ++n) {
    r.cache += c.managers[n]->Stats() - stats_before[n];
  }
  for (size_t i = 0; i < contexts.size(); ++i) {
    r.workers_fabric += contexts[i]->endpoint().Counters() - worker_before[i];
  }
  r.fabric = c.fabric->Counters() - fabric_before;
  r.seconds = window.seconds();
  uint64_t ops = 0;
  for (const NodeResult& t : r.per_thread) ops += t.ops;
  r.cost = window.Breakdown(ops);
  return r;
}

// The run's figures, per op where they are rates.
struct Figures {
  uint64_t ops = 0, timeouts = 0;
  LatencyHistogram latency;
  std::vector<double> node_ops_per_sec;
  double ops_per_sec = 0, ns_per_op = 0, invalidation_ratio = 0;
  double round_trips_per_op = 0, worker_round_trips_per_op = 0;
  double worker_round_trips_per_miss = 0, messages_per_op = 0;
  double bytes_per_op = 0;
  uint64_t cache_mb = 0;  // as used: auto-sized when --cache_mb=0; SEL none
};

Figures Summarize(const CoherenceOptions& o, const Cluster& c,
                  const Measured& r) {
  Figures f;
  const int nodes = o.fabric.compute_nodes;
  f.node_ops_per_sec.assign(nodes, 0);
  for (size_t w = 0; w < r.per_thread.size(); ++w) {
    const NodeResult& t = r.per_thread[w];
    f.ops += t.ops;
    f.timeouts += t.timeouts;
    f.latency.Merge(t.latency);
    f.node_ops_per_sec[w / o.threads] += t.ops / r.seconds;
  }
  const cc::CacheStats& stats = r.cache;
  const double dops = std::max<double>(f.ops, 1);
  const uint64_t misses = stats.locks() - std::min(stats.locks(), stats.hits);
  f.ops_per_sec = f.ops / r.seconds;
  f.ns_per_op = r.seconds * 1e9 * nodes * o.threads / dops;
  f.invalidation_ratio = stats.invalidating_locks / dops;
  f.round_trips_per_op = r.fabric.round_trips / dops;
  f.worker_round_trips_per_op = r.workers_fabric.round_trips / dops;
  f.worker_round_trips_per_miss =
      misses == 0 ? 0
                  : static_cast<double>(r.workers_fabric.round_trips) / misses;
  f.messages_per_op = r.fabric.messages_sent / dops;
  f.bytes_per_op = (r.fabric.bytes_read + r.fabric.bytes_written) / dops;
  const cc::CcOptions& cache = c.managers[0]->options();
  f.cache_mb =
      cache.protocol == cc::Protocol::kSelcc ? cache.cache_bytes >> 20 : 0;
  return f;
}

void PrintReport(const CoherenceOptions& o, const Cluster& c, const Measured& r,
                 const Figures& f, std::ostream& out) {
  const cc::CacheStats& stats = r.cache;
  const double dops = std::max<double>(f.ops, 1);
  out << absl::StrFormat(
      "coherence_bench: protocol=%s compute_nodes=%d threads=%d gcls=%d "
      "gcl_size=%d read_ratio=%.2f sharing_ratio=%.2f locality=%.2f "
      "zipf_theta=%.2f cache_mb=%d rtt_ns=%d message_delivery=%s "
      "duration_s=%.2f\n",
      o.protocol, o.fabric.compute_nodes, o.threads, c.gcls.size(), o.gcl_size,
      o.read_ratio, o.sharing_ratio, o.locality, o.zipf_theta, f.cache_mb,
      o.fabric.rtt_ns, rdma::MessageDeliveryName(o.fabric.message_delivery),
      r.seconds);
  out << absl::StrFormat("  throughput            %14.0f ops/s\n",
                         f.ops_per_sec);
  out << absl::StrFormat(
      "  latency per thread    %14.1f ns/op (lock + access + unlock); p50 "
      "%.0f ns, p99 %.0f ns\n",
      f.ns_per_op, static_cast<double>(f.latency.Percentile(0.5)),
      static_cast<double>(f.latency.Percentile(0.99)));
  out << absl::StrFormat(
      "  cache hit ratio       %14.3f (locks needing no remote op)\n",
      stats.hit_ratio());
  out << absl::StrFormat(
      "  invalidation ratio    %14.4f (ops that invalidated a peer copy)\n",
      f.invalidation_ratio);
  out << absl::StrFormat(
      "  invalidations / op    %14.4f (messages sent); evictions / op %.4f\n",
      stats.invalidations_sent / dops, stats.evictions / dops);
  out << absl::StrFormat(
      "  round trips / op      %14.3f (all endpoints; workers alone %.3f, "
      "per miss %.3f)\n",
      f.round_trips_per_op, f.worker_round_trips_per_op,
      f.worker_round_trips_per_miss);
  out << absl::StrFormat("  messages / op         %14.3f\n", f.messages_per_op);
  out << absl::StrFormat("  bytes / op            %14.1f (read + written)\n",
                         f.bytes_per_op);
  out << absl::StrFormat("  timeouts              %14d (DeadlineExceeded)\n",
                         f.timeouts);
  for (size_t n = 0; n < f.node_ops_per_sec.size(); ++n) {
    out << absl::StrFormat("  node %-3d              %14.0f ops/s\n", n,
                           f.node_ops_per_sec[n]);
  }
  out << "  cache stats: " << stats.ToString() << "\n";
  r.cost->Print(out, "op");
}

JsonLine ReportJson(const CoherenceOptions& o, const Cluster& c,
                    const Measured& r, const Figures& f,
                    const RunOutput& output) {
  const cc::CacheStats& stats = r.cache;
  const double dops = std::max<double>(f.ops, 1);
  std::string per_node = "[";
  for (size_t n = 0; n < f.node_ops_per_sec.size(); ++n) {
    absl::StrAppendFormat(&per_node, "%s%.1f", n ? "," : "",
                          f.node_ops_per_sec[n]);
  }
  per_node += "]";
  JsonLine j = output.Record();
  rdma::AddFabricJson(o.fabric, *c.fabric, j);
  j.Add("bench", "coherence");
  o.AddJson(j);
  j.Add("gcls", static_cast<uint64_t>(c.gcls.size()))
      .Add("cache_mb", f.cache_mb)
      .Add("duration_s", r.seconds)
      .Add("ops", f.ops)
      .Add("timeouts", f.timeouts)
      .Add("ops_per_sec", f.ops_per_sec)
      .Add("ns_per_op", f.ns_per_op)
      .Add("cache_hit_ratio", stats.hit_ratio())
      .Add("invalidation_ratio", f.invalidation_ratio)
      .Add("round_trips_per_op", f.round_trips_per_op)
      .Add("worker_round_trips_per_op", f.worker_round_trips_per_op)
      .Add("worker_round_trips_per_miss", f.worker_round_trips_per_miss)
      .Add("messages_per_op", f.messages_per_op)
      .Add("bytes_per_op", f.bytes_per_op)
      .Add("evictions", stats.evictions)
      .Add("evictions_per_op", stats.evictions / dops)
      .Add("flushed_bytes", stats.flushed_bytes)
      .Add("invalidations_sent", stats.invalidations_sent)
      .Add("invalidations_per_op", stats.invalidations_sent / dops)
      .Add("invalidations_dropped", stats.invalidations_dropped)
      .Add("forwards", stats.forwards)
      .AddRaw("node_ops_per_sec", per_node);
  f.latency.AddTo(j, "", LatencyHistogram::Unit::kNanos);
  r.cost->AddTo(j);
  return j;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const CoherenceOptions options = OptionsFromFlags();
  auto cluster = OpenCluster(options);
  if (absl::IsResourceExhausted(cluster.status())) {
    // Validate's bound is the pool's bytes; chunks carved into GCLs hold a
    // little less.
    ExitWithUsageError(absl::StrFormat(
        "--gcls=%d do not fit the pool once it is carved into chunks (%s): "
        "lower --gcls or raise --pool_mb",
        options.gcls, cluster.status().message()));
  }
  if (!cluster.ok()) {
    std::cerr << "coherence_bench: " << cluster.status().message() << "\n";
    return 1;
  }
  auto measured = Measure(options, *cluster);
  if (!measured.ok()) {
    std::cerr << "coherence_bench: " << measured.status().message() << "\n";
    return 1;
  }
  const Figures figures = Summarize(options, *cluster, *measured);
  PrintReport(options, *cluster, *measured, figures, output.human());
  output.Print(ReportJson(options, *cluster, *measured, figures, output));
  return 0;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "GAM-style coherence micro-benchmark (SELCC paper 7.1).\n"
      "Usage: coherence_bench [--compute_nodes=N] [--threads=T] [--gcls=G] "
      "[--read_ratio=R] [--sharing_ratio=S] [--locality=L] "
      "[--zipf_theta=Z] [--cache_mb=M] [--protocol=selcc|sel] [--rtt_ns=N] "
      "[--json|--csv]");
  return strand::Main();
}
