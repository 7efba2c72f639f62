#include "partition/coordinator.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/coding.h"
#include "glog/logging.h"
#include "partition/decision_board.h"
#include "wal/two_phase_records.h"

namespace strand::partition {
namespace {

uint64_t NanosSince(absl::Time t) {
  return static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - t));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(Node& node) {
  auto slot = node.AcquireSlot();
  if (!slot.ok()) return slot.status();
  std::unique_ptr<Coordinator> c(new Coordinator(node, *slot));
  auto endpoint = node.compute_node().NewEndpoint();
  if (!endpoint.ok()) {
    node.ReleaseSlot(*slot);
    return endpoint.status();
  }
  c->endpoint_ = *std::move(endpoint);
  return c;
}

Coordinator::~Coordinator() {
  Abort();
  node_.ReleaseSlot(slot_);
}

void Coordinator::Publish() {
  node_.AddStats(stats_);
  stats_ = PartitionStats();
}

void Coordinator::Begin() {
  // The slot's sequence outlives its sessions, so a gtid names one
  // transaction per incarnation of this node: a decision word
  // (decision_board.h) left by an earlier session of this slot never
  // names a later one's transaction. The slot keeps two sessions of one
  // node apart, the node id two nodes.
  gtid_ =
      wal::GlobalTxnId(node_.id(), (slot_->NextSequence() << 8) |
                                       static_cast<uint64_t>(slot_->index()));
  branches_.clear();
  begin_ = absl::Now();
}

void Coordinator::SendRound(Kind kind, absl::Span<const rdma::ComputeNodeId> to,
                            const Header& header) {
  absl::InlinedVector<rdma::ComputeNodeId, 4> sent;
  absl::InlinedVector<rdma::Message, 4> messages;
  for (rdma::ComputeNodeId n : to) {
    if (node_.peer_failed(n)) continue;  // it learns nothing any more
    node_.Count(kind);
    const bool droppable = kind == Kind::kWork || kind == Kind::kPrepare;
    if (droppable &&
        node_.Inject(node_.options().testing_faults.drop_message)) {
      continue;  // lost on the way: the round times out
    }
    sent.push_back(n);
    messages.push_back(MakeMessage(kind, header));
  }
  absl::InlinedVector<absl::Status, 4> results(sent.size());
  endpoint_->SendEach(sent, messages, absl::MakeSpan(results));
  for (size_t i = 0; i < sent.size(); ++i) {
    if (!results[i].ok()) {
      // Unanswered, it counts as a no (or a missing answer) at the wait.
      LOG(ERROR) << "compute node " << node_.id() << " to node " << sent[i]
                 << ": " << results[i];
    }
  }
}

absl::Status Coordinator::StartCalls(absl::Span<Call> calls) {
  calls_ = calls;
  round_nodes_.clear();
  for (const Call& c : calls) {
    if (node_.peer_failed(c.node)) {
      // Its partitions are unavailable until it rejoins: say so at once.
      ++stats_.unavailable;
      Publish();
      return node_.PeerUnavailable(c.node);
    }
    if (std::find(round_nodes_.begin(), round_nodes_.end(), c.node) ==
        round_nodes_.end()) {
      round_nodes_.push_back(c.node);
    }
  }
  for (rdma::ComputeNodeId n : round_nodes_) {
    if (std::find(branches_.begin(), branches_.end(), n) == branches_.end()) {
      branches_.push_back(n);
    }
  }
  Header h;
  h.gtid = gtid_;
  h.slot = static_cast<uint32_t>(slot_->index());
  h.seq = slot_->Begin(round_nodes_);
  absl::InlinedVector<rdma::ComputeNodeId, 4> to;
  absl::InlinedVector<rdma::Message, 4> messages;
  for (rdma::ComputeNodeId n : round_nodes_) {
    std::string body;
    uint16_t count = 0;
    for (const Call& c : calls) {
      if (c.node != n) continue;
      PutFixed<uint32_t>(&body, c.fragment);
      PutFixed<uint32_t>(&body, static_cast<uint32_t>(c.input.size()));
      body.append(c.input);
      ++count;
    }
    if (body.size() > kMailboxBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "fragment inputs for node %d take %d bytes; at most %d per node "
          "and round",
          n, body.size(), kMailboxBytes));
    }
    auto box = node_.InboxAt(n, slot_->index());
    if (!box.ok()) return box.status();
    if (absl::Status s =
            endpoint_->PostWriteToPeer(*box, body.data(), body.size());
        !s.ok()) {
      return s;
    }
    Header m = h;
    m.body_bytes = static_cast<uint32_t>(body.size());
    m.calls = count;
    node_.Count(Kind::kWork);
    if (node_.Inject(node_.options().testing_faults.drop_message)) continue;
    to.push_back(n);
    messages.push_back(MakeMessage(Kind::kWork, m));
  }
  absl::InlinedVector<absl::Status, 4> results(to.size());
  endpoint_->SendEach(to, messages, absl::MakeSpan(results));
  for (const absl::Status& s : results) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Coordinator::FinishCalls() {
  if (!slot_->Wait(absl::Now() + node_.options().reply_timeout)) {
    return absl::UnavailableError(
        absl::StrFormat("a participant did not answer within %s (of nodes %s)",
                        absl::FormatDuration(node_.options().reply_timeout),
                        absl::StrJoin(round_nodes_, ", ")));
  }
  const std::vector<Slot::Answer>& answers = slot_->answers();
  absl::Status branch_failure;
  for (rdma::ComputeNodeId n : round_nodes_) {
    const Header& h = answers[n].header;
    if (h.status_code != 0 && node_.peer_failed(n)) {
      // It failed during the round (Slot::Fail).
      ++stats_.unavailable;
      return node_.PeerUnavailable(n);
    }
    if (h.status_code != 0) {
      if (branch_failure.ok()) {
        branch_failure = absl::Status(
            static_cast<absl::StatusCode>(h.status_code),
            absl::StrFormat("the transaction's branch on compute node %d "
                            "ended",
                            n));
      }
      continue;
    }
    const uint8_t* in = node_.ReplyBox(slot_->index(), n);
    const uint8_t* end = in + std::min<uint64_t>(h.body_bytes, kMailboxBytes);
    for (Call& c : calls_) {
      if (c.node != n) continue;
      if (end - in < 12) return absl::InternalError("short fragment answer");
      const auto code =
          static_cast<absl::StatusCode>(DecodeFixed<uint32_t>(in));
      const uint32_t message = DecodeFixed<uint32_t>(in + 4),
                     output = DecodeFixed<uint32_t>(in + 8);
      in += 12;
      if (static_cast<uint64_t>(end - in) < uint64_t{message} + output) {
        return absl::InternalError("short fragment answer");
      }
      c.status = absl::Status(
          code, absl::string_view(reinterpret_cast<const char*>(in), message));
      in += message;
      c.output.assign(reinterpret_cast<const char*>(in), output);
      in += output;
    }
  }
  return branch_failure;
}

