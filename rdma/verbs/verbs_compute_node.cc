#include "rdma/verbs/verbs_compute_node.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "glog/logging.h"
#include "rdma/verbs/verbs_endpoint.h"
#include "rdma/verbs/verbs_fabric.h"
#include "rdma/verbs/wire.h"

namespace strand::rdma::verbs {
namespace {
// The owner Listener::EnterHandler admitted this handler thread's current
// message for.
thread_local int admitted_owner = -1;
}  // namespace

absl::StatusOr<std::unique_ptr<VerbsComputeNode>> VerbsComputeNode::Create(
    VerbsFabric* fabric, const ClusterNode& self) {
  std::unique_ptr<VerbsComputeNode> node(
      new VerbsComputeNode(fabric, static_cast<ComputeNodeId>(self.id)));
  auto ring = ReceiveRing::Create(fabric->shared_device());
  if (!ring.ok()) return ring.status();
  node->ring_ = *std::move(ring);
  VerbsComputeNode* raw = node.get();
  auto listener = Listener::Start(
      fabric->shared_device(), self.address, self.port,
      [raw](absl::string_view request) { return raw->OnConnect(request); });
  if (!listener.ok()) return listener.status();
  node->listener_ = *std::move(listener);
  return node;
}

VerbsComputeNode::~VerbsComputeNode() {
  StopHandlers();
  listener_.reset();
  ring_.reset();
}

absl::StatusOr<Listener::Accept> VerbsComputeNode::OnConnect(
    absl::string_view request) {
  ConnectRequest r;
  if (request.size() < sizeof(r)) {
    return absl::InvalidArgumentError("connect request too short");
  }
  std::memcpy(&r, request.data(), sizeof(r));
  if (r.magic != kWireMagic) {
    return absl::InvalidArgumentError("not a strand compute node");
  }
  if (r.kind == ConnectRequest::kBootstrap) {
    absl::MutexLock lock(&barrier_mu_);
    arrived_.insert(r.compute_node);
  }
  return Listener::Accept{ring_->cq(), ring_->srq(), "", r.compute_node,
                          r.incarnation};
}

absl::StatusOr<std::unique_ptr<Endpoint>> VerbsComputeNode::NewEndpoint() {
  auto ep =
      VerbsEndpoint::Create(fabric_, this, counters_.NewEndpointCounters());
  if (!ep.ok()) return ep.status();
  return std::unique_ptr<Endpoint>(*std::move(ep));
}

absl::StatusOr<LocalRegion> VerbsComputeNode::RegisterLocalMemory(
    void* base, uint64_t bytes) {
  if (base == nullptr || bytes == 0) {
    return absl::InvalidArgumentError("cannot register an empty region");
  }
  absl::MutexLock lock(&register_mu_);
  const int index = region_count_.load(std::memory_order_relaxed);
  if (index == kMaxRegions) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "compute node %d already registered %d regions", id_, kMaxRegions));
  }
  auto mr = fabric_->device().Register(
      base, bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (!mr.ok()) return mr.status();
  LocalRegion& region = regions_[index];
  region.base = base;
  region.bytes = bytes;
  region.peer_address.address = reinterpret_cast<uint64_t>(base);
  region.peer_address.key = (*mr)->rkey;
  region.peer_address.node = id_;
  lkeys_[index] = (*mr)->lkey;
  mrs_.push_back(*std::move(mr));
  live_[index].store(true, std::memory_order_relaxed);
  region_count_.store(index + 1, std::memory_order_release);
  return region;
}

absl::Status VerbsComputeNode::UnregisterLocalMemory(void* base) {
  absl::MutexLock lock(&register_mu_);
  const int count = region_count_.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i) {
    if (regions_[i].base == base && live_[i].load(std::memory_order_relaxed)) {
      live_[i].store(false, std::memory_order_release);
      mrs_[i].reset();  // ibv_dereg_mr: peers' writes there now fail
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrFormat(
      "compute node %d has no registered region at %p", id_, base));
}

