// fabric_bench: latency and throughput of each one-sided operation and batch
// on the configured fabric, per thread count. With --rtt_ns it also checks
// that the loopback cost model charges what it promises.
//
//   fabric_bench                       # free loopback: CPU cost of each op
//   fabric_bench --rtt_ns=2000         # modelled 2 us round trips
//   fabric_bench --json | jq .         # one JSON object per run

#include <gflags/gflags.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/option_checks.h"
#include "base/run_output.h"
#include "base/status_macros.h"
#include "rdma/block_allocator.h"
#include "rdma/fabric.h"
#include "rdma/fabric_flags.h"

namespace strand {

// What fabric_bench is told: one field per flag, checked together by
// Validate before the fabric opens.
struct FabricBenchOptions {
  std::string threads = "1,2";
  std::string ops =
      "read,write,cas,faa,cas+read,write+faa,read_batch,peer_write,message";
  std::string batch_sizes = "4,16";  // read_batch only
  uint32_t payload_bytes = 64;
  double duration_s = 0.5;  // per run
  rdma::FabricOptions fabric;
  std::set<std::string> given;

  absl::Status Validate(const OptionNaming& naming) const;
  // The lists, parsed (Validate said they parse).
  std::vector<int> thread_counts() const;
  std::vector<std::string> op_names() const;
  std::vector<int> batch_lengths() const;
};

}  // namespace strand

namespace {
// Every flag's default is the options struct's.
const strand::FabricBenchOptions kDefaults;
}  // namespace

DEFINE_string(threads, kDefaults.threads.c_str(),
              "Comma-separated thread counts to run each operation with "
              "(threads of compute node 0, one endpoint each)");
DEFINE_string(ops, kDefaults.ops.c_str(),
              "Comma-separated operations: read, write, cas, faa, cas+read "
              "(SELCC miss), write+faa (SEL release), read_batch (see "
              "--batch_sizes), peer_write (into compute node 1's memory, or "
              "node 0's if there is one compute node), message (a request "
              "to compute node 1, or 0, whose handler replies: one exchange "
              "as SELCC's invalidations make it)");
DEFINE_string(batch_sizes, kDefaults.batch_sizes.c_str(),
              "Comma-separated batch lengths for read_batch (only with it)");
DEFINE_uint32(payload_bytes, kDefaults.payload_bytes,
              "Bytes moved by each READ and WRITE");
DEFINE_double(duration_s, kDefaults.duration_s, "Seconds each run lasts");

namespace strand {
namespace {

using rdma::Batch;

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

using rdma::Endpoint;
using rdma::GlobalAddress;

struct RunResult {
  std::string op;
  int threads = 0;
  int batch = 1;
  uint64_t calls = 0;
  double seconds = 0;
  rdma::FabricCounters counters;
  LatencyHistogram latency;  // of each call

