#include "txn/cc_algorithm.h"

#include "absl/strings/str_format.h"

namespace strand::txn {

absl::StatusOr<CcAlgorithm> ParseCcAlgorithm(const std::string& name) {
  if (name == "2pl") return CcAlgorithm::kTwoPhaseLocking;
  if (name == "to") return CcAlgorithm::kTimestampOrdering;
  if (name == "occ") return CcAlgorithm::kOptimistic;
  return absl::InvalidArgumentError(
      absl::StrFormat("--cc=%s is not an algorithm: use 2pl, to or occ", name));
}

const char* CcAlgorithmName(CcAlgorithm algorithm) {
  switch (algorithm) {
    case CcAlgorithm::kTwoPhaseLocking:
      return "2pl";
    case CcAlgorithm::kTimestampOrdering:
      return "to";
    case CcAlgorithm::kOptimistic:
      return "occ";
  }
  return "?";
}

}  // namespace strand::txn
