#include "txn/write_through.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/failure_point.h"
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

// What a commit's or a prepared record's write-through builds, per thread.
thread_local std::vector<Line> lines;
thread_local std::vector<RedoRing::Write> writes;
thread_local std::string record;
thread_local uint64_t done_value;

// Encodes the ring record of `lines` (txn.commit_ts, what was `logged`).
absl::StatusOr<RedoRing::Slot> EncodeRecord(TxnState& txn,
                                            const RedoRing::Logged& logged) {
  writes.clear();
  for (const Line& l : lines) {
    writes.push_back(
        {l.range.remote,
         {reinterpret_cast<const char*>(l.range.data), l.range.bytes}});
  }
  // A ring full for that long means the log makes nothing durable any
  // more (redo_ring.h): the node is as stuck as its log.
  return txn.db.ring->Encode(txn.commit_ts, writes, logged, &record);
}

}  // namespace

absl::Status WriteThroughCommit(TxnState& txn) {
  cc::GclManager& manager = *txn.db.manager;
  if (!manager.options().write_through) return absl::OkStatus();
  // A prepared record (Txn::RecordPrepared) is in memory already.
  const std::optional<RedoRing::Slot> prepared =
      std::exchange(txn.prepared_record, std::nullopt);
  lines.clear();
  CollectLines(txn, lines);

  RedoRing* ring = txn.db.ring;
  RedoRing::Slot slot;
  if (prepared) {
    slot = *prepared;
    done_value = txn.commit_ts;
  } else if (lines.empty()) {
    return absl::OkStatus();
  } else if (ring != nullptr) {
    absl::StatusOr<RedoRing::Slot> encoded = EncodeRecord(
        txn, {txn.logged_type, txn.logged_txn_id, txn.logged_payload});
    if (!encoded.ok()) return encoded.status();
    slot = *encoded;
    done_value = txn.commit_ts;
  }
  // The ring's memory node first: the record before any data, anywhere.
  const rdma::MemoryNodeId first = ring != nullptr
                                       ? ring->address().node()
                                       : lines.front().range.remote.node();
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
    if (i == 0 && ring != nullptr && !prepared) {
      batch.Write(slot.record, record.data(),
                  static_cast<uint32_t>(record.size()));
    }
    for (const Line& l : lines) {
      if (l.range.remote.node() == nodes[i]) {
        batch.Write(l.range.remote, l.range.data, l.range.bytes);
      }
    }
    if (ring != nullptr && nodes.size() == 1) {  // after all the data
      batch.Write(slot.done, &done_value, sizeof(done_value));
    }
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
    if (i + 1 < nodes.size()) {
      ReachFailurePoint(manager.node_id(),
                        FailurePoint::kCommitPartlyWrittenThrough);
    }
  }
  if (ring != nullptr && nodes.size() > 1) {
    if (absl::Status s =
            endpoint.Write(slot.done, &done_value, sizeof(done_value));
        !s.ok()) {
      return s;
    }
  }
  for (const Line& l : lines) manager.MarkWrittenThrough(*l.guard);
  ReachFailurePoint(manager.node_id(), FailurePoint::kCommitWrittenThrough);
  return absl::OkStatus();
}

absl::Status WritePreparedRecord(TxnState& txn,
                                 const RedoRing::Logged& logged) {
  lines.clear();
  CollectLines(txn, lines);
  if (lines.empty()) return absl::OkStatus();
  absl::StatusOr<RedoRing::Slot> slot = EncodeRecord(txn, logged);
  if (!slot.ok()) return slot.status();
  if (absl::Status s = txn.ctx.endpoint().Write(
          slot->record, record.data(), static_cast<uint32_t>(record.size()));
      !s.ok()) {
    txn.db.ring->Done(*slot);
    return s;
  }
  txn.prepared_record = *slot;
  txn.prepared_type = logged.type;
  return absl::OkStatus();
}

void ForgetPreparedRecord(TxnState& txn, bool mark_done) {
  if (!txn.prepared_record) return;
  const RedoRing::Slot slot = *std::exchange(txn.prepared_record, std::nullopt);
  if (mark_done) {
    // Failing, this node is fenced (a crashed one rolls back its branches
    // at its rejoin): its reclaimer decides the record.
    const uint64_t done = txn.commit_ts;
    absl::Status s = txn.ctx.endpoint().Write(slot.done, &done, sizeof(done));
    VLOG_IF(1, !s.ok()) << "marking an aborted prepared record done: " << s;
  }
  txn.db.ring->Done(slot);
}

}  // namespace strand::txn
