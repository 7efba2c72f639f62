#ifndef STRAND_ENGINE_ENGINE_INTERNALS_H_
#define STRAND_ENGINE_ENGINE_INTERNALS_H_

// What strand's own tools, benchmarks and tests reach below the Engine API
// (a hosted node's GclManager, epoch manager and log, the fabric), which
// an application embedding strand does not see. Not part of the public
// API: it may change with the layers.

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"

namespace strand::engine {

class EngineInternals {
 public:
  static EngineImpl& impl(Engine& engine) { return *engine.impl_; }
  static const EngineImpl& impl(const Engine& engine) { return *engine.impl_; }
  // A hosted node's manager (NotFound if `node` is not hosted here).
  static absl::StatusOr<cc::GclManager*> manager(Engine& engine,
                                                 rdma::ComputeNodeId node) {
    return impl(engine).manager(node);
  }
  // Where the transactions of hosted node `node` announce themselves and
  // its deletes queue slots for reuse (txn/epoch_manager.h): one manager
  // for every node when this process hosts them all, else one per node
  // sharing epochs through the pool. Null if `node` is not hosted here.
  static const txn::EpochManager* epochs(const Engine& engine,
                                         rdma::ComputeNodeId node) {
    return impl(engine).epochs(node);
  }
  static rdma::Fabric& fabric(Engine& engine) { return impl(engine).fabric(); }
  // The log of a hosted node (null without a log).
  static wal::LogWriter* log(Engine& engine, rdma::ComputeNodeId node) {
    return impl(engine).log(node);
  }
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_ENGINE_INTERNALS_H_
