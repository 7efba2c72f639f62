#include "rdma/loopback/loopback_endpoint.h"

#include <algorithm>
#include <atomic>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "base/cycle_clock.h"
#include "base/thread_ledger.h"
#include "rdma/loopback/loopback_compute_node.h"
#include "rdma/loopback/loopback_fabric.h"
#include "rdma/loopback/remote_memory.h"

namespace strand::rdma::loopback {
namespace {

std::atomic_ref<uint64_t> WordAt(uint8_t* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p));
}

// Inline handlers running on this thread, innermost last.
thread_local int inline_depth = 0;

}  // namespace

class LoopbackEndpoint::Pass {
 public:
  explicit Pass(LoopbackEndpoint& endpoint)
      : endpoint_(endpoint), entered_(endpoint.gate_->Enter(*endpoint.seat_)) {}
  ~Pass() {
    if (entered_) endpoint_.gate_->Exit(*endpoint_.seat_);
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;

  bool ok() const { return entered_; }
  absl::Status status() const {
    return absl::UnavailableError(absl::StrFormat(
        "compute node %d is fenced: it was declared failed, and its "
        "operations no longer reach memory nodes or peers",
        endpoint_.node_));
  }

 private:
  LoopbackEndpoint& endpoint_;
  const bool entered_;
};

LoopbackEndpoint::LoopbackEndpoint(LoopbackFabric* fabric, ComputeNodeId node,
                                   std::shared_ptr<EndpointCounters> counters,
                                   std::shared_ptr<FenceGate> gate)
    : fabric_(fabric),
      node_(node),
      counters_(std::move(counters)),
      gate_(std::move(gate)),
      seat_(gate_->Sit()) {}

LoopbackEndpoint::~LoopbackEndpoint() {
  inline_endpoints_.clear();
  gate_->Leave(seat_);
}

absl::Status LoopbackEndpoint::CheckReachable(ComputeNodeId node) const {
  if (!fabric_->node(node).gate().fenced()) return absl::OkStatus();
  return absl::UnavailableError(absl::StrFormat(
      "compute node %d is fenced (declared failed): nothing reaches it", node));
}

absl::Status LoopbackEndpoint::Execute(const Batch& batch) {
  if (batch.empty()) return absl::OkStatus();
  const Pass pass(*this);
  if (!pass.ok()) return pass.status();
  const uint64_t emulation_start = CycleNow();
  // Validate everything before touching memory: a bad op fails the whole
  // batch with nothing done, which callers can reason about.
  absl::InlinedVector<uint8_t*, 4> targets;
  const MemoryNodeId node = batch[0].remote.node();
  uint64_t payload = 0;
  for (const Batch::Op& op : batch) {
    if (op.remote.node() != node) {
      return absl::InvalidArgumentError(
          absl::StrFormat("a batch must stay on one memory node: %s and %s",
                          batch[0].remote.ToString(), op.remote.ToString()));
    }
    const bool atomic = op.kind == Batch::Kind::kCompareAndSwap ||
                        op.kind == Batch::Kind::kFetchAndAdd;
    if (atomic && op.remote.offset() % 8 != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("atomic on %s: the word must be 8-byte aligned",
                          op.remote.ToString()));
    }
    auto target = fabric_->Translate(op.remote, op.length);
    if (!target.ok()) return target.status();
    targets.push_back(*target);
    payload += op.length;
  }

  for (size_t i = 0; i < batch.size(); ++i) {
    const Batch::Op& op = batch[i];
    uint8_t* target = targets[i];
    switch (op.kind) {
      case Batch::Kind::kRead:
        CopyFromRemote(op.local, target, op.length);
        counters_->AddRead(op.length);
        break;
      case Batch::Kind::kWrite:
        CopyToRemote(target, op.source, op.length);
        counters_->AddWrite(op.length);
        break;
      case Batch::Kind::kCompareAndSwap: {
        uint64_t expected = op.compare_or_add;
        WordAt(target).compare_exchange_strong(expected, op.swap);
        if (op.result != nullptr) *op.result = expected;
        counters_->AddCas();
        break;
      }
      case Batch::Kind::kFetchAndAdd: {
        const uint64_t old = WordAt(target).fetch_add(op.compare_or_add);
        if (op.result != nullptr) *op.result = old;
        counters_->AddFaa();
        break;
      }
    }
  }
  ThreadLedger::Mine().ChargeFabricEmulationCycles(CycleNow() -
                                                   emulation_start);
  counters_->AddRoundTrip();
  fabric_->cost_model().PayMemoryRoundTrip(node, static_cast<int>(batch.size()),
                                           payload);
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::CopyToPeer(const PeerAddress& dst,
                                          const void* src, uint32_t length) {
  if (dst.node >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peer write to compute node %d, but there are %d",
                        dst.node, fabric_->compute_node_count()));
  }
  if (absl::Status s = CheckReachable(dst.node); !s.ok()) return s;
  if (fabric_->node(dst.node).gate().killed()) return absl::OkStatus();  // lost
  const uint64_t emulation_start = CycleNow();
  auto target = fabric_->node(dst.node).TranslatePeer(dst, length);
  if (!target.ok()) return target.status();
  CopyToRemote(*target, src, length);
  ThreadLedger::Mine().ChargeFabricEmulationCycles(CycleNow() -
                                                   emulation_start);
  counters_->AddPeerWrite(length);
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::WriteToPeer(const PeerAddress& dst,
                                           const void* src, uint32_t length) {
  const Pass pass(*this);
  if (!pass.ok()) return pass.status();
  if (absl::Status s = CopyToPeer(dst, src, length); !s.ok()) return s;
  counters_->AddRoundTrip();
  fabric_->cost_model().PayPeerRoundTrip(length);
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::PostWriteToPeer(const PeerAddress& dst,
                                               const void* src,
                                               uint32_t length) {
  // Landed at once, which is legal: nobody may look before the next
  // message. Only the transfer is charged: the write travels ahead of that
  // message on the same link.
  const Pass pass(*this);
  if (!pass.ok()) return pass.status();
  if (absl::Status s = CopyToPeer(dst, src, length); !s.ok()) return s;
  fabric_->cost_model().PayTransfer(length);
  return absl::OkStatus();
}

absl::StatusOr<Message> LoopbackEndpoint::Prepare(ComputeNodeId dst,
                                                  const Message& message) {
  if (dst >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message to compute node %d, but there are %d", dst,
                        fabric_->compute_node_count()));
  }
  Message m = message;
  m.source = node_;
  return m;
}

