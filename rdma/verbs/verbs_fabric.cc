#include "rdma/verbs/verbs_fabric.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "rdma/verbs/fence_control.h"
#include "rdma/verbs/verbs_compute_node.h"

namespace strand::rdma::verbs {

VerbsFabric::VerbsFabric(ClusterConfig config, std::shared_ptr<Device> device)
    : device_(std::move(device)), config_(std::move(config)) {}

absl::StatusOr<std::unique_ptr<Fabric>> VerbsFabric::Create(
    const FabricOptions& options, absl::Duration startup_timeout) {
  auto config = ClusterConfig::Load(options.cluster_file);
  if (!config.ok()) return config.status();
  const int count = static_cast<int>(config->compute_nodes.size());
  if (options.node_id < 0 || options.node_id >= count) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--node_id=%d is not a compute node of --cluster=%s, which lists "
        "compute nodes 0 to %d (memory nodes are served by strand_memnode)",
        options.node_id, options.cluster_file, count - 1));
  }
  auto device =
      Device::ForLocalAddress(config->compute_nodes[options.node_id].address);
  if (!device.ok()) return device.status();
  std::unique_ptr<VerbsFabric> fabric(
      new VerbsFabric(*std::move(config), *std::move(device)));
  if (absl::Status s = fabric->Start({options.node_id}, startup_timeout,
                                     options.join_running);
      !s.ok())
    return s;
  return std::unique_ptr<Fabric>(std::move(fabric));
}

absl::StatusOr<std::unique_ptr<Fabric>> VerbsFabric::CreateInProcess(
    const FabricOptions& options, const std::string& address) {
  // Checked as the embedded deployment it is: no cluster file, and every
  // memory node's region in this process's memory.
  FabricOptions embedded = options;
  embedded.kind = FabricKind::kLoopback;
  if (absl::Status s = embedded.Validate(); !s.ok()) return s;
  auto device = Device::ForLocalAddress(address);
  if (!device.ok()) return device.status();
  ClusterConfig config;
  std::vector<std::unique_ptr<MemoryNodeServer>> servers;
  for (int i = 0; i < options.memory_nodes; ++i) {
    auto server = MemoryNodeServer::Start(
        *device, address, 0, options.pool_bytes, options.chunk_bytes);
    if (!server.ok()) return server.status();
    config.memory_nodes.push_back(
        ClusterNode{ClusterNode::Role::kMemory, i, address, (*server)->port()});
    servers.push_back(*std::move(server));
  }
  std::vector<int> hosted;
  for (int i = 0; i < options.compute_nodes; ++i) {
    config.compute_nodes.push_back(
        ClusterNode{ClusterNode::Role::kCompute, i, address, 0});
    hosted.push_back(i);
  }
  std::unique_ptr<VerbsFabric> fabric(
      new VerbsFabric(std::move(config), *std::move(device)));
  fabric->local_memory_nodes_ = std::move(servers);
  if (absl::Status s = fabric->Start(hosted, kStartupTimeout,
                                     /*join_running=*/false);
      !s.ok())
    return s;
  return std::unique_ptr<Fabric>(std::move(fabric));
}

