#include "bench/coherence_options.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/option_checks.h"
#include "base/status_macros.h"

namespace strand {
namespace {

constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kGcls{"gcls", "gcls"};
constexpr OptionSetting kGclSize{"gcl_size", "gcl_size"};
constexpr OptionSetting kReadRatio{"read_ratio", "read_ratio"};
constexpr OptionSetting kSharingRatio{"sharing_ratio", "sharing_ratio"};
constexpr OptionSetting kLocality{"locality", "locality"};
constexpr OptionSetting kZipfTheta{"zipf_theta", "zipf_theta"};
constexpr OptionSetting kCacheMb{"cache_mb", "cache_mb"};
constexpr OptionSetting kProtocol{"protocol", "protocol"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr OptionSetting kWarmup{"warmup_s", "warmup_s"};
constexpr OptionSetting kLeaseGamma{"lease_gamma", "lease_gamma"};
constexpr OptionSetting kLockTimeout{"lock_timeout_ms", "lock_timeout_ms"};

// The flags of SELCC's machinery: with --protocol=sel they do nothing.
constexpr absl::string_view kSelccOnlyFlags[] = {
    "cache_mb",    "gcl_forwarding", "batched_eviction",  "dirty_bounds",
    "lease_gamma", "spin_wait",      "priority_matching", "handler_threads"};

absl::Status CheckWorkload(const CoherenceOptions& o,
                           const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kThreads, o.threads, 1, 64, "per compute node"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint64_t>(naming, kGcls, o.gcls, 1, uint64_t{1} << 40));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kReadRatio, o.read_ratio, 0.0, 1.0));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kSharingRatio, o.sharing_ratio, 0.0, 1.0));
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kLocality, o.locality, 0.0, 1.0));
  // With one compute node there is nothing to share or keep private.
  STRAND_RETURN_IF_ERROR(
      CheckOnlyWith(naming, kSharingRatio, o.given.contains("sharing_ratio"),
                    o.fabric.compute_nodes > 1, "--compute_nodes=2 or more"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kZipfTheta, o.zipf_theta, 0.0, 4.999));
  if (std::abs(o.zipf_theta - 1) < 1e-9) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Setting(kZipfTheta, o.zipf_theta),
        " is not valid: the Zipf generator divides by 1 - theta; use a value "
        "near it (0.99)"));
  }
  STRAND_RETURN_IF_ERROR(
      CheckInRange(naming, kDuration, o.duration_s, 1e-3, 3600.0, "seconds"));
  return CheckInRange(naming, kWarmup, o.warmup_s, 0.0, 3600.0, "seconds");
}

absl::Status CheckCache(const CoherenceOptions& o, const OptionNaming& naming) {
  STRAND_RETURN_IF_ERROR(
      CheckChoice(naming, kProtocol, o.protocol, {"selcc", "sel"}));
  if (o.protocol == "sel") {
    for (absl::string_view flag : kSelccOnlyFlags) {
      if (o.given.contains(std::string(flag))) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag,
                         " has no effect without --protocol=selcc (SEL has "
                         "no cache, no invalidations): drop it"));
      }
    }
  }
  int64_t gamma = 0;
  if (o.lease_gamma != "inf" &&
      (!absl::SimpleAtoi(o.lease_gamma, &gamma) || gamma < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(naming.Setting(kLeaseGamma, o.lease_gamma),
                     " is not valid: use a count >= 0, or inf"));
  }
  STRAND_RETURN_IF_ERROR(CheckInRange<int64_t>(
      naming, kLockTimeout, o.lock_timeout_ms, 1, 3'600'000, "milliseconds"));
  STRAND_RETURN_IF_ERROR(CheckFitsMemory(naming, kCacheMb, o.cache_mb,
                                         o.fabric.compute_nodes,
                                         "one per compute node"));
  return o.CcOptionsForRun().Validate(o.fabric.chunk_bytes,
                                      naming.uses_flags()
                                          ? OptionNaming::Flags("CcOptions::")
                                          : naming.Member("cc"));
}

// The data set lives in the memory nodes' pool; checked before anything
// is sized by --gcls (its address table alone takes 8 bytes per GCL).
absl::Status CheckDataSet(const CoherenceOptions& o,
                          const OptionNaming& naming) {
  if (o.shared_gcls() == 0 && o.private_gcls_per_node() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        naming.Setting(kGcls, o.gcls),
        " is too small for --sharing_ratio and --compute_nodes: some node "
        "would have no GCL to access"));
  }
  const uint64_t pool_gcls =
      o.fabric.pool_bytes / o.gcl_size * o.fabric.memory_nodes;
  if (o.gcls <= pool_gcls) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s of %s bytes do not fit the pool (%d memory node(s) of --pool_mb=%d "
      "hold at most %d): lower --gcls or raise --pool_mb",
      naming.Setting(kGcls, o.gcls), naming.Setting(kGclSize, o.gcl_size),
      o.fabric.memory_nodes, o.fabric.pool_bytes >> 20, pool_gcls));
}

}  // namespace

absl::Status CoherenceOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(CheckWorkload(*this, naming));
  STRAND_RETURN_IF_ERROR(CheckCache(*this, naming));
  return CheckDataSet(*this, naming);
}

cc::CcOptions CoherenceOptions::CcOptionsForRun() const {
  cc::CcOptions o;
  o.protocol = protocol == "sel" ? cc::Protocol::kSel : cc::Protocol::kSelcc;
  o.gcl_size = gcl_size;
  o.cache_bytes = cache_mb << 20;
  o.handler_threads = handler_threads;
  o.lock_timeout = absl::Milliseconds(lock_timeout_ms);
  o.gcl_forwarding = gcl_forwarding;
  o.batched_eviction = batched_eviction;
  o.dirty_bounds = dirty_bounds;
  o.spin_wait = spin_wait;
  o.priority_matching = priority_matching;
  if (lease_gamma == "inf") {
    o.lease_gamma = cc::CcOptions::kInfiniteLease;
  } else if (!absl::SimpleAtoi(lease_gamma, &o.lease_gamma)) {
    o.lease_gamma = -1;  // Validate refuses it
  }
  return o;
}

uint64_t CoherenceOptions::shared_gcls() const {
  return static_cast<uint64_t>(std::llround(gcls * sharing_ratio));
}

uint64_t CoherenceOptions::private_gcls_per_node() const {
  return (gcls - shared_gcls()) / std::max(1, fabric.compute_nodes);
}

void CoherenceOptions::AddJson(JsonLine& json) const {
  json.Add("protocol", protocol)
      .Add("threads", threads)
      .Add("gcl_size", static_cast<uint64_t>(gcl_size))
      .Add("read_ratio", read_ratio)
      .Add("sharing_ratio", sharing_ratio)
      .Add("locality", locality)
      .Add("zipf_theta", zipf_theta)
      .Add("gcl_forwarding", gcl_forwarding)
      .Add("batched_eviction", batched_eviction)
      .Add("dirty_bounds", dirty_bounds)
      .Add("lease_gamma", lease_gamma)
      .Add("spin_wait", spin_wait)
      .Add("priority_matching", priority_matching)
      .Add("handler_threads", handler_threads)
      .Add("lock_timeout_ms", lock_timeout_ms)
      .Add("seed", seed)
      .Add("warmup_s", warmup_s);
}

}  // namespace strand
