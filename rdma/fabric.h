#ifndef STRAND_RDMA_FABRIC_H_
#define STRAND_RDMA_FABRIC_H_

// The fabric: how compute nodes reach memory nodes and each other.
//
//   Fabric       one per process. Owns the memory nodes in this process
//                (loopback) or the connections to them (verbs), and the
//                compute nodes hosted here (all of them with loopback,
//                usually one per process with verbs).
//   ComputeNode  a compute node hosted here: hands out endpoints, registers
//                local memory peers may write into, runs the message handlers.
//   Endpoint     one per worker thread, never shared (verbs: one RC queue
//                pair per memory node and per peer), so the data path takes
//                no lock.
//
// Cost in round trips (what the counters count): Read, Write,
// CompareAndSwap, FetchAndAdd, WriteToPeer 1; Execute(batch) 1, whatever
// its length; PostWriteToPeer 0 (ordered before the next Send to that
// node); Send, Multicast 0 (one-way messages).
// Local buffers passed to any call need not be registered.
// Errors: a bad address (out of the region, misaligned atomic, unknown node)
// or a transport failure returns a Status saying what and where; an op that
// returned an error may or may not have taken effect. Waits are bounded.
// Design: docs/design/fabric.md (how each call maps to verbs).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rdma/batch.h"
#include "rdma/counters.h"
#include "rdma/global_address.h"
#include "rdma/message.h"

namespace strand::rdma {

class MessageRouter;

// A place in a compute node's registered local memory that another compute
// node may write into with WriteToPeer (SELCC's GCL forwarding). 16 bytes, so
// it fits in a Message payload.
struct PeerAddress {
  uint64_t address = 0;  // virtual address in the owner's process
  uint32_t key = 0;      // verbs: the region's rkey; loopback: region id
  ComputeNodeId node = 0;
  uint16_t reserved = 0;

  PeerAddress operator+(uint64_t bytes) const {
    PeerAddress p = *this;
    p.address += bytes;
    return p;
  }
};
static_assert(sizeof(PeerAddress) == 16);

// Local memory registered with RegisterLocalMemory; peers write into it.
struct LocalRegion {
  void* base = nullptr;
  uint64_t bytes = 0;
  PeerAddress peer_address;  // of `base`

  // The peer-visible address of `base + offset`.
  PeerAddress At(uint64_t offset) const { return peer_address + offset; }
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  // The compute node this endpoint belongs to.
  virtual ComputeNodeId node_id() const = 0;

  // Runs every op of `batch` (all on one memory node), in order, as one round
  // trip. An empty batch is a no-op and costs nothing.
  virtual absl::Status Execute(const Batch& batch) = 0;

  // Single-op shortcuts; each is a one-op batch.
  absl::Status Read(GlobalAddress src, void* dst, uint32_t length);
  absl::Status Write(GlobalAddress dst, const void* src, uint32_t length);
  absl::StatusOr<uint64_t> CompareAndSwap(GlobalAddress addr, uint64_t expected,
                                          uint64_t desired);
  absl::StatusOr<uint64_t> FetchAndAdd(GlobalAddress addr, uint64_t delta);

  // Writes `length` bytes into another compute node's registered memory and
  // waits until they are there. A message this endpoint sends to the same
  // node afterwards is delivered after the data is visible (same queue pair).
  virtual absl::Status WriteToPeer(const PeerAddress& dst, const void* src,
                                   uint32_t length) = 0;

  // Starts writing `length` bytes into another compute node's registered
  // memory and returns without waiting for them to land; `src` may be
  // reused at once. The data is visible at the peer before any message this
  // endpoint sends to the same node afterwards is handled there: verbs uses
  // the queue pair of Send, and an RC responder executes requests in order,
  // so the SEND's receive completion follows the WRITE's placement (IBA
  // 9.5, transaction ordering). Saves a handler the round trip of waiting
  // for a forwarded GCL before it replies. Errors surface here or at that
  // next Send.
  virtual absl::Status PostWriteToPeer(const PeerAddress& dst, const void* src,
                                       uint32_t length) {
    return WriteToPeer(dst, src, length);
  }

