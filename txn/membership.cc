#include "txn/membership.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cc/root_words.h"
#include "rdma/batch.h"
#include "rdma/fabric_options.h"

namespace strand::txn {
namespace {

// live, epoch, fenced, stealable, reclaimed, then the heartbeats.
constexpr uint64_t kLiveOffset = 0;
constexpr uint64_t kEpochOffset = 8;
constexpr uint64_t kFencedOffset = 16;
constexpr uint64_t kStealableOffset = 24;
constexpr uint64_t kReclaimedOffset = 32;
constexpr uint64_t kHeaderBytes = 40;
static_assert(kHeaderBytes + 8 * rdma::FabricOptions::kMaxComputeNodes <=
                  cc::kMembershipBytes,
              "a heartbeat word for every compute node");

rdma::GlobalAddress Word(uint64_t offset) {
  return rdma::GlobalAddress(0, cc::kMembershipOffset + offset);
}

uint64_t SetBit(uint64_t bits, int node) {
  return bits | (uint64_t{1} << node);
}
uint64_t ClearBit(uint64_t bits, int node) {
  return bits & ~(uint64_t{1} << node);
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
  absl::StatusOr<NodeWords> seen =
      NodeWords::At(cc::kSeenEpochsOffset, cc::kSeenEpochsBytes, compute_nodes);
  if (!seen.ok()) return seen.status();
  absl::StatusOr<NodeWords> reclaimers =
      NodeWords::At(cc::kReclaimersOffset, cc::kReclaimersBytes, compute_nodes);
  if (!reclaimers.ok()) return reclaimers.status();
  return Membership(compute_nodes, lease, *beats, *seen, *reclaimers);
}

absl::StatusOr<uint64_t> Membership::Change(
    rdma::Endpoint& endpoint, rdma::GlobalAddress word,
    uint64_t (*change)(uint64_t bits, int node), int node) const {
  absl::StatusOr<uint64_t> seen = endpoint.FetchAndAdd(word, 0);
  while (seen.ok()) {
    const uint64_t want = change(*seen, node);
    if (want == *seen) return *seen;
    absl::StatusOr<uint64_t> old = endpoint.CompareAndSwap(word, *seen, want);
    if (!old.ok()) return old.status();
    if (*old == *seen) return *seen;
    seen = *old;
  }
  return seen.status();
}

absl::Status Membership::AdvanceEpoch(rdma::Endpoint& endpoint) const {
  return endpoint.FetchAndAdd(Word(kEpochOffset), 1).status();
}

absl::Status Membership::Join(rdma::Endpoint& endpoint,
                              rdma::ComputeNodeId node) const {
  if (node >= compute_nodes_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d joins a deployment of %d", node, compute_nodes_));
  }
  // Stage bits and claim first: nobody reads them for a member.
  for (uint64_t stage : {kFencedOffset, kStealableOffset, kReclaimedOffset}) {
    if (auto s = Change(endpoint, Word(stage), &ClearBit, node); !s.ok()) {
      return s.status();
    }
  }
  if (absl::Status s = reclaimers_.Set(endpoint, node, 0); !s.ok()) return s;
  absl::StatusOr<uint64_t> before =
      Change(endpoint, Word(kLiveOffset), &SetBit, node);
  if (!before.ok()) return before.status();
  return AdvanceEpoch(endpoint);
}

absl::Status Membership::Leave(rdma::Endpoint& endpoint,
                               rdma::ComputeNodeId node) const {
  absl::StatusOr<uint64_t> before =
      Change(endpoint, Word(kLiveOffset), &ClearBit, node);
  if (!before.ok()) return before.status();
  if (!IsLive(*before, node)) return absl::OkStatus();
  return AdvanceEpoch(endpoint);
}

absl::Status Membership::Beat(rdma::Endpoint& endpoint,
                              rdma::ComputeNodeId node) const {
  uint64_t live = 0;
  uint64_t beat = 0;
  rdma::Batch batch;
  batch.FetchAndAdd(Word(kLiveOffset), 0, &live);
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
  std::vector<uint64_t> claims(compute_nodes_);
  rdma::Batch batch;
  batch.FetchAndAdd(Word(kLiveOffset), 0, &view.live);
  batch.FetchAndAdd(Word(kEpochOffset), 0, &view.epoch);
  batch.FetchAndAdd(Word(kFencedOffset), 0, &view.fenced);
  batch.FetchAndAdd(Word(kStealableOffset), 0, &view.stealable);
  batch.FetchAndAdd(Word(kReclaimedOffset), 0, &view.reclaimed);
  for (int n = 0; n < compute_nodes_; ++n) {
    const auto id = static_cast<rdma::ComputeNodeId>(n);
    batch.FetchAndAdd(beats_.word(id), 0, &beats[n]);
    batch.FetchAndAdd(reclaimers_.word(id), 0, &claims[n]);
  }
  if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
  for (uint64_t claim : claims) {
    view.reclaimer.push_back(static_cast<int>(claim) - 1);
  }
  if (tracker.beat.size() != beats.size()) {
    tracker.beat = beats;
    tracker.since.assign(beats.size(), now);
  }
  for (int n = 0; n < compute_nodes_; ++n) {
    if (beats[n] != tracker.beat[n] || !IsLive(view.live, n)) {
      // A non-member's lease starts when it (re)joins, not at the last
      // beat of its earlier incarnation.
      tracker.beat[n] = beats[n];
      tracker.since[n] = now;
    } else if (now - tracker.since[n] >= lease_) {
      view.expired.push_back(static_cast<rdma::ComputeNodeId>(n));
    }
  }
  return view;
}

absl::StatusOr<bool> Membership::DeclareFailed(
    rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
    rdma::ComputeNodeId claimant) const {
  absl::StatusOr<bool> claimed = Claim(endpoint, node, -1, claimant);
  if (!claimed.ok() || !*claimed) return claimed;
  absl::StatusOr<bool> removed = Remove(endpoint, node);
  if (removed.ok() && !*removed) {
    // It left in good order: nothing to reclaim.
    absl::StatusOr<bool> dropped = Claim(endpoint, node, claimant, -1);
    if (!dropped.ok()) return dropped.status();
  }
  return removed;
}

absl::StatusOr<uint64_t> Membership::Reclaimed(rdma::Endpoint& endpoint) const {
  return endpoint.FetchAndAdd(Word(kReclaimedOffset), 0);
}

absl::StatusOr<bool> Membership::Remove(rdma::Endpoint& endpoint,
                                        rdma::ComputeNodeId node) const {
  absl::StatusOr<uint64_t> before =
      Change(endpoint, Word(kLiveOffset), &ClearBit, node);
  if (!before.ok()) return before.status();
  if (!IsLive(*before, node)) return false;
  if (absl::Status s = AdvanceEpoch(endpoint); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> Membership::Claim(rdma::Endpoint& endpoint,
                                       rdma::ComputeNodeId node, int from,
                                       int to) const {
  const uint64_t expected = static_cast<uint64_t>(from + 1);
  absl::StatusOr<uint64_t> old = endpoint.CompareAndSwap(
      reclaimers_.word(node), expected, static_cast<uint64_t>(to + 1));
  if (!old.ok()) return old.status();
  return *old == expected;
}

absl::Status Membership::Publish(rdma::Endpoint& endpoint,
                                 rdma::ComputeNodeId node, Stage stage) const {
  const uint64_t offset = stage == Stage::kFenced      ? kFencedOffset
                          : stage == Stage::kStealable ? kStealableOffset
                                                       : kReclaimedOffset;
  if (auto s = Change(endpoint, Word(offset), &SetBit, node); !s.ok()) {
    return s.status();
  }
  if (stage == Stage::kReclaimed) {
    if (auto s = Change(endpoint, Word(kStealableOffset), &ClearBit, node);
        !s.ok()) {
      return s.status();
    }
  }
  return AdvanceEpoch(endpoint);
}

absl::Status Membership::Acknowledge(rdma::Endpoint& endpoint,
                                     rdma::ComputeNodeId observer,
                                     uint64_t epoch) const {
  return seen_.Set(endpoint, observer, epoch);
}

absl::StatusOr<bool> Membership::AllAcknowledged(rdma::Endpoint& endpoint,
                                                 uint64_t members,
                                                 uint64_t epoch) const {
  std::vector<uint64_t> seen(compute_nodes_);
  if (absl::Status s = seen_.ReadAll(endpoint, absl::MakeSpan(seen)); !s.ok()) {
    return s;
  }
  for (int n = 0; n < compute_nodes_; ++n) {
    if (IsLive(members, n) && seen[n] < epoch) return false;
  }
  return true;
}

absl::Status Membership::WaitAcknowledged(rdma::Endpoint& endpoint,
                                          absl::Time deadline) const {
  absl::StatusOr<uint64_t> epoch = endpoint.FetchAndAdd(Word(kEpochOffset), 0);
  if (!epoch.ok()) return epoch.status();
  std::vector<uint64_t> seen(compute_nodes_);
  for (;;) {
    absl::StatusOr<uint64_t> live = endpoint.FetchAndAdd(Word(kLiveOffset), 0);
    if (!live.ok()) return live.status();
    if (absl::Status s = seen_.ReadAll(endpoint, absl::MakeSpan(seen));
        !s.ok()) {
      return s;
    }
    std::vector<int> behind;
    for (int n = 0; n < compute_nodes_; ++n) {
      if (IsLive(*live, n) && seen[n] < *epoch) behind.push_back(n);
    }
    if (behind.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "membership epoch %d not acknowledged in time by compute node(s) "
          "%s, still members",
          *epoch, absl::StrJoin(behind, ", ")));
    }
    absl::SleepFor(lease_ / 16);
  }
}

}  // namespace strand::txn
