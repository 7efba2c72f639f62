#ifndef STRAND_TXN_CC_ALGORITHM_H_
#define STRAND_TXN_CC_ALGORITHM_H_

// The concurrency control algorithms a transaction can run under, chosen at
// run time (--cc=2pl|to|occ).

#include <string>

#include "absl/status/statusor.h"

namespace strand::txn {

enum class CcAlgorithm {
  kTwoPhaseLocking,    // 2PL no-wait over SELCC latches
  kTimestampOrdering,  // basic TO, per-tuple read/write timestamps
  kOptimistic,         // OCC: read, validate under latches, write
};

absl::StatusOr<CcAlgorithm> ParseCcAlgorithm(const std::string& name);
const char* CcAlgorithmName(CcAlgorithm algorithm);

}  // namespace strand::txn

#endif  // STRAND_TXN_CC_ALGORITHM_H_
