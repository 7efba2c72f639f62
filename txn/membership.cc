#include "txn/membership.h"

#include "absl/strings/str_format.h"
#include "cc/root_words.h"
#include "rdma/batch.h"
#include "rdma/fabric_options.h"

namespace strand::txn {
namespace {

// live, epoch, then the heartbeats.
constexpr uint64_t kHeaderBytes = 16;
static_assert(kHeaderBytes + 8 * rdma::FabricOptions::kMaxComputeNodes <=
                  cc::kMembershipBytes,
              "a heartbeat word for every compute node");

rdma::GlobalAddress LiveWord() {
  return rdma::GlobalAddress(0, cc::kMembershipOffset);
}
rdma::GlobalAddress EpochWord() {
  return rdma::GlobalAddress(0, cc::kMembershipOffset + 8);
}

uint64_t SetBit(uint64_t live, int node) {
  return live | (uint64_t{1} << node);
}
uint64_t ClearBit(uint64_t live, int node) {
  return live & ~(uint64_t{1} << node);
}

}  // namespace

absl::StatusOr<Membership> Membership::Open(int compute_nodes,
                                            absl::Duration lease) {
  if (lease <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "membership lease %s: must be above 0", absl::FormatDuration(lease)));
  }
  absl::StatusOr<NodeWords> beats =
      NodeWords::At(cc::kMembershipOffset + kHeaderBytes,
                    cc::kMembershipBytes - kHeaderBytes, compute_nodes);
  if (!beats.ok()) return beats.status();
  return Membership(compute_nodes, lease, *beats);
}

absl::StatusOr<uint64_t> Membership::Change(rdma::Endpoint& endpoint,
                                            uint64_t (*change)(uint64_t live,
                                                               int node),
                                            int node) const {
  absl::StatusOr<uint64_t> seen = endpoint.FetchAndAdd(LiveWord(), 0);
  while (seen.ok()) {
    const uint64_t want = change(*seen, node);
    if (want == *seen) return *seen;
    absl::StatusOr<uint64_t> old =
        endpoint.CompareAndSwap(LiveWord(), *seen, want);
    if (!old.ok()) return old.status();
    if (*old == *seen) {
      absl::StatusOr<uint64_t> epoch = endpoint.FetchAndAdd(EpochWord(), 1);
      if (!epoch.ok()) return epoch.status();
      return *seen;
    }
    seen = *old;
  }
  return seen.status();
}

absl::Status Membership::Join(rdma::Endpoint& endpoint,
                              rdma::ComputeNodeId node) const {
  if (node >= compute_nodes_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d joins a deployment of %d", node, compute_nodes_));
  }
  return Change(endpoint, &SetBit, node).status();
}

absl::Status Membership::Leave(rdma::Endpoint& endpoint,
                               rdma::ComputeNodeId node) const {
  return Change(endpoint, &ClearBit, node).status();
}

absl::Status Membership::Beat(rdma::Endpoint& endpoint,
                              rdma::ComputeNodeId node) const {
  uint64_t live = 0;
  uint64_t beat = 0;
  rdma::Batch batch;
  batch.FetchAndAdd(LiveWord(), 0, &live);
  batch.FetchAndAdd(beats_.word(node), 1, &beat);
  if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  if (!IsLive(live, node)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "compute node %d is no longer a member of the deployment: it was "
        "declared failed (its lease of %s expired)",
        node, absl::FormatDuration(lease_)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Membership::View> Membership::Scan(rdma::Endpoint& endpoint,
                                                  Tracker& tracker,
                                                  absl::Time now) const {
  View view;
  std::vector<uint64_t> beats(compute_nodes_);
  rdma::Batch batch;
  batch.FetchAndAdd(LiveWord(), 0, &view.live);
  batch.FetchAndAdd(EpochWord(), 0, &view.epoch);
  for (int n = 0; n < compute_nodes_; ++n) {
    batch.FetchAndAdd(beats_.word(static_cast<rdma::ComputeNodeId>(n)), 0,
                      &beats[n]);
  }
  if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  if (tracker.beat.size() != beats.size()) {
    tracker.beat = beats;
    tracker.since.assign(beats.size(), now);
  }
  for (int n = 0; n < compute_nodes_; ++n) {
    if (beats[n] != tracker.beat[n]) {
      tracker.beat[n] = beats[n];
      tracker.since[n] = now;
    } else if (IsLive(view.live, n) && now - tracker.since[n] >= lease_) {
      view.expired.push_back(static_cast<rdma::ComputeNodeId>(n));
    }
  }
  return view;
}

absl::StatusOr<bool> Membership::DeclareFailed(rdma::Endpoint& endpoint,
                                               rdma::ComputeNodeId node) const {
  absl::StatusOr<uint64_t> before = Change(endpoint, &ClearBit, node);
  if (!before.ok()) return before.status();
  return IsLive(*before, node);
}

}  // namespace strand::txn
