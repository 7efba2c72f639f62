#include "rdma/fabric_options.h"

#include "absl/strings/str_format.h"
#include "base/option_checks.h"
#include "rdma/loopback/loopback_fabric.h"
#include "rdma/memory_node_layout.h"
#include "rdma/verbs/verbs_fabric.h"

namespace strand::rdma {
namespace {

bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Every setting Validate checks, with its flag (fabric_flags.cc).
constexpr OptionSetting kKind{"kind", "fabric"};
constexpr OptionSetting kMemoryNodes{"memory_nodes", "memory_nodes"};
constexpr OptionSetting kComputeNodes{"compute_nodes", "compute_nodes"};
constexpr OptionSetting kPoolBytes{"pool_bytes", "pool_mb",
                                   FabricOptions::kMiB};
constexpr OptionSetting kChunkBytes{"chunk_bytes", "chunk_kb", 1024};
constexpr OptionSetting kRttNs{"rtt_ns", "rtt_ns"};
constexpr OptionSetting kBandwidthGbps{"bandwidth_gbps", "bandwidth_gbps"};
constexpr OptionSetting kNicOpNs{"nic_op_ns", "nic_op_ns"};
constexpr OptionSetting kNicGbps{"nic_gbps", "nic_gbps"};
constexpr OptionSetting kClusterFile{"cluster_file", "cluster"};

}  // namespace

void AddFabricJson(const FabricOptions& options, const Fabric& fabric,
                   JsonLine& json) {
  json.Add("fabric", FabricKindName(options.kind))
      .Add("compute_nodes", fabric.compute_node_count())
      .Add("memory_nodes", fabric.memory_node_count())
      .Add("pool_mb", fabric.memory_node_bytes() / FabricOptions::kMiB)
      .Add("chunk_kb", fabric.chunk_bytes() / 1024)
      .Add("populate_memory", PopulateModeName(options.populate_memory))
      .Add("rtt_ns", options.rtt_ns)
      .Add("bandwidth_gbps", options.bandwidth_gbps)
      .Add("nic_op_ns", options.nic_op_ns)
      .Add("nic_gbps", options.nic_gbps)
      .Add("message_delivery", MessageDeliveryName(options.message_delivery))
      .Add("cluster", options.cluster_file)
      .Add("node_id", options.node_id);
}

absl::StatusOr<FabricKind> ParseFabricKind(const std::string& name) {
  if (name == "loopback") return FabricKind::kLoopback;
  if (name == "verbs") return FabricKind::kVerbs;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--fabric=%s is not a fabric: use loopback or verbs", name));
}

absl::StatusOr<PopulateMode> ParsePopulateMode(const std::string& name) {
  if (name == "touch") return PopulateMode::kOnFirstTouch;
  if (name == "background") return PopulateMode::kInBackground;
  if (name == "start") return PopulateMode::kAtStart;
  return absl::InvalidArgumentError(
      absl::StrFormat("--populate_memory=%s is not a choice: use touch, "
                      "background or start",
                      name));
}

const char* PopulateModeName(PopulateMode populate) {
  switch (populate) {
    case PopulateMode::kOnFirstTouch:
      return "touch";
    case PopulateMode::kInBackground:
      return "background";
    case PopulateMode::kAtStart:
      return "start";
  }
  return "?";
}

absl::StatusOr<MessageDelivery> ParseMessageDelivery(const std::string& name) {
  if (name == "inline") return MessageDelivery::kInline;
  if (name == "threads") return MessageDelivery::kThreads;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--message_delivery=%s is not a choice: use inline or threads", name));
}

const char* MessageDeliveryName(MessageDelivery delivery) {
  return delivery == MessageDelivery::kInline ? "inline" : "threads";
}

const char* FabricKindName(FabricKind kind) {
  return kind == FabricKind::kLoopback ? "loopback" : "verbs";
}

absl::Status FabricOptions::Validate() const {
  return Validate(OptionNaming::Fields("FabricOptions::"));
}

absl::Status FabricOptions::Validate(const OptionNaming& naming) const {
  if (memory_nodes < 1 || memory_nodes > kMaxMemoryNodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is out of range: use 1 to %d",
        naming.Setting(kMemoryNodes, memory_nodes), kMaxMemoryNodes));
  }
  if (compute_nodes < 1 || compute_nodes > kMaxComputeNodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is out of range: use 1 to %d",
        naming.Setting(kComputeNodes, compute_nodes), kMaxComputeNodes));
  }
  constexpr uint64_t kMinChunkBytes = 64 * 1024;
  constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 30;
  if (!IsPowerOfTwo(chunk_bytes) || chunk_bytes < kMinChunkBytes ||
      chunk_bytes > kMaxChunkBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not valid: use a power of two from %s to %s",
                        naming.Setting(kChunkBytes, chunk_bytes),
                        naming.Amount(kChunkBytes, kMinChunkBytes),
                        naming.Amount(kChunkBytes, kMaxChunkBytes)));
  }
  if (pool_bytes < kFirstChunkOffset + chunk_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is too small: a memory node needs at least %d KiB (its header "
        "plus one chunk of %s)",
        naming.Setting(kPoolBytes, pool_bytes),
        (kFirstChunkOffset + chunk_bytes) / 1024,
        naming.Setting(kChunkBytes, chunk_bytes)));
  }
  if (pool_bytes > GlobalAddress::kMaxOffset) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s exceeds the %d MiB a global address can reach",
                        naming.Setting(kPoolBytes, pool_bytes),
                        GlobalAddress::kMaxOffset / kMiB));
  }
  if (kind == FabricKind::kLoopback) {
    const uint64_t total = pool_bytes * static_cast<uint64_t>(memory_nodes);
    if (total / static_cast<uint64_t>(memory_nodes) != pool_bytes ||
        total > MachineMemoryBytes()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s x %s does not fit in this machine's %d MiB of memory: lower %s",
          naming.Setting(kPoolBytes, pool_bytes),
          naming.Setting(kMemoryNodes, memory_nodes),
          MachineMemoryBytes() / kMiB, naming.Name(kPoolBytes)));
    }
  }
  if (rtt_ns < 0 || rtt_ns > 1'000'000'000) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is out of range: use 0 (free) to 1000000000",
                        naming.Setting(kRttNs, rtt_ns)));
  }
  if (!(bandwidth_gbps >= 0) || bandwidth_gbps > 1e6) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is out of range: use 0 (unlimited) or a positive rate in Gbit/s",
        naming.Setting(kBandwidthGbps, bandwidth_gbps)));
  }
  if (nic_op_ns < 0 || nic_op_ns > 1'000'000'000) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is out of range: use 0 (no NIC model) to 1000000000",
        naming.Setting(kNicOpNs, nic_op_ns)));
  }
  if (!(nic_gbps >= 0) || nic_gbps > 1e6) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is out of range: use 0 (no NIC model) or a positive rate in "
        "Gbit/s",
        naming.Setting(kNicGbps, nic_gbps)));
  }
  if (kind == FabricKind::kVerbs && cluster_file.empty() &&
      in_process_address.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s needs %s, the cluster file (see README, \"Running on an RDMA "
        "cluster\")",
        naming.Setting(kKind, FabricKindName(kind)),
        naming.Name(kClusterFile)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Fabric>> CreateFabric(
    const FabricOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  switch (options.kind) {
    case FabricKind::kLoopback:
      return loopback::LoopbackFabric::Create(options);
    case FabricKind::kVerbs:
      if (options.cluster_file.empty()) {
        return verbs::VerbsFabric::CreateInProcess(options,
                                                   options.in_process_address);
      }
      return verbs::VerbsFabric::Create(options);
  }
  return absl::InternalError("unknown fabric kind");
}

}  // namespace strand::rdma
