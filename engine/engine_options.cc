#include "engine/engine_options.h"

#include "absl/strings/str_format.h"

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
constexpr OptionSetting kRecoverWalDir{"recover_wal_dir", ""};
constexpr OptionSetting kAlgorithm{"algorithm", "cc"};

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
  if (!wal.dir.empty() && wal.dir == recover_wal_dir) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is the log being recovered (%s): after recovery, log to a fresh "
        "directory (engine/recovery.h explains why)",
        naming.Setting(kWalDir, wal.dir), naming.Name(kRecoverWalDir)));
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
  return absl::OkStatus();
}

}  // namespace strand::engine
