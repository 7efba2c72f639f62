#include "engine/engine_options.h"

#include "absl/strings/str_format.h"
#include "cc/root_words.h"

namespace strand::engine {
namespace {

// The settings EngineOptions::Validate checks itself (the fabric's and the
// cache's check theirs), with their flag where a binary has one.
constexpr OptionSetting kMaxRetries{"retry.max_retries", ""};
constexpr OptionSetting kInitialBackoff{"retry.initial_backoff", ""};
constexpr OptionSetting kMaxBackoff{"retry.max_backoff", ""};
constexpr OptionSetting kWalDir{"wal.dir", "wal_dir"};
constexpr OptionSetting kWatermarkInterval{"wal.watermark_interval", ""};
constexpr OptionSetting kAckTimeout{"wal.ack_timeout", ""};
constexpr OptionSetting kAlgorithm{"algorithm", "cc"};
constexpr OptionSetting kCheckpointInterval{"checkpoint_interval",
                                            "checkpoint_interval_s"};
constexpr OptionSetting kCheckpointRate{"checkpoint_read_mb_per_s",
                                        "checkpoint_read_mb_per_s"};
constexpr OptionSetting kCheckpointsKept{"checkpoints_kept", ""};
constexpr OptionSetting kRecoveryThreads{"recovery_threads", ""};
constexpr OptionSetting kRecoveryBatch{"recovery_batch_bytes", ""};
constexpr OptionSetting kFailover{"failover.enabled", "failover"};
constexpr OptionSetting kNodeLease{"failover.node_lease", "node_lease_ms"};
constexpr OptionSetting kRedoRing{"failover.redo_ring_bytes", "redo_ring_mb",
                                  uint64_t{1} << 20};
constexpr OptionSetting kProtocol{"cc.protocol", "protocol"};
constexpr OptionSetting kEarlyLockRelease{"wal.early_lock_release",
                                          "wal_pipeline"};
constexpr OptionSetting kFabricKind{"fabric.kind", "fabric"};
constexpr OptionSetting kSlotsPerNode{"partitioned.slots_per_node", ""};

}  // namespace

absl::StatusOr<EngineMode> ParseEngineMode(const std::string& name) {
  if (name == "shared") return EngineMode::kShared;
  if (name == "partitioned") return EngineMode::kPartitioned;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--mode=%s is not a mode: use shared or partitioned", name));
}

const char* EngineModeName(EngineMode mode) {
  return mode == EngineMode::kShared ? "shared" : "partitioned";
}

absl::Status EngineOptions::Validate() const {
  return Validate(OptionNaming::Fields("EngineOptions::"));
}

absl::Status EngineOptions::Validate(const OptionNaming& naming) const {
  if (absl::Status s = fabric.Validate(naming.Member("fabric")); !s.ok()) {
    return s;
  }
  if (absl::Status s = cc.Validate(fabric.chunk_bytes, naming.Member("cc"));
      !s.ok()) {
    return s;
  }
  if (mode == EngineMode::kPartitioned) {
    if (algorithm != txn::CcAlgorithm::kTwoPhaseLocking) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "partitioned mode runs 2PL only (%s): its participants hold their "
          "latches until the decision",
          naming.Name(kAlgorithm)));
    }
    if (absl::Status s = partitioned.Validate(fabric.compute_nodes,
                                              naming.Member("partitioned"));
        !s.ok()) {
      return s;
    }
  }
  if (retry.max_retries < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be >= 0", naming.Setting(kMaxRetries, retry.max_retries)));
  }
  if (retry.initial_backoff < absl::ZeroDuration() ||
      retry.max_backoff < retry.initial_backoff) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=%s and %s=%s: need 0 <= initial_backoff <= max_backoff",
        naming.Name(kInitialBackoff),
        absl::FormatDuration(retry.initial_backoff), naming.Name(kMaxBackoff),
        absl::FormatDuration(retry.max_backoff)));
  }
  if (checkpoint_interval < absl::ZeroDuration() ||
      (checkpoint_interval > absl::ZeroDuration() &&
       checkpoint_interval < absl::Milliseconds(100))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be 0 (no periodic checkpoints) or at least 100ms",
        naming.Setting(kCheckpointInterval,
                       absl::FormatDuration(checkpoint_interval))));
  }
  if (!(checkpoint_read_mb_per_s >= 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be >= 0 (0: no limit)",
        naming.Setting(kCheckpointRate, checkpoint_read_mb_per_s)));
  }
  if (checkpoints_kept < 1 || checkpoints_kept > 100) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be from 1 to 100",
                        naming.Setting(kCheckpointsKept, checkpoints_kept)));
  }
  if (recovery_threads < 0 || recovery_threads > 256) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be from 0 (one per core) to 256",
                        naming.Setting(kRecoveryThreads, recovery_threads)));
  }
  if (recovery_batch_bytes < (uint64_t{4} << 10) ||
      recovery_batch_bytes > (uint64_t{64} << 30)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be from 4 KiB to 64 GiB",
                        naming.Setting(kRecoveryBatch, recovery_batch_bytes)));
  }
  if (wal.watermark_interval <= absl::ZeroDuration() ||
      wal.watermark_interval > absl::Seconds(1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be above 0 and at most 1s",
        naming.Setting(kWatermarkInterval,
                       absl::FormatDuration(wal.watermark_interval))));
  }
  if (wal.ack_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be above 0",
        naming.Setting(kAckTimeout, absl::FormatDuration(wal.ack_timeout))));
  }
  return ValidateFailover(naming);
}

