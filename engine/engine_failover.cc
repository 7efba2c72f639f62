// EngineImpl's failover (EngineOptions::failover;
// docs/design/node_failure.md): the redo rings, the membership and the
// failure monitor, and the in-process injection of a compute node's
// failure, pause and rejoin. Apart from engine_impl.cc, which opens and
// runs the engine; off, none of this runs.

#include "absl/strings/str_format.h"
#include "engine/crashable_log_files.h"
#include "engine/engine_impl.h"
#include "engine/failure_monitor.h"
#include "engine/node_runtime.h"
#include "glog/logging.h"
#include "partition/node.h"
#include "txn/commit_watermark.h"
#include "txn/redo_ring.h"

namespace strand::engine {

std::function<void(const absl::Status&)> EngineImpl::OnDeclaredFailed(
    NodeRuntime& node) {
  // Its sessions stop retrying, and their waits for an acknowledgement
  // end, for none will come.
  return [this, &node](const absl::Status& why) {
    down_nodes_.fetch_or(uint64_t{1} << node.id());
    if (txn::CommitWatermark* marks = node.marks()) marks->DeclaredFailed(why);
  };
}

absl::Status EngineImpl::OpenRing(NodeRuntime& node) {
  absl::StatusOr<std::unique_ptr<txn::RedoRing>> ring;
  {
    absl::MutexLock admin(&node.admin_mu());
    ring = txn::RedoRing::Open(*fabric_, node.admin().endpoint(), node.id(),
                               {.bytes = options_.failover.redo_ring_bytes,
                                .full_timeout = absl::Seconds(60)});
  }
  if (!ring.ok()) return ring.status();
  node.SetRing(*std::move(ring));
  return absl::OkStatus();
}

absl::Status EngineImpl::WaitEarlierIncarnation(NodeRuntime& node) {
  const rdma::ComputeNodeId id = node.id();
  const absl::Duration lease = options_.failover.node_lease;
  // The survivors declare it after a lease; the reclaim takes its fence's
  // acknowledgements (bounded by 30 s plus 8 leases) and a latch scan.
  const absl::Duration bound = absl::Seconds(60) + 20 * lease;
  const absl::Time deadline = absl::Now() + bound;
  txn::Membership::Tracker scratch;
  bool told = false;
  for (;;) {
    absl::StatusOr<txn::Membership::View> view;
    {
      absl::MutexLock admin(&node.admin_mu());
      view = membership_->Scan(node.admin().endpoint(), scratch, absl::Now());
    }
    if (!view.ok()) return view.status();
    const bool live = txn::Membership::IsLive(view->live, id);
    const bool reclaimed = ((view->reclaimed >> id) & 1) != 0;
    // Not a member and not being reclaimed: it left in good order, or
    // never joined.
    if (!live && (reclaimed || view->reclaimer[id] < 0))
      return absl::OkStatus();
    if (!told) {
      LOG(WARNING) << "compute node " << id << " rejoins: waiting until the "
                   << "others "
                   << (live ? "declare its earlier incarnation failed"
                            : "finish reclaiming its earlier incarnation");
      told = true;
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "compute node %d's earlier incarnation was %s within %s: is it "
          "still running somewhere, or are the other compute processes "
          "without --failover?",
          id, live ? "not declared failed" : "not reclaimed",
          absl::FormatDuration(bound)));
    }
    absl::SleepFor(lease / 8);
  }
}