LoopbackEndpoint& LoopbackEndpoint::InlineEndpoint(ComputeNodeId dst) {
  if (inline_endpoints_.size() <= dst) inline_endpoints_.resize(dst + 1);
  std::unique_ptr<LoopbackEndpoint>& ep = inline_endpoints_[dst];
  if (ep == nullptr) ep = fabric_->node(dst).NewLoopbackEndpoint();
  return *ep;
}

absl::Status LoopbackEndpoint::Deliver(ComputeNodeId dst,
                                       const Message& message) {
  if (absl::Status s = CheckReachable(dst); !s.ok()) return s;
  LoopbackComputeNode& receiver = fabric_->node(dst);
  const CostModel& cost = fabric_->cost_model();
  if (receiver.gate().killed()) {
    // Sent into a process that died: lost, and the sender cannot tell.
    counters_->AddMessageSent();
    return absl::OkStatus();
  }
  if (fabric_->options().message_delivery == MessageDelivery::kInline &&
      inline_depth < LoopbackComputeNode::kMaxInlineDepth) {
    if (const MessageHandler* handler = receiver.BeginInline()) {
      counters_->AddMessageSent();
      LoopbackEndpoint& handler_endpoint = InlineEndpoint(dst);
      handler_endpoint.CountReceived();
      {
        ChargeScope exchange;  // the sender pays once, when it closes
        cost.PayOneWay();
        ++inline_depth;
        (*handler)(message, handler_endpoint);
        --inline_depth;
      }
      receiver.EndInline();
      return absl::OkStatus();
    }
  }
  MessageInbox::Entry entry{message, 0, gate_->generation()};
  if (!cost.is_free()) {
    entry.deliver_at_ns = CostModel::NowNanos() + cost.OneWayNanos();
  }
  if (absl::Status s = receiver.inbox().Push(entry); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("send to compute node %d: %s",
                                                  dst, s.message()));
  }
  counters_->AddMessageSent();
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::Send(ComputeNodeId dst, const Message& message) {
  const Pass pass(*this);
  if (!pass.ok()) return pass.status();
  absl::StatusOr<Message> m = Prepare(dst, message);
  if (!m.ok()) return m.status();
  return Deliver(dst, *m);
}

void LoopbackEndpoint::Multicast(absl::Span<const ComputeNodeId> dsts,
                                 const Message& message,
                                 absl::Span<absl::Status> results) {
  absl::InlinedVector<Message, 4> copies(dsts.size(), message);
  SendEach(dsts, copies, results);
}

void LoopbackEndpoint::SendEach(absl::Span<const ComputeNodeId> dsts,
                                absl::Span<const Message> messages,
                                absl::Span<absl::Status> results) {
  // Each exchange runs in a scope of its own, which is taken, not paid:
  // the messages were posted back to back, so the sender waits for the
  // slowest exchange only.
  const Pass pass(*this);
  if (!pass.ok()) {
    for (absl::Status& r : results) r = pass.status();
    return;
  }
  int64_t slowest = 0;
  for (size_t i = 0; i < dsts.size(); ++i) {
    ChargeScope branch;
    absl::StatusOr<Message> m = Prepare(dsts[i], messages[i]);
    results[i] = m.ok() ? Deliver(dsts[i], *m) : m.status();
    slowest = std::max(slowest, branch.Take());
  }
  CostModel::Pay(slowest);
}

}  // namespace strand::rdma::loopback
