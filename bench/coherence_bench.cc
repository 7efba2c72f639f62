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
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/cost_breakdown.h"
#include "base/cycle_clock.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/run_output.h"
#include "cc/gcl_manager.h"
#include "rdma/fabric.h"
#include "rdma/fabric_flags.h"

DEFINE_int32(threads, 1, "Worker threads per compute node");
DEFINE_uint64(gcls, 100000, "GCLs in the data set (all nodes together)");
DEFINE_uint32(gcl_size, 1024,
              "Bytes per GCL including its 8-byte latch word (multiple of "
              "64, >= 128)");
DEFINE_double(read_ratio, 0.95,
              "Share of operations that read under a shared latch; the rest "
              "write under an exclusive latch");
DEFINE_double(sharing_ratio, 1.0,
              "Share of the GCLs every compute node accesses; the rest is "
              "split into one private part per node");
DEFINE_double(locality, 0,
              "Probability that an operation re-accesses the previous GCL");
DEFINE_double(zipf_theta, 0,
              "Zipf skew of the GCL picks (0 = uniform; 0.99 = YCSB hot)");
DEFINE_uint64(cache_mb, 0,
              "SELCC cache per compute node, MiB; 0 (default): as large as "
              "the pool, at most a quarter of the memory available split "
              "among this process's compute nodes (the report prints the "
              "size used)");
DEFINE_string(protocol, "selcc", "Coherence protocol: selcc or sel");
DEFINE_double(duration_s, 2, "Seconds measured (after --warmup_s)");
DEFINE_double(warmup_s, 0.5, "Seconds run before measuring");
DEFINE_uint64(seed, 1, "Seed of the workers' random choices");
// SELCC switches (paper Figure 15's ablation).
DEFINE_bool(gcl_forwarding, true,
            "SELCC: ownership handover + GCL forwarding (4.4.1)");
DEFINE_bool(batched_eviction, true,
            "SELCC: background eviction batched per memory node (5.2.1)");
DEFINE_bool(dirty_bounds, true, "Flush only the dirty range (5.2.2)");
DEFINE_string(lease_gamma, "64",
              "SELCC lease threshold gamma (5.3.1): a count, 0, or inf");
DEFINE_bool(spin_wait, true, "SELCC: readers step aside for starved writers");
DEFINE_bool(priority_matching, true,
            "SELCC: only as-urgent readers take a starved writer's line");
