#ifndef STRAND_RDMA_VERBS_COMPLETION_H_
#define STRAND_RDMA_VERBS_COMPLETION_H_

// Waiting for the one signalled completion of a chain of work requests.

#include <infiniband/verbs.h>

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace strand::rdma::verbs {

// Polls `cq` until a completion with id `wr_id` arrives or `deadline`
// passes (DeadlineExceeded). Every request of a chain carries the chain's
// id: an unsignalled one that failed completes too, before the flushed
// rest of its chain, and the Status reports its failure ("remote access
// error", "transport retry counter exceeded"), which leaves the queue pair
// in the error state. Completions with other ids (earlier chains whose
// waits gave up) are dropped: they must not fail this one.
// The caller adds what was posted and to whom. If `give_up` is given and
// returns true while the wait idles (the peer was fenced: no completion
// will come before the transport's retries run out), Unavailable.
absl::Status AwaitCompletion(ibv_cq* cq, uint64_t wr_id, absl::Time deadline,
                             const std::function<bool()>& give_up = nullptr);

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_COMPLETION_H_
