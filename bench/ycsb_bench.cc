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
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/cost_breakdown.h"
#include "base/cycle_clock.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/progress_line.h"
#include "base/run_output.h"
#include "base/run_progress.h"
#include "cc/gcl_manager.h"
#include "index/blink_tree.h"
#include "index/cpu_path_flags.h"
#include "index/key_codec.h"
#include "rdma/fabric.h"
#include "rdma/fabric_flags.h"
#include "storage/heap_table.h"
#include "storage/schema.h"
#include "storage/tuple_header.h"

DEFINE_uint64(records, 1'000'000, "Records loaded before the runs");
DEFINE_uint32(value_bytes, 8,
              "Bytes of a record's value: 8 keeps it in the index leaf; more "
              "stores it in a heap tuple the index points to");
DEFINE_string(workloads, "read_only,read_mostly,update_heavy",
              "Comma-separated mixes to run, each for --duration_s: "
              "read_only (100% reads), read_mostly (95% reads, 5% updates), "
              "update_heavy (50/50), insert_heavy (50% reads, 50% inserts of "
              "new keys), scan_heavy (95% scans of --scan_length records, 5% "
              "inserts)");
DEFINE_string(distribution, "uniform",
              "Key popularity: uniform or zipf (scrambled, --zipf_theta)");
DEFINE_double(zipf_theta, 0.99, "Skew of --distribution=zipf, in (0, 1)");
DEFINE_uint32(scan_length, 100, "Records per scan in scan_heavy");
DEFINE_int32(threads, 1, "Worker threads per compute node");
DEFINE_double(duration_s, 2, "Seconds each workload runs");
DEFINE_string(protocol, "selcc",
              "Coherence protocol: selcc (cached) or sel (no cache)");
DEFINE_uint32(gcl_size, 1024,
              "Bytes of one GCL (index node, heap page), latch word included");
DEFINE_uint64(cache_mb, 0,
              "SELCC: MiB of GCL copies each compute node may cache; 0 "
              "(default): as large as the pool, at most a quarter of the "
              "memory available split among this process's compute nodes "
              "(the report prints the size used)");
DEFINE_uint64(seed, 1, "Seed of the key generators");