bool VerbsComputeNode::LocalKey(const void* p, uint64_t length,
                                uint32_t* lkey) const {
  const auto address = reinterpret_cast<uint64_t>(p);
  const int count = region_count_.load(std::memory_order_acquire);
  for (int i = count; i-- > 0;) {
    if (!live_[i].load(std::memory_order_acquire)) continue;
    const uint64_t begin = regions_[i].peer_address.address;
    if (address >= begin && address - begin <= regions_[i].bytes &&
        length <= regions_[i].bytes - (address - begin)) {
      *lkey = lkeys_[i];
      return true;
    }
  }
  return false;
}

absl::Status VerbsComputeNode::CheckPeerWrite(const PeerAddress& dst,
                                              uint64_t length) const {
  const int count = region_count_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    const LocalRegion& region = regions_[i];
    if (region.peer_address.key != dst.key ||
        !live_[i].load(std::memory_order_acquire)) {
      continue;
    }
    const uint64_t begin = region.peer_address.address;
    if (dst.address < begin || dst.address - begin > region.bytes ||
        length > region.bytes - (dst.address - begin)) {
      return absl::OutOfRangeError(absl::StrFormat(
          "peer write of %d bytes at 0x%x falls outside region %d of compute "
          "node %d",
          length, dst.address, i, id_));
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "compute node %d has no registered region with key %d", id_, dst.key));
}

absl::Status VerbsComputeNode::StartHandlers(MessageHandler handler,
                                             int threads) {
  return handlers_.Start(
      *this, std::move(handler), threads,
      [this](Message* message) {
        uint32_t qp_num = 0;
        while (ring_->Next(message, &qp_num)) {
          // Its sender's incarnation was fenced since: as if lost.
          if (listener_->EnterHandler(qp_num, &admitted_owner)) return true;
        }
        return false;
      },
      [](Endpoint& endpoint) {
        static_cast<VerbsEndpoint&>(endpoint).CountReceived();
      },
      [this](const Message&) { listener_->ExitHandler(admitted_owner); });
}

void VerbsComputeNode::StopHandlers() {
  handlers_stopped_.store(true, std::memory_order_release);
  if (ring_ != nullptr) ring_->Stop();
  handlers_.Join();
}

absl::Status VerbsComputeNode::ReopenHandlers() {
  if (!handlers_stopped_.load(std::memory_order_acquire)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "compute node %d's handlers must stop before they restart", id_));
  }
  // Messages sent to the stopped incarnation are not the new one's.
  const int dropped = ring_->Restart();
  if (dropped > 0) {
    LOG(INFO) << "compute node " << id_ << " restarts its handlers; " << dropped
              << " message(s) to the stopped ones dropped";
  }
  handlers_stopped_.store(false, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status VerbsComputeNode::FenceIncoming(ComputeNodeId peer) {
  absl::StatusOr<int> stopped = listener_->Fence(peer);
  return stopped.ok() ? absl::OkStatus() : stopped.status();
}

absl::Status VerbsComputeNode::AwaitBarrier(
    const std::vector<ClusterNode>& peers, absl::Time deadline) {
  absl::MutexLock lock(&barrier_mu_);
  auto all_arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(barrier_mu_) {
    for (const ClusterNode& peer : peers) {
      if (!arrived_.contains(peer.id)) return false;
    }
    return true;
  };
  if (barrier_mu_.AwaitWithDeadline(absl::Condition(&all_arrived), deadline)) {
    return absl::OkStatus();
  }
  std::vector<std::string> missing;
  for (const ClusterNode& peer : peers) {
    if (!arrived_.contains(peer.id)) missing.push_back(peer.ToString());
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "start-up barrier of compute node %d: %s did not arrive in time (not "
      "started, or cannot reach this node?)",
      id_, absl::StrJoin(missing, ", ")));
}

}  // namespace strand::rdma::verbs