  // Sends a message to compute node `dst` (may be this endpoint's own node).
  // It is delivered exactly once to dst's handler, or an error is returned;
  // the fabric never drops a message silently. The handler may run before
  // Send returns, on this thread (the loopback's inline delivery), so do
  // not call Send holding a lock any node's handler may take.
  virtual absl::Status Send(ComputeNodeId dst, const Message& message) = 0;

  // Send to each of `dsts` (distinct nodes); results[i] is dsts[i]'s
  // outcome (results.size() == dsts.size()). The sends overlap: a sender
  // that waits for every reply pays one message delay, not one per node.
  virtual void Multicast(absl::Span<const ComputeNodeId> dsts,
                         const Message& message,
                         absl::Span<absl::Status> results);
  // Multicast with a message of its own for each destination.
  virtual void SendEach(absl::Span<const ComputeNodeId> dsts,
                        absl::Span<const Message> messages,
                        absl::Span<absl::Status> results);

  // This endpoint's counters since it was created.
  virtual FabricCounters Counters() const = 0;
};

// Handles a message sent to the receiving compute node. `endpoint` is an
// endpoint of the receiving node for the one-sided work a handler does
// (flush, ownership handover, forwarding), owned by the thread the handler
// runs on. Where it runs depends on the backend: a handler thread of the
// receiver (verbs; loopback with MessageDelivery::kThreads), or the
// sender's thread inside Send (loopback, MessageDelivery::kInline, the
// default: no context switch per message, fabric_options.h). So:
//   - a handler never waits for anything only another thread provides (a
//     lock held across a wait, a reply, the log): it try-locks and answers
//     at once, or defers the rest to a callback (the log's durability
//     callback, a later message);
//   - it works only on the receiving node's state and `endpoint`, never on
//     the calling thread's own (that is the sender's);
//   - handlers of one node run concurrently with each other and with the
//     node's own threads.
// Messages it sends are delivered the same way (inline replies nest; the
// loopback bounds the nesting and queues deeper ones to handler threads).
using MessageHandler =
    std::function<void(const Message& message, Endpoint& endpoint)>;

// Whether the calling thread is one of a compute node's message handler
// threads, which every route of the node shares, as opposed to a sender
// running a handler inline. A layer whose handling may wait (partition/:
// a fragment's latches) moves such work off these threads.
bool OnMessageHandlerThread();

class ComputeNode {
 public:
  ComputeNode();
  virtual ~ComputeNode();

  virtual ComputeNodeId id() const = 0;

  // A new endpoint for the calling thread. Thread-safe.
  virtual absl::StatusOr<std::unique_ptr<Endpoint>> NewEndpoint() = 0;

  // Makes [base, base + bytes) writable by peers (verbs: ibv_reg_mr with
  // remote write access). The memory must outlive this compute node, or be
  // unregistered first.
  virtual absl::StatusOr<LocalRegion> RegisterLocalMemory(void* base,
                                                          uint64_t bytes) = 0;
  // Undoes RegisterLocalMemory(base, ...): peers' writes there fail, and
  // endpoints no longer use it in place (verbs: ibv_dereg_mr), so the
  // memory may be freed (a failed node's cache, replaced at its rejoin).
  // The caller makes sure no operation uses it any more. NotFound if
  // `base` is not registered.
  virtual absl::Status UnregisterLocalMemory(void* base) = 0;

  // Makes `handler` receive every message sent to this node, and starts
  // `threads` handler threads for the messages not delivered inline. Idle
  // handler threads block; they do not spin. May be called once; handlers
  // stop when the node is destroyed or StopHandlers().
  virtual absl::Status StartHandlers(MessageHandler handler, int threads) = 0;
  // Stops delivery: later Sends to this node fail with Unavailable; waits
  // for handlers running (inline ones included) and joins the threads;
  // messages not yet handled are discarded. Idempotent.
  virtual void StopHandlers() = 0;

