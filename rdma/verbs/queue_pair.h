#ifndef STRAND_RDMA_VERBS_QUEUE_PAIR_H_
#define STRAND_RDMA_VERBS_QUEUE_PAIR_H_

// The connecting side of one RC queue pair, set up by rdma_cm: address and
// route resolution pick the device port, GID and path MTU, and the connect
// moves the QP to RTS. The owner posts work requests and polls the send CQ
// it passed in; a QueuePair is used by one thread at a time.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rdma/verbs/cluster_config.h"
#include "rdma/verbs/device.h"

namespace strand::rdma::verbs {

class QueuePair {
 public:
  struct Options {
    ibv_cq* cq = nullptr;  // send and (unused) receive completions
    uint32_t max_send_wr = 1;
    std::string private_data;  // sent with the connect request
    int resolve_timeout_ms = 2000;
  };

  // Connects to `peer`. Unavailable with "connection refused" when nothing
  // listens there; the message always names the peer. `reply` receives the
  // private data of the accept (may be null).
  static absl::StatusOr<std::unique_ptr<QueuePair>> Connect(
      const Device& device, const ClusterNode& peer, const Options& options,
      std::string* reply);
  ~QueuePair();

  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  ibv_qp* qp() const { return id_->qp; }
  const ClusterNode& peer() const { return peer_; }

  // Hands a linked chain of work requests to the NIC (one doorbell).
  absl::Status Post(ibv_send_wr* first);

 private:
  QueuePair(rdma_cm_id* id, const ClusterNode& peer) : id_(id), peer_(peer) {}

  rdma_cm_id* const id_;
  const ClusterNode peer_;
};

}  // namespace strand::rdma::verbs

#endif  // STRAND_RDMA_VERBS_QUEUE_PAIR_H_
