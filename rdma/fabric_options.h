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
#include "base/json_line.h"
#include "base/option_naming.h"
#include "rdma/fabric.h"

namespace strand::rdma {

enum class FabricKind { kLoopback, kVerbs };

absl::StatusOr<FabricKind> ParseFabricKind(const std::string& name);
const char* FabricKindName(FabricKind kind);

// When the loopback fabric commits the pages of its memory nodes' regions
// and of the regions compute nodes register (the SELCC cache arena). An RDMA
// NIC's registration pins them at start (the verbs backend always does);
// left to first touch, the kernel zero-fills each page inside whatever
// touches it first: on the development VM ~10 us per 4 KiB page, a quarter
// of a TPC-C run's CPU, which no real deployment pays per transaction.
enum class PopulateMode {
  kOnFirstTouch,  // commit pages as they are touched: costs only what is used
  kInBackground,  // a loopback thread commits them all, lowest address first
  kAtStart,       // commit them all before the fabric (or region) is returned
};

// "touch", "background", "start".
absl::StatusOr<PopulateMode> ParsePopulateMode(const std::string& name);
const char* PopulateModeName(PopulateMode populate);

// How the loopback fabric delivers a message (docs/method.md). A message
// handler must never wait for something only another thread provides
// (fabric.h, MessageHandler), so it can run anywhere:
enum class MessageDelivery {
  // On the sender's thread, inside Send, with the receiver's state and an
  // endpoint of the receiver, charged the modeled delays: no thread
  // hand-off, no context switch, so a message costs what the model says.
  kInline,
  // Into the receiver's inbox, served by its handler threads (a futex
  // wake-up per message): real concurrency between sender and handler, for
  // tests; on a small machine its cost is the scheduler's, not the model's.
  kThreads,
};

// "inline", "threads".
absl::StatusOr<MessageDelivery> ParseMessageDelivery(const std::string& name);
const char* MessageDeliveryName(MessageDelivery delivery);

struct FabricOptions {
  static constexpr int kMaxMemoryNodes = 256;
  // cc/'s latch words keep one reader bit per compute node, 58 of them
  // (cc/selcc/latch_word.h): a larger deployment could run no protocol.
  static constexpr int kMaxComputeNodes = 58;
  static constexpr uint64_t kMiB = uint64_t{1} << 20;

  FabricKind kind = FabricKind::kLoopback;
  int memory_nodes = 1;
  int compute_nodes = 1;
  uint64_t pool_bytes = 256 * kMiB;  // per memory node (--pool_mb)
  uint64_t chunk_bytes = 1 * kMiB;   // allocation unit of the bump pointer

  // Loopback: see PopulateMode. Committing costs the regions' memory and
  // ~1-2 s of CPU per GiB on the development VM, so tests (which build many
  // small fabrics) leave it to first touch; binaries default to the
  // background (--populate_memory).
  PopulateMode populate_memory = PopulateMode::kOnFirstTouch;

  // Loopback cost model (rdma/loopback/cost_model.h): the calling thread
  // spins for rtt_ns plus the payload's transfer time at bandwidth_gbps for
  // every round trip, and rtt_ns / 2 per message. 0 = free (the default in
  // tests); bandwidth 0 = unlimited.
  int64_t rtt_ns = 0;
  double bandwidth_gbps = 0;
  // Loopback NIC model, off at 0: a memory node's NIC serves ops one after
  // another, nic_op_ns each plus the payload at nic_gbps.
  int64_t nic_op_ns = 0;
  double nic_gbps = 0;
  // Loopback: see MessageDelivery.
  MessageDelivery message_delivery = MessageDelivery::kInline;
  // Loopback: arms Fabric::Fence (rdma/loopback/fence_gate.h), which then
  // costs each operation two stores and a load; off, a deployment whose
  // nodes cannot fail pays nothing. Failure injection needs it.
  bool fencing = false;

  // Verbs: the cluster file and this process's node id in it.
  std::string cluster_file;
  int node_id = -1;
  // Verbs: node_id joins a deployment that runs already (it restarts after
  // a failure, and the others were reclaiming it): no start-up barrier.
  bool join_running = false;
  // Verbs without a cluster file: the whole deployment in this process
  // (memory nodes served here, every compute node hosted) on this address
  // of an RDMA device, as the verbs test runs use it
  // (tests/testing/test_fabric.h).
  std::string in_process_address;

  // Checks ranges and combinations. The message names the setting to
  // change as `naming` says (base/option_naming.h): by default as a field,
  // "FabricOptions::compute_nodes"; binaries pass OptionNaming::Flags so
  // their users read "--compute_nodes".
  absl::Status Validate() const;
  absl::Status Validate(const OptionNaming& naming) const;
};

// Adds the deployment a binary ran on to its --json record, under the flags'
// names (fabric_flags.h): the options as given, and what `fabric` (built
// from them) serves, which over verbs comes from the cluster file and the
// memory nodes rather than the flags: compute_nodes and memory_nodes in the
// deployment, pool_mb per memory node, chunk_kb.
void AddFabricJson(const FabricOptions& options, const Fabric& fabric,
                   JsonLine& json);

// Builds the fabric `options` describe. Fails with a Status that names the
// offending field on bad options, and with the backend's error otherwise.
absl::StatusOr<std::unique_ptr<Fabric>> CreateFabric(
    const FabricOptions& options);

}  // namespace strand::rdma

#endif  // STRAND_RDMA_FABRIC_OPTIONS_H_