  // For layers sharing the node's messages (cc/selcc, partition/): routes
  // message types [first, last] to `handler` (message_router.h). The first
  // call starts the node's handlers with `threads` threads; later calls
  // add routes to them. Not to be mixed with a direct StartHandlers.
  absl::Status AddHandler(uint16_t first, uint16_t last, MessageHandler handler,
                          int threads);

  // Sum of the counters of every endpoint this node has created (live or
  // destroyed), handler endpoints included.
  virtual FabricCounters Counters() const = 0;

  // After StopHandlers: forgets every route, so the node's message layers
  // can AddHandler again (a compute node that rejoins after a failure,
  // docs/design/node_failure.md). Unimplemented on backends that cannot.
  absl::Status ResetHandlers();

 protected:
  // ResetHandlers' backend part: makes StartHandlers possible again.
  virtual absl::Status ReopenHandlers() {
    return absl::UnimplementedError(
        "this fabric cannot restart a compute node's message handlers");
  }

 private:
  std::unique_ptr<MessageRouter> router_;  // made by the first AddHandler
  std::mutex router_mu_;
};

class Fabric {
 public:
  virtual ~Fabric() = default;

  virtual int memory_node_count() const = 0;
  virtual int compute_node_count() const = 0;  // in the whole deployment

  // Compute nodes hosted by this process, by id.
  virtual std::vector<ComputeNodeId> local_compute_nodes() const = 0;
  // The hosted compute node `id`, or NotFound if it is not hosted here.
  virtual absl::StatusOr<ComputeNode*> compute_node(ComputeNodeId id) = 0;

  // Usable bytes of each memory node's region and its chunk size, as read
  // from the memory node's header.
  virtual uint64_t memory_node_bytes() const = 0;
  virtual uint64_t chunk_bytes() const = 0;

  // Blocks until the memory the loopback fabric commits in the background
  // (PopulateMode::kInBackground, fabric_options.h) is committed, so that a
  // measured run does not share the machine with the populating thread.
  // Returns at once otherwise (verbs pins memory when registering it).
  virtual void WaitUntilPopulated() {}

  // Fencing (docs/design/node_failure.md): once Fence(node) returns OK, no
  // operation of `node`'s endpoints reaches a memory node or a peer, and no
  // message or peer write reaches it (each fails with Unavailable), even
  // if the node only paused and resumes later: what makes reclaiming a
  // failed node's state safe. Unfence readmits it (a restarted node that
  // rejoins). The loopback fences at once when FabricOptions::fencing
  // armed it; otherwise, and on fabrics that cannot, Unimplemented.
  virtual absl::Status Fence(ComputeNodeId node);
  virtual absl::Status Unfence(ComputeNodeId node);
  // Another process fenced `node` (Fence there): makes it true in this
  // one too, so that no listener here takes `node`'s messages and nothing
  // here is sent to it; UnfenceHere undoes it (it rejoined). The failure
  // monitor calls them on the views it reads. Nothing to do (the default)
  // where Fence reaches every process: the loopback, a deployment in one
  // process, and a node this process hosts.
  virtual absl::Status FenceHere(ComputeNodeId node) {
    (void)node;
    return absl::OkStatus();
  }
  virtual absl::Status UnfenceHere(ComputeNodeId node) {
    (void)node;
    return absl::OkStatus();
  }
  // Failure injection (docs/design/node_failure.md): once Crash(node)
  // returns OK, `node` is as a process that died: its operations fail and
  // what others send it is lost without an error, until Fence (then they
  // fail) or Unfence. The loopback when FabricOptions::fencing armed it;
  // otherwise Unimplemented.
  virtual absl::Status Crash(ComputeNodeId node);

  // Sum over the hosted compute nodes.
  FabricCounters Counters();
};

}  // namespace strand::rdma

#endif  // STRAND_RDMA_FABRIC_H_
