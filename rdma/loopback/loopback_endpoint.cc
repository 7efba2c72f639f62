#include "rdma/loopback/loopback_endpoint.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "rdma/loopback/loopback_compute_node.h"
#include "rdma/loopback/loopback_fabric.h"
#include "rdma/loopback/remote_memory.h"

namespace strand::rdma {
namespace {

std::atomic_ref<uint64_t> WordAt(uint8_t* p) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p));
}

}  // namespace

absl::Status LoopbackEndpoint::Execute(const Batch& batch) {
  if (batch.empty()) return absl::OkStatus();
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
  counters_->AddRoundTrip();
  fabric_->cost_model().PayRoundTrip(payload);
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::WriteToPeer(const PeerAddress& dst,
                                           const void* src, uint32_t length) {
  if (dst.node >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("peer write to compute node %d, but there are %d",
                        dst.node, fabric_->compute_node_count()));
  }
  auto target = fabric_->node(dst.node).TranslatePeer(dst, length);
  if (!target.ok()) return target.status();
  CopyToRemote(*target, src, length);
  counters_->AddPeerWrite(length);
  counters_->AddRoundTrip();
  fabric_->cost_model().PayRoundTrip(length);
  return absl::OkStatus();
}

absl::Status LoopbackEndpoint::Send(ComputeNodeId dst, const Message& message) {
  if (dst >= fabric_->compute_node_count()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("message to compute node %d, but there are %d", dst,
                        fabric_->compute_node_count()));
  }
  MessageInbox::Entry entry{message, 0};
  entry.message.source = node_;
  const CostModel& cost = fabric_->cost_model();
  if (!cost.is_free()) {
    entry.deliver_at_ns = CostModel::NowNanos() + cost.OneWayNanos();
  }
  if (absl::Status s = fabric_->node(dst).inbox().Push(entry); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("send to compute node %d: %s",
                                                  dst, s.message()));
  }
  counters_->AddMessageSent();
  return absl::OkStatus();
}

}  // namespace strand::rdma