namespace strand {
namespace {

using index::BLinkTree;
using index::BLinkTreeStats;

enum class Op { kRead, kUpdate, kInsert, kScan };

struct Mix {
  std::string name;
  double read, update, insert, scan;  // fractions summing to 1
};

const std::vector<Mix>& Mixes() {
  static const auto* mixes = new std::vector<Mix>{
      {"read_only", 1, 0, 0, 0},      {"read_mostly", .95, .05, 0, 0},
      {"update_heavy", .5, .5, 0, 0}, {"insert_heavy", .5, 0, .5, 0},
      {"scan_heavy", 0, 0, .05, .95},
  };
  return *mixes;
}

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
  Worker(Database& db, int node, uint64_t seed, bool zipf)
      : db_(db),
        node_(db.nodes[node]),
        chooser_(FLAGS_records, zipf, FLAGS_zipf_theta, seed),
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
        return Insert(FLAGS_records + db_.next_insert.fetch_add(1));
      case Op::kScan: {
        std::vector<uint64_t> values;
        values.reserve(FLAGS_scan_length);
        absl::Status s =
            node_.tree->Scan(*ctx_, Key(id), std::nullopt, FLAGS_scan_length,
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

  Op Pick(const Mix& mix) {
    const double u =
        std::uniform_real_distribution<double>(0, 1)(chooser_.rng());
    if (u < mix.read) return Op::kRead;
    if (u < mix.read + mix.update) return Op::kUpdate;
    if (u < mix.read + mix.update + mix.insert) return Op::kInsert;
    return Op::kScan;
  }

 private:
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

int Main() {
  RunOutput output = RunOutput::FromFlags({.per_second_series = true});
  auto fabric_options = rdma::FabricOptionsFromFlags();
  if (!fabric_options.ok()) {
    ExitWithUsageError(std::string(fabric_options.status().message()));
  }
  auto protocol = cc::ParseProtocol(FLAGS_protocol);
  if (!protocol.ok())
    ExitWithUsageError(std::string(protocol.status().message()));
  if (FLAGS_records < 1 || FLAGS_records > (uint64_t{1} << 40)) {
    ExitWithUsageError("--records must be from 1 to 2^40");
  }
  if (FLAGS_value_bytes < 8 || FLAGS_value_bytes > 4096) {
    ExitWithUsageError("--value_bytes must be from 8 to 4096");
  }
  if (FLAGS_distribution != "uniform" && FLAGS_distribution != "zipf") {
    ExitWithUsageError("--distribution must be uniform or zipf");
  }
  if (!(FLAGS_zipf_theta > 0 && FLAGS_zipf_theta < 1)) {
    ExitWithUsageError("--zipf_theta must be in (0, 1)");
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 256) {
    ExitWithUsageError("--threads must be from 1 to 256");
  }
  if (!(FLAGS_duration_s > 0 && FLAGS_duration_s <= 3600)) {
    ExitWithUsageError("--duration_s must be > 0 and <= 3600");
  }
  if (FLAGS_scan_length < 1 || FLAGS_scan_length > 100000) {
    ExitWithUsageError("--scan_length must be from 1 to 100000");
  }
  std::vector<Mix> mixes;
  for (absl::string_view name :
       absl::StrSplit(FLAGS_workloads, ',', absl::SkipEmpty())) {
    bool known = false;
    for (const Mix& m : Mixes()) {
      if (m.name == name) {
        mixes.push_back(m);
        known = true;
      }
    }
    if (!known) {
      ExitWithUsageError(
          absl::StrFormat("--workloads: unknown mix '%s'", name));
    }
  }
  if (mixes.empty()) ExitWithUsageError("--workloads is empty");
  cc::CcOptions cc_options;
  cc_options.protocol = *protocol;
  cc_options.gcl_size = FLAGS_gcl_size;
  cc_options.cache_bytes = FLAGS_cache_mb << 20;
  auto cpu_path = index::CpuPathSwitchesFromFlags();
  if (!cpu_path.ok()) {
    ExitWithUsageError(std::string(cpu_path.status().message()));
  }
  cc_options.prefetch = cpu_path->prefetch;
  cc_options.identity_frames = cpu_path->identity_frames;
  if (absl::Status s = cc_options.Validate(fabric_options->chunk_bytes,
                                           OptionNaming::Flags("CcOptions::"));
      !s.ok()) {
    ExitWithUsageError(std::string(s.message()));
  }

  absl::StatusOr<std::unique_ptr<rdma::Fabric>> fabric;
  ProgressLine::RunShowing("opening the fabric (memory nodes)", [&] {
    fabric = rdma::CreateFabric(*fabric_options);
  });
  if (!fabric.ok()) {
    std::cerr << "ycsb_bench: " << fabric.status().message() << "\n";
    return 1;
  }
  auto fail = [](const absl::Status& s) {
    std::cerr << "ycsb_bench: " << s.message() << "\n";
    return 1;
  };

  // Build the database on the first local node, open it on every node.
  Database db;
  for (rdma::ComputeNodeId id : (*fabric)->local_compute_nodes()) {
    auto manager = cc::GclManager::Create(**fabric, id, cc_options);
    if (!manager.ok()) return fail(manager.status());
    db.nodes.push_back(Node{*std::move(manager), nullptr, nullptr});
  }
  if (FLAGS_value_bytes > 8) {
    auto schema =
        storage::Schema::Create({{"value", storage::ColumnType::kChar,
                                  static_cast<uint16_t>(FLAGS_value_bytes)}});
    if (!schema.ok()) return fail(schema.status());
    db.schema = std::make_unique<storage::Schema>(*std::move(schema));
  }
  {
    Node& first = db.nodes.front();
    auto ctx = first.manager->NewThreadContext();
    if (!ctx.ok()) return fail(ctx.status());
    auto anchor = BLinkTree::Create(*first.manager, **ctx, {8, true});
    if (!anchor.ok()) return fail(anchor.status());
    rdma::GlobalAddress table_root;
    if (db.schema) {
      auto root =
          storage::HeapTable::Create(*first.manager, **ctx, 1, *db.schema);
      if (!root.ok()) return fail(root.status());
      table_root = *root;
    }
    for (Node& n : db.nodes) {
      auto c = n.manager->NewThreadContext();
      if (!c.ok()) return fail(c.status());
      auto tree = BLinkTree::Open(*n.manager, **c, *anchor, cpu_path->tuning);
      if (!tree.ok()) return fail(tree.status());
      n.tree = *std::move(tree);
      if (db.schema) {
        auto table =
            storage::HeapTable::Open(*n.manager, **c, table_root, *db.schema);
        if (!table.ok()) return fail(table.status());
        n.table = *std::move(table);
      }
    }
  }

  const bool zipf = FLAGS_distribution == "zipf";
  std::vector<std::vector<std::unique_ptr<Worker>>> workers(db.nodes.size());
  uint64_t seed = FLAGS_seed;
  for (size_t n = 0; n < db.nodes.size(); ++n) {
    for (int t = 0; t < FLAGS_threads; ++t) {
      workers[n].push_back(std::make_unique<Worker>(db, n, seed++, zipf));
      if (absl::Status s = workers[n].back()->Init(); !s.ok()) return fail(s);
    }
  }
  std::ostream& table_out = output.human();

  // Load.
  const int total_threads = db.nodes.size() * FLAGS_threads;
  absl::Time start = absl::Now();
  std::atomic<uint64_t> inserted{0};
  ProgressLine load_line;
  absl::Status loaded = OnAllThreads(
      workers,
      [&](Worker& w, int n, int t) {
        const int me = n * FLAGS_threads + t;
        // Counted in steps, so that the threads seldom share the counter.
        constexpr uint64_t kStep = 1024;
        uint64_t mine = 0;
        for (uint64_t i = me; i < FLAGS_records; i += total_threads) {
          if (absl::Status s = w.Insert(LoadOrder(i, FLAGS_records)); !s.ok()) {
            return s;
          }
          if (++mine % kStep == 0) inserted.fetch_add(kStep);
        }
        return absl::OkStatus();
      },
      [&] {
        load_line.Update([&] {
          return absl::StrFormat("loading %d records: %d (%.0f%%) %.1fs",
                                 FLAGS_records, inserted.load(),
                                 100.0 * inserted.load() / FLAGS_records,
                                 absl::ToDoubleSeconds(absl::Now() - start));
        });
      });
  load_line.Clear();
  if (!loaded.ok()) return fail(loaded);
  const double load_s = absl::ToDoubleSeconds(absl::Now() - start);
  BLinkTreeStats tree_stats;
  {
    auto ctx = db.nodes.front().manager->NewThreadContext();
    auto stats = db.nodes.front().tree->Verify(**ctx);
    if (!stats.ok()) return fail(stats.status());
    tree_stats = *stats;
  }
  // What the cache layer uses (auto-sized when --cache_mb=0; SEL: none).
  const uint64_t cache_mb =
      *protocol == cc::Protocol::kSelcc
          ? db.nodes.front().manager->options().cache_bytes >> 20
          : 0;
  const double tree_mb = (tree_stats.leaves + tree_stats.inner_nodes) *
                         static_cast<double>(FLAGS_gcl_size) / (1 << 20);
  table_out << absl::StrFormat(
      "ycsb_bench: protocol=%s compute_nodes=%d threads/node=%d rtt_ns=%d "
      "gcl_size=%d cache_mb=%d prefetch=%s optimistic_reads=%s "
      "identity_frames=%s records=%d value_bytes=%d distribution=%s%s\n"
      "load: %.2f s (%.0f inserts/s); tree: height %d, %d leaves, %d inner "
      "nodes, %.1f MiB of GCLs\n",
      FLAGS_protocol, db.nodes.size(), FLAGS_threads, fabric_options->rtt_ns,
      FLAGS_gcl_size, cache_mb, cc::PrefetchScopeName(cpu_path->prefetch),
      cpu_path->tuning.optimistic_reads ? "true" : "false",
      cpu_path->identity_frames ? "true" : "false", FLAGS_records,
      FLAGS_value_bytes, FLAGS_distribution,
      zipf ? absl::StrFormat("(theta=%.2f)", FLAGS_zipf_theta) : "", load_s,
      FLAGS_records / load_s, tree_stats.height, tree_stats.leaves,
      tree_stats.inner_nodes, tree_mb);

  // No populating thread beside the runs.
  ProgressLine::RunShowing(
      "memory: committing the fabric's memory before the runs",
      [&] { (*fabric)->WaitUntilPopulated(); });
  JsonLine deployment = output.Record();
  rdma::AddFabricJson(*fabric_options, **fabric, deployment);
  for (const Mix& mix : mixes) {
    std::atomic<bool> stop{false};
    std::vector<LiveCount> live(db.nodes.size() * FLAGS_threads);
    std::vector<LatencyHistogram> latencies(live.size());
    const rdma::FabricCounters fabric_before = (*fabric)->Counters();
    const cc::CacheStats cache_before = SumStats(db);
    // The window opens once every worker runs: ops before it do not count.
    WorkerWindow window(static_cast<int>(db.nodes.size()) * FLAGS_threads);
    std::atomic<bool> counting{false};
    auto live_ops = [&] {
      uint64_t sum = 0;
      for (const LiveCount& c : live) sum += c.ops.load();
      return sum;
    };
    std::thread timer([&] {
      window.Start();
      counting = true;
      const absl::Time end = absl::Now() + absl::Seconds(FLAGS_duration_s);
      RunProgress progress({.count_key = "ops",
                            .rate_key = "ops_per_sec",
                            .unit = "op",
                            .labels = JsonLine().Add("workload", mix.name),
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
          const int me = n * FLAGS_threads + t;
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
    const double seconds = window.seconds();
    if (!ran.ok()) return fail(ran);
    const rdma::FabricCounters fc = (*fabric)->Counters() - fabric_before;
    const cc::CacheStats cs = SumStats(db) - cache_before;
    uint64_t total = 0;
    std::vector<uint64_t> per_node(db.nodes.size(), 0);
    LatencyHistogram latency;
    for (size_t w = 0; w < live.size(); ++w) {
      per_node[w / FLAGS_threads] += live[w].ops.load();
      total += live[w].ops.load();
      latency.Merge(latencies[w]);
    }
    const double n_ops = std::max<double>(total, 1);
    std::vector<std::string> shares;
    for (uint64_t o : per_node) {
      shares.push_back(absl::StrFormat("%.3f", o / n_ops));
    }
    table_out << absl::StrFormat(
        "%-13s %12.0f ops/s  latency p50 %.1f us p99 %.1f us  "
        "round_trips/op=%.2f bytes/op=%.0f cache_hit_ratio=%.3f  "
        "invalidations/op=%.3f evictions/op=%.3f  per-node share=[%s]\n",
        mix.name, total / seconds, latency.Percentile(0.5) / 1e3,
        latency.Percentile(0.99) / 1e3, fc.round_trips / n_ops,
        (fc.bytes_read + fc.bytes_written) / n_ops, cs.hit_ratio(),
        cs.invalidations_sent / n_ops, cs.evictions / n_ops,
        absl::StrJoin(shares, ","));
    const CostBreakdown cost = window.Breakdown(total);
    cost.Print(table_out, "op");
    JsonLine j = deployment;
    j.Add("bench", "ycsb")
        .Add("workload", mix.name)
        .Add("protocol", FLAGS_protocol)
        .Add("threads", FLAGS_threads)
        .Add("records", FLAGS_records)
        .Add("value_bytes", static_cast<uint64_t>(FLAGS_value_bytes))
        .Add("distribution", FLAGS_distribution)
        .Add("zipf_theta", zipf ? FLAGS_zipf_theta : 0.0)
        .Add("scan_length", static_cast<uint64_t>(FLAGS_scan_length))
        .Add("gcl_size", static_cast<uint64_t>(FLAGS_gcl_size))
        .Add("cache_mb", cache_mb)
        .Add("prefetch", cc::PrefetchScopeName(cpu_path->prefetch))
        .Add("index_leaf_hint", cpu_path->tuning.leaf_hint)
        .Add("optimistic_reads", cpu_path->tuning.optimistic_reads)
        .Add("identity_frames", cpu_path->identity_frames)
        .Add("seed", FLAGS_seed)
        .Add("load_s", load_s)
        .Add("tree_height", tree_stats.height)
        .Add("tree_mb", tree_mb)
        .Add("duration_s", seconds)
        .Add("ops", total)
        .Add("ops_per_sec", total / seconds)
        .Add("round_trips_per_op", fc.round_trips / n_ops)
        .Add("bytes_per_op", (fc.bytes_read + fc.bytes_written) / n_ops)
        .Add("cache_hit_ratio", cs.hit_ratio())
        .Add("invalidations_per_op", cs.invalidations_sent / n_ops)
        .Add("evictions_per_op", cs.evictions / n_ops)
        .Add("lock_retries_per_op", cs.lock_retries / n_ops)
        .AddRaw("node_share", "[" + absl::StrJoin(shares, ",") + "]");
    latency.AddTo(j, "", LatencyHistogram::Unit::kMicros);
    cost.AddTo(j);
    output.Print(j);
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
