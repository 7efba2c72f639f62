#include "cc/options.h"

#include "absl/strings/str_format.h"

namespace strand::cc {

absl::StatusOr<Protocol> ParseProtocol(const std::string& name) {
  if (name == "selcc") return Protocol::kSelcc;
  if (name == "sel") return Protocol::kSel;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--protocol=%s is not a protocol: use selcc or sel", name));
}

const char* ProtocolName(Protocol protocol) {
  return protocol == Protocol::kSelcc ? "selcc" : "sel";
}

absl::StatusOr<PrefetchScope> ParsePrefetchScope(const std::string& name) {
  if (name == "narrow") return PrefetchScope::kNarrow;
  if (name == "full") return PrefetchScope::kFull;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--prefetch=%s is not a prefetch scope: use narrow or full", name));
}

const char* PrefetchScopeName(PrefetchScope scope) {
  return scope == PrefetchScope::kNarrow ? "narrow" : "full";
}

namespace {

// Every setting Validate checks, with its flag where binaries have one.
constexpr OptionSetting kGclSize{"gcl_size", "gcl_size"};
constexpr OptionSetting kCacheBytes{"cache_bytes", "cache_mb",
                                    uint64_t{1} << 20};
constexpr OptionSetting kHandlerThreads{"handler_threads", "handler_threads"};
constexpr OptionSetting kLockTimeout{"lock_timeout", "lock_timeout_ms"};
constexpr OptionSetting kLeaseGamma{"lease_gamma", "lease_gamma"};
constexpr OptionSetting kInjectDropProbability{
    "testing_faults.drop_probability", ""};

}  // namespace

absl::Status CcOptions::Validate(uint64_t chunk_bytes) const {
  return Validate(chunk_bytes, OptionNaming::Fields("CcOptions::"));
}

absl::Status CcOptions::Validate(uint64_t chunk_bytes,
                                 const OptionNaming& naming) const {
  if (gcl_size < 128 || gcl_size % 64 != 0 || gcl_size > chunk_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not valid: use a multiple of 64 from 128 to the fabric's "
        "chunk size (%d bytes)",
        naming.Setting(kGclSize, gcl_size), chunk_bytes));
  }
  if (protocol == Protocol::kSelcc && cache_bytes != 0 &&
      cache_bytes < uint64_t{gcl_size} * 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is too small: the cache must hold at least 16 GCLs of %s (0: "
        "sized automatically)",
        naming.Setting(kCacheBytes, cache_bytes),
        naming.Setting(kGclSize, gcl_size)));
  }
  if (handler_threads < 1 || handler_threads > 64) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is out of range: use 1 to 64",
                        naming.Setting(kHandlerThreads, handler_threads)));
  }
  if (lock_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be positive", naming.Name(kLockTimeout)));
  }
  if (lease_gamma < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s must be >= 0 (0 gives a contended line up at the next unlock)",
        naming.Setting(kLeaseGamma, lease_gamma)));
  }
  if (!(testing_faults.drop_probability >= 0 &&
        testing_faults.drop_probability < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be in [0, 1)",
                        naming.Setting(kInjectDropProbability,
                                       testing_faults.drop_probability)));
  }
  return absl::OkStatus();
}

}  // namespace strand::cc
