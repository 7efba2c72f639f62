#include "rdma/fabric_flags.h"

#include <gflags/gflags.h>

#include "absl/strings/str_format.h"

DEFINE_string(fabric, "loopback",
              "Fabric backend: loopback (memory and compute nodes in this "
              "process) or verbs (rdma-core; needs --cluster and --node_id)");
DEFINE_int32(memory_nodes, 1, "Number of memory nodes (loopback)");
DEFINE_int32(compute_nodes, 1,
             "Number of compute nodes in the deployment, 1 to 58 (loopback: "
             "all in this process)");
DEFINE_uint64(pool_mb, 256, "Size of each memory node's region, in MiB");
DEFINE_uint64(chunk_kb, 1024,
              "Allocation chunk a compute node takes from a memory node at a "
              "time, in KiB (power of two)");
DEFINE_string(populate_memory, "background",
              "Loopback: when to commit (fault in) the memory nodes' regions "
              "and the compute nodes' caches, which an RDMA NIC's "
              "registration pins at start. background: a thread of its own "
              "commits them all, so first-touch page zeroing stays out of "
              "transactions; start: all before the run begins (~1-2 s per "
              "GiB on a VM); touch: only pages used, each zeroed by the "
              "thread that touches it first (least memory)");
DEFINE_int64(rtt_ns, 0,
             "Loopback cost model: nanoseconds a round trip costs the "
             "calling thread (0 = free)");
DEFINE_double(bandwidth_gbps, 0,
              "Loopback cost model: link bandwidth in Gbit/s used to charge "
              "payload bytes (0 = unlimited)");
DEFINE_int64(nic_op_ns, 0,
             "Loopback NIC model: nanoseconds a memory node's NIC spends on "
             "each op; ops queue behind each other (0 = no NIC model)");
DEFINE_double(nic_gbps, 0,
              "Loopback NIC model: bandwidth of a memory node's port in "
              "Gbit/s, shared by every op that reaches it (0 = unlimited)");
DEFINE_string(message_delivery, "inline",
              "Loopback: inline (a message's handler runs on the sender's "
              "thread, charged the modeled delay: no context switch) or "
              "threads (the receiver's handler threads, woken per message: "
              "real concurrency, but on a small machine each message costs "
              "a scheduler wake-up)");
DEFINE_string(cluster, "",
              "Verbs: cluster file listing memory and compute nodes "
              "(see README)");
DEFINE_int32(node_id, -1, "Verbs: this process's node id in --cluster");

namespace strand::rdma {

absl::StatusOr<FabricOptions> FabricOptionsFromFlags() {
  FabricOptions options;
  auto kind = ParseFabricKind(FLAGS_fabric);
  if (!kind.ok()) return kind.status();
  options.kind = *kind;
  options.memory_nodes = FLAGS_memory_nodes;
  options.compute_nodes = FLAGS_compute_nodes;
  options.pool_bytes = FLAGS_pool_mb * FabricOptions::kMiB;
  options.chunk_bytes = FLAGS_chunk_kb * 1024;
  auto populate = ParsePopulateMode(FLAGS_populate_memory);
  if (!populate.ok()) return populate.status();
  options.populate_memory = *populate;
  options.rtt_ns = FLAGS_rtt_ns;
  options.bandwidth_gbps = FLAGS_bandwidth_gbps;
  options.nic_op_ns = FLAGS_nic_op_ns;
  options.nic_gbps = FLAGS_nic_gbps;
  auto delivery = ParseMessageDelivery(FLAGS_message_delivery);
  if (!delivery.ok()) return delivery.status();
  options.message_delivery = *delivery;
  options.cluster_file = FLAGS_cluster;
  options.node_id = FLAGS_node_id;
  // A flag the chosen deployment ignores is a mistake to point out, not to
  // run with: the user meant some other deployment than they get.
  auto given = [](const char* flag) {
    return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
  };
  if (options.kind == FabricKind::kLoopback) {
    for (const char* flag : {"cluster", "node_id"}) {
      if (given(flag)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--%s applies to --fabric=verbs only: add --fabric=verbs to run "
            "as one process of a cluster, or drop --%s",
            flag, flag));
      }
    }
  } else {
    for (const char* flag :
         {"memory_nodes", "compute_nodes", "pool_mb", "chunk_kb",
          "populate_memory", "rtt_ns", "bandwidth_gbps", "nic_op_ns",
          "nic_gbps", "message_delivery"}) {
      if (given(flag)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--%s applies to --fabric=loopback only: a verbs deployment "
            "takes its nodes from --cluster, its pool from the memory "
            "nodes' own flags, and pays the real network's costs; drop --%s",
            flag, flag));
      }
    }
  }
  // Before the units are converted: the bytes must not wrap.
  if (FLAGS_pool_mb > GlobalAddress::kMaxOffset / FabricOptions::kMiB) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--pool_mb=%d is larger than a global address can reach: use at "
        "most %d",
        FLAGS_pool_mb, GlobalAddress::kMaxOffset / FabricOptions::kMiB));
  }
  if (FLAGS_chunk_kb > (uint64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--chunk_kb=%d is not valid: use a power of two from 64 to 1048576",
        FLAGS_chunk_kb));
  }
  if (absl::Status s = options.Validate(OptionNaming::Flags("FabricOptions::"));
      !s.ok()) {
    return s;
  }
  return options;
}

}  // namespace strand::rdma
