#include "rdma/verbs/fence_control.h"

#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "rdma/memory_node_layout.h"

namespace strand::rdma::verbs {
namespace {

// Compute nodes write the request words with RDMA; the control plane reads
// them as plain memory (the NIC's writes and atomics are coherent with the
// CPU's loads of registered memory).
uint64_t LoadWord(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

}  // namespace

FenceControlPlane::FenceControlPlane(void* region, Listener* listener)
    : requested_(reinterpret_cast<uint64_t*>(static_cast<char*>(region) +
                                             FenceRequestedWordOffset(0))),
      applied_(reinterpret_cast<uint64_t*>(static_cast<char*>(region) +
                                           FenceAppliedWordOffset(0))),
      listener_(listener),
      thread_(&FenceControlPlane::Loop, this) {}

FenceControlPlane::~FenceControlPlane() {
  stop_.Notify();
  thread_.join();
}

void FenceControlPlane::Loop() {
  while (!stop_.WaitForNotificationWithTimeout(kPollInterval)) {
    for (int node = 0; node < MemoryNodeHeader::kFenceWords; ++node) {
      const uint64_t generation = LoadWord(&requested_[node]);
      if (generation != LoadWord(&applied_[node])) Apply(node, generation);
    }
  }
}

void FenceControlPlane::Apply(int node, uint64_t generation) {
  if (generation % 2 == 1) {
    absl::StatusOr<int> stopped = listener_->Fence(node);
    if (!stopped.ok()) {
      LOG(ERROR) << "fence of compute node " << node
                 << " not applied (retrying): " << stopped.status();
      return;
    }
    LOG(INFO) << "compute node " << node << " fenced: " << *stopped
              << " queue pair(s) moved to the error state";
  } else {
    // Nothing to undo: its later incarnations are admitted anyway
    // (Listener::Fence); the even generation lets the next fence of it
    // be applied.
    LOG(INFO) << "compute node " << node << " may be fenced again";
  }
  __atomic_store_n(&applied_[node], generation, __ATOMIC_RELEASE);
}

absl::Status RequestFence(Endpoint& endpoint, MemoryNodeId memory_node,
                          ComputeNodeId node, bool fenced,
                          absl::Time deadline) {
  if (node >= MemoryNodeHeader::kFenceWords) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "compute node %d cannot be fenced: memory nodes keep fence words "
        "for nodes 0 to %d",
        node, MemoryNodeHeader::kFenceWords - 1));
  }
  const GlobalAddress requested(memory_node, FenceRequestedWordOffset(node));
  const GlobalAddress applied(memory_node, FenceAppliedWordOffset(node));
  const char* const what = fenced ? "fence" : "readmission";
  // Move the generation to the wanted parity, unless someone did already.
  uint64_t target = 0;
  for (;;) {
    absl::StatusOr<uint64_t> current = endpoint.FetchAndAdd(requested, 0);
    if (!current.ok()) return current.status();
    if ((*current % 2 == 1) == fenced) {
      target = *current;
      break;
    }
    absl::StatusOr<uint64_t> swapped =
        endpoint.CompareAndSwap(requested, *current, *current + 1);
    if (!swapped.ok()) return swapped.status();
    if (*swapped == *current) {
      target = *current + 1;
      break;
    }
  }
  for (;;) {
    uint64_t done = 0;
    if (absl::Status s = endpoint.Read(applied, &done, sizeof(done)); !s.ok()) {
      return s;
    }
    if (done >= target) return absl::OkStatus();
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "memory node %d did not apply the %s of compute node %d in time "
          "(asked for generation %d, applied %d): is its process stopped?",
          memory_node, what, node, target, done));
    }
    absl::SleepFor(FenceControlPlane::kPollInterval / 2);
  }
}

}  // namespace strand::rdma::verbs
