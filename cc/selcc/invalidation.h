#ifndef STRAND_CC_SELCC_INVALIDATION_H_
#define STRAND_CC_SELCC_INVALIDATION_H_

// Invalidation messages (paper 4.4, 5.1) and the handler that serves them.
//
// A node that fails to take a latch word sends one InvalidationRequest per
// conflicting holder and waits for every InvalidationReply before it looks
// at the latch again. The waiting thread holds its frame's local latch
// exclusive the whole time, so a node has at most one request outstanding
// per GCL; and because it waits for ALL replies, no forward ever lands in a
// frame that is no longer waiting for one. Handlers never block on a local
// latch (TryLockIdle, 5.1.1) and answer every request at once, so replies
// are bounded by one message delay plus at most two round trips.
//
// What a holder's handler does (the requester's node r, this node n):
//   memo M, r wants X (case 1)   forwarding on: post the WRITE of the
//                                payload into r's frame (not waited for: it
//                                lands before the reply, rdma/fabric.h
//                                PostWriteToPeer), FAA Handover(n, r); reply
//                                kGrantedExclusive with the dirty range (the
//                                dirty data moves on, nothing is flushed).
//                                Off: flush + release; reply kReleased.
//   memo M, r wants S (case 2)   forwarding on: post the forward, then
//                                (flush dirty range + FAA Downgrade(n, r))
//                                in one round trip; memo S; reply
//                                kGrantedShared.
//                                Off: flush + release; reply kReleased.
//   memo S, r wants X (case 3)   FAA -Reader(n); memo I; reply kReleased.
//   latch busy                   reply kBusy (dropped; the lease of the
//                                frame starts counting, 5.3.1)
//   not cached / other memo      reply kOutdated (the request was built
//                                from an old latch word; it is discarded)
// A starved writer that wins a line needs no protection from readers here:
// it holds the frame's latch until it has used the line, and a handler
// never acts on a latched frame. (An earlier "outranked" reply kept its
// priority on the idle line afterwards and starved no-wait readers.)
// Spin-wait (5.3.2): a starved writer's request makes this node's global
// readers of that GCL hold off for priority * RTT.
//
// Priority handover (5.3.2; on with CcOptions::priority_matching): the
// handler remembers in the frame (Frame::handover_memo) the most urgent
// EXCLUSIVE request it answered kBusy, unless the request was no-wait (its
// sender aborts at once) or not addressed to the holder (kToHolder). When
// this node gives the line up - at an unlock whose lease expired
// (SelccManager::ReleaseGlobal), or in a handler that finds the latch idle
// while the memo outranks the live request - the line goes to the memo's
// node w: flush the dirty range + FAA Handover(n, w) in one round trip; the
// live requester, if any, is answered kReleased (it then asks w). The memo
// is cleared whenever the line leaves this node (ResetFairness).
// Why no forward and why only writers: w was answered kBusy and is not
// waiting for a forward; its frame may have been reused, so writing into
// it would break the rule above (no forward lands in a frame that is not
// waiting for one). Memory is current instead, and w's next CAS (batched
// with its READ) finds w itself the holder and takes the line: SelccManager
// treats "the latch word names me, my memo is I" as won, in both acquire
// paths. A reader cannot be handed a reader bit behind its back (its own
// retry would add the bit twice), so readers are not remembered.
// Stale memos are harmless (the "outdated" rule, extended): the memo only
// names a node; the handover is legal arithmetic whenever this node holds
// M, whatever w does. If w gave up (timed out, failed) it holds the line
// as an ORPHAN: memo I, no acquisition in progress. A request kToHolder
// that reaches a node whose frame is I and idle (latched by the handler),
// or not cached (claimed via Cache::ClaimUncached, so no thread starts
// acquiring meanwhile), reads the latch word; if it names this node the
// handler releases it (memory is current) and answers kReleased, otherwise
// kOutdated as before. If w got the line by a live request in between, it
// holds M and serves requests as usual. The memo is cleared when the line
// leaves the holder, but a request handled while the giving thread still
// holds the frame's local latch (after it cleared the memo) can leave one
// behind: it acts only if this node holds M again later, and then hands the
// line to a node that either wants it or releases it as an orphan.

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