absl::Status VerbsFabric::Start(const std::vector<int>& hosted,
                                absl::Duration startup_timeout,
                                bool join_running) {
  const absl::Time deadline = absl::Now() + startup_timeout;
  hosted_.resize(config_.compute_nodes.size());
  for (int id : hosted) {
    incarnations_[id].store(absl::GetCurrentTimeNanos(),
                            std::memory_order_release);
    auto node = VerbsComputeNode::Create(this, config_.compute_nodes[id]);
    if (!node.ok()) return node.status();
    config_.compute_nodes[id].port = (*node)->port();
    hosted_[id] = *std::move(node);
  }
  for (const ClusterNode& node : config_.memory_nodes) {
    auto remote = ProbeMemoryNode(*device_, node, hosted.front(),
                                  incarnation(hosted.front()), deadline);
    if (!remote.ok()) return remote.status();
    memory_nodes_.push_back(*remote);
  }
  region_bytes_ = memory_nodes_[0].bytes;
  chunk_bytes_ = memory_nodes_[0].chunk_bytes;
  for (const RemoteMemoryNode& mn : memory_nodes_) {
    // BlockAllocator and the upper layers assume one size for all nodes.
    if (mn.bytes != region_bytes_ || mn.chunk_bytes != chunk_bytes_) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s has %d MiB in chunks of %d KiB but %s has %d MiB in chunks of "
          "%d KiB: start every strand_memnode with the same --pool_mb and "
          "--chunk_kb",
          mn.node.ToString(), mn.bytes >> 20, mn.chunk_bytes >> 10,
          memory_nodes_[0].node.ToString(), region_bytes_ >> 20,
          chunk_bytes_ >> 10));
    }
  }
  std::vector<ClusterNode> remote_peers;
  for (const ClusterNode& node : config_.compute_nodes) {
    if (hosted_[node.id] == nullptr) remote_peers.push_back(node);
  }
  if (remote_peers.empty()) return absl::OkStatus();
  if (join_running) {
    LOG(INFO) << "verbs fabric: " << memory_nodes_.size()
              << " memory node(s); compute node " << hosted.front()
              << " joins the running deployment (no start-up barrier)";
    return absl::OkStatus();
  }
  barrier_cq_ = ibv_create_cq(device_->context(), 4, nullptr, nullptr, 0);
  if (barrier_cq_ == nullptr) {
    return absl::UnavailableError(
        absl::StrFormat("ibv_create_cq: %s", ErrnoText(errno)));
  }
  for (int id : hosted) {
    for (const ClusterNode& peer : remote_peers) {
      auto qp =
          ArriveAtPeer(*device_, barrier_cq_, static_cast<ComputeNodeId>(id),
                       incarnation(id), peer, deadline);
      if (!qp.ok()) return qp.status();
      barrier_qps_.push_back(*std::move(qp));
    }
  }
  for (int id : hosted) {
    if (absl::Status s = hosted_[id]->AwaitBarrier(remote_peers, deadline);
        !s.ok()) {
      return s;
    }
  }
  LOG(INFO) << "verbs fabric: " << memory_nodes_.size() << " memory node(s), "
            << config_.compute_nodes.size()
            << " compute node(s), all at the barrier";
  return absl::OkStatus();
}

VerbsFabric::~VerbsFabric() {
  // Handler threads may still use endpoints: stop them before anything else.
  for (auto& node : hosted_) {
    if (node != nullptr) node->StopHandlers();
  }
  {
    absl::MutexLock lock(&fence_mu_);
    fence_endpoints_.clear();
  }
  hosted_.clear();
  barrier_qps_.clear();
  if (barrier_cq_ != nullptr) ibv_destroy_cq(barrier_cq_);
  local_memory_nodes_.clear();
}

std::vector<ComputeNodeId> VerbsFabric::local_compute_nodes() const {
  std::vector<ComputeNodeId> ids;
  for (const auto& node : hosted_) {
    if (node != nullptr) ids.push_back(node->id());
  }
  return ids;
}

absl::StatusOr<ComputeNode*> VerbsFabric::compute_node(ComputeNodeId id) {
  if (id >= hosted_.size()) {
    return absl::NotFoundError(
        absl::StrFormat("compute node %d does not exist: the cluster has %d",
                        id, hosted_.size()));
  }
  if (hosted_[id] == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("compute node %d is not hosted by this process (%s)",
                        id, config_.compute_nodes[id].ToString()));
  }
  return hosted_[id].get();
}

absl::StatusOr<Endpoint*> VerbsFabric::FenceEndpoint(ComputeNodeId node) {
  fence_endpoints_.resize(hosted_.size());
  for (size_t id = 0; id < hosted_.size(); ++id) {
    if (hosted_[id] == nullptr || id == node || blocked(id)) continue;
    if (fence_endpoints_[id] == nullptr) {
      auto made = hosted_[id]->NewEndpoint();
      if (!made.ok()) return made.status();
      fence_endpoints_[id] = *std::move(made);
    }
    return fence_endpoints_[id].get();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "cannot fence compute node %d from this process: it hosts no other "
      "compute node that is not fenced",
      node));
}

