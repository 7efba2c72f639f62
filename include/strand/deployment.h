#ifndef STRAND_PUBLIC_DEPLOYMENT_H_
#define STRAND_PUBLIC_DEPLOYMENT_H_

// Deploying over RDMA verbs, one process per compute node
// (docs/embedding.md, "Deploying over verbs"): the fabric options read
// from strand's shared flags (--fabric, --cluster, --node_id, ...; link
// strand::rdma_flags), and the pool image a cluster writes before it
// starts logging.

#include "engine/image.h"       // IWYU pragma: export
#include "rdma/fabric_flags.h"  // IWYU pragma: export
#include "strand/engine.h"      // IWYU pragma: export

#endif  // STRAND_PUBLIC_DEPLOYMENT_H_