absl::Status EngineImpl::StartFailover() {
  absl::StatusOr<txn::Membership> membership = txn::Membership::Open(
      fabric_->compute_node_count(), options_.failover.node_lease);
  if (!membership.ok()) return membership.status();
  membership_.emplace(*membership);
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (options_.fabric.join_running) {
      if (absl::Status s = WaitEarlierIncarnation(*node); !s.ok()) return s;
      // Its fence words back to even: a failure of this incarnation is
      // fenced again (the memory nodes admit it already, rdma/verbs/
      // listener.h).
      if (absl::Status s = fabric_->Unfence(node->id()); !s.ok()) return s;
    }
    if (absl::Status s = OpenRing(*node); !s.ok()) return s;
  }
  monitor_ = std::make_unique<FailureMonitor>(
      *membership_,
      [this](rdma::ComputeNodeId reclaimer, rdma::ComputeNodeId failed) {
        return Reclaim(reclaimer, failed);
      },
      [fabric = fabric_.get()](rdma::ComputeNodeId node, bool fenced) {
        return fenced ? fabric->FenceHere(node) : fabric->UnfenceHere(node);
      });
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    if (absl::Status s = monitor_->Attach(node->id(), node->manager(),
                                          OnDeclaredFailed(*node));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ReclaimReport> EngineImpl::Reclaim(rdma::ComputeNodeId reclaimer,
                                                  rdma::ComputeNodeId failed) {
  NodeRuntime* node = nodes_[reclaimer].get();
  absl::StatusOr<std::unique_ptr<cc::ThreadContext>> ctx =
      node->manager().NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  ReclaimContext context;
  context.fabric = fabric_.get();
  context.membership = &*membership_;
  context.self = reclaimer;
  context.endpoint = &(*ctx)->endpoint();
  context.log = node->log();
  context.gcl_size = options_.cc.gcl_size;
  context.on_stage = [this] { monitor_->Refresh(); };
  if (!partition_nodes_.empty()) {
    // Every survivor hosted here (with failover, all of them: the loopback
    // is one process) stops waiting for it and decides its branches of
    // the failed node's transactions.
    context.resolve_branches = [this, failed](ReclaimReport& report) {
      for (auto& p : partition_nodes_) {
        if (p == nullptr || p->id() == failed || NodeDown(p->id())) continue;
        p->PeerFailed(failed);
        int committed = 0, aborted = 0;
        if (absl::Status s = p->ResolveBranchesOf(failed, &committed, &aborted);
            !s.ok()) {
          // Another node that failed too (two at once, or one fenced while
          // paused that has not heard yet): its own operations no longer
          // reach memory. Nothing is lost by skipping it: its branches that
          // were not prepared died with it, and its own reclaim decides the
          // prepared ones from their ring records and this coordinator's
          // word (ResolvePrepared).
          if (NodeDown(p->id()) || absl::IsUnavailable(s)) {
            LOG(WARNING) << "compute node " << p->id()
                         << " could not decide its branches of failed node "
                         << failed << " (it is failing too): " << s;
            continue;
          }
          return s;
        }
        report.branches_committed += committed;
        report.branches_aborted += aborted;
      }
      return absl::OkStatus();
    };
  }
  return ReclaimNode(context, failed);
}

absl::Status EngineImpl::CheckFailover(rdma::ComputeNodeId node) const {
  if (monitor_ == nullptr) {
    return absl::FailedPreconditionError(
        "failure injection needs EngineOptions::failover (--failover)");
  }
  if (node >= nodes_.size() || nodes_[node] == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("compute node %d is not hosted by this process", node));
  }
  return absl::OkStatus();
}

absl::Status EngineImpl::FailNode(rdma::ComputeNodeId node) {
  if (absl::Status s = CheckFailover(node); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    if ((failed_nodes_ >> node) & 1) {
      return absl::FailedPreconditionError(
          absl::StrFormat("compute node %d failed already", node));
    }
    failed_nodes_ |= uint64_t{1} << node;
  }
  down_nodes_.fetch_or(uint64_t{1} << node);
  monitor_->Detach(node);
  // As a process that died: nothing it does reaches anyone any more, and
  // its log keeps what it had made durable.
  if (absl::Status s = fabric_->Crash(node); !s.ok()) return s;
  if (node < log_files_.size() && log_files_[node] != nullptr) {
    log_files_[node]->Crash();
  }
  // Its threads waiting for a peer's answer to an invalidation stop
  // waiting, as if every peer were fenced: the crash loses the answers,
  // and a dead process has no threads to wait (a thread that went on would
  // hold up whoever joins it for SelccManager::kReplyGrace). What they do
  // next fails at the fabric.
  const uint64_t everyone = (uint64_t{1} << fabric_->compute_node_count()) - 1;
  nodes_[node]->manager().SetPeerStates(everyone & ~(uint64_t{1} << node),
                                        /*stealable=*/0);
  // Its threads waiting for an acknowledgement stop waiting (a crash
  // would have ended them): nothing of theirs will be acknowledged.
  if (txn::CommitWatermark* marks = nodes_[node]->marks()) {
    marks->DeclaredFailed(absl::UnavailableError(absl::StrFormat(
        "compute node %d failed (injected): its outcomes since its last "
        "acknowledgement are not acknowledged",
        node)));
  }
  // Its sessions' waits for other nodes' answers end, and their calls
  // fail from now on (partitioned mode; the crash lost those answers).
  if (node < partition_nodes_.size() && partition_nodes_[node] != nullptr) {
    partition_nodes_[node]->Crashed();
  }
  {
    // Catalog operations go on through a node that has not failed (two
    // may fail at once: each picks among the others still up).
    absl::MutexLock lock(&mu_);
    if (first_node_.load() == nodes_[node].get()) {
      for (auto& other : nodes_) {
        if (other != nullptr && ((failed_nodes_ >> other->id()) & 1) == 0) {
          first_node_ = other.get();
          break;
        }
      }
    }
  }
  LOG(WARNING) << "compute node " << node << " failed (injected)";
  return absl::OkStatus();
}

