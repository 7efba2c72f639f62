#include "tpcc/cluster_run.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_format.h"

namespace strand::tpcc {
namespace {

// Everything RunResult and LoadResult hold, in a trivially copyable form.
struct NodeRunRecord {
  static constexpr uint64_t kMagic = 0x4e55524343505454;  // "TTPCCRUN"
  uint64_t magic = kMagic;
  uint64_t size = sizeof(NodeRunRecord);
  uint32_t node = 0;
  int32_t worker_threads = 0;
  LoadResult load;
  double seconds = 0;
  double process_cpu_s = 0;
  uint64_t commits = 0;  // of this node
  std::array<TypeResult, kTxnTypes> by_type;
  rdma::FabricCounters fabric;
  cc::CacheStats cache;
  WalRunStats wal;
  DeferredDeliveryStats deliveries;
  partition::PartitionStats partition;
  LatencyHistogram commit_latency;
  ThreadLedger::Snapshot workers;
  char first_error[512] = {};
};
static_assert(std::is_trivially_copyable_v<NodeRunRecord>);

}  // namespace

std::string EncodeNodeRun(rdma::ComputeNodeId node, const LoadResult& load,
                          const RunResult& run) {
  NodeRunRecord r;
  r.node = node;
  r.worker_threads = run.worker_threads;
  r.load = load;
  r.seconds = run.seconds;
  r.process_cpu_s = run.process_cpu_s;
  r.commits = node < run.commits_by_node.size() ? run.commits_by_node[node] : 0;
  r.by_type = run.by_type;
  r.fabric = run.fabric;
  r.cache = run.cache;
  r.wal = run.wal;
  r.deliveries = run.deliveries;
  r.partition = run.partition;
  r.commit_latency = run.commit_latency;
  r.workers = run.workers;
  const size_t n = std::min(run.first_error.size(), sizeof(r.first_error) - 1);
  std::memcpy(r.first_error, run.first_error.data(), n);
  return std::string(reinterpret_cast<const char*>(&r), sizeof(r));
}

absl::Status MergeNodeRun(std::string_view bytes, LoadResult& load,
                          RunResult& run) {
  NodeRunRecord r;
  if (bytes.size() != sizeof(r)) {
    return absl::DataLossError(absl::StrFormat(
        "a node's published figures are %d bytes, this build's are %d: "
        "every process of a deployment must run the same build",
        bytes.size(), sizeof(r)));
  }
  std::memcpy(&r, bytes.data(), sizeof(r));
  if (r.magic != NodeRunRecord::kMagic || r.size != sizeof(r)) {
    return absl::DataLossError(
        "a node's published figures are not this build's encoding: every "
        "process of a deployment must run the same build");
  }
  load.seconds = std::max(load.seconds, r.load.seconds);
  load.rows += r.load.rows;
  load.transactions += r.load.transactions;
  load.pool_bytes_used = std::max(load.pool_bytes_used, r.load.pool_bytes_used);

  run.seconds = std::max(run.seconds, r.seconds);
  run.process_cpu_s += r.process_cpu_s;
  run.worker_threads += r.worker_threads;
  for (int t = 0; t < kTxnTypes; ++t) run.by_type[t].Merge(r.by_type[t]);
  if (run.commits_by_node.size() <= r.node) {
    run.commits_by_node.resize(r.node + 1, 0);
  }
  run.commits_by_node[r.node] += r.commits;
  run.fabric += r.fabric;
  run.cache += r.cache;
  run.wal.records += r.wal.records;
  run.wal.flushes += r.wal.flushes;
  run.wal.bytes += r.wal.bytes;
  run.deliveries.Merge(r.deliveries);
  run.partition += r.partition;
  run.commit_latency.Merge(r.commit_latency);
  run.workers += r.workers;
  if (run.first_error.empty() && r.first_error[0] != '\0') {
    run.first_error =
        absl::StrFormat("compute node %d: %s", r.node, r.first_error);
  }
  return absl::OkStatus();
}

}  // namespace strand::tpcc
