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

absl::Status CcOptions::Validate(uint64_t chunk_bytes) const {
  if (gcl_size < 128 || gcl_size % 64 != 0 || gcl_size > chunk_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--gcl_size=%d is not valid: use a multiple of 64 from 128 to the "
        "chunk size (%d)",
        gcl_size, chunk_bytes));
  }
  if (protocol == Protocol::kSelcc && cache_bytes < uint64_t{gcl_size} * 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--cache_mb is too small: the cache must hold at least 16 GCLs of "
        "--gcl_size=%d",
        gcl_size));
  }
  if (handler_threads < 1 || handler_threads > 64) {
    return absl::InvalidArgumentError("handler threads must be from 1 to 64");
  }
  if (lock_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the lock timeout must be positive");
  }
  if (lease_gamma < 0) {
    return absl::InvalidArgumentError(
        "--lease_gamma must be >= 0 (0 disables leases)");
  }
  if (!(inject_drop_probability >= 0 && inject_drop_probability < 1)) {
    return absl::InvalidArgumentError(
        "the injected drop probability must be in [0, 1)");
  }
  return absl::OkStatus();
}

}  // namespace strand::cc
