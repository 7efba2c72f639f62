#ifndef STRAND_RDMA_LOOPBACK_REMOTE_MEMORY_H_
#define STRAND_RDMA_LOOPBACK_REMOTE_MEMORY_H_

// Copies between a caller's buffer and "remote" memory (a memory node's
// region or a peer's registered buffer) in the loopback fabric.
//
// Real RDMA lets a READ race with a concurrent WRITE or atomic on the same
// bytes; the reader just gets some mix, and the protocols above (SELCC)
// discard such data (e.g. the READ batched with a CAS that failed). A plain
// memcpy would make those benign races undefined behaviour in C++ and noise
// under ThreadSanitizer, so under TSan the remote side is accessed with
// relaxed atomic words. The caller's side stays plain, so TSan still checks
// the compute nodes' own memory (cache frames) for real races. Atomics
// (CAS, FAA) use std::atomic_ref on the aligned word in every build.

#include <cstddef>
#include <cstdint>

namespace strand::rdma::loopback {

void CopyFromRemote(void* local, const void* remote, size_t length);
void CopyToRemote(void* remote, const void* local, size_t length);

}  // namespace strand::rdma::loopback

#endif  // STRAND_RDMA_LOOPBACK_REMOTE_MEMORY_H_