absl::Status EngineOptions::ValidateFailover(const OptionNaming& naming) const {
  if (fabric.join_running && !failover.enabled) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "joining a running deployment needs %s: its node's earlier "
        "incarnation must have been reclaimed by the others",
        naming.Name(kFailover)));
  }
  if (!failover.enabled) return absl::OkStatus();
  if (failover.node_lease < absl::Milliseconds(8) ||
      failover.node_lease > absl::Seconds(60)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be from 8 ms to 60 s",
        naming.Setting(kNodeLease, absl::FormatDuration(failover.node_lease))));
  }
  if (failover.redo_ring_bytes < (uint64_t{1} << 20) ||
      failover.redo_ring_bytes > (uint64_t{1} << 30) ||
      failover.redo_ring_bytes % 64 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be from 1 MiB to 1 GiB",
                        naming.Setting(kRedoRing, failover.redo_ring_bytes)));
  }
  if (cc.protocol != cc::Protocol::kSelcc) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: surviving a compute node's failure needs SELCC (its latch "
        "words name the holders; SEL's only count them): drop %s",
        naming.Name(kProtocol), naming.Name(kFailover)));
  }
  if (fabric.kind == rdma::FabricKind::kVerbs && !fabric.cluster_file.empty() &&
      mode == EngineMode::kPartitioned) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s with %s across processes: partitioned mode's failover is not "
        "built there yet (the reclaimer ends the failed node's branches on "
        "every survivor's partition node, which must be in its process); it "
        "runs across processes in shared mode, and in partitioned mode on "
        "the loopback fabric or a verbs deployment hosted in one process",
        naming.Name(kFailover), naming.Name(kFabricKind)));
  }
  if (fabric.join_running && !wal.dir.empty()) {
    return absl::UnimplementedError(
        "a compute process that rejoins a running deployment "
        "(FabricOptions::join_running, tpcc --rejoin) cannot log yet: its "
        "node's log would have to go on after the records its reclaimer "
        "excluded; rejoin without a log");
  }
  if (!wal.dir.empty() && !wal.early_lock_release) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s needs acknowledgement by the durable watermark (%s): its node "
        "marks are what tells a survivor which of a failed node's commits "
        "to log again",
        naming.Name(kFailover), naming.Name(kEarlyLockRelease)));
  }
  if (mode == EngineMode::kPartitioned &&
      partitioned.slots_per_node > static_cast<int>(cc::kDecisionBoardSlots)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s with %s: at most %d sessions per node (the decision board of "
        "partition/decision_board.h has a word per session)",
        naming.Setting(kSlotsPerNode, partitioned.slots_per_node),
        naming.Name(kFailover), cc::kDecisionBoardSlots));
  }
  return absl::OkStatus();
}

}  // namespace strand::engine
