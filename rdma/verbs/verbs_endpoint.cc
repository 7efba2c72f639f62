#include "rdma/verbs/verbs_endpoint.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "rdma/verbs/completion.h"
#include "rdma/verbs/verbs_compute_node.h"
#include "rdma/verbs/verbs_fabric.h"
#include "rdma/verbs/wire.h"

namespace strand::rdma::verbs {
namespace {

bool IsAtomic(Batch::Kind kind) {
  return kind == Batch::Kind::kCompareAndSwap ||
         kind == Batch::Kind::kFetchAndAdd;
}

const char* OpName(Batch::Kind kind) {
  switch (kind) {
    case Batch::Kind::kRead:
      return "READ";
    case Batch::Kind::kWrite:
      return "WRITE";
    case Batch::Kind::kCompareAndSwap:
      return "CAS";
    case Batch::Kind::kFetchAndAdd:
      return "FAA";
  }
  return "?";
}

std::string ConnectRequestBytes(ComputeNodeId node, uint64_t incarnation) {
  ConnectRequest request;
  request.kind = ConnectRequest::kEndpoint;
  request.compute_node = node;
  request.incarnation = incarnation;
  return std::string(reinterpret_cast<const char*>(&request), sizeof(request));
}

}  // namespace

absl::StatusOr<std::unique_ptr<VerbsEndpoint>> VerbsEndpoint::Create(
    VerbsFabric* fabric, VerbsComputeNode* node,
    std::shared_ptr<EndpointCounters> counters) {
  std::unique_ptr<VerbsEndpoint> ep(
      new VerbsEndpoint(fabric, node, std::move(counters)));
  const Device& device = fabric->device();
  // Room for a full chain on every queue pair is more than one waiting
  // thread can have in flight, so the CQ cannot overflow.
  ep->cq_ = ibv_create_cq(device.context(), 2 * kMaxChain, nullptr, nullptr, 0);
  if (ep->cq_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "ibv_create_cq for an endpoint of compute node %d failed: %s",
        node->id(), ErrnoText(errno)));
  }
  ep->staging_.reset(new uint8_t[kStagingBytes]);
  auto mr = device.Register(ep->staging_.get(), kStagingBytes,
                            IBV_ACCESS_LOCAL_WRITE);
  if (!mr.ok()) return mr.status();
  ep->staging_mr_ = *std::move(mr);
  ep->fences_seen_ = fabric->fence_count(node->id());
  ep->memory_qps_.resize(fabric->memory_node_count());
  ep->peer_qps_.resize(fabric->compute_node_count());
  ep->peer_admissions_seen_.resize(fabric->compute_node_count());
  for (int n = 0; n < fabric->compute_node_count(); ++n) {
    ep->peer_admissions_seen_[n] =
        fabric->admission_count(static_cast<ComputeNodeId>(n));
  }
  return ep;
}

VerbsEndpoint::~VerbsEndpoint() {
  if (absl::Status s = CompletePosted(); !s.ok()) {
    LOG(WARNING) << "a posted peer write failed: " << s;
  }
  // Queue pairs first: a CQ still in use cannot be destroyed.
  memory_qps_.clear();
  peer_qps_.clear();
  if (cq_ != nullptr && ibv_destroy_cq(cq_) != 0) {
    LOG(ERROR) << "ibv_destroy_cq of an endpoint: " << ErrnoText(errno);
  }
}

ComputeNodeId VerbsEndpoint::node_id() const { return node_->id(); }

absl::StatusOr<QueuePair*> VerbsEndpoint::MemoryNodeQp(MemoryNodeId id) {
  std::unique_ptr<QueuePair>& slot = memory_qps_[id];
  if (slot != nullptr) return slot.get();
  const RemoteMemoryNode& mn = fabric_->memory_node(id);
  QueuePair::Options options;
  options.cq = cq_;
  options.max_send_wr = kMaxChain;
  options.private_data =
      ConnectRequestBytes(node_->id(), fabric_->incarnation(node_->id()));
  std::string reply;
  auto qp = QueuePair::Connect(fabric_->device(), mn.node, options, &reply);
  if (!qp.ok()) return qp.status();
  MemoryNodeReply r;
  if (reply.size() < sizeof(r)) {
    return absl::UnavailableError(absl::StrFormat(
        "%s accepted without describing its region", mn.node.ToString()));
  }
  std::memcpy(&r, reply.data(), sizeof(r));
  if (r.magic != kWireMagic || r.rkey != mn.rkey ||
      r.region_address != mn.address) {
    return absl::UnavailableError(absl::StrFormat(
        "%s now serves another region than at start-up (was it restarted?); "
        "its data is gone, restart the compute nodes",
        mn.node.ToString()));
  }
  slot = *std::move(qp);
  return slot.get();
}