absl::Status VerbsFabric::RequestFenceEverywhere(Endpoint& endpoint,
                                                 ComputeNodeId node,
                                                 bool fenced) {
  const absl::Time deadline = absl::Now() + kFenceTimeout;
  for (MemoryNodeId mn = 0; mn < memory_nodes_.size(); ++mn) {
    if (absl::Status s = RequestFence(endpoint, mn, node, fenced, deadline);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status VerbsFabric::Fence(ComputeNodeId node) {
  static_assert(std::tuple_size_v<decltype(fence_counts_)> >=
                FabricOptions::kMaxComputeNodes);
  if (node >= hosted_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fence of compute node %d, but there are %d", node, hosted_.size()));
  }
  absl::MutexLock lock(&fence_mu_);
  absl::StatusOr<Endpoint*> endpoint = FenceEndpoint(node);
  if (!endpoint.ok()) return endpoint.status();
  // Hosted endpoints first: the node's own fail at once, and nothing here
  // sends it anything while the memory nodes fence it.
  blocked_.fetch_or(uint64_t{1} << node, std::memory_order_acq_rel);
  fence_counts_[node].fetch_add(1, std::memory_order_acq_rel);
  // Fenced, no longer merely crashed: what others send it now fails.
  crashed_.fetch_and(~(uint64_t{1} << node), std::memory_order_acq_rel);
  if (absl::Status s = RequestFenceEverywhere(**endpoint, node, true);
      !s.ok()) {
    return s;
  }
  return FenceListeners(node);
}

absl::Status VerbsFabric::Unfence(ComputeNodeId node) {
  if (node >= hosted_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unfence of compute node %d, but there are %d", node, hosted_.size()));
  }
  absl::MutexLock lock(&fence_mu_);
  absl::StatusOr<Endpoint*> endpoint = FenceEndpoint(node);
  if (!endpoint.ok() && hosted_[node] != nullptr && !blocked(node)) {
    // A process restarted as `node` (join_running) readmits itself once its
    // earlier incarnation was reclaimed: the memory nodes admitted this
    // incarnation already; the words go back to even so that a failure of
    // this one is fenced again.
    if (fence_endpoints_[node] == nullptr) {
      auto made = hosted_[node]->NewEndpoint();
      if (!made.ok()) return made.status();
      fence_endpoints_[node] = *std::move(made);
    }
    endpoint = fence_endpoints_[node].get();
  }
  if (!endpoint.ok()) return endpoint.status();
  if (absl::Status s = RequestFenceEverywhere(**endpoint, node, false);
      !s.ok()) {
    return s;
  }
  // A new life: the listeners, here and elsewhere, refuse the fenced one.
  if (hosted_[node] != nullptr) {
    incarnations_[node].store(
        std::max<uint64_t>(absl::GetCurrentTimeNanos(),
                           incarnations_[node].load() + 1),
        std::memory_order_release);
  }
  admission_counts_[node].fetch_add(1, std::memory_order_acq_rel);
  crashed_.fetch_and(~(uint64_t{1} << node), std::memory_order_acq_rel);
  blocked_.fetch_and(~(uint64_t{1} << node), std::memory_order_acq_rel);
  return absl::OkStatus();
}

absl::Status VerbsFabric::FenceHere(ComputeNodeId node) {
  if (node >= hosted_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fence of compute node %d, but there are %d", node, hosted_.size()));
  }
  // A hosted node is fenced by this process's own Fence or Crash.
  if (hosted_[node] != nullptr) return absl::OkStatus();
  absl::MutexLock lock(&fence_mu_);
  const uint64_t bit = uint64_t{1} << node;
  blocked_.fetch_or(bit, std::memory_order_acq_rel);
  crashed_.fetch_and(~bit, std::memory_order_acq_rel);
  return FenceListeners(node);
}

absl::Status VerbsFabric::UnfenceHere(ComputeNodeId node) {
  if (node >= hosted_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unfence of compute node %d, but there are %d", node, hosted_.size()));
  }
  if (hosted_[node] != nullptr) return absl::OkStatus();
  absl::MutexLock lock(&fence_mu_);
  admission_counts_[node].fetch_add(1, std::memory_order_acq_rel);
  blocked_.fetch_and(~(uint64_t{1} << node), std::memory_order_acq_rel);
  return absl::OkStatus();
}

absl::Status VerbsFabric::FenceListeners(ComputeNodeId node) {
  for (const auto& peer : hosted_) {
    if (peer == nullptr || peer->id() == node) continue;
    if (absl::Status s = peer->FenceIncoming(node); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status VerbsFabric::Crash(ComputeNodeId node) {
  if (node >= hosted_.size() || hosted_[node] == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "crash of compute node %d: this process does not host it", node));
  }
  crashed_.fetch_or(uint64_t{1} << node, std::memory_order_acq_rel);
  blocked_.fetch_or(uint64_t{1} << node, std::memory_order_acq_rel);
  return absl::OkStatus();
}

}  // namespace strand::rdma::verbs
