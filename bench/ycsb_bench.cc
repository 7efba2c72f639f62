// ycsb_bench: YCSB-style key-value workloads over the B-link tree (index/)
// and, for values wider than 8 bytes, a heap table (storage/), on any
// number of compute nodes and threads, with SEL or SELCC underneath.
//
//   ycsb_bench                                       # 1M records, 3 mixes
//   ycsb_bench --workloads=read_only --distribution=zipf --rtt_ns=2000
//   ycsb_bench --json | jq .                         # one object per run
//   ycsb_bench --csv --progress_json=/tmp/series.jsonl  # CSV; per second
//
// Records have 8-byte keys (big-endian record ids). With --value_bytes=8
// the value lives in the index leaf; wider values are heap tuples and the
// index maps the key to the tuple's address. The load inserts the records
// in a scrambled order from every thread of every compute node.

#include <gflags/gflags.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/cost_breakdown.h"
#include "base/cycle_clock.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/progress_line.h"
#include "base/run_output.h"
#include "base/run_progress.h"
#include "base/status_macros.h"
#include "bench/ycsb_options.h"
#include "cc/gcl_manager.h"
#include "index/blink_tree.h"
#include "index/cpu_path_flags.h"
#include "index/key_codec.h"
#include "rdma/fabric.h"
#include "rdma/fabric_flags.h"
#include "storage/heap_table.h"
#include "storage/schema.h"
#include "storage/tuple_header.h"

namespace {
// Every flag's default is the options struct's (bench/ycsb_options.h).
const strand::YcsbOptions kDefaults;
}  // namespace

DEFINE_uint64(records, kDefaults.records, "Records loaded before the runs");
DEFINE_uint32(value_bytes, kDefaults.value_bytes,
              "Bytes of a record's value: 8 keeps it in the index leaf; more "
              "stores it in a heap tuple the index points to");
DEFINE_string(workloads, kDefaults.workloads.c_str(),
              "Comma-separated mixes to run, each for --duration_s: "
              "read_only (100% reads), read_mostly (95% reads, 5% updates), "
              "update_heavy (50/50), insert_heavy (50% reads, 50% inserts of "
              "new keys), scan_heavy (95% scans of --scan_length records, 5% "
              "inserts)");
DEFINE_string(distribution, kDefaults.distribution.c_str(),
              "Key popularity: uniform or zipf (scrambled, --zipf_theta)");
DEFINE_double(zipf_theta, kDefaults.zipf_theta,
              "Skew of --distribution=zipf, in (0, 1); only with it");
DEFINE_uint32(scan_length, kDefaults.scan_length,
              "Records per scan in scan_heavy (only with it)");
DEFINE_int32(threads, kDefaults.threads, "Worker threads per compute node");
DEFINE_double(duration_s, kDefaults.duration_s, "Seconds each workload runs");
DEFINE_string(protocol, kDefaults.protocol.c_str(),
              "Coherence protocol: selcc (cached) or sel (no cache)");
DEFINE_uint32(gcl_size, kDefaults.gcl_size,
              "Bytes of one GCL (index node, heap page), latch word included");
DEFINE_uint64(cache_mb, kDefaults.cache_mb,
              "SELCC: MiB of GCL copies each compute node may cache; 0 "
              "(default): as large as the pool, at most a quarter of the "
              "memory available split among this process's compute nodes "
              "(the report prints the size used)");
DEFINE_uint64(seed, kDefaults.seed, "Seed of the key generators");

namespace strand {
namespace {

using index::BLinkTree;
using index::BLinkTreeStats;

enum class Op { kRead, kUpdate, kInsert, kScan };

// YCSB's scrambled zipfian generator (Gray et al.): ranks drawn with skew
// theta, then hashed so the hot keys are spread over the key space.
class KeyChooser {
 public:
  KeyChooser(uint64_t n, bool zipf, double theta, uint64_t seed)
      : n_(n), zipf_(zipf), theta_(theta), rng_(seed) {
    if (!zipf_) return;
    zetan_ = Zeta(n, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1 - std::pow(2.0 / n, 1 - theta)) / (1 - Zeta(2, theta) / zetan_);
  }
  uint64_t Next() {
    if (!zipf_) return rng_() % n_;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    const double uz = u * zetan_;
    uint64_t rank;
    if (uz < 1) {
      rank = 0;
    } else if (uz < 1 + std::pow(0.5, theta_)) {
      rank = 1;
    } else {
      rank = static_cast<uint64_t>(n_ * std::pow(eta_ * u - eta_ + 1, alpha_));
    }
    return Fnv(std::min(rank, n_ - 1)) % n_;
  }
  std::mt19937_64& rng() { return rng_; }