DEFINE_int32(handler_threads, 1, "SELCC message handler threads per node");
DEFINE_int64(lock_timeout_ms, 10000,
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

void Check(bool ok, const std::string& message) {
  if (!ok) ExitWithUsageError(message);
}

cc::CcOptions OptionsFromFlags() {
  cc::CcOptions o;
  auto protocol = cc::ParseProtocol(FLAGS_protocol);
  Check(protocol.ok(), std::string(protocol.status().message()));
  o.protocol = *protocol;
  o.gcl_size = FLAGS_gcl_size;
  o.cache_bytes = FLAGS_cache_mb << 20;
  o.handler_threads = FLAGS_handler_threads;
  o.lock_timeout = absl::Milliseconds(FLAGS_lock_timeout_ms);
  o.gcl_forwarding = FLAGS_gcl_forwarding;
  o.batched_eviction = FLAGS_batched_eviction;
  o.dirty_bounds = FLAGS_dirty_bounds;
  o.spin_wait = FLAGS_spin_wait;
  o.priority_matching = FLAGS_priority_matching;
  if (FLAGS_lease_gamma == "inf") {
    o.lease_gamma = cc::CcOptions::kInfiniteLease;
  } else {
    Check(absl::SimpleAtoi(FLAGS_lease_gamma, &o.lease_gamma) &&
              o.lease_gamma >= 0,
          "--lease_gamma must be a count >= 0 or inf");
  }
  return o;
}

// Ops whose latency is taken: one in this many (a sample of millions).
constexpr uint64_t kTimedEvery = 16;

struct NodeResult {
  uint64_t ops = 0;
  uint64_t timeouts = 0;
  uint64_t checksum = 0;
  // Of the measured ops timed (one in kTimedEvery): lock, access, unlock.
  LatencyHistogram latency;
};

int Main() {
  RunOutput output = RunOutput::FromFlags();
  auto fabric_options = rdma::FabricOptionsFromFlags();
  Check(fabric_options.ok(), std::string(fabric_options.status().message()));
  Check(FLAGS_threads >= 1 && FLAGS_threads <= 64,
        "--threads must be from 1 to 64");
  Check(FLAGS_gcls >= 1, "--gcls must be >= 1");
  auto ratio = [](double v) { return v >= 0 && v <= 1; };
  Check(ratio(FLAGS_read_ratio), "--read_ratio must be in [0, 1]");
  Check(ratio(FLAGS_sharing_ratio), "--sharing_ratio must be in [0, 1]");
  Check(ratio(FLAGS_locality), "--locality must be in [0, 1]");
  Check(FLAGS_zipf_theta >= 0 && FLAGS_zipf_theta < 5 &&
            std::abs(FLAGS_zipf_theta - 1) > 1e-9,
        "--zipf_theta must be in [0, 5) and not 1");
  Check(FLAGS_duration_s > 0 && FLAGS_duration_s <= 3600,
        "--duration_s must be > 0 and <= 3600");
  Check(FLAGS_warmup_s >= 0 && FLAGS_warmup_s <= 3600,
        "--warmup_s must be in [0, 3600]");
  Check(FLAGS_lock_timeout_ms > 0, "--lock_timeout_ms must be > 0");
  const cc::CcOptions options = OptionsFromFlags();
  if (absl::Status s = options.Validate(fabric_options->chunk_bytes,
                                        OptionNaming::Flags("CcOptions::"));
      !s.ok()) {
    ExitWithUsageError(std::string(s.message()));
  }
  const int nodes = fabric_options->compute_nodes;
  const uint64_t shared =
      static_cast<uint64_t>(std::llround(FLAGS_gcls * FLAGS_sharing_ratio));
  const uint64_t private_per_node = (FLAGS_gcls - shared) / nodes;
  Check(shared > 0 || private_per_node > 0,
        "--gcls is too small for --sharing_ratio and --compute_nodes: some "
        "node would have no GCL to access");
  // The data set lives in the memory nodes' pool; checked before anything
  // is sized by --gcls (its address table alone takes 8 bytes per GCL).
  const uint64_t pool_gcls = fabric_options->pool_bytes / FLAGS_gcl_size *
                             fabric_options->memory_nodes;
  Check(
      FLAGS_gcls <= pool_gcls,
      absl::StrFormat("--gcls=%d of --gcl_size=%d bytes do not fit the "
                      "pool (%d memory node(s) of --pool_mb=%d hold at most "
                      "%d): lower --gcls or raise --pool_mb",
                      FLAGS_gcls, FLAGS_gcl_size, fabric_options->memory_nodes,
                      fabric_options->pool_bytes >> 20, pool_gcls));

  auto fabric = rdma::CreateFabric(*fabric_options);
  if (!fabric.ok()) {
    std::cerr << "coherence_bench: " << fabric.status().message() << "\n";
    return 1;
  }
  std::vector<std::unique_ptr<cc::GclManager>> managers;
  for (int n = 0; n < nodes; ++n) {
    auto m = cc::GclManager::Create(**fabric, n, options);
    if (!m.ok()) {
      if (m.status().code() == absl::StatusCode::kInvalidArgument) {
        ExitWithUsageError(std::string(m.status().message()));
      }
      std::cerr << "coherence_bench: " << m.status().message() << "\n";
      return 1;
    }
    managers.push_back(*std::move(m));
  }
  // Node 0 allocates the data set: shared part first, then private parts.
  std::vector<rdma::GlobalAddress> gcls;
  {
    auto ctx = *managers[0]->NewThreadContext();
    const uint64_t total = shared + private_per_node * nodes;
    gcls.reserve(total);
    for (uint64_t i = 0; i < total; ++i) {
      auto g = managers[0]->Allocate(*ctx);
      if (g.status().code() == absl::StatusCode::kResourceExhausted) {
        ExitWithUsageError(std::string(g.status().message()));  // --pool_mb
      }
      if (!g.ok()) {
        std::cerr << "coherence_bench: " << g.status().message() << "\n";
        return 1;
      }
      gcls.push_back(*g);
    }
  }
  const uint64_t accessible = shared + private_per_node;
  const Zipf zipf(accessible, FLAGS_zipf_theta);

  std::atomic<int> phase{0};  // 0 warm-up, 1 measuring, 2 stop
  std::atomic<bool> failed{false};
  std::vector<NodeResult> per_thread(nodes * FLAGS_threads);
  std::vector<std::unique_ptr<cc::ThreadContext>> contexts(per_thread.size());
  for (int n = 0; n < nodes; ++n) {
    for (int t = 0; t < FLAGS_threads; ++t) {
      auto ctx = managers[n]->NewThreadContext();
      if (!ctx.ok()) {
        std::cerr << "coherence_bench: " << ctx.status().message() << "\n";
        return 1;
      }
      contexts[n * FLAGS_threads + t] = *std::move(ctx);
    }
  }
  const uint32_t payload = options.payload_bytes();
  WorkerWindow window(nodes * FLAGS_threads);
  CyclesToNanos(1);  // measures the clock's rate here, not in a worker's op
  std::vector<std::thread> workers;
  for (int n = 0; n < nodes; ++n) {
    for (int t = 0; t < FLAGS_threads; ++t) {
      const int w = n * FLAGS_threads + t;
      workers.emplace_back([&, n, w] {
        cc::GclManager& m = *managers[n];
        cc::ThreadContext& ctx = *contexts[w];
        window.Join(w);
        Rng rng{FLAGS_seed * 0x100000001B3ULL + w};
        NodeResult r;
        uint64_t prev = UINT64_MAX, checksum = 0, op_number = 0;
        for (;;) {
          const int p = phase.load(std::memory_order_relaxed);
          if (p == 2) break;
          uint64_t index;
          if (prev != UINT64_MAX && rng.Uniform() < FLAGS_locality) {
            index = prev;
          } else {
            const uint64_t rank = zipf.Next(rng.Uniform());
            index = rank < shared
                        ? rank
                        : shared + n * private_per_node + (rank - shared);
          }
          prev = index;
          const uint32_t offset = (rng.Next() % (payload / 8)) * 8;
          // One op in kTimedEvery is timed: around every op, the clock
          // reads cost ~40% of a cached op's throughput.
          const bool timed = ++op_number % kTimedEvery == 0;
          const uint64_t begin = timed ? CycleNow() : 0;
          absl::Status s;
          if (rng.Uniform() < FLAGS_read_ratio) {
            auto g = m.SLock(ctx, gcls[index]);
            if (g.ok()) {
              uint64_t v;
              std::memcpy(&v, g->data() + offset, 8);
              checksum += v;
            } else {
              s = g.status();
            }
          } else {
            auto g = m.XLock(ctx, gcls[index]);
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
            if (counting) ++r.ops;
            if (counting && timed) {
              r.latency.Record(
                  static_cast<uint64_t>(CyclesToNanos(CycleNow() - begin)));
            }
          } else if (s.code() == absl::StatusCode::kDeadlineExceeded) {
            if (counting) ++r.timeouts;
          } else {
            std::cerr << "coherence_bench: " << s.message() << "\n";
            failed = true;
            phase = 2;
          }
        }
        r.checksum = checksum;  // keeps the reads from being optimized out
        per_thread[w] = std::move(r);
      });
    }
  }
  absl::SleepFor(absl::Seconds(FLAGS_warmup_s));
  (*fabric)->WaitUntilPopulated();  // no populating thread beside the run
  std::vector<cc::CacheStats> stats_before;
  for (auto& m : managers) stats_before.push_back(m->Stats());
  std::vector<rdma::FabricCounters> worker_before;
  for (auto& c : contexts) worker_before.push_back(c->endpoint().Counters());
  const rdma::FabricCounters fabric_before = (*fabric)->Counters();
  window.Start();
  phase = 1;
  absl::SleepFor(absl::Seconds(FLAGS_duration_s));
  phase = 2;
  window.End();
  const double seconds = window.seconds();
  for (auto& t : workers) t.join();
  if (failed) return 1;
  // Counters are read after the workers stopped: a few operations of the
  // stop race are in them, against millions measured.
  cc::CacheStats stats;
  for (int n = 0; n < nodes; ++n)
    stats += managers[n]->Stats() - stats_before[n];
  rdma::FabricCounters workers_rt;
  for (size_t i = 0; i < contexts.size(); ++i) {
    workers_rt += contexts[i]->endpoint().Counters() - worker_before[i];
  }
  const rdma::FabricCounters fab = (*fabric)->Counters() - fabric_before;

  uint64_t ops = 0, timeouts = 0;
  LatencyHistogram latency;
  std::vector<double> node_ops(nodes, 0);
  for (int n = 0; n < nodes; ++n) {
    for (int t = 0; t < FLAGS_threads; ++t) {
      const NodeResult& r = per_thread[n * FLAGS_threads + t];
      ops += r.ops;
      timeouts += r.timeouts;
      latency.Merge(r.latency);
      node_ops[n] += r.ops / seconds;
    }
  }
  const double dops = std::max<double>(ops, 1);
  const uint64_t misses = stats.locks() - std::min(stats.locks(), stats.hits);
  const double ops_per_sec = ops / seconds;
  const double ns_per_op = seconds * 1e9 * nodes * FLAGS_threads / dops;
  const double hit_ratio = stats.hit_ratio();
  const double invalidation_ratio = stats.invalidating_locks / dops;
  const double rt_per_op = fab.round_trips / dops;
  const double worker_rt_per_op = workers_rt.round_trips / dops;
  const double worker_rt_per_miss =
      misses == 0 ? 0 : static_cast<double>(workers_rt.round_trips) / misses;
  const double msgs_per_op = fab.messages_sent / dops;
  const double bytes_per_op = (fab.bytes_read + fab.bytes_written) / dops;

  // What the cache layer uses (auto-sized when --cache_mb=0; SEL: none).
  const uint64_t cache_mb =
      managers[0]->options().protocol == cc::Protocol::kSelcc
          ? managers[0]->options().cache_bytes >> 20
          : 0;
  std::ostream& out = output.human();
  const CostBreakdown cost = window.Breakdown(ops);
  out << absl::StrFormat(
      "coherence_bench: protocol=%s compute_nodes=%d threads=%d gcls=%d "
      "gcl_size=%d read_ratio=%.2f sharing_ratio=%.2f locality=%.2f "
      "zipf_theta=%.2f cache_mb=%d rtt_ns=%d message_delivery=%s "
      "duration_s=%.2f\n",
      FLAGS_protocol, nodes, FLAGS_threads, gcls.size(), FLAGS_gcl_size,
      FLAGS_read_ratio, FLAGS_sharing_ratio, FLAGS_locality, FLAGS_zipf_theta,
      cache_mb, fabric_options->rtt_ns,
      rdma::MessageDeliveryName(fabric_options->message_delivery), seconds);
  out << absl::StrFormat("  throughput            %14.0f ops/s\n", ops_per_sec);
  out << absl::StrFormat(
      "  latency per thread    %14.1f ns/op (lock + access + unlock); p50 "
      "%.0f ns, p99 %.0f ns\n",
      ns_per_op, static_cast<double>(latency.Percentile(0.5)),
      static_cast<double>(latency.Percentile(0.99)));
  out << absl::StrFormat(
      "  cache hit ratio       %14.3f (locks needing no remote op)\n",
      hit_ratio);
  out << absl::StrFormat(
      "  invalidation ratio    %14.4f (ops that invalidated a peer copy)\n",
      invalidation_ratio);
  out << absl::StrFormat(
      "  invalidations / op    %14.4f (messages sent); evictions / op %.4f\n",
      stats.invalidations_sent / dops, stats.evictions / dops);
  out << absl::StrFormat(
      "  round trips / op      %14.3f (all endpoints; workers alone %.3f, "
      "per miss %.3f)\n",
      rt_per_op, worker_rt_per_op, worker_rt_per_miss);
  out << absl::StrFormat("  messages / op         %14.3f\n", msgs_per_op);
  out << absl::StrFormat("  bytes / op            %14.1f (read + written)\n",
                         bytes_per_op);
  out << absl::StrFormat("  timeouts              %14d (DeadlineExceeded)\n",
                         timeouts);
  for (int n = 0; n < nodes; ++n) {
    out << absl::StrFormat("  node %-3d              %14.0f ops/s\n", n,
                           node_ops[n]);
  }
  out << "  cache stats: " << stats.ToString() << "\n";
  cost.Print(out, "op");
  std::string per_node = "[";
  for (int n = 0; n < nodes; ++n) {
    absl::StrAppendFormat(&per_node, "%s%.1f", n ? "," : "", node_ops[n]);
  }
  per_node += "]";
  JsonLine j = output.Record();
  rdma::AddFabricJson(*fabric_options, **fabric, j);
  j.Add("bench", "coherence")
      .Add("protocol", FLAGS_protocol)
      .Add("threads", FLAGS_threads)
      .Add("gcls", static_cast<uint64_t>(gcls.size()))
      .Add("gcl_size", static_cast<uint64_t>(FLAGS_gcl_size))
      .Add("read_ratio", FLAGS_read_ratio)
      .Add("sharing_ratio", FLAGS_sharing_ratio)
      .Add("locality", FLAGS_locality)
      .Add("zipf_theta", FLAGS_zipf_theta)
      .Add("cache_mb", cache_mb)
      .Add("gcl_forwarding", FLAGS_gcl_forwarding)
      .Add("batched_eviction", FLAGS_batched_eviction)
      .Add("dirty_bounds", FLAGS_dirty_bounds)
      .Add("lease_gamma", FLAGS_lease_gamma)
      .Add("spin_wait", FLAGS_spin_wait)
      .Add("priority_matching", FLAGS_priority_matching)
      .Add("handler_threads", FLAGS_handler_threads)
      .Add("lock_timeout_ms", FLAGS_lock_timeout_ms)
      .Add("seed", FLAGS_seed)
      .Add("warmup_s", FLAGS_warmup_s)
      .Add("duration_s", seconds)
      .Add("ops", ops)
      .Add("timeouts", timeouts)
      .Add("ops_per_sec", ops_per_sec)
      .Add("ns_per_op", ns_per_op)
      .Add("cache_hit_ratio", hit_ratio)
      .Add("invalidation_ratio", invalidation_ratio)
      .Add("round_trips_per_op", rt_per_op)
      .Add("worker_round_trips_per_op", worker_rt_per_op)
      .Add("worker_round_trips_per_miss", worker_rt_per_miss)
      .Add("messages_per_op", msgs_per_op)
      .Add("bytes_per_op", bytes_per_op)
      .Add("evictions", stats.evictions)
      .Add("evictions_per_op", stats.evictions / dops)
      .Add("flushed_bytes", stats.flushed_bytes)
      .Add("invalidations_sent", stats.invalidations_sent)
      .Add("invalidations_per_op", stats.invalidations_sent / dops)
      .Add("invalidations_dropped", stats.invalidations_dropped)
      .Add("forwards", stats.forwards)
      .AddRaw("node_ops_per_sec", per_node);
  latency.AddTo(j, "", LatencyHistogram::Unit::kNanos);
  cost.AddTo(j);
  output.Print(j);
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
