#include "txn/write_through.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "glog/logging.h"
#include "rdma/batch.h"
#include "txn/redo_ring.h"

namespace strand::txn {
namespace {

struct Line {
  cc::ExclusiveGuard* guard;
  cc::GclManager::DirtyRange range;
};

// The lines of `txn` whose bytes memory lacks, by memory node.
void CollectLines(TxnState& txn, std::vector<Line>& lines) {
  const cc::GclManager& manager = *txn.db.manager;
  auto add = [&](cc::ExclusiveGuard& guard) {
    if (auto range = manager.DirtyBytes(guard)) {
      lines.push_back({&guard, *range});
    }
  };
  txn.latches.ForEachExclusive(add);
  for (auto& [leaf, guard] : txn.index_leaves) add(guard);
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.range.remote < b.range.remote;
  });
}

}  // namespace

absl::Status WriteThroughCommit(TxnState& txn) {
  cc::GclManager& manager = *txn.db.manager;
  if (!manager.options().write_through) return absl::OkStatus();
  thread_local std::vector<Line> lines;
  thread_local std::vector<RedoRing::Write> writes;
  thread_local std::string record;
  thread_local uint64_t done_value;
  // What this commit logged and decided is this commit's only.
  struct Consume {
    TxnState& txn;
    ~Consume() {
      txn.decision_word = rdma::GlobalAddress();
      txn.decision_gtid = 0;
      txn.logged_type = wal::RecordType::kCommit;
      txn.logged_txn_id = 0;
    }
  } consume{txn};
  const bool decides = !txn.decision_word.is_null();
  lines.clear();
  CollectLines(txn, lines);
  if (lines.empty()) {
    // Nothing of its own to write: the decision alone.
    if (!decides) return absl::OkStatus();
    return txn.ctx.endpoint().Write(txn.decision_word, &txn.decision_gtid,
                                    sizeof(txn.decision_gtid));
  }

  RedoRing* ring = txn.db.ring;
  RedoRing::Slot slot;
  if (ring != nullptr) {
    writes.clear();
    for (const Line& l : lines) {
      writes.push_back(
          {l.range.remote,
           {reinterpret_cast<const char*>(l.range.data), l.range.bytes}});
    }
    absl::StatusOr<RedoRing::Slot> encoded = ring->Encode(
        txn.commit_ts, writes,
        {txn.logged_type, txn.logged_txn_id, txn.logged_payload}, &record);
    // A ring full for that long means the log makes nothing durable any
    // more (redo_ring.h): the node is as stuck as its log.
    if (!encoded.ok()) return encoded.status();
    slot = *encoded;
    done_value = txn.commit_ts;
  }
  // The ring's memory node first: the record before any data, anywhere.
  // The decision word shares the ring's memory node
  // (partition/decision_board.h): after the record, before any data.
  const rdma::MemoryNodeId first = ring != nullptr ? ring->address().node()
                                   : decides
                                       ? txn.decision_word.node()
                                       : lines.front().range.remote.node();
  DCHECK(!decides || txn.decision_word.node() == first);
  absl::InlinedVector<rdma::MemoryNodeId, 4> nodes = {first};
  for (const Line& l : lines) {
    if (std::find(nodes.begin(), nodes.end(), l.range.remote.node()) ==
        nodes.end()) {
      nodes.push_back(l.range.remote.node());
    }
  }
  rdma::Endpoint& endpoint = txn.ctx.endpoint();
  // A batch that fails (this node was fenced, or crashed) gives its room
  // back all the same: the ring is its survivors' to read now, not its.
  struct GiveBack {
    RedoRing* ring;
    const RedoRing::Slot& slot;
    ~GiveBack() {
      if (ring != nullptr) ring->Done(slot);
    }
  } give_back{ring, slot};
  for (size_t i = 0; i < nodes.size(); ++i) {
    rdma::Batch batch;
    if (i == 0 && ring != nullptr) {
      batch.Write(slot.record, record.data(),
                  static_cast<uint32_t>(record.size()));
    }
    if (i == 0 && decides) {
      batch.Write(txn.decision_word, &txn.decision_gtid,
                  sizeof(txn.decision_gtid));
    }
    for (const Line& l : lines) {
      if (l.range.remote.node() == nodes[i]) {
        batch.Write(l.range.remote, l.range.data, l.range.bytes);
      }
    }
    if (ring != nullptr && nodes.size() == 1) {
      batch.Write(slot.done, &done_value, sizeof(done_value));
    }
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  }
  if (ring != nullptr && nodes.size() > 1) {
    if (absl::Status s =
            endpoint.Write(slot.done, &done_value, sizeof(done_value));
        !s.ok()) {
      return s;
    }
  }
  for (const Line& l : lines) manager.MarkWrittenThrough(*l.guard);
  return absl::OkStatus();
}

}  // namespace strand::txn
