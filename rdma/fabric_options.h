#ifndef STRAND_RDMA_FABRIC_OPTIONS_H_
#define STRAND_RDMA_FABRIC_OPTIONS_H_

// How to build a Fabric, and the factory that builds one. Binaries fill
// FabricOptions from the shared flags (fabric_flags.h); tests fill it
// directly. Every field has a default that works on a laptop.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rdma/fabric.h"

namespace strand::rdma {

enum class FabricKind { kLoopback, kVerbs };

absl::StatusOr<FabricKind> ParseFabricKind(const std::string& name);
const char* FabricKindName(FabricKind kind);

struct FabricOptions {
  static constexpr int kMaxMemoryNodes = 256;
  static constexpr int kMaxComputeNodes = 64;
  static constexpr uint64_t kMiB = uint64_t{1} << 20;

  FabricKind kind = FabricKind::kLoopback;
  int memory_nodes = 1;
  int compute_nodes = 1;
  uint64_t pool_bytes = 256 * kMiB;  // per memory node (--pool_mb)
  uint64_t chunk_bytes = 1 * kMiB;   // allocation unit of the bump pointer

  // Loopback: fault in (zero-fill) every memory node's region at creation
  // and every region a compute node registers (the SELCC cache arena) at
  // registration, as registering memory with an RDMA NIC pins it (the
  // verbs backend always does). Without it pages are zeroed on first
  // touch, which lands in whatever runs then: ~10% of a TPC-C run's CPU.
  // Costs the regions' memory and time up front (~2 s per GiB on the
  // development VM), so it is off unless asked for (--populate_memory).
  bool populate_memory = false;

  // Loopback cost model: the calling thread spins for rtt_ns plus the
  // payload's transfer time at bandwidth_gbps for every round trip.
  // 0 = free (the default in tests); bandwidth 0 = unlimited.
  int64_t rtt_ns = 0;
  double bandwidth_gbps = 0;

  // Verbs: the cluster file and this process's node id in it.
  std::string cluster_file;
  int node_id = -1;

  // Checks ranges and combinations; the message names the flag to change.
  absl::Status Validate() const;
};

// Builds the fabric `options` describe. Fails with a Status that names the
// offending flag on bad options, and with the backend's error otherwise.
absl::StatusOr<std::unique_ptr<Fabric>> CreateFabric(
    const FabricOptions& options);

}  // namespace strand::rdma

#endif  // STRAND_RDMA_FABRIC_OPTIONS_H_
