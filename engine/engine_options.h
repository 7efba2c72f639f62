#ifndef STRAND_ENGINE_ENGINE_OPTIONS_H_
#define STRAND_ENGINE_ENGINE_OPTIONS_H_

// Everything Engine::Open needs. The defaults give the embedded deployment:
// one memory node and one compute node in this process (loopback fabric),
// SELCC, 2PL no-wait.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cc/options.h"
#include "rdma/fabric_options.h"
#include "txn/cc_algorithm.h"

namespace strand::engine {

// How a Session retries a procedure that aborted on a conflict. User
// aborts and errors are never retried.
struct RetryPolicy {
  int max_retries = 1000;
  // Exponential back-off between attempts, with jitter.
  absl::Duration initial_backoff = absl::Microseconds(1);
  absl::Duration max_backoff = absl::Milliseconds(1);
};

struct EngineOptions {
  rdma::FabricOptions fabric;
  cc::CcOptions cc;
  txn::CcAlgorithm algorithm = txn::CcAlgorithm::kTwoPhaseLocking;
  RetryPolicy retry;

  absl::Status Validate() const;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_ENGINE_OPTIONS_H_
