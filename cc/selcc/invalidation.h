#ifndef STRAND_CC_SELCC_INVALIDATION_H_
#define STRAND_CC_SELCC_INVALIDATION_H_

// Invalidation messages (paper 4.4, 5.1) and the handler that serves them.
// A requester that fails to take a latch word sends one InvalidationRequest
// per conflicting holder and waits for every reply, holding its frame's
// local latch exclusive. Handlers never block on a local latch (TryLockIdle,
// 5.1.1) and answer every request at once, so a reply takes at most one
// message delay plus two round trips.
//
// Replies (holder n, requester r): kGrantedExclusive (n's M copy forwarded
// and handed over to r, with its dirty range), kGrantedShared (forwarded
// and downgraded), kReleased (n gave its copy up; with forwarding off, the
// answer for every M copy), kBusy (latched: the frame's lease starts
// counting, 5.3.1), kOutdated (no such copy: the request is stale).
// Priority handover (5.3.2, CcOptions::priority_matching): the most urgent
// exclusive request answered kBusy is remembered, and the line goes to its
// node when this node gives it up; a node handed a line after it stopped
// waiting (an orphan) releases it when asked. Spin-wait (5.3.2): a starved
// writer's request makes this node's readers of that GCL hold off for
// priority * RTT.
// Design: docs/design/selcc.md, "Invalidation: what a holder's handler
// does" and "Priority handover".

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cc/selcc/node_state.h"
#include "rdma/fabric.h"
#include "rdma/message.h"

namespace strand::cc::selcc {

inline constexpr uint16_t kRequestMessage = 0x5e1c;
inline constexpr uint16_t kReplyMessage = 0x5e1d;

// Messages carry happens-before (a message is handled after everything its
// sender did before sending it). The loopback inbox provides it with an
// absl::Mutex, which TSan cannot see in the distribution's uninstrumented
// absl; under TSan only, senders and handlers mirror it with one atomic per
// destination node, so TSan checks the data the protocol hands over
// (forwarded GCLs, memos) instead of reporting every message.
#if defined(__SANITIZE_THREAD__)
inline std::atomic<uint64_t> tsan_message_channel[64];
inline void TsanBeforeSend(int dst) {
  tsan_message_channel[dst % 64].fetch_add(1, std::memory_order_release);
}
inline void TsanAfterReceive(int me) {
  (void)tsan_message_channel[me % 64].load(std::memory_order_acquire);
}
#else
inline void TsanBeforeSend(int) {}
inline void TsanAfterReceive(int) {}
#endif

// Retries after which a requester counts as starved (spin-wait).
inline constexpr uint32_t kStarvedPriority = 4;
// The longest a fairness hold-off keeps this node's threads off a line
// (spin-wait's readers for a starved writer, this node for a starved peer's
// turn). The starved node retries at once after the reply that lets it in,
// so a few round trips are all it needs; its priority and the RTT estimate
// (which a descheduled thread inflates) scale the wait only up to this.
// Unbounded, a writer with thousands of retries times an RTT estimate of a
// few milliseconds held readers off for longer than their lock timeout.
inline constexpr int64_t kMaxHoldOffNanos = 10'000'000;
// Retries after which a peer's dropped request ends the holder's lease at
// its next unlock, whatever gamma (unless gamma is infinite).
inline constexpr uint32_t kLeaseBreakPriority = 16;

enum class Want : uint8_t { kShared = 1, kExclusive = 2 };

enum class ReplyResult : uint8_t {
  kGrantedShared = 1,  // you hold S; the payload is in your frame
  kGrantedExclusive,   // you hold M; the payload is in your frame
  kReleased,           // the holder gave its copy up; retry the latch
  kBusy,               // local threads hold the holder's latch; retry later
  kOutdated,           // no such copy any more; re-read the latch word
};

struct InvalidationRequest {
  uint64_t gcl = 0;
  rdma::PeerAddress forward_to;  // the requester's frame payload
  uint32_t slot = 0;             // the requester's reply slot
  uint32_t seq = 0;              // ... and request number
  uint32_t priority = 0;         // failed attempts so far (N_r)
  Want want = Want::kShared;
  uint8_t flags = 0;  // kRequest* bits
};
// The requester gives up at the first kBusy (LockOptions::no_wait).
inline constexpr uint8_t kRequestNoWait = 1;
// The requester's latch word named the receiver as exclusive holder.
inline constexpr uint8_t kRequestToHolder = 2;
static_assert(sizeof(InvalidationRequest) <= rdma::Message::kPayloadBytes);

struct InvalidationReply {
  uint64_t gcl = 0;
  uint32_t slot = 0;
  uint32_t seq = 0;
  uint32_t dirty_begin = 0;  // kGrantedExclusive: the range memory lacks
  uint32_t dirty_end = 0;
  ReplyResult result = ReplyResult::kOutdated;
};
static_assert(sizeof(InvalidationReply) <= rdma::Message::kPayloadBytes);

// Where a thread's replies land. One per ThreadContext; owned by the
// ReplySlots table so a late reply never touches freed memory.
class ReplySlot {
 public:
  // What the replies of one request said.
  struct Outcome {
    bool granted_shared = false;
    bool granted_exclusive = false;
    bool released = false;
    bool busy = false;  // kBusy: a running holder
    // A node was fenced before it answered. It may have acted first (a
    // downgrade adds the requester's reader bit, a handover names it
    // holder): only the latch word tells.
    bool unanswered = false;
    uint32_t dirty_begin = 0, dirty_end = 0;
  };