  double ops_per_sec() const { return calls / seconds; }
  // Latency of one call as a thread sees it.
  double ns_per_op() const { return seconds * 1e9 * threads / calls; }
};

// Message exchanges: a request names the worker's reply slot; the peer's
// handler answers, and the sender's handler bumps the slot.
constexpr uint16_t kPing = 1, kPong = 2;
constexpr int kMaxWorkers = 1024;
std::array<std::atomic<uint64_t>, kMaxWorkers> replies_by_worker;

void ServeMessages(const rdma::Message& m, Endpoint& endpoint) {
  const auto slot = m.Load<uint32_t>();
  if (m.type == kPing) {
    rdma::Message pong;
    pong.type = kPong;
    pong.Store(slot);
    if (absl::Status s = endpoint.Send(m.source, pong); !s.ok()) {
      std::cerr << "fabric_bench: reply: " << s.message() << "\n";
    }
  } else if (m.type == kPong && slot < kMaxWorkers) {
    replies_by_worker[slot].fetch_add(1, std::memory_order_release);
  }
}

// Everything one worker needs: its endpoint, its own remote block (so
// threads measure the fabric, not contention) and local buffers.
struct Worker {
  std::unique_ptr<Endpoint> endpoint;
  GlobalAddress block;
  rdma::PeerAddress peer_slot;
  rdma::ComputeNodeId peer = 0;
  uint32_t index = 0;  // reply slot
  uint64_t exchanges = 0;
  std::vector<uint8_t> buffer;
};

absl::Status Exchange(Worker& w) {
  rdma::Message ping;
  ping.type = kPing;
  ping.Store(w.index);
  if (absl::Status s = w.endpoint->Send(w.peer, ping); !s.ok()) return s;
  ++w.exchanges;
  const std::atomic<uint64_t>& replies = replies_by_worker[w.index];
  for (int spins = 0; replies.load(std::memory_order_acquire) < w.exchanges;
       ++spins) {
    if (spins < 1000) {
      __builtin_ia32_pause();
    } else {
      std::this_thread::yield();
    }
  }
  return absl::OkStatus();
}

absl::Status RunOnce(const std::string& op, int batch_length, uint32_t n,
                     Worker& w) {
  uint64_t old = 0;
  Batch b;
  if (op == "read") {
    b.Read(w.block + 8, w.buffer.data(), n);
  } else if (op == "write") {
    b.Write(w.block + 8, w.buffer.data(), n);
  } else if (op == "cas") {
    b.CompareAndSwap(w.block, 0, 0, &old);
  } else if (op == "faa") {
    b.FetchAndAdd(w.block, 1, &old);
  } else if (op == "cas+read") {
    b.CompareAndSwap(w.block, 0, 0, &old).Read(w.block + 8, w.buffer.data(), n);
  } else if (op == "write+faa") {
    b.Write(w.block + 8, w.buffer.data(), n).FetchAndAdd(w.block, 1, &old);
  } else if (op == "read_batch") {
    for (int i = 0; i < batch_length; ++i) {
      b.Read(w.block + 8 + i * n, w.buffer.data() + i * n, n);
    }
  } else if (op == "peer_write") {
    return w.endpoint->WriteToPeer(w.peer_slot, w.buffer.data(), n);
  } else if (op == "message") {
    return Exchange(w);
  }
  return w.endpoint->Execute(b);
}

int BatchLength(const std::string& op, int batch_size) {
  if (op == "read_batch") return batch_size;
  if (op == "cas+read" || op == "write+faa") return 2;
  return 1;
}

absl::StatusOr<RunResult> Run(const FabricBenchOptions& o, rdma::Fabric& fabric,
                              const std::string& op, int threads,
                              int batch_size) {
  rdma::ComputeNode* node = *fabric.compute_node(0);
  rdma::ComputeNode* peer =
      *fabric.compute_node(fabric.compute_node_count() > 1 ? 1 : 0);
  const uint64_t block_bytes =
      8 + uint64_t{o.payload_bytes} * std::max(batch_size, 1);
  auto allocator =
      rdma::BlockAllocator::Create(fabric, 0, (block_bytes + 7) / 8 * 8);
  if (!allocator.ok()) return allocator.status();

  std::vector<Worker> workers(threads);
  static std::vector<std::vector<uint8_t>> peer_buffers;  // outlive fabric use
  for (Worker& w : workers) {
    w.index = static_cast<uint32_t>(&w - workers.data());
    w.peer = peer->id();
    w.exchanges = replies_by_worker[w.index].load();
    auto ep = node->NewEndpoint();
    if (!ep.ok()) return ep.status();
    w.endpoint = *std::move(ep);
    auto block = (*allocator)->Allocate(*w.endpoint);
    if (!block.ok()) return block.status();
    w.block = *block;
    w.buffer.assign(block_bytes, 0xab);
    if (op == "peer_write") {
      peer_buffers.emplace_back(o.payload_bytes, 0);
      auto region = peer->RegisterLocalMemory(peer_buffers.back().data(),
                                              peer_buffers.back().size());
      if (!region.ok()) return region.status();
      w.peer_slot = region->At(0);
    }
  }

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> total_calls{0};
  std::atomic<bool> failed{false};
  const rdma::FabricCounters before = fabric.Counters();
  const absl::Time start = absl::Now();
  std::vector<std::thread> pool;
  std::vector<LatencyHistogram> latencies(threads);
  for (Worker& w : workers) {
    pool.emplace_back([&, &w = w] {
      LatencyHistogram& latency = latencies[w.index];
      uint64_t calls = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 16; ++i) {
          const int64_t begin = SteadyNanos();
          if (!RunOnce(op, batch_size, o.payload_bytes, w).ok()) {
            failed = true;
            stop = true;
            break;
          }
          latency.Record(SteadyNanos() - begin);
          ++calls;
        }
      }
      total_calls += calls;
    });
  }
  absl::SleepFor(absl::Seconds(o.duration_s));
  stop = true;
  for (auto& t : pool) t.join();
  RunResult r;
  for (const LatencyHistogram& h : latencies) r.latency.Merge(h);
  r.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (failed) {
    return absl::InternalError(absl::StrFormat("%s failed during the run", op));
  }
  r.op = op;
  r.threads = threads;
  r.batch = BatchLength(op, batch_size);
  r.calls = total_calls;
  r.counters = fabric.Counters() - before;
  return r;
}