  // zeta(n, theta) is O(n): computed once per process and shared.
  static double Zeta(uint64_t n, double theta) {
    double sum = 0;
    for (uint64_t i = 1; i <= n; ++i) sum += 1 / std::pow(double(i), theta);
    return sum;
  }

 private:
  static uint64_t Fnv(uint64_t v) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
    return h;
  }
  uint64_t n_;
  bool zipf_;
  double theta_, zetan_ = 0, alpha_ = 0, eta_ = 0;
  std::mt19937_64 rng_;
};

// One compute node: its manager and its handles on the shared tree/table.
struct Node {
  std::unique_ptr<cc::GclManager> manager;
  std::unique_ptr<BLinkTree> tree;
  std::unique_ptr<storage::HeapTable> table;  // --value_bytes > 8 only
};

struct Database {
  std::vector<Node> nodes;
  std::unique_ptr<storage::Schema> schema;
  std::atomic<uint64_t> next_insert{0};  // ids of records inserted by runs
};

std::string Key(uint64_t id) { return index::KeyBuilder().Uint64(id).Build(8); }

// The i-th record of the load, in a scrambled order (i -> i*p mod n is a
// permutation when p is a prime that does not divide n).
uint64_t LoadOrder(uint64_t i, uint64_t n) {
  constexpr uint64_t kPrime = 2'147'483'647;
  return n % kPrime == 0 ? i
                         : static_cast<uint64_t>(
                               (static_cast<__uint128_t>(i) * kPrime) % n);
}

class Worker {
 public:
  Worker(const YcsbOptions& options, Database& db, int node, uint64_t seed)
      : options_(options),
        db_(db),
        node_(db.nodes[node]),
        chooser_(options.records, options.zipf(), options.zipf_theta, seed),
        tuple_(db.schema ? db.schema->tuple_bytes() : 0, 0) {}

  absl::Status Init() {
    auto ctx = node_.manager->NewThreadContext();
    if (!ctx.ok()) return ctx.status();
    ctx_ = *std::move(ctx);
    return absl::OkStatus();
  }

  absl::Status Insert(uint64_t id) {
    uint64_t value = id;
    if (node_.table) {
      std::memcpy(tuple_.data() + storage::kTupleHeaderBytes, &id, 8);
      auto address = node_.table->Insert(*ctx_, tuple_);
      if (!address.ok()) return address.status();
      value = address->raw();
    }
    return node_.tree->Insert(*ctx_, Key(id), value);
  }

  absl::Status Run(Op op) {
    const uint64_t id = chooser_.Next();
    switch (op) {
      case Op::kRead: {
        auto value = node_.tree->Lookup(*ctx_, Key(id));
        if (!value.ok()) return value.status();
        if (!node_.table) return absl::OkStatus();
        return node_.table->Read(*ctx_, storage::TupleAddress::FromRaw(*value),
                                 absl::MakeSpan(tuple_));
      }
      case Op::kUpdate: {
        const uint64_t fresh = chooser_.rng()();
        if (!node_.table) return node_.tree->Update(*ctx_, Key(id), fresh);
        auto value = node_.tree->Lookup(*ctx_, Key(id));
        if (!value.ok()) return value.status();
        return node_.table->UpdateColumn(
            *ctx_, storage::TupleAddress::FromRaw(*value), 0,
            absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(&fresh), 8));
      }
      case Op::kInsert:
        return Insert(options_.records + db_.next_insert.fetch_add(1));
      case Op::kScan: {
        std::vector<uint64_t> values;
        values.reserve(options_.scan_length);
        absl::Status s =
            node_.tree->Scan(*ctx_, Key(id), std::nullopt, options_.scan_length,
                             [&](std::string_view, uint64_t v) {
                               values.push_back(v);
                               return true;
                             });
        if (!s.ok() || !node_.table) return s;
        for (uint64_t v : values) {
          s = node_.table->Read(*ctx_, storage::TupleAddress::FromRaw(v),
                                absl::MakeSpan(tuple_));
          if (!s.ok()) return s;
        }
        return absl::OkStatus();
      }
    }
    return absl::InternalError("unknown op");
  }