bool Coordinator::Prepare(uint64_t commit_ts,
                          absl::Span<const rdma::ComputeNodeId> to,
                          std::vector<uint32_t>* yes) {
  Header h;
  h.gtid = gtid_;
  h.commit_ts = commit_ts;
  h.slot = static_cast<uint32_t>(slot_->index());
  h.seq = slot_->Begin(to);
  SendRound(Kind::kPrepare, to, h);
  if (!slot_->Wait(absl::Now() + node_.options().reply_timeout)) return false;
  for (rdma::ComputeNodeId n : to) {
    const Vote v = slot_->answers()[n].header.vote;
    if (v == Vote::kNo) return false;
    if (v == Vote::kYes) yes->push_back(n);
  }
  return true;
}

absl::Status Coordinator::Fail(txn::Txn& local, absl::Status why) {
  Abort();
  // Active or prepared: either way its latches go.
  local.Abort(absl::IsAborted(why) ? txn::AbortReason::kConflict
                                   : txn::AbortReason::kError);
  return why;
}

void Coordinator::Abort() {
  if (branches_.empty()) return;
  Header h;
  h.gtid = gtid_;
  h.slot = static_cast<uint32_t>(slot_->index());
  SendRound(Kind::kAbort, branches_, h);
  branches_.clear();
  ++stats_.aborted;
  Publish();
}

