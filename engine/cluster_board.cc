#include "engine/cluster_board.h"

#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "cc/root_words.h"
#include "rdma/block_allocator.h"

namespace strand::engine {
namespace {

// How often a waiting call reads the board: a step is seen within this of
// being reached, for one small read per poll.
constexpr absl::Duration kPoll = absl::Milliseconds(1);

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBoard>> ClusterBoard::Open(
    rdma::Fabric& fabric, rdma::ComputeNodeId self, Options options) {
  const int nodes = fabric.compute_node_count();
  if (nodes * sizeof(Slot) > cc::kClusterBoardBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the cluster board holds %d compute nodes, the deployment has %d",
        cc::kClusterBoardBytes / sizeof(Slot), nodes));
  }
  auto node = fabric.compute_node(self);
  if (!node.ok()) return node.status();
  std::unique_ptr<ClusterBoard> board(
      new ClusterBoard(fabric, self, std::move(options)));
  auto endpoint = (*node)->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  auto heartbeat_endpoint = (*node)->NewEndpoint();
  if (!heartbeat_endpoint.ok()) return heartbeat_endpoint.status();
  board->heartbeat_endpoint_ = *std::move(heartbeat_endpoint);
  Slot mine{};
  if (absl::Status s =
          (*endpoint)->Read(SlotAddress(self), &mine, sizeof(mine));
      !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat("reading the cluster board on memory node 0: ",
                               s.message()));
  }
  if (!board->options_.rejoin &&
      (mine.heartbeat != 0 || mine.step != 0 || mine.result_bytes != 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "memory node 0 holds the cluster board of an earlier run (%s reached "
        "step %d there): start the memory nodes afresh for every run (the "
        "launcher, scripts/launch.sh, does)",
        board->Describe(self), mine.step));
  }
  {
    std::lock_guard<std::mutex> lock(board->mu_);
    board->endpoint_ = *std::move(endpoint);
  }
  board->thread_ = std::thread([b = board.get()] { b->Beat(); });
  return board;
}

ClusterBoard::ClusterBoard(rdma::Fabric& fabric, rdma::ComputeNodeId self,
                           Options options)
    : fabric_(fabric),
      self_(self),
      options_(std::move(options)),
      nodes_(fabric.compute_node_count()) {}

ClusterBoard::~ClusterBoard() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

rdma::GlobalAddress ClusterBoard::SlotAddress(rdma::ComputeNodeId node) {
  return rdma::GlobalAddress(0, cc::kClusterBoardOffset + node * sizeof(Slot));
}

bool ClusterBoard::Excused(rdma::ComputeNodeId node) const {
  return options_.excused && options_.excused(node);
}

std::string ClusterBoard::Describe(rdma::ComputeNodeId node) const {
  if (options_.describe) return options_.describe(node);
  return absl::StrCat("compute node ", node);
}

absl::Status ClusterBoard::ReadSlots(rdma::Endpoint& endpoint,
                                     std::vector<Slot>& slots) {
  slots.resize(nodes_);
  absl::Status s =
      endpoint.Read(SlotAddress(0), slots.data(), nodes_ * sizeof(Slot));
  if (s.ok()) return s;
  return absl::Status(s.code(),
                      absl::StrCat("the cluster board on memory node 0 is "
                                   "unreachable: ",
                                   s.message()));
}

absl::Status ClusterBoard::Arrive(uint64_t step) {
  std::lock_guard<std::mutex> lock(mu_);
  const rdma::GlobalAddress word = SlotAddress(self_) + offsetof(Slot, step);
  return endpoint_->Write(word, &step, sizeof(step));
}

absl::Status ClusterBoard::Leave() { return Arrive(kLeft); }

absl::Status ClusterBoard::Abort() { return Arrive(kAborted); }

absl::Status ClusterBoard::WaitForAll(uint64_t step) {
  return WaitUntil(step, -1);
}

absl::Status ClusterBoard::WaitFor(rdma::ComputeNodeId node, uint64_t step) {
  if (node >= nodes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("no compute node %d on the board", node));
  }
  return WaitUntil(step, node);
}

absl::Status ClusterBoard::WaitUntil(uint64_t step, int only_node) {
  std::vector<Slot> slots;
  for (;;) {
    if (absl::Status f = failure(); !f.ok()) return f;
    bool all = true;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (absl::Status s = ReadSlots(*endpoint_, slots); !s.ok()) return s;
    }
    for (int n = 0; n < nodes_; ++n) {
      if (only_node >= 0 && n != only_node) continue;
      if (Excused(n)) continue;
      const uint64_t at = slots[n].step;
      if (at == kAborted) {
        return absl::UnavailableError(absl::StrFormat(
            "%s gave up on an error (its output says which)", Describe(n)));
      }
      if (at < step) all = false;
    }
    if (all) return absl::OkStatus();
    absl::SleepFor(kPoll);
  }
}