absl::StatusOr<QueuePair*> VerbsEndpoint::PeerQp(ComputeNodeId id) {
  std::unique_ptr<QueuePair>& slot = peer_qps_[id];
  if (const uint32_t admitted = fabric_->admission_count(id);
      admitted != peer_admissions_seen_[id]) {
    // It rejoined (perhaps a new process on the same port): the queue pair
    // opened to its earlier incarnation leads nowhere.
    peer_admissions_seen_[id] = admitted;
    if (posted_node_ == static_cast<int>(id)) posted_node_ = -1;
    slot.reset();
  }
  if (slot != nullptr) return slot.get();
  QueuePair::Options options;
  options.cq = cq_;
  options.max_send_wr = kMaxChain;
  options.private_data =
      ConnectRequestBytes(node_->id(), fabric_->incarnation(node_->id()));
  auto qp = QueuePair::Connect(
      fabric_->device(), fabric_->compute_node_address(id), options, nullptr);
  if (!qp.ok()) return qp.status();
  slot = *std::move(qp);
  return slot.get();
}

absl::Status VerbsEndpoint::PostAndWait(std::unique_ptr<QueuePair>& slot,
                                        ibv_send_wr* first, uint64_t wr_id,
                                        absl::string_view what, int peer) {
  absl::Status s = slot->Post(first);
  if (s.ok()) {
    // A peer whose process died answers nothing, and its queue pair's
    // retries take seconds to run out: stop waiting once it is fenced.
    std::function<bool()> fenced;
    if (peer >= 0) fenced = [this, peer] { return fabric_->blocked(peer); };
    s = AwaitCompletion(cq_, wr_id, absl::Now() + kCompletionTimeout, fenced);
  }
  if (s.ok()) return s;
  const std::string to = slot->peer().ToString();
  // In the error state (or with requests in doubt after a timeout) the
  // queue pair is useless; the next call connects a fresh one.
  slot.reset();
  return absl::Status(
      s.code(), absl::StrFormat("%s on %s failed: %s", what, to, s.message()));
}

absl::Status VerbsEndpoint::Validate(const Batch& batch) const {
  const MemoryNodeId node = batch[0].remote.node();
  if (node >= fabric_->memory_node_count()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "address %s names memory node %d, but there are %d",
        batch[0].remote.ToString(), node, fabric_->memory_node_count()));
  }
  const uint64_t bytes = fabric_->memory_node(node).bytes;
  for (const Batch::Op& op : batch) {
    if (op.remote.node() != node) {
      return absl::InvalidArgumentError(
          absl::StrFormat("a batch must stay on one memory node: %s and %s",
                          batch[0].remote.ToString(), op.remote.ToString()));
    }
    if (IsAtomic(op.kind) && op.remote.offset() % 8 != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("atomic on %s: the word must be 8-byte aligned",
                          op.remote.ToString()));
    }
    if (op.remote.offset() > bytes || op.length > bytes - op.remote.offset()) {
      return absl::OutOfRangeError(absl::StrFormat(
          "%d bytes at %s run past the end of the %d-byte memory node",
          op.length, op.remote.ToString(), bytes));
    }
  }
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::CheckNotBlocked() {
  if (!fabric_->blocked(node_->id())) {
    const uint32_t fences = fabric_->fence_count(node_->id());
    if (fences != fences_seen_) {
      // Readmitted after a fence: the memory nodes and peers moved this
      // endpoint's queue pairs to the error state; connect new ones.
      fences_seen_ = fences;
      posted_node_ = -1;
      for (auto& qp : memory_qps_) qp.reset();
      for (auto& qp : peer_qps_) qp.reset();
    }
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrFormat(
      "compute node %d is fenced: it was declared failed, and its operations "
      "no longer reach memory nodes or peers",
      node_->id()));
}

absl::Status VerbsEndpoint::CheckReachable(ComputeNodeId peer, bool* lost) {
  if (absl::Status s = CheckNotBlocked(); !s.ok()) return s;
  *lost = fabric_->crashed(peer);
  if (*lost || !fabric_->blocked(peer)) return absl::OkStatus();
  return absl::UnavailableError(absl::StrFormat(
      "compute node %d is fenced (declared failed): nothing reaches it", peer));
}