void Report(const FabricBenchOptions& o, const RunResult& r,
            const JsonLine& deployment, RunOutput& output) {
  const double calls = static_cast<double>(r.calls);
  const std::string line = absl::StrFormat(
      "%-11s threads=%-3d batch=%-3d %12.0f ops/s %10.1f ns/op (p50 %.0f, "
      "p99 %.0f)  round_trips/op=%.2f remote_ops/op=%.2f messages/op=%.2f "
      "bytes/op=%.0f",
      r.op, r.threads, r.batch, r.ops_per_sec(), r.ns_per_op(),
      static_cast<double>(r.latency.Percentile(0.5)),
      static_cast<double>(r.latency.Percentile(0.99)),
      r.counters.round_trips / calls, r.counters.ops() / calls,
      r.counters.messages_sent / calls,
      (r.counters.bytes_read + r.counters.bytes_written) / calls);
  output.human() << line << std::endl;
  JsonLine j = deployment;
  j.Add("bench", "fabric")
      .Add("op", r.op)
      .Add("threads", r.threads)
      .Add("batch", r.batch)
      .Add("payload_bytes", static_cast<uint64_t>(o.payload_bytes))
      .Add("duration_s", r.seconds)
      .Add("ops", r.calls)
      .Add("ops_per_sec", r.ops_per_sec())
      .Add("ns_per_op", r.ns_per_op())
      .Add("messages_per_op", r.counters.messages_sent / calls)
      .Add("round_trips_per_op", r.counters.round_trips / calls)
      .Add("remote_ops_per_op", r.counters.ops() / calls)
      .Add("bytes_per_op",
           (r.counters.bytes_read + r.counters.bytes_written) / calls);
  r.latency.AddTo(j, "", LatencyHistogram::Unit::kNanos);
  output.Print(j);
}

constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kOps{"ops", "ops"};
constexpr OptionSetting kBatchSizes{"batch_sizes", "batch_sizes"};
constexpr OptionSetting kPayloadBytes{"payload_bytes", "payload_bytes"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr absl::string_view kOpNames[] = {
    "read",      "write",      "cas",        "faa",    "cas+read",
    "write+faa", "read_batch", "peer_write", "message"};

}  // namespace

absl::Status FabricBenchOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(
      ParseCountList(naming, kThreads, threads, 1, kMaxWorkers).status());
  STRAND_RETURN_IF_ERROR(ParseChoiceList(naming, kOps, ops, kOpNames).status());
  const std::vector<std::string> names = op_names();
  const bool batches =
      std::find(names.begin(), names.end(), "read_batch") != names.end();
  STRAND_RETURN_IF_ERROR(CheckOnlyWith(naming, kBatchSizes,
                                       given.contains("batch_sizes"), batches,
                                       "--ops with read_batch"));
  STRAND_RETURN_IF_ERROR(
      ParseCountList(naming, kBatchSizes, batch_sizes, 1, 1024).status());
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint32_t>(naming, kPayloadBytes, payload_bytes, 8, 1 << 20));
  // A worker's block (a word, then a payload per batched read) comes from
  // one chunk of the pool.
  int longest = 1;
  for (int b : batches ? batch_lengths() : std::vector<int>{1}) {
    longest = std::max(longest, b);
  }
  if (8 + uint64_t{payload_bytes} * longest > fabric.chunk_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s x %s batched reads do not fit a chunk of --chunk_kb=%d: lower "
        "them or raise --chunk_kb",
        naming.Setting(kPayloadBytes, payload_bytes),
        naming.Setting(kBatchSizes, batch_sizes), fabric.chunk_bytes >> 10));
  }
  return CheckInRange(naming, kDuration, duration_s, 1e-3, 3600.0,
                      "seconds per run");
}

std::vector<int> FabricBenchOptions::thread_counts() const {
  return ParseCountList(OptionNaming::Fields(""), kThreads, threads, 1,
                        kMaxWorkers)
      .value_or(std::vector<int>{});
}

std::vector<std::string> FabricBenchOptions::op_names() const {
  return ParseChoiceList(OptionNaming::Fields(""), kOps, ops, kOpNames)
      .value_or(std::vector<std::string>{});
}