absl::Status ClusterBoard::Publish(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes.size() > fabric_.chunk_bytes()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot publish %d bytes on the cluster board: at most a chunk, %d",
        bytes.size(), fabric_.chunk_bytes()));
  }
  Slot mine{};
  if (absl::Status s = endpoint_->Read(SlotAddress(self_), &mine, sizeof(mine));
      !s.ok()) {
    return s;
  }
  rdma::GlobalAddress block = rdma::GlobalAddress::FromRaw(mine.result_address);
  if (block.is_null()) {
    auto allocator =
        rdma::BlockAllocator::Create(fabric_, self_, fabric_.chunk_bytes());
    if (!allocator.ok()) return allocator.status();
    auto allocated = (*allocator)->Allocate(*endpoint_);
    if (!allocated.ok()) return allocated.status();
    block = *allocated;
  }
  if (!bytes.empty()) {
    if (absl::Status s = endpoint_->Write(block, bytes.data(), bytes.size());
        !s.ok()) {
      return s;
    }
  }
  // The bytes are in place (Write waits for them) before the slot says so.
  const uint64_t where[2] = {block.raw(), bytes.size()};
  return endpoint_->Write(SlotAddress(self_) + offsetof(Slot, result_address),
                          where, sizeof(where));
}

absl::StatusOr<uint64_t> ClusterBoard::Step(rdma::ComputeNodeId node) {
  if (node >= nodes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("no compute node %d on the board", node));
  }
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t step = 0;
  if (absl::Status s = endpoint_->Read(SlotAddress(node) + offsetof(Slot, step),
                                       &step, sizeof(step));
      !s.ok()) {
    return s;
  }
  return step;
}

absl::StatusOr<std::string> ClusterBoard::Read(rdma::ComputeNodeId node) {
  if (node >= nodes_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("no compute node %d on the board", node));
  }
  std::lock_guard<std::mutex> lock(mu_);
  Slot slot{};
  if (absl::Status s = endpoint_->Read(SlotAddress(node), &slot, sizeof(slot));
      !s.ok()) {
    return s;
  }
  if (slot.result_address == 0) {
    return absl::NotFoundError(
        absl::StrCat(Describe(node), " has published nothing"));
  }
  std::string bytes(slot.result_bytes, '\0');
  if (!bytes.empty()) {
    if (absl::Status s =
            endpoint_->Read(rdma::GlobalAddress::FromRaw(slot.result_address),
                            bytes.data(), bytes.size());
        !s.ok()) {
      return s;
    }
  }
  return bytes;
}

void ClusterBoard::OnFailure(
    std::function<void(const absl::Status&)> callback) {
  absl::Status seen;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    on_failure_ = std::move(callback);
    if (failure_.ok() || reported_) return;
    reported_ = true;
    seen = failure_;
  }
  on_failure_(seen);
}

absl::Status ClusterBoard::failure() const {
  std::lock_guard<std::mutex> lock(failure_mu_);
  return failure_;
}

bool ClusterBoard::unreachable() const {
  std::lock_guard<std::mutex> lock(failure_mu_);
  return unreachable_;
}

void ClusterBoard::Fail(const absl::Status& status, bool unreachable) {
  std::function<void(const absl::Status&)> callback;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    if (!failure_.ok()) return;
    failure_ = status;
    unreachable_ = unreachable;
    if (!on_failure_) return;
    reported_ = true;
    callback = on_failure_;
  }
  callback(status);
}

void ClusterBoard::Beat() {
  std::vector<Slot> slots;
  std::vector<uint64_t> last(nodes_, 0);
  std::vector<absl::Time> moved(nodes_, absl::Now());
  const rdma::GlobalAddress mine =
      SlotAddress(self_) + offsetof(Slot, heartbeat);
  do {
    if (options_.lease_lost && options_.lease_lost()) {
      Fail(absl::UnavailableError(
               "this node's lease ran out (its process was stopped or "
               "starved past it)"),
           /*unreachable=*/true);
      continue;
    }
    if (auto beat = heartbeat_endpoint_->FetchAndAdd(mine, 1); !beat.ok()) {
      Fail(absl::UnavailableError(
               absl::StrCat("the cluster board on memory node 0 is "
                            "unreachable: ",
                            beat.status().message())),
           /*unreachable=*/true);
      continue;
    }
    if (absl::Status s = ReadSlots(*heartbeat_endpoint_, slots); !s.ok()) {
      Fail(s, /*unreachable=*/true);
      continue;
    }
    const absl::Time now = absl::Now();
    for (int n = 0; n < nodes_; ++n) {
      if (n == self_ || slots[n].step == kLeft) continue;
      if (Excused(n)) {
        // Its timeout starts again if it rejoins, not at its last beat.
        last[n] = slots[n].heartbeat;
        moved[n] = now;
        continue;
      }
      if (slots[n].step == kAborted) {
        Fail(absl::UnavailableError(absl::StrFormat(
            "%s gave up on an error (its output says which)", Describe(n))));
        continue;
      }
      if (slots[n].heartbeat != last[n]) {
        last[n] = slots[n].heartbeat;
        moved[n] = now;
      } else if (now - moved[n] > options_.peer_timeout) {
        Fail(absl::UnavailableError(absl::StrFormat(
            "%s stopped: its heartbeat has not moved for %s (its process "
            "died or hangs, or its host is unreachable)",
            Describe(n), absl::FormatDuration(now - moved[n]))));
      }
    }
  } while (!stop_.WaitForNotificationWithTimeout(options_.heartbeat_interval));
}

}  // namespace strand::engine