absl::Status EngineImpl::WaitReclaimed(rdma::ComputeNodeId node,
                                       absl::Duration timeout) {
  if (monitor_ == nullptr) {
    return absl::FailedPreconditionError(
        "no failover: EngineOptions::failover (--failover)");
  }
  return monitor_->WaitReclaimed(node, timeout);
}

absl::Status EngineImpl::RejoinNode(rdma::ComputeNodeId node,
                                    absl::Duration timeout) {
  if (absl::Status s = CheckFailover(node); !s.ok()) return s;
  if (epoch_ticker_ != nullptr) {
    // The ticker keeps a thread context of every hosted node's manager.
    return absl::UnimplementedError(
        "a compute node's rejoin with its epochs in the pool "
        "(EngineOptions::epochs_in_pool) is not built yet");
  }
  {
    absl::MutexLock lock(&mu_);
    if (((failed_nodes_ >> node) & 1) == 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "compute node %d did not fail (Engine::FailNode)", node));
    }
    for (const auto& stats : session_stats_) {
      if (stats->node == node && stats.use_count() > 1) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "compute node %d still has sessions: destroy them before it "
            "rejoins",
            node));
      }
    }
  }
  if (absl::Status s = monitor_->WaitReclaimed(node, timeout); !s.ok()) {
    return s;
  }
  // It may have failed while reclaiming another node: that reclaim runs
  // on its runtime (failing now) until it notices.
  if (absl::Status s = monitor_->WaitReclaimsBy(node, timeout); !s.ok()) {
    return s;
  }
  // The checkpointer reads through compute node 0's cache: it goes with
  // the dead incarnation and starts again with the new one, as it would
  // in a restarted process (which knows none of the earlier checkpoints
  // but what is on disk).
  const bool restart_checkpointer = node == 0 && checkpointer_ != nullptr;
  if (restart_checkpointer) checkpointer_.reset();
  retired_cache_stats_ += nodes_[node]->manager().Stats();
  // Its partitioned-mode side first: its branches run on the runtime.
  // Whatever they held was ended by the survivors' resolution and the
  // latch scan; rolling them back only drops the dead cache's copies.
  if (node < partition_nodes_.size()) partition_nodes_[node].reset();
  {
    // The dead incarnation: its log fails to close (its files stopped),
    // its cache is dropped (every write-back fails: it is still fenced).
    absl::MutexLock swap(&runtimes_mu_);
    // Its table handles stay: deleted rows' slots queued for them in the
    // epoch manager, which every node hosted here shares, go back to them
    // (and are never used again, as a crash leaves them), not to freed
    // memory.
    for (auto& table : nodes_[node]->TakeTables()) {
      dead_tables_.push_back(std::move(table));
    }
    nodes_[node].reset();
  }
  absl::StatusOr<rdma::ComputeNode*> compute = fabric_->compute_node(node);
  if (!compute.ok()) return compute.status();
  if (absl::Status s = (*compute)->ResetHandlers(); !s.ok()) return s;
  if (absl::Status s = fabric_->Unfence(node); !s.ok()) return s;
  if (node < log_files_.size() && log_files_[node] != nullptr) {
    log_files_[node]->Restart();
  }
  auto fresh = CreateNodeRuntime(node);
  if (!fresh.ok()) return fresh.status();
  NodeRuntime& r = **fresh;
  r.SetEpochs(epochs_by_node_[node]);
  {
    absl::MutexLock lock(&mu_);
    for (const storage::TableDescriptor& table : table_descriptors_) {
      if (absl::Status s = r.AddTable(table); !s.ok()) return s;
    }
    for (const IndexAdded& index : index_descriptors_) {
      if (absl::Status s = r.AddIndex(index.index, index.table, index.key);
          !s.ok()) {
        return s;
      }
    }
  }
  if (wal_started_.has_value()) {
    if (absl::Status s = StartNodeLogging(r, *wal_started_); !s.ok()) return s;
  }
  if (absl::Status s = OpenRing(r); !s.ok()) return s;
  {
    absl::MutexLock swap(&runtimes_mu_);
    nodes_[node] = *std::move(fresh);
  }
  if (restart_checkpointer) {
    if (absl::Status s = StartCheckpointer(log_dir_, nodes_[0]->marks());
        !s.ok()) {
      return s;
    }
  }
  if (node < partition_nodes_.size()) {
    // A new mailbox region: it greets every survivor, who forgot the old
    // one when it failed, and its partitions are available again.
    auto started = StartPartitionNode(*nodes_[node]);
    if (!started.ok()) return started.status();
    partition_nodes_[node] = *std::move(started);
    // Nodes that are down still (two failed together) are failed to it
    // from the start: it neither greets them nor waits for them; each
    // greets it when it rejoins.
    for (const auto& other : nodes_) {
      if (other != nullptr && other->id() != node && NodeDown(other->id())) {
        partition_nodes_[node]->PeerFailed(other->id());
      }
    }
    if (absl::Status s = partition_nodes_[node]->Greet(); !s.ok()) return s;
  }
  if (absl::Status s = monitor_->Attach(node, nodes_[node]->manager(),
                                        OnDeclaredFailed(*nodes_[node]));
      !s.ok()) {
    return s;
  }
  for (auto& p : partition_nodes_) {
    if (p != nullptr && p->id() != node) p->PeerRejoined(node);
  }
  absl::MutexLock lock(&mu_);
  failed_nodes_ &= ~(uint64_t{1} << node);
  down_nodes_.fetch_and(~(uint64_t{1} << node));
  LOG(WARNING) << "compute node " << node << " rejoined with an empty cache";
  return absl::OkStatus();
}