  Op Pick(const YcsbMix& mix) {
    const double u =
        std::uniform_real_distribution<double>(0, 1)(chooser_.rng());
    if (u < mix.read) return Op::kRead;
    if (u < mix.read + mix.update) return Op::kUpdate;
    if (u < mix.read + mix.update + mix.insert) return Op::kInsert;
    return Op::kScan;
  }

 private:
  const YcsbOptions& options_;
  Database& db_;
  Node& node_;
  KeyChooser chooser_;
  std::vector<uint8_t> tuple_;
  std::unique_ptr<cc::ThreadContext> ctx_;
};

// Runs fn(worker, node, thread) on every thread of every node, calling
// poll() every 10 ms meanwhile (progress); the first error wins.
template <typename Fn>
absl::Status OnAllThreads(std::vector<std::vector<std::unique_ptr<Worker>>>& w,
                          Fn fn, absl::FunctionRef<void()> poll) {
  absl::Mutex mu;
  absl::Status first;
  std::atomic<int> running{0};
  std::vector<std::thread> threads;
  for (size_t n = 0; n < w.size(); ++n) {
    for (size_t t = 0; t < w[n].size(); ++t) {
      ++running;
      threads.emplace_back([&, n, t] {
        absl::Status s = fn(*w[n][t], n, t);
        absl::MutexLock lock(&mu);
        if (first.ok()) first = s;
        --running;
      });
    }
  }
  while (running.load() > 0) {
    absl::SleepFor(absl::Milliseconds(10));
    poll();
  }
  for (auto& t : threads) t.join();
  return first;
}

// A worker's count of measured operations, which the progress sampler
// reads while it runs: a cache line of its own, so that workers do not
// share one.
struct alignas(64) LiveCount {
  std::atomic<uint64_t> ops{0};
};

cc::CacheStats SumStats(Database& db) {
  cc::CacheStats sum;
  for (Node& n : db.nodes) sum += n.manager->Stats();
  return sum;
}

using Workers = std::vector<std::vector<std::unique_ptr<Worker>>>;

// The options from the flags, validated: exits with status 2 naming the
// flag on any misuse, before anything is opened.
YcsbOptions OptionsFromFlags() {
  YcsbOptions o;
  o.records = FLAGS_records;
  o.value_bytes = FLAGS_value_bytes;
  o.workloads = FLAGS_workloads;
  o.distribution = FLAGS_distribution;
  o.zipf_theta = FLAGS_zipf_theta;
  o.scan_length = FLAGS_scan_length;
  o.threads = FLAGS_threads;
  o.duration_s = FLAGS_duration_s;
  o.protocol = FLAGS_protocol;
  o.gcl_size = FLAGS_gcl_size;
  o.cache_mb = FLAGS_cache_mb;
  o.seed = FLAGS_seed;
  o.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  o.cpu_path = ValueOrExitIfUsageError(index::CpuPathSwitchesFromFlags());
  o.given = FlagsGiven();
  ExitIfUsageError(o.Validate(OptionNaming::Flags("YcsbOptions::")));
  return o;
}

// A manager per hosted compute node; the tree (and with wide values the
// heap table) created on the first and opened on every node.
absl::Status OpenDatabase(const YcsbOptions& o, rdma::Fabric& fabric,
                          Database& db) {
  for (rdma::ComputeNodeId id : fabric.local_compute_nodes()) {
    STRAND_ASSIGN_OR_RETURN(
        auto manager, cc::GclManager::Create(fabric, id, o.CcOptionsForRun()));
    db.nodes.push_back(Node{std::move(manager), nullptr, nullptr});
  }
  if (o.value_bytes > 8) {
    STRAND_ASSIGN_OR_RETURN(
        storage::Schema schema,
        storage::Schema::Create({{"value", storage::ColumnType::kChar,
                                  static_cast<uint16_t>(o.value_bytes)}}));
    db.schema = std::make_unique<storage::Schema>(std::move(schema));
  }
  Node& first = db.nodes.front();
  STRAND_ASSIGN_OR_RETURN(auto ctx, first.manager->NewThreadContext());
  STRAND_ASSIGN_OR_RETURN(const rdma::GlobalAddress anchor,
                          BLinkTree::Create(*first.manager, *ctx, {8, true}));
  rdma::GlobalAddress table_root;
  if (db.schema) {
    STRAND_ASSIGN_OR_RETURN(
        table_root,
        storage::HeapTable::Create(*first.manager, *ctx, 1, *db.schema));
  }
  for (Node& n : db.nodes) {
    STRAND_ASSIGN_OR_RETURN(auto c, n.manager->NewThreadContext());
    STRAND_ASSIGN_OR_RETURN(
        n.tree, BLinkTree::Open(*n.manager, *c, anchor, o.cpu_path.tuning));
    if (db.schema) {
      STRAND_ASSIGN_OR_RETURN(
          n.table,
          storage::HeapTable::Open(*n.manager, *c, table_root, *db.schema));
    }
  }
  return absl::OkStatus();
}

