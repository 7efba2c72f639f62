#ifndef STRAND_BASE_FAILURE_POINT_H_
#define STRAND_BASE_FAILURE_POINT_H_

// Named points at which tests fail a compute node (Engine::FailNode), in
// one process, to check that the survivors recover what a node that died
// exactly there leaves behind (docs/design/node_failure.md). Each point is
// reached by a thread of the node it names, holding what the comment says
// and no mutex of the engine's, between two remote operations (never
// inside one: the loopback's fence waits for those). Unset, as in every
// run but those tests, a point costs one load.
//
// engine/crash_point.h is the whole-process counterpart: it kills the
// process (kill -9 from outside, for the crash tests) at a named point.

#include <atomic>
#include <cstdint>

namespace strand {

enum class FailurePoint {
  // A structure change wrote its new GCL and not yet the line linking it:
  // a B-link split's right node, a new root, a new heap page
  // (cc::ExclusiveGuard::Unlock, index/blink_tree.h, storage/heap_table.h).
  kSplitLink,
  kNewRootLink,
  kNewPageLink,
  // A commit: its record appended to the log (if any), its writes applied
  // to the lines it holds exclusively, dirty in this node's cache; nothing
  // written through.
  kCommitApplied,
  // A commit whose lines span memory nodes: the redo ring's record and the
  // data on the ring's memory node written, the rest not.
  kCommitPartlyWrittenThrough,
  // A commit written through (ring record, data, done word); its latches
  // still held, its log record maybe not durable.
  kCommitWrittenThrough,
  // The log writer made a batch durable and has not yet told anyone: its
  // commits are on disk and not acknowledged.
  kLogFlushed,
  // Serving a peer's invalidation: the frame latched, nothing done.
  kInvalidationLatched,
  // Served (the line released, downgraded or handed over), not answered.
  kInvalidationServed,
  // The evictor's releases staged and their frames freed, not executed:
  // memory's latch words still name this node.
  kEvictionStaged,
  // A survivor reclaiming a failed node (engine/node_reclaim.h), reached
  // by the reclaimer: the failed node fenced and every member's
  // acknowledgement in, nothing redone; its ring redone and stage
  // kStealable published, its latches not yet scanned.
  kReclaimFenced,
  kReclaimStealable,
};

const char* FailurePointName(FailurePoint point);

// Runs on the thread that reached `point` on compute node `node`.
using FailurePointHook = void (*)(uint32_t node, FailurePoint point);

// For tests only; nullptr unsets it.
void SetFailurePointHookForTesting(FailurePointHook hook);

namespace failure_point_internal {
extern std::atomic<FailurePointHook> hook;
}  // namespace failure_point_internal

// Called by the code at each point: inline, so that a commit pays a load,
// not a call, when no test set a hook.
inline void ReachFailurePoint(uint32_t node, FailurePoint point) {
  const FailurePointHook hook =
      failure_point_internal::hook.load(std::memory_order_acquire);
  if (hook != nullptr) hook(node, point);
}

}  // namespace strand

#endif  // STRAND_BASE_FAILURE_POINT_H_