absl::Status EngineImpl::PauseHeartbeats(rdma::ComputeNodeId node) {
  if (absl::Status s = CheckFailover(node); !s.ok()) return s;
  monitor_->Pause(node);
  return absl::OkStatus();
}

absl::Status EngineImpl::ResumeHeartbeats(rdma::ComputeNodeId node) {
  if (absl::Status s = CheckFailover(node); !s.ok()) return s;
  monitor_->Resume(node);
  return absl::OkStatus();
}

std::vector<ReclaimReport> EngineImpl::ReclaimReports() const {
  if (monitor_ == nullptr) return {};
  return monitor_->reports();
}

absl::Time EngineImpl::DeclaredFailedAt(rdma::ComputeNodeId node) const {
  if (monitor_ == nullptr) return absl::InfinitePast();
  return monitor_->declared_at(node);
}

absl::Time EngineImpl::LastDeclaredFailedAt(rdma::ComputeNodeId node) const {
  if (monitor_ == nullptr) return absl::InfinitePast();
  return monitor_->last_declared_at(node);
}

absl::Time EngineImpl::LeaseRenewedAt(rdma::ComputeNodeId node) const {
  if (monitor_ == nullptr) return absl::InfiniteFuture();
  return monitor_->lease_renewed_at(node);
}

void EngineImpl::StopFailover() {
  if (monitor_ == nullptr) return;
  // Nodes that close leave in good order: nothing to reclaim.
  for (auto& node : nodes_) {
    if (node == nullptr) continue;
    absl::MutexLock lock(&mu_);
    if (((failed_nodes_ >> node->id()) & 1) == 0) {
      (void)monitor_->Leave(node->id());
    }
  }
  monitor_.reset();
}

}  // namespace strand::engine