std::vector<int> FabricBenchOptions::batch_lengths() const {
  return ParseCountList(OptionNaming::Fields(""), kBatchSizes, batch_sizes, 1,
                        1024)
      .value_or(std::vector<int>{});
}

namespace {

// The options from the flags, validated: exits with status 2 naming the
// flag on any misuse, before the fabric opens.
FabricBenchOptions OptionsFromFlags() {
  FabricBenchOptions o;
  o.threads = FLAGS_threads;
  o.ops = FLAGS_ops;
  o.batch_sizes = FLAGS_batch_sizes;
  o.payload_bytes = FLAGS_payload_bytes;
  o.duration_s = FLAGS_duration_s;
  o.fabric = ValueOrExitIfUsageError(rdma::FabricOptionsFromFlags());
  o.given = FlagsGiven();
  ExitIfUsageError(o.Validate(OptionNaming::Flags("FabricBenchOptions::")));
  return o;
}

// The cost model must charge what it promises: a round trip never costs
// less than modelled (that would be a bug), and not much more (noise). The
// median call of a one-thread read is what is compared: on a loaded
// machine a few calls wait for a core, which moves the mean, not the
// median. Returns whether the check passed (true when it does not apply).
bool CheckRoundTrip(const FabricBenchOptions& o, const LatencyHistogram* read,
                    std::ostream& out) {
  if (o.fabric.kind != rdma::FabricKind::kLoopback || o.fabric.rtt_ns <= 0) {
    return true;
  }
  if (read == nullptr) {
    out << "round-trip check: skipped (it times --ops=read on one thread; "
           "--ops or --threads have none)\n";
    return true;
  }
  const double modelled =
      o.fabric.rtt_ns + (o.fabric.bandwidth_gbps > 0
                             ? o.payload_bytes * 8.0 / o.fabric.bandwidth_gbps
                             : 0);
  const double median = static_cast<double>(read->Percentile(0.5));
  const bool ok = median >= modelled * 0.99 && median <= modelled * 1.25 + 500;
  out << absl::StrFormat(
      "round-trip check: modelled %.0f ns, measured p50 %.0f ns per single-"
      "thread read (%.2fx; mean %.0f ns): %s\n",
      modelled, median, median / modelled, read->mean_nanos(),
      ok ? "ok" : "FAILED");
  return ok;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const FabricBenchOptions o = OptionsFromFlags();
  auto fail = [](const absl::Status& s) {
    std::cerr << "fabric_bench: " << s.message() << "\n";
    return 1;
  };
  auto fabric = rdma::CreateFabric(o.fabric);
  if (!fabric.ok()) return fail(fabric.status());
  (*fabric)->WaitUntilPopulated();  // no populating thread beside the runs
  const std::vector<std::string> ops = o.op_names();
  if (std::find(ops.begin(), ops.end(), "message") != ops.end()) {
    // One handler thread per node: with inline delivery they stay idle.
    for (rdma::ComputeNodeId id : (*fabric)->local_compute_nodes()) {
      auto node = (*fabric)->compute_node(id);
      if (absl::Status s = (*node)->StartHandlers(ServeMessages, 1); !s.ok()) {
        return fail(s);
      }
    }
  }
  JsonLine deployment = output.Record();
  rdma::AddFabricJson(o.fabric, **fabric, deployment);
  output.human() << absl::StrFormat(
      "fabric_bench: fabric=%s rtt_ns=%d bandwidth_gbps=%g "
      "message_delivery=%s payload_bytes=%d duration_s=%g per run\n",
      rdma::FabricKindName(o.fabric.kind), o.fabric.rtt_ns,
      o.fabric.bandwidth_gbps,
      rdma::MessageDeliveryName(o.fabric.message_delivery), o.payload_bytes,
      o.duration_s);
  std::optional<LatencyHistogram> single_read;
  for (int threads : o.thread_counts()) {
    for (const std::string& op : ops) {
      const std::vector<int> sizes =
          op == "read_batch" ? o.batch_lengths() : std::vector<int>{1};
      for (int size : sizes) {
        auto result = Run(o, **fabric, op, threads, size);
        if (!result.ok()) return fail(result.status());
        Report(o, *result, deployment, output);
        if (op == "read" && threads == 1) single_read = result->latency;
      }
    }
  }
  return CheckRoundTrip(o, single_read ? &*single_read : nullptr,
                        output.human())
             ? 0
             : 1;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Measures each one-sided fabric operation and batch.\n"
      "Usage: fabric_bench [--threads=1,2] [--ops=...] [--rtt_ns=N] "
      "[--json|--csv]");
  return strand::Main();
}
