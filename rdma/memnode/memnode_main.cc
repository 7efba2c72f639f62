// strand_memnode: serves one memory node of a verbs cluster.
//
//   strand_memnode --cluster=cluster.txt --node_id=0 --pool_mb=1024
//
// Maps and registers a --pool_mb region, writes its header, accepts compute
// nodes' queue pairs on the address and port the cluster file gives memory
// node --node_id, and then does no work per operation: compute nodes reach
// the region with one-sided RDMA only. SIGTERM or SIGINT ends it cleanly
// (the region dies with it: a memory node keeps no data across restarts).

#include <signal.h>

#include <iostream>

#include "absl/strings/str_format.h"
#include "base/command_line.h"
#include "glog/logging.h"
#include "rdma/fabric_flags.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"
#include "rdma/verbs/memory_node_server.h"

namespace strand::rdma::verbs {
namespace {

int Main() {
  auto options = FabricOptionsFromFlags(FlagsUser::kMemoryNode);
  if (!options.ok())
    ExitWithUsageError(std::string(options.status().message()));
  if (options->cluster_file.empty()) {
    ExitWithUsageError(
        "--cluster=FILE is required (see README, \"Running "
        "on an RDMA cluster\")");
  }
  auto config = ClusterConfig::Load(options->cluster_file);
  if (!config.ok()) {
    std::cerr << "strand_memnode: " << config.status().message() << "\n";
    return 1;
  }
  const int count = static_cast<int>(config->memory_nodes.size());
  if (options->node_id < 0 || options->node_id >= count) {
    ExitWithUsageError(absl::StrFormat(
        "--node_id=%d is not a memory node of --cluster=%s, which lists "
        "memory nodes 0 to %d",
        options->node_id, options->cluster_file, count - 1));
  }
  const ClusterNode& self = config->memory_nodes[options->node_id];

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
  auto server =
      MemoryNodeServer::Start(*device, self.address, self.port,
                              options->pool_bytes, options->chunk_bytes);
  if (!server.ok()) {
    std::cerr << "strand_memnode: " << server.status().message() << "\n";
    return 1;
  }
  // One line on stdout so scripts can wait for readiness.
  std::cout << absl::StrFormat(
                   "strand_memnode: %s serving %d MiB (chunks of %d KiB) on "
                   "device %s",
                   self.ToString(), options->pool_bytes >> 20,
                   options->chunk_bytes >> 10, (*device)->name())
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