// --threads workers on every node, each with its own key stream.
absl::StatusOr<Workers> MakeWorkers(const YcsbOptions& o, Database& db) {
  Workers workers(db.nodes.size());
  uint64_t seed = o.seed;
  for (size_t n = 0; n < db.nodes.size(); ++n) {
    for (int t = 0; t < o.threads; ++t) {
      workers[n].push_back(std::make_unique<Worker>(o, db, n, seed++));
      STRAND_RETURN_IF_ERROR(workers[n].back()->Init());
    }
  }
  return workers;
}

struct LoadFigures {
  double seconds = 0;
  BLinkTreeStats tree;
};

// Inserts the records from every worker, in a scrambled order, showing
// progress; then checks the tree.
absl::StatusOr<LoadFigures> LoadRecords(const YcsbOptions& o, Database& db,
                                        Workers& workers) {
  const int total_threads = db.nodes.size() * o.threads;
  const absl::Time start = absl::Now();
  std::atomic<uint64_t> inserted{0};
  ProgressLine line;
  absl::Status loaded = OnAllThreads(
      workers,
      [&](Worker& w, int n, int t) {
        const int me = n * o.threads + t;
        // Counted in steps, so that the threads seldom share the counter.
        constexpr uint64_t kStep = 1024;
        uint64_t mine = 0;
        for (uint64_t i = me; i < o.records; i += total_threads) {
          STRAND_RETURN_IF_ERROR(w.Insert(LoadOrder(i, o.records)));
          if (++mine % kStep == 0) inserted.fetch_add(kStep);
        }
        return absl::OkStatus();
      },
      [&] {
        line.Update([&] {
          const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
          const double rate = inserted.load() / std::max(seconds, 1e-3);
          return absl::StrFormat(
              "loading %d records: %d (%.0f%%) in %.0f s, ~%.0f s left",
              o.records, inserted.load(), 100.0 * inserted.load() / o.records,
              seconds, rate > 0 ? (o.records - inserted.load()) / rate : 0);
        });
      });
  line.Clear();
  STRAND_RETURN_IF_ERROR(loaded);
  LoadFigures figures;
  figures.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  STRAND_ASSIGN_OR_RETURN(auto ctx,
                          db.nodes.front().manager->NewThreadContext());
  STRAND_ASSIGN_OR_RETURN(figures.tree, db.nodes.front().tree->Verify(*ctx));
  return figures;
}

// MiB of the tree's GCLs.
double TreeMiB(const YcsbOptions& o, const LoadFigures& load) {
  return (load.tree.leaves + load.tree.inner_nodes) *
         static_cast<double>(o.gcl_size) / (1 << 20);
}

// The run's settings and the load's figures, ahead of the table.
void PrintSetup(const YcsbOptions& o, const Database& db, uint64_t cache_mb,
                const LoadFigures& load, std::ostream& out) {
  out << absl::StrFormat(
      "ycsb_bench: protocol=%s compute_nodes=%d threads/node=%d rtt_ns=%d "
      "gcl_size=%d cache_mb=%d prefetch=%s optimistic_reads=%s "
      "index_word_search=%s identity_frames=%s records=%d value_bytes=%d "
      "distribution=%s%s\n"
      "load: %.2f s (%.0f inserts/s); tree: height %d, %d leaves, %d inner "
      "nodes, %.1f MiB of GCLs\n",
      o.protocol, db.nodes.size(), o.threads, o.fabric.rtt_ns, o.gcl_size,
      cache_mb, cc::PrefetchScopeName(o.cpu_path.prefetch),
      o.cpu_path.tuning.optimistic_reads ? "true" : "false",
      o.cpu_path.tuning.word_search ? "true" : "false",
      o.cpu_path.identity_frames ? "true" : "false", o.records, o.value_bytes,
      o.distribution,
      o.zipf() ? absl::StrFormat("(theta=%.2f)", o.zipf_theta) : "",
      load.seconds, o.records / load.seconds, load.tree.height,
      load.tree.leaves, load.tree.inner_nodes, TreeMiB(o, load));
}