absl::Status Coordinator::CommitLocalOnly(txn::Txn& local) {
  if (node_.options().one_phase_local) {
    absl::Status s = local.CommitOnePhase();
    if (s.ok()) {
      ++stats_.transactions;
      Publish();
    }
    return s;
  }
  // As the SELCC authors' engine commits: the transaction's own node is a
  // participant of itself, with a forced prepare, then a forced decision.
  if (absl::Status s = local.PrepareBranch(0); !s.ok()) return Fail(local, s);
  wal::LogWriter* log = node_.db().log;
  // Forced unless a watermark acknowledges (docs/design/durable_acks.md).
  const bool force = node_.db().watermark == nullptr;
  if (log != nullptr && local.writes_anything()) {
    auto prepared = local.LogBranch(wal::RecordType::kPrepare, gtid_,
                                    wal::EncodePreparePayload(node_.id(), ""));
    if (!prepared.ok()) return Fail(local, prepared.status());
    if (absl::Status s = force ? log->WaitDurable(*prepared) : absl::OkStatus();
        !s.ok()) {
      return Fail(local, s);
    }
    auto decided = log->AppendRecord(
        wal::RecordType::kDistributedCommit, gtid_, local.commit_ts(),
        wal::EncodeDistributedCommitPayload({node_.id()}, ""));
    if (!decided.ok()) return Fail(local, decided.status());
    if (absl::Status s = force ? log->WaitDurable(*decided) : absl::OkStatus();
        !s.ok()) {
      return Fail(local, s);
    }
    stats_.forced_writes += 2;
  }
  if (absl::Status s = local.CommitPrepared(); !s.ok()) return s;
  ++stats_.transactions;
  Publish();
  return absl::OkStatus();
}

