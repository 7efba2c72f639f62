#ifndef STRAND_CC_LINK_HOOK_H_
#define STRAND_CC_LINK_HOOK_H_

// The point of a structure change between writing its new GCL and writing
// the line that links it: a B-link split's right node and the left node's
// right link, a new root and the anchor (index/blink_tree.h), a new heap
// page and the table's root (storage/heap_table.h). With
// CcOptions::write_through the new GCL is in memory here (the exclusive
// unlock that wrote it returned only once it was), so a compute node that
// fails at this point leaves an unlinked GCL behind, never a link to one
// memory lacks (docs/design/node_failure.md). Tests fail a node here;
// unset, as in every other run, it costs one load.

#include "cc/gcl_manager.h"

namespace strand::cc {

enum class LinkStep { kSplit, kNewRoot, kNewPage };

// Runs on the thread making the change, holding the latches it holds.
using LinkHook = void (*)(rdma::ComputeNodeId node, LinkStep step);

// For tests only; nullptr unsets it.
void SetLinkHookForTesting(LinkHook hook);

// Called by the structure changes at that point.
void BeforeLink(const GclManager& manager, LinkStep step);

}  // namespace strand::cc

#endif  // STRAND_CC_LINK_HOOK_H_
