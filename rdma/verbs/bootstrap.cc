#include "rdma/verbs/bootstrap.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "rdma/memory_node_layout.h"
#include "rdma/verbs/completion.h"
#include "rdma/verbs/wire.h"

namespace strand::rdma::verbs {
namespace {

// Connects, retrying while the peer is not listening yet (it may start after
// us), until `deadline`.
absl::StatusOr<std::unique_ptr<QueuePair>> ConnectWithRetry(
    const Device& device, const ClusterNode& peer,
    const QueuePair::Options& options, std::string* reply,
    absl::Time deadline) {
  for (int attempt = 0;; ++attempt) {
    auto qp = QueuePair::Connect(device, peer, options, reply);
    if (qp.ok() || qp.status().code() != absl::StatusCode::kUnavailable) {
      return qp;
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s did not answer during start-up (%d attempts); last error: %s",
          peer.ToString(), attempt + 1, qp.status().message()));
    }
    if (attempt == 10) {
      LOG(INFO) << "waiting for " << peer.ToString() << " to start ("
                << qp.status().message() << ")";
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
}

std::string RequestBytes(ConnectRequest::Kind kind, ComputeNodeId node,
                         uint64_t incarnation) {
  ConnectRequest request;
  request.kind = kind;
  request.compute_node = node;
  request.incarnation = incarnation;
  return std::string(reinterpret_cast<const char*>(&request), sizeof(request));
}

struct CqDeleter {
  void operator()(ibv_cq* cq) const { ibv_destroy_cq(cq); }
};

}  // namespace

absl::StatusOr<RemoteMemoryNode> ProbeMemoryNode(const Device& device,
                                                 const ClusterNode& node,
                                                 ComputeNodeId self,
                                                 uint64_t incarnation,
                                                 absl::Time deadline) {
  std::unique_ptr<ibv_cq, CqDeleter> cq(
      ibv_create_cq(device.context(), 4, nullptr, nullptr, 0));
  if (cq == nullptr) {
    return absl::UnavailableError(
        absl::StrFormat("ibv_create_cq: %s", ErrnoText(errno)));
  }
  MemoryNodeHeader header{};
  auto mr = device.Register(&header, sizeof(header), IBV_ACCESS_LOCAL_WRITE);
  if (!mr.ok()) return mr.status();
  QueuePair::Options options;
  options.cq = cq.get();
  options.private_data =
      RequestBytes(ConnectRequest::kEndpoint, self, incarnation);
  std::string reply;
  auto qp = ConnectWithRetry(device, node, options, &reply, deadline);
  if (!qp.ok()) return qp.status();
  MemoryNodeReply r;
  if (reply.size() < sizeof(r)) {
    return absl::UnavailableError(absl::StrFormat(
        "%s accepted without describing its region: is it strand_memnode?",
        node.ToString()));
  }
  std::memcpy(&r, reply.data(), sizeof(r));
  ibv_sge sge{reinterpret_cast<uint64_t>(&header), sizeof(header), (*mr)->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = r.region_address + kHeaderOffset;
  wr.wr.rdma.rkey = r.rkey;
  absl::Status s = (*qp)->Post(&wr);
  if (s.ok()) {
    s = AwaitCompletion(cq.get(), 1, absl::Now() + absl::Seconds(10));
  }
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrFormat("reading the header of %s: %s",
                                        node.ToString(), s.message()));
  }
  if (r.magic != kWireMagic || header.magic != MemoryNodeHeader::kMagic ||
      header.format_version != MemoryNodeHeader::kFormatVersion ||
      header.region_bytes != r.region_bytes) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s does not hold a strand memory node of this version (magic "
        "0x%x, format %d)",
        node.ToString(), header.magic, header.format_version));
  }
  qp->reset();  // before the CQ it completes into
  RemoteMemoryNode remote;
  remote.node = node;
  remote.address = r.region_address;
  remote.rkey = r.rkey;
  remote.bytes = header.region_bytes;
  remote.chunk_bytes = header.chunk_bytes;
  return remote;
}

absl::StatusOr<std::unique_ptr<QueuePair>> ArriveAtPeer(
    const Device& device, ibv_cq* cq, ComputeNodeId self, uint64_t incarnation,
    const ClusterNode& peer, absl::Time deadline) {
  QueuePair::Options options;
  options.cq = cq;
  options.private_data =
      RequestBytes(ConnectRequest::kBootstrap, self, incarnation);
  return ConnectWithRetry(device, peer, options, nullptr, deadline);
}

}  // namespace strand::rdma::verbs