absl::Status Coordinator::CommitDistributed(txn::Txn& local) {
  const absl::Time prepare_start = absl::Now();
  if (node_.Inject(node_.options().testing_faults.abort_before_prepare)) {
    return Fail(local, absl::AbortedError("injected abort before PREPARE"));
  }
  // Every latch the local commit needs, and the commit timestamp while all
  // of the transaction's latches are held (here and at the participants).
  if (absl::Status s = local.PrepareBranch(0); !s.ok()) return Fail(local, s);
  const uint64_t commit_ts = local.commit_ts();
  std::vector<uint32_t> yes;
  bool all_yes = true;
  if (node_.options().parallel_prepare) {
    all_yes = Prepare(commit_ts, branches_, &yes);
  } else {
    for (rdma::ComputeNodeId n : branches_) {
      if (!(all_yes = Prepare(commit_ts, {n}, &yes))) break;
    }
  }
  if (!all_yes) {
    for (rdma::ComputeNodeId n : branches_) {
      if (node_.peer_failed(n)) {
        ++stats_.unavailable;
        return Fail(local, node_.PeerUnavailable(n));
      }
    }
    return Fail(local, absl::AbortedError(
                           "a participant voted no or did not vote in time"));
  }
  node_.At(TwoPhasePoint::kCoordinatorBeforeDecision);
  const absl::Time commit_start = absl::Now();
  // With failover, the decision goes to memory before the log and before
  // anyone learns it (decision_board.h); after it, this node commits
  // whatever its log does.
  bool published = false;
  if (node_.publishes_decisions() && !yes.empty()) {
    if (absl::Status s = PublishDecision(local, yes); !s.ok()) {
      return Fail(local, s);
    }
    published = true;
  }
  wal::LogWriter* log = node_.db().log;
  absl::Status log_failure;
  if (log != nullptr && (!yes.empty() || local.writes_anything())) {
    // The decision: forced before anyone learns it. With only read-only
    // participants it is a plain commit of the local writes.
    auto decided =
        yes.empty()
            ? local.LogBranch(wal::RecordType::kCommit, commit_ts, "")
            : local.LogBranch(wal::RecordType::kDistributedCommit, gtid_,
                              wal::EncodeDistributedCommitPayload(yes, ""),
                              /*abort_on_failure=*/!published);
    if (!decided.ok() && !published) return Fail(local, decided.status());
    // Acknowledged by watermark, the decision need not be durable before
    // the participants learn it: a crash that loses it cuts the
    // transaction, and everything that read its writes, from every log
    // (docs/design/durable_acks.md).
    absl::Status durable = !decided.ok() ? decided.status()
                           : node_.db().watermark != nullptr
                               ? absl::OkStatus()
                               : log->WaitDurable(*decided);
    if (!durable.ok() && !published) {
      // The decision may or may not be durable, and this node's log is
      // failed for good (wal/log_writer.h): nobody is told anything. The
      // participants stay prepared, latches held, until a restart's
      // recovery decides from the logs.
      branches_.clear();
      local.Abort(txn::AbortReason::kError);
      return durable;
    }
    // Published, the decision stands (its ring record carries the redo);
    // the caller is not told it committed.
    log_failure = durable;
    ++stats_.forced_writes;
  }
  if (absl::Status s = local.CommitPrepared(); !s.ok()) return s;
  node_.At(TwoPhasePoint::kCoordinatorAfterDecision);
  stats_.coordinator_hold_ns += NanosSince(begin_);
  Header h;
  h.gtid = gtid_;
  h.commit_ts = commit_ts;
  h.slot = static_cast<uint32_t>(slot_->index());
  absl::InlinedVector<rdma::ComputeNodeId, 4> to(yes.begin(), yes.end());
  // Expected before they can arrive (an inline delivery answers at once).
  if (published) slot_->ExpectAcks(gtid_, to);
  SendRound(Kind::kCommit, to, h);
  ++stats_.transactions;
  ++stats_.distributed;
  stats_.participants += branches_.size();
  stats_.execute_ns +=
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(prepare_start - begin_));
  stats_.prepare_ns += static_cast<uint64_t>(
      absl::ToInt64Nanoseconds(commit_start - prepare_start));
  stats_.commit_ns += NanosSince(commit_start);
  branches_.clear();
  Publish();
  return log_failure;
}

absl::Status Coordinator::PublishDecision(txn::Txn& local,
                                          absl::Span<const uint32_t> yes) {
  // The slot's last decision may still be the only word a failed
  // yes-voter's reclaimer can decide by: not overwritten until answered.
  if (!slot_->WaitAcked(absl::Now() + node_.options().reply_timeout)) {
    return absl::AbortedError(
        "a participant has not acknowledged this session's last commit");
  }
  // Redone by this node's reclaimer iff the word below names gtid_.
  if (absl::Status s = local.RecordPrepared(
          wal::RecordType::kDistributedCommit, gtid_,
          wal::EncodeDistributedCommitPayload(
              std::vector<uint32_t>(yes.begin(), yes.end()), ""));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<bool> won =
      partition::Publish(*endpoint_,
                         DecisionWord(node_.fabric(), node_.id(),
                                      static_cast<uint32_t>(slot_->index())),
                         gtid_, &slot_->decision_);
  if (!won.ok()) return won.status();
  if (!*won) {
    ++stats_.unavailable;
    return absl::UnavailableError(
        "a participant failed after voting yes, and its reclaimer aborted "
        "the transaction first");
  }
  return absl::OkStatus();
}

absl::Status Coordinator::Commit(txn::Txn& local) {
  if (branches_.empty()) return CommitLocalOnly(local);
  return CommitDistributed(local);
}

}  // namespace strand::partition