absl::Status VerbsEndpoint::Execute(const Batch& batch) {
  if (batch.empty()) return absl::OkStatus();
  if (absl::Status s = CheckNotBlocked(); !s.ok()) return s;
  // Everything is checked before anything is posted: a bad op fails the
  // whole batch with nothing done, as on loopback.
  if (absl::Status s = Validate(batch); !s.ok()) return s;
  for (size_t begin = 0; begin < batch.size();) {
    size_t end = begin;
    if (absl::Status s = RunChain(batch, begin, &end); !s.ok()) return s;
    begin = end;
  }
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::RunChain(const Batch& batch, size_t begin,
                                     size_t* end) {
  const MemoryNodeId node = batch[0].remote.node();
  auto qp = MemoryNodeQp(node);
  if (!qp.ok()) return qp.status();
  const RemoteMemoryNode& mn = fabric_->memory_node(node);

  ibv_send_wr wrs[kMaxChain] = {};
  ibv_sge sges[kMaxChain] = {};
  struct CopyOut {
    void* to;
    const uint8_t* from;
    uint32_t length;
    uint64_t* result;
  };
  CopyOut copy_outs[kMaxChain];
  int copies = 0;
  std::vector<MemoryRegion> temporary;  // buffers too big to stage
  uint64_t staged = 0;
  bool after_write_or_atomic = false;
  size_t i = begin;
  int n = 0;
  for (; i < batch.size() && n < static_cast<int>(kMaxChain); ++i, ++n) {
    const Batch::Op& op = batch[i];
    ibv_send_wr& wr = wrs[n];
    ibv_sge& sge = sges[n];
    const bool read = op.kind == Batch::Kind::kRead;
    uint32_t lkey = 0;
    void* buffer = read ? op.local : const_cast<void*>(op.source);
    if (IsAtomic(op.kind)) {
      staged = (staged + 7) / 8 * 8;
      if (staged + 8 > kStagingBytes) break;
      copy_outs[copies++] = {nullptr, staging_.get() + staged, 8, op.result};
      sge.addr = reinterpret_cast<uint64_t>(staging_.get() + staged);
      sge.lkey = staging_mr_->lkey;
      staged += 8;
    } else if (op.length == 0 || node_->LocalKey(buffer, op.length, &lkey)) {
      sge.addr = reinterpret_cast<uint64_t>(buffer);
      sge.lkey = lkey;
    } else if (op.length <= kStagingBytes - staged) {
      uint8_t* slot = staging_.get() + staged;
      if (read) {
        copy_outs[copies++] = {op.local, slot, op.length, nullptr};
      } else {
        std::memcpy(slot, op.source, op.length);
      }
      sge.addr = reinterpret_cast<uint64_t>(slot);
      sge.lkey = staging_mr_->lkey;
      staged += op.length;
    } else if (n > 0) {
      break;  // the next chain starts with this op and an empty staging area
    } else {
      auto mr = fabric_->device().Register(buffer, op.length,
                                           read ? IBV_ACCESS_LOCAL_WRITE : 0);
      if (!mr.ok()) return mr.status();
      sge.addr = reinterpret_cast<uint64_t>(buffer);
      sge.lkey = (*mr)->lkey;
      temporary.push_back(*std::move(mr));
    }
    sge.length = op.length;
    wr.sg_list = &sge;
    wr.num_sge = op.length == 0 ? 0 : 1;
    const uint64_t remote = mn.address + op.remote.offset();
    switch (op.kind) {
      case Batch::Kind::kRead:
      case Batch::Kind::kWrite:
        wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = remote;
        wr.wr.rdma.rkey = mn.rkey;
        break;
      case Batch::Kind::kCompareAndSwap:
      case Batch::Kind::kFetchAndAdd:
        wr.opcode = op.kind == Batch::Kind::kFetchAndAdd
                        ? IBV_WR_ATOMIC_FETCH_AND_ADD
                        : IBV_WR_ATOMIC_CMP_AND_SWP;
        wr.wr.atomic.remote_addr = remote;
        wr.wr.atomic.rkey = mn.rkey;
        wr.wr.atomic.compare_add = op.compare_or_add;
        wr.wr.atomic.swap = op.swap;
        break;
    }
    // The fence holds a READ or atomic until the earlier WRITEs and
    // atomics of the chain have completed at the memory node. RC executes
    // requests in order, but the verbs ordering rules let a NIC run a READ
    // or atomic ahead of an earlier atomic (they use different engines),
    // and the batch contract (batch.h) promises that a later op observes an
    // earlier one, e.g. the READ of a SELCC miss sees the latch its CAS set.
    if ((read || IsAtomic(op.kind)) && after_write_or_atomic) {
      wr.send_flags |= IBV_SEND_FENCE;
    }
    after_write_or_atomic |= !read;
    if (n > 0) wrs[n - 1].next = &wr;
  }
  *end = i;
  ibv_send_wr& last = wrs[n - 1];
  last.send_flags |= IBV_SEND_SIGNALED;
  // One id for the chain: a request of it that fails completes with it.
  const uint64_t chain = next_wr_id_++;
  for (int k = 0; k < n; ++k) wrs[k].wr_id = chain;
  const std::string what = n == 1 ? std::string(OpName(batch[begin].kind))
                                  : absl::StrFormat("batch of %d ops", n);
  if (absl::Status s = PostAndWait(memory_qps_[node], wrs, last.wr_id, what);
      !s.ok()) {
    return s;
  }
  for (int c = 0; c < copies; ++c) {
    const CopyOut& out = copy_outs[c];
    if (out.to != nullptr) {
      std::memcpy(out.to, out.from, out.length);
    } else if (out.result != nullptr) {
      std::memcpy(out.result, out.from, 8);
    }
  }
  for (size_t k = begin; k < i; ++k) {
    const Batch::Op& op = batch[k];
    switch (op.kind) {
      case Batch::Kind::kRead:
        counters_->AddRead(op.length);
        break;
      case Batch::Kind::kWrite:
        counters_->AddWrite(op.length);
        break;
      case Batch::Kind::kCompareAndSwap:
        counters_->AddCas();
        break;
      case Batch::Kind::kFetchAndAdd:
        counters_->AddFaa();
        break;
    }
  }
  counters_->AddRoundTrip();
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::CheckPeerWrite(const PeerAddress& dst,
                                           uint32_t length) const {
  if (dst.node >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peer write to compute node %d, but there are %d",
                        dst.node, fabric_->compute_node_count()));
  }
  // A peer in this process is checked here, so a bad address is an error
  // rather than a remote access error that breaks the queue pair.
  if (VerbsComputeNode* local = fabric_->hosted(dst.node); local != nullptr) {
    return local->CheckPeerWrite(dst, length);
  }
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::CompletePosted() {
  if (posted_node_ < 0) return absl::OkStatus();
  const int node = posted_node_;
  posted_node_ = -1;
  // Fenced: the peer's listener moved the queue pair to the error state,
  // and no completion will come.
  if (absl::Status s = CheckNotBlocked(); !s.ok()) return s;
  if (peer_qps_[node] == nullptr) {
    return absl::UnavailableError(absl::StrFormat(
        "the queue pair of a posted write to compute node %d failed", node));
  }
  ibv_send_wr wr{};
  wr.wr_id = next_wr_id_++;
  wr.num_sge = 0;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = posted_dst_.address;
  wr.wr.rdma.rkey = posted_dst_.key;
  return PostAndWait(peer_qps_[node], &wr, wr.wr_id, "posted peer WRITE", node);
}

absl::Status VerbsEndpoint::PostWriteToPeer(const PeerAddress& dst,
                                            const void* src, uint32_t length) {
  if (length > kPostedBytes) return WriteToPeer(dst, src, length);
  if (absl::Status s = CheckPeerWrite(dst, length); !s.ok()) return s;
  bool lost = false;
  if (absl::Status s = CheckReachable(dst.node, &lost); !s.ok() || lost) {
    return s;
  }
  if (absl::Status s = CompletePosted(); !s.ok()) return s;
  if (posted_ == nullptr) {
    posted_.reset(new uint8_t[kPostedBytes]);
    auto mr = fabric_->device().Register(posted_.get(), kPostedBytes,
                                         IBV_ACCESS_LOCAL_WRITE);
    if (!mr.ok()) {
      posted_.reset();
      return mr.status();
    }
    posted_mr_ = *std::move(mr);
  }
  auto qp = PeerQp(dst.node);
  if (!qp.ok()) return qp.status();
  std::memcpy(posted_.get(), src, length);
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(posted_.get());
  sge.length = length;
  sge.lkey = posted_mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = next_wr_id_++;
  wr.sg_list = &sge;
  wr.num_sge = length == 0 ? 0 : 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = 0;  // completed by the next signalled request
  wr.wr.rdma.remote_addr = dst.address;
  wr.wr.rdma.rkey = dst.key;
  if (absl::Status s = (*qp)->Post(&wr); !s.ok()) {
    peer_qps_[dst.node].reset();
    return absl::Status(s.code(),
                        absl::StrFormat("posting a peer WRITE to compute node "
                                        "%d failed: %s",
                                        dst.node, s.message()));
  }
  posted_node_ = dst.node;
  posted_dst_ = dst;
  counters_->AddPeerWrite(length);
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::WriteToPeer(const PeerAddress& dst, const void* src,
                                        uint32_t length) {
  if (absl::Status s = CheckPeerWrite(dst, length); !s.ok()) return s;
  bool lost = false;
  if (absl::Status s = CheckReachable(dst.node, &lost); !s.ok() || lost) {
    return s;
  }
  auto qp = PeerQp(dst.node);
  if (!qp.ok()) return qp.status();
  ibv_sge sge{};
  MemoryRegion temporary;
  uint32_t lkey = 0;
  void* buffer = const_cast<void*>(src);
  if (length == 0 || node_->LocalKey(buffer, length, &lkey)) {
    sge.addr = reinterpret_cast<uint64_t>(buffer);
    sge.lkey = lkey;
  } else if (length <= kStagingBytes) {
    std::memcpy(staging_.get(), src, length);
    sge.addr = reinterpret_cast<uint64_t>(staging_.get());
    sge.lkey = staging_mr_->lkey;
  } else {
    auto mr = fabric_->device().Register(buffer, length, 0);
    if (!mr.ok()) return mr.status();
    temporary = *std::move(mr);
    sge.addr = reinterpret_cast<uint64_t>(buffer);
    sge.lkey = temporary->lkey;
  }
  sge.length = length;
  ibv_send_wr wr{};
  wr.wr_id = next_wr_id_++;
  wr.sg_list = &sge;
  wr.num_sge = length == 0 ? 0 : 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = dst.address;
  wr.wr.rdma.rkey = dst.key;
  if (absl::Status s = PostAndWait(peer_qps_[dst.node], &wr, wr.wr_id,
                                   "peer WRITE", dst.node);
      !s.ok()) {
    return s;
  }
  counters_->AddPeerWrite(length);
  counters_->AddRoundTrip();
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::Send(ComputeNodeId dst, const Message& message) {
  if (dst >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message to compute node %d, but there are %d", dst,
                        fabric_->compute_node_count()));
  }
  bool lost = false;
  if (absl::Status s = CheckReachable(dst, &lost); !s.ok()) return s;
  if (lost) {
    // Sent into a process that died: lost, and the sender cannot tell.
    counters_->AddMessageSent();
    return absl::OkStatus();
  }
  if (VerbsComputeNode* local = fabric_->hosted(dst);
      local != nullptr && !local->accepts_messages()) {
    return absl::UnavailableError(absl::StrFormat(
        "send to compute node %d: it stopped its message handlers", dst));
  }
  auto qp = PeerQp(dst);
  if (!qp.ok()) return qp.status();
  Message* staged = reinterpret_cast<Message*>(staging_.get());
  *staged = message;
  staged->source = node_->id();
  ibv_sge sge{};
  sge.addr = reinterpret_cast<uint64_t>(staged);
  sge.length = sizeof(Message);
  sge.lkey = staging_mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = next_wr_id_++;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  // Signalled and awaited: the staging slot is reused by the next call, and
  // the ack means the message sits in the receiver's ring (exactly once).
  wr.send_flags = IBV_SEND_SIGNALED;
  // A posted write to `dst` went ahead on this queue pair: this SEND's
  // completion completes it, and the peer handles the SEND after the
  // WRITE's data is in place (fabric.h, PostWriteToPeer).
  if (posted_node_ == static_cast<int>(dst)) posted_node_ = -1;
  if (absl::Status s = PostAndWait(peer_qps_[dst], &wr, wr.wr_id, "SEND", dst);
      !s.ok()) {
    return s;
  }
  counters_->AddMessageSent();
  return absl::OkStatus();
}

}  // namespace strand::rdma::verbs