  // Starts a request expecting a reply from each node of `nodes` (a
  // bitmap); returns its sequence.
  uint32_t Begin(uint64_t nodes);
  // Records node `from`'s reply; stale ones (older sequence) are ignored.
  void Deliver(const InvalidationReply& reply, rdma::ComputeNodeId from);
  // Waits for every reply of the current request; false at the deadline.
  // Stops waiting for a node once it is in `*fenced` (bit n: node n was
  // declared failed and can write no more, so no forward of it can land
  // any more): the request is over when every node that has not answered
  // is fenced, as if each had answered kOutdated.
  bool Wait(absl::Time deadline, const std::atomic<uint64_t>& fenced,
            Outcome* outcome);
  // Stops waiting for the nodes of `nodes` (a bitmap) at once: they were
  // just fenced. Wait would notice within its slice, but only while they
  // are still fenced; a node reclaimed and readmitted (a new incarnation,
  // which never answers the old one's requests) before Wait looked would
  // otherwise be waited for until the deadline.
  void Forget(uint64_t nodes);

 private:
  // std::mutex: replies hand frame data over between threads, and TSan
  // sees std::mutex but not the distribution's absl::Mutex.
  std::mutex mu_;
  std::condition_variable done_;
  uint32_t seq_ = 0;      // guarded by mu_
  uint64_t pending_ = 0;  // guarded by mu_: nodes yet to answer
  Outcome outcome_;       // guarded by mu_
};

class ReplySlots {
 public:
  static constexpr uint32_t kMaxSlots = 4096;
  ReplySlots();
  // A free slot index, or -1 when kMaxSlots threads hold one.
  int Acquire();
  void Release(int index);
  ReplySlot* Get(uint32_t index) {
    return index < kMaxSlots ? &slots_[index] : nullptr;
  }
  // ReplySlot::Forget on every slot (when peers are fenced: rare).
  void Forget(uint64_t nodes);

 private:
  std::unique_ptr<ReplySlot[]> slots_;
  std::mutex mu_;
  std::vector<int> free_;  // guarded by mu_
};

// The message handler of one node: serves requests and routes replies.
// Runs on the fabric's handler threads (any number).
class InvalidationHandler {
 public:
  InvalidationHandler(NodeState* state, ReplySlots* slots)
      : state_(state), slots_(slots) {}

  void Handle(const rdma::Message& message, rdma::Endpoint& endpoint);

 private:
  void Serve(const InvalidationRequest& request, rdma::ComputeNodeId from,
             rdma::Endpoint& endpoint);
  // Does what the request asks of `f` (latched exclusive); the result.
  ReplyResult Act(Frame* f, const InvalidationRequest& request,
                  rdma::ComputeNodeId from, rdma::Endpoint& endpoint,
                  InvalidationReply* reply);
  // If the latch word of `gcl` names this node although it holds no copy
  // and nothing local is acquiring it (the caller ensured that), releases
  // it: kReleased; otherwise kOutdated. An orphan of priority handover.
  ReplyResult ReleaseOrphan(rdma::GlobalAddress gcl, rdma::Endpoint& endpoint);
  void Answer(rdma::Endpoint& endpoint, rdma::ComputeNodeId to,
              InvalidationReply reply);
  bool InjectDrop();

  NodeState* const state_;
  ReplySlots* const slots_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_{0x5e1cc};  // guarded by rng_mu_
};

}  // namespace strand::cc::selcc

#endif  // STRAND_CC_SELCC_INVALIDATION_H_
