#include "rdma/verbs/queue_pair.h"

#include <cerrno>
#include <string>

#include "absl/strings/str_format.h"

namespace strand::rdma::verbs {
namespace {

void DestroyId(rdma_cm_id* id) {
  if (id->qp != nullptr) rdma_destroy_qp(id);
  rdma_destroy_id(id);
}

}  // namespace

absl::StatusOr<std::unique_ptr<QueuePair>> QueuePair::Connect(
    const Device& device, const ClusterNode& peer, const Options& options,
    std::string* reply) {
  auto fail = [&](rdma_cm_id* id, absl::StatusCode code, absl::string_view step,
                  int error) -> absl::Status {
    if (id != nullptr) DestroyId(id);
    std::string why = error == ECONNREFUSED
                          ? std::string("connection refused (is it running?)")
                          : ErrnoText(error);
    return absl::Status(code, absl::StrFormat("cannot connect to %s: %s: %s",
                                              peer.ToString(), step, why));
  };
  rdma_addrinfo hints{};
  hints.ai_port_space = RDMA_PS_TCP;
  rdma_addrinfo* info = nullptr;
  const std::string port = std::to_string(peer.port);
  if (rdma_getaddrinfo(peer.address.c_str(), port.c_str(), &hints, &info) !=
      0) {
    return fail(nullptr, absl::StatusCode::kInvalidArgument, "rdma_getaddrinfo",
                errno);
  }
  rdma_cm_id* id = nullptr;
  // A null event channel makes every rdma_cm call below synchronous, each
  // bounded by its timeout or by the CM's own retry limit.
  if (rdma_create_id(nullptr, &id, nullptr, RDMA_PS_TCP) != 0) {
    const int e = errno;
    rdma_freeaddrinfo(info);
    return fail(nullptr, absl::StatusCode::kUnavailable, "rdma_create_id", e);
  }
  const int rc = rdma_resolve_addr(id, nullptr, info->ai_dst_addr,
                                   options.resolve_timeout_ms);
  const int resolve_errno = errno;
  rdma_freeaddrinfo(info);
  if (rc != 0) {
    return fail(id, absl::StatusCode::kUnavailable, "rdma_resolve_addr",
                resolve_errno);
  }
  if (rdma_resolve_route(id, options.resolve_timeout_ms) != 0) {
    return fail(id, absl::StatusCode::kUnavailable, "rdma_resolve_route",
                errno);
  }
  if (id->verbs != device.context()) {
    DestroyId(id);
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is reached through another RDMA device than %s; one process "
        "uses one device",
        peer.ToString(), device.name()));
  }
  ibv_qp_init_attr attr{};
  attr.send_cq = options.cq;
  attr.recv_cq = options.cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = options.max_send_wr;
  attr.cap.max_recv_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, device.pd(), &attr) != 0) {
    return fail(id, absl::StatusCode::kResourceExhausted, "rdma_create_qp",
                errno);
  }
  rdma_conn_param param{};
  param.private_data = options.private_data.data();
  param.private_data_len = static_cast<uint8_t>(options.private_data.size());
  param.initiator_depth = device.rd_atomic_depth();
  param.responder_resources = device.rd_atomic_depth();
  param.retry_count = 7;
  // 7 = retry forever on receiver-not-ready: a busy peer's receive ring
  // refills, and the sender's bounded completion wait reports a dead one.
  param.rnr_retry_count = 7;
  if (rdma_connect(id, &param) != 0) {
    return fail(id, absl::StatusCode::kUnavailable, "rdma_connect", errno);
  }
  if (id->event != nullptr) {
    if (reply != nullptr) {
      reply->assign(
          static_cast<const char*>(id->event->param.conn.private_data),
          id->event->param.conn.private_data_len);
    }
    rdma_ack_cm_event(id->event);
    id->event = nullptr;
  }
  return std::unique_ptr<QueuePair>(new QueuePair(id, peer));
}

QueuePair::~QueuePair() {
  // Destroying the id sends the disconnect; the peer frees its side.
  DestroyId(id_);
}

absl::Status QueuePair::Post(ibv_send_wr* first) {
  ibv_send_wr* bad = nullptr;
  const int rc = ibv_post_send(id_->qp, first, &bad);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrFormat(
        "ibv_post_send to %s failed: %s", peer_.ToString(), ErrnoText(rc)));
  }
  return absl::OkStatus();
}

}  // namespace strand::rdma::verbs