// One workload's measured window.
struct MixFigures {
  double seconds = 0;
  uint64_t ops = 0;
  std::vector<uint64_t> ops_by_node;
  LatencyHistogram latency;
  rdma::FabricCounters fabric;
  cc::CacheStats cache;
  std::optional<CostBreakdown> cost;  // always set by RunMix
};

// Runs `mix` on every worker for --duration_s (the window opens once every
// worker runs), with progress on stderr and in --progress_json.
absl::StatusOr<MixFigures> RunMix(const YcsbOptions& o, const YcsbMix& mix,
                                  rdma::Fabric& fabric, Database& db,
                                  Workers& workers, RunOutput& output) {
  const size_t worker_count = db.nodes.size() * o.threads;
  std::atomic<bool> stop{false};
  std::vector<LiveCount> live(worker_count);
  std::vector<LatencyHistogram> latencies(worker_count);
  const rdma::FabricCounters fabric_before = fabric.Counters();
  const cc::CacheStats cache_before = SumStats(db);
  WorkerWindow window(static_cast<int>(worker_count));
  std::atomic<bool> counting{false};
  auto live_ops = [&] {
    uint64_t sum = 0;
    for (const LiveCount& c : live) sum += c.ops.load();
    return sum;
  };
  std::thread timer([&] {
    window.Start();
    counting = true;
    const absl::Time end = absl::Now() + absl::Seconds(o.duration_s);
    RunProgress progress({.count_key = "ops",
                          .rate_key = "ops_per_sec",
                          .unit = "op",
                          .labels = JsonLine().Add("workload", mix.name),
                          .duration = absl::Seconds(o.duration_s),
                          .series = output.progress_series()});
    while (absl::Now() < end && !stop.load()) {
      absl::SleepFor(std::min(absl::Milliseconds(10), end - absl::Now()));
      // Index operations wait for latches: they never abort.
      progress.Poll(live_ops(), [] { return std::nullopt; });
    }
    progress.Finish();
    counting = false;
    window.End();
    stop = true;
  });
  absl::Status ran = OnAllThreads(
      workers,
      [&](Worker& w, int n, int t) {
        const int me = n * o.threads + t;
        window.Join(me);
        LatencyHistogram& latency = latencies[me];
        std::atomic<uint64_t>& done = live[me].ops;
        while (!stop.load(std::memory_order_relaxed)) {
          const uint64_t begin = CycleNow();
          if (absl::Status s = w.Run(w.Pick(mix)); !s.ok()) {
            stop = true;
            return s;
          }
          if (counting.load(std::memory_order_relaxed)) {
            latency.Record(
                static_cast<uint64_t>(CyclesToNanos(CycleNow() - begin)));
            done.store(done.load(std::memory_order_relaxed) + 1,
                       std::memory_order_relaxed);
          }
        }
        return absl::OkStatus();
      },
      [] {});
  timer.join();
  STRAND_RETURN_IF_ERROR(ran);
  MixFigures f;
  f.seconds = window.seconds();
  f.fabric = fabric.Counters() - fabric_before;
  f.cache = SumStats(db) - cache_before;
  f.ops_by_node.assign(db.nodes.size(), 0);
  for (size_t w = 0; w < live.size(); ++w) {
    f.ops_by_node[w / o.threads] += live[w].ops.load();
    f.ops += live[w].ops.load();
    f.latency.Merge(latencies[w]);
  }
  f.cost = window.Breakdown(f.ops);
  return f;
}

