// strand_memnode: serves one memory node of a verbs cluster.
//
//   strand_memnode --cluster=cluster.txt --node_id=0 --pool_mb=1024
//
// Maps and registers a --pool_mb region, writes its header, accepts compute
// nodes' queue pairs on the address and port the cluster file gives memory
// node --node_id, and then does no work per operation: compute nodes reach
// the region with one-sided RDMA only. SIGTERM or SIGINT ends it cleanly
// (the region dies with it: a memory node keeps no data across restarts).

#include <gflags/gflags.h>
#include <signal.h>

#include <iostream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "base/option_checks.h"
#include "base/status_macros.h"
#include "glog/logging.h"
#include "rdma/fabric_options.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/memory_node_server.h"

// A memory node takes only these: the fabric's other flags (--rtt_ns,
// --compute_nodes, ...) describe compute processes or the loopback, and
// are unknown here, so a mistaken one exits 2 instead of being ignored.
DEFINE_string(cluster, "",
              "Cluster file listing memory and compute nodes (README, "
              "\"Running on an RDMA cluster\"); required");
DEFINE_int32(node_id, -1,
             "This memory node's id in --cluster (its 'memory <id> ...' "
             "line); required");
DEFINE_uint64(pool_mb, 256, "Size of this memory node's region, in MiB");
DEFINE_uint64(chunk_kb, 1024,
              "Allocation chunk compute nodes take at a time, in KiB (power "
              "of two; the same on every memory node)");

namespace strand::rdma::verbs {
namespace {

constexpr OptionSetting kCluster{"cluster", "cluster"};
constexpr OptionSetting kNodeId{"node_id", "node_id"};
constexpr OptionSetting kPoolMb{"pool_mb", "pool_mb"};

// What strand_memnode is told, checked before any device is opened: its
// line of the cluster file, and the region it serves.
struct MemnodeOptions {
  std::string cluster;
  int node_id = -1;
  FabricOptions fabric;  // kind verbs; pool_bytes, chunk_bytes

  // The node's line of the cluster file; InvalidArgument naming the flag
  // for a missing or malformed file, a node id it does not list, or a
  // region larger than this machine's memory.
  absl::StatusOr<ClusterNode> Validate() const;
};

absl::StatusOr<ClusterNode> MemnodeOptions::Validate() const {
  const OptionNaming naming = OptionNaming::Flags("MemnodeOptions::");
  if (cluster.empty()) {
    return absl::InvalidArgumentError(
        "--cluster=FILE is required (see README, \"Running on an RDMA "
        "cluster\")");
  }
  auto config = ClusterConfig::Load(cluster);
  if (!config.ok()) {
    // Its messages name the file; a missing one, by the flag already.
    const absl::string_view message = config.status().message();
    return absl::InvalidArgumentError(
        absl::StrContains(message, "--cluster")
            ? std::string(message)
            : absl::StrCat(naming.Setting(kCluster, cluster), ": ", message));
  }
  const int count = static_cast<int>(config->memory_nodes.size());
  if (node_id < 0 || node_id >= count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not a memory node of --cluster=%s, which lists memory nodes "
        "0 to %d",
        naming.Setting(kNodeId, node_id), cluster, count - 1));
  }
  STRAND_RETURN_IF_ERROR(
      fabric.Validate(OptionNaming::Flags("FabricOptions::")));
  STRAND_RETURN_IF_ERROR(
      CheckFitsMemory(naming, kPoolMb, fabric.pool_bytes >> 20));
  return config->memory_nodes[node_id];
}

int Main() {
  MemnodeOptions options;
  options.cluster = FLAGS_cluster;
  options.node_id = FLAGS_node_id;
  options.fabric.kind = FabricKind::kVerbs;
  options.fabric.cluster_file = FLAGS_cluster;
  // Checked before the units are converted: the bytes must not wrap.
  ExitIfUsageError(
      CheckFitsMemory(OptionNaming::Flags(""), kPoolMb, FLAGS_pool_mb));
  if (FLAGS_chunk_kb > (uint64_t{1} << 20)) {
    ExitWithUsageError(absl::StrFormat(
        "--chunk_kb=%d is not valid: use a power of two from 64 to 1048576",
        FLAGS_chunk_kb));
  }
  options.fabric.pool_bytes = FLAGS_pool_mb * FabricOptions::kMiB;
  options.fabric.chunk_bytes = FLAGS_chunk_kb * 1024;
  const absl::StatusOr<ClusterNode> node = options.Validate();
  ExitIfUsageError(node.status());
  const ClusterNode& self = *node;

  // Block the stop signals before any thread starts, so that every thread
  // inherits the mask and sigwait() below is the only place they arrive.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto device = Device::ForLocalAddress(self.address);
  if (!device.ok()) {
    std::cerr << "strand_memnode: " << device.status().message() << "\n";
    return 1;
  }
  auto server = MemoryNodeServer::Start(*device, self.address, self.port,
                                        options.fabric.pool_bytes,
                                        options.fabric.chunk_bytes);
  if (!server.ok()) {
    std::cerr << "strand_memnode: " << server.status().message() << "\n";
    return 1;
  }
  // One line on stdout so scripts can wait for readiness.
  std::cout << absl::StrFormat(
                   "strand_memnode: %s serving %d MiB (chunks of %d KiB) on "
                   "device %s",
                   self.ToString(), options.fabric.pool_bytes >> 20,
                   options.fabric.chunk_bytes >> 10, (*device)->name())
            << std::endl;
  int signal = 0;
  sigwait(&stop_signals, &signal);
  LOG(INFO) << "strand_memnode: signal " << signal << ", shutting down";
  server->reset();
  std::cout << "strand_memnode: stopped" << std::endl;
  return 0;
}

}  // namespace
}  // namespace strand::rdma::verbs

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Serves one memory node of a verbs cluster.\n"
      "  strand_memnode --cluster=FILE --node_id=N [--pool_mb=MiB]");
  google::InitGoogleLogging(argv[0]);
  return strand::rdma::verbs::Main();
}