// One workload's line of the table and its --json record.
void ReportMix(const YcsbOptions& o, const YcsbMix& mix, const MixFigures& f,
               const LoadFigures& load, uint64_t cache_mb,
               const JsonLine& deployment, RunOutput& output) {
  const double n_ops = std::max<double>(f.ops, 1);
  std::vector<std::string> shares;
  for (uint64_t ops : f.ops_by_node) {
    shares.push_back(absl::StrFormat("%.3f", ops / n_ops));
  }
  const double bytes_per_op =
      (f.fabric.bytes_read + f.fabric.bytes_written) / n_ops;
  output.human() << absl::StrFormat(
      "%-13s %12.0f ops/s  latency p50 %.1f us p99 %.1f us  "
      "round_trips/op=%.2f bytes/op=%.0f cache_hit_ratio=%.3f  "
      "invalidations/op=%.3f evictions/op=%.3f  per-node share=[%s]\n",
      mix.name, f.ops / f.seconds, f.latency.Percentile(0.5) / 1e3,
      f.latency.Percentile(0.99) / 1e3, f.fabric.round_trips / n_ops,
      bytes_per_op, f.cache.hit_ratio(), f.cache.invalidations_sent / n_ops,
      f.cache.evictions / n_ops, absl::StrJoin(shares, ","));
  f.cost->Print(output.human(), "op");
  JsonLine j = deployment;
  j.Add("bench", "ycsb").Add("workload", mix.name);
  o.AddJson(j);
  j.Add("cache_mb", cache_mb)
      .Add("load_s", load.seconds)
      .Add("tree_height", load.tree.height)
      .Add("tree_mb", TreeMiB(o, load))
      .Add("duration_s", f.seconds)
      .Add("ops", f.ops)
      .Add("ops_per_sec", f.ops / f.seconds)
      .Add("round_trips_per_op", f.fabric.round_trips / n_ops)
      .Add("bytes_per_op", bytes_per_op)
      .Add("cache_hit_ratio", f.cache.hit_ratio())
      .Add("invalidations_per_op", f.cache.invalidations_sent / n_ops)
      .Add("evictions_per_op", f.cache.evictions / n_ops)
      .Add("lock_retries_per_op", f.cache.lock_retries / n_ops)
      .AddRaw("node_share", "[" + absl::StrJoin(shares, ",") + "]");
  f.latency.AddTo(j, "", LatencyHistogram::Unit::kMicros);
  f.cost->AddTo(j);
  output.Print(j);
}

int Main() {
  RunOutput output = RunOutput::FromFlags({.per_second_series = true});
  const YcsbOptions options = OptionsFromFlags();
  auto fail = [](const absl::Status& s) {
    std::cerr << "ycsb_bench: " << s.message() << "\n";
    return 1;
  };
  absl::StatusOr<std::unique_ptr<rdma::Fabric>> fabric;
  ProgressLine::RunShowing("opening the fabric (memory nodes)", [&] {
    fabric = rdma::CreateFabric(options.fabric);
  });
  if (!fabric.ok()) return fail(fabric.status());
  Database db;
  if (absl::Status s = OpenDatabase(options, **fabric, db); !s.ok()) {
    return fail(s);
  }
  auto workers = MakeWorkers(options, db);
  if (!workers.ok()) return fail(workers.status());
  auto load = LoadRecords(options, db, *workers);
  if (!load.ok()) return fail(load.status());
  // What the cache layer uses (auto-sized when --cache_mb=0; SEL: none).
  const cc::CcOptions& cache = db.nodes.front().manager->options();
  const uint64_t cache_mb =
      cache.protocol == cc::Protocol::kSelcc ? cache.cache_bytes >> 20 : 0;
  PrintSetup(options, db, cache_mb, *load, output.human());
  // No populating thread beside the runs.
  ProgressLine::RunShowing(
      "memory: committing the fabric's memory before the runs",
      [&] { (*fabric)->WaitUntilPopulated(); });
  JsonLine deployment = output.Record();
  rdma::AddFabricJson(options.fabric, **fabric, deployment);
  for (const YcsbMix& mix : options.Mixes()) {
    auto figures = RunMix(options, mix, **fabric, db, *workers, output);
    if (!figures.ok()) return fail(figures.status());
    ReportMix(options, mix, *figures, *load, cache_mb, deployment, output);
  }
  return 0;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "YCSB workloads over the B-link tree and heap tables.\n"
      "Usage: ycsb_bench [--records=N] [--workloads=read_only,...] "
      "[--distribution=uniform|zipf] [--protocol=selcc|sel] [--json|--csv] "
      "[--progress_json=FILE]");
  return strand::Main();
}
