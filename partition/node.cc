#include "partition/node.h"

#include <optional>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/coding.h"
#include "glog/logging.h"
#include "partition/decision_board.h"
#include "wal/two_phase_records.h"

namespace strand::partition {
namespace {

// How long a node waits for another's kHello before a request to it fails.
constexpr absl::Duration kHelloWait = absl::Seconds(30);

}  // namespace

struct Node::Branch {
  uint64_t gtid = 0;
  std::mutex mu;  // one message of the branch at a time
  std::unique_ptr<cc::ThreadContext> ctx;
  // With a watermark (txn/commit_watermark.h), held from the branch's
  // first fragment: the coordinator's commit timestamp comes later.
  txn::CommitWatermark::Slot* watermark_slot = nullptr;
  std::unique_ptr<txn::ConcurrencyControl> cc;
  std::unique_ptr<txn::Txn> txn;
  bool prepared = false;  // guarded by mu
  bool ended = false;     // guarded by mu
  std::atomic<bool> abort_requested{false};
  absl::Time start;  // its first work: its latches are held from here
};

uint32_t Slot::Begin(absl::Span<const rdma::ComputeNodeId> nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++seq_;
  outstanding_ = static_cast<int>(nodes.size());
  for (Answer& a : answers_) a.arrived = true;  // not expected
  for (rdma::ComputeNodeId n : nodes) answers_[n].arrived = false;
  // A failed node's answer is known already (Fail).
  const uint64_t failed =
      failed_ != nullptr ? failed_->load(std::memory_order_acquire) : 0;
  for (rdma::ComputeNodeId n : nodes) {
    if ((failed >> n) & 1) FailLocked(n);
  }
  return seq_;
}

void Slot::ExpectAcks(uint64_t gtid,
                      absl::Span<const rdma::ComputeNodeId> nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  unacked_gtid_ = gtid;
  unacked_ = 0;
  for (rdma::ComputeNodeId n : nodes) unacked_ |= uint64_t{1} << n;
  // A failed node's resolution is over already (Node::PeerFailed).
  if (failed_ != nullptr) unacked_ &= ~failed_->load(std::memory_order_acquire);
}

void Slot::Acked(rdma::ComputeNodeId from, uint64_t gtid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (gtid != unacked_gtid_ || from >= 64) return;
  unacked_ &= ~(uint64_t{1} << from);
  if (unacked_ == 0) done_.notify_all();
}

bool Slot::WaitAcked(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_.wait_until(lock, absl::ToChronoTime(deadline),
                          [&] { return unacked_ == 0; });
}

void Slot::FailLocked(rdma::ComputeNodeId n) {
  if (n < 64 && ((unacked_ >> n) & 1)) {
    unacked_ &= ~(uint64_t{1} << n);
    if (unacked_ == 0) done_.notify_all();
  }
  if (n >= answers_.size() || answers_[n].arrived) return;
  Header h;
  h.seq = seq_;
  h.status_code = static_cast<uint32_t>(absl::StatusCode::kUnavailable);
  h.vote = Vote::kNo;
  answers_[n] = Answer{true, h};
  if (--outstanding_ == 0) done_.notify_all();
}

void Slot::Fail(rdma::ComputeNodeId n) {
  std::lock_guard<std::mutex> lock(mu_);
  FailLocked(n);
}

void Slot::Deliver(rdma::ComputeNodeId from, const Header& header) {
  std::lock_guard<std::mutex> lock(mu_);
  if (header.seq != seq_ || from >= answers_.size() || answers_[from].arrived) {
    return;  // an answer to a round given up on, or a duplicate
  }
  answers_[from] = Answer{true, header};
  if (--outstanding_ == 0) done_.notify_all();
}

bool Slot::Wait(absl::Time deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return done_.wait_until(lock, absl::ToChronoTime(deadline),
                          [&] { return outstanding_ == 0; });
}

Node::Node(const Config& config)
    : config_(config),
      nodes_(config.fabric->compute_node_count()),
      slots_(config.options.slots_per_node) {}

Node::~Node() {
  gate_->closed.store(true, std::memory_order_seq_cst);
  while (gate_->inside.load(std::memory_order_seq_cst) > 0) {
    std::this_thread::yield();
  }
  // Messages not handled yet are dropped, as a stopped fabric drops them:
  // their coordinators time out, and the branches left are rolled back.
  {
    std::lock_guard<std::mutex> lock(participant_mu_);
    participant_stop_ = true;
  }
  participant_cv_.notify_all();
  if (participant_.joinable()) participant_.join();
  // Their Txns abort as they go, releasing their latches.
  absl::flat_hash_map<uint64_t, std::shared_ptr<Branch>> left;
  {
    std::lock_guard<std::mutex> lock(branches_mu_);
    left.swap(branches_);
  }
  for (auto& [gtid, b] : left) {
    std::lock_guard<std::mutex> lock(b->mu);
    if (b->txn != nullptr && b->txn->active()) {
      b->txn->Abort(txn::AbortReason::kUser);
    }
    b->txn.reset();
  }
  // A failed node's partition node goes while its compute node stays (the
  // rejoin makes a new one): no peer may write into the freed region.
  if (local_.base != nullptr) {
    if (absl::Status s = compute_node_->UnregisterLocalMemory(local_.base);
        !s.ok()) {
      LOG(ERROR) << "partition node " << config_.id << ": " << s;
    }
  }
}

absl::StatusOr<std::unique_ptr<Node>> Node::Start(const Config& config) {
  std::unique_ptr<Node> node(new Node(config));
  auto compute_node = config.fabric->compute_node(config.id);
  if (!compute_node.ok()) return compute_node.status();
  node->compute_node_ = *compute_node;
  const uint64_t bytes = RegionBytes(node->nodes_, node->slots_);
  node->region_.reset(new uint8_t[bytes]());
  auto region =
      node->compute_node_->RegisterLocalMemory(node->region_.get(), bytes);
  if (!region.ok()) return region.status();
  node->local_ = *region;
  node->peers_.assign(node->nodes_, rdma::PeerAddress());
  node->greeted_.assign(node->nodes_, false);
  node->peers_[config.id] = node->local_.peer_address;
  node->greeted_[config.id] = true;
  for (int i = 0; i < node->slots_; ++i) {
    auto slot = std::make_unique<Slot>();
    slot->index_ = i;
    slot->answers_.resize(node->nodes_);
    slot->failed_ = &node->failed_;
    node->free_slots_.push_back(slot.get());
    node->slots_all_.push_back(std::move(slot));
  }
  auto endpoint = node->compute_node_->NewEndpoint();
  if (!endpoint.ok()) return endpoint.status();
  node->vote_endpoint_ = *std::move(endpoint);
  if (config.failover) {
    // An earlier incarnation's decisions were acted on by whoever
    // survived it; none may be read as this one's.
    if (absl::Status s =
            ClearDecisions(*node->vote_endpoint_, *config.fabric, config.id);
        !s.ok()) {
      return s;
    }
  }
  auto participant_endpoint = node->compute_node_->NewEndpoint();
  if (!participant_endpoint.ok()) return participant_endpoint.status();
  node->participant_endpoint_ = *std::move(participant_endpoint);
  node->participant_ = std::thread([n = node.get()] { n->RunParticipant(); });
  Node* self = node.get();
  if (absl::Status s = node->compute_node_->AddHandler(
          kFirstMessageType, kLastMessageType,
          [self, gate = node->gate_](const rdma::Message& m,
                                     rdma::Endpoint& ep) {
            gate->inside.fetch_add(1, std::memory_order_seq_cst);
            if (!gate->closed.load(std::memory_order_seq_cst)) {
              self->Handle(m, ep);
            }
            gate->inside.fetch_sub(1, std::memory_order_release);
          },
          /*threads=*/1);
      !s.ok()) {
    return s;
  }
  return node;
}

absl::Status Node::Greet() {
  Hello hello;
  hello.region = local_.peer_address;
  hello.slots = static_cast<uint32_t>(slots_);
  hello.nodes = static_cast<uint32_t>(nodes_);
  rdma::Message m;
  m.type = static_cast<uint16_t>(Kind::kHello);
  m.Store(hello);
  m.reserved = 1;  // answer with yours
  std::lock_guard<std::mutex> lock(vote_mu_);
  for (int n = 0; n < nodes_; ++n) {
    // A failed peer greets this node when it rejoins.
    if (n == static_cast<int>(config_.id) || peer_failed(n)) continue;
    if (absl::Status s = vote_endpoint_->Send(n, m); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void Node::OnHello(const rdma::Message& m, rdma::Endpoint& endpoint) {
  const Hello hello = m.Load<Hello>();
  if (hello.slots != static_cast<uint32_t>(slots_) ||
      hello.nodes != static_cast<uint32_t>(nodes_)) {
    LOG(ERROR) << "compute node " << m.source << " runs partitioned mode with "
               << hello.slots << " slots on " << hello.nodes
               << " nodes, this node with " << slots_ << " on " << nodes_
               << ": their mailboxes do not match; check the options";
    return;
  }
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    peers_[m.source] = hello.region;
    greeted_[m.source] = true;
  }
  peers_cv_.notify_all();
  if (m.reserved == 1) {
    // It may not have been up when this node greeted: answer.
    rdma::Message answer = m;
    Hello mine;
    mine.region = local_.peer_address;
    mine.slots = static_cast<uint32_t>(slots_);
    mine.nodes = static_cast<uint32_t>(nodes_);
    answer.Store(mine);
    answer.reserved = 0;
    if (absl::Status s = endpoint.Send(m.source, answer); !s.ok()) {
      LOG(ERROR) << "compute node " << config_.id << " cannot answer node "
                 << m.source << "'s hello: " << s;
    }
  }
}

absl::StatusOr<rdma::PeerAddress> Node::PeerRegion(rdma::ComputeNodeId to) {
  std::unique_lock<std::mutex> lock(peers_mu_);
  if (!peers_cv_.wait_for(lock, absl::ToChronoNanoseconds(kHelloWait),
                          [&] { return greeted_[to]; })) {
    return absl::UnavailableError(absl::StrFormat(
        "compute node %d never announced its partitioned-mode mailboxes "
        "(waited %s): is it running?",
        to, absl::FormatDuration(kHelloWait)));
  }
  return peers_[to];
}

absl::StatusOr<rdma::PeerAddress> Node::InboxAt(rdma::ComputeNodeId to,
                                                int slot) {
  auto region = PeerRegion(to);
  if (!region.ok()) return region.status();
  return *region + InboxOffset(config_.id, slot, slots_);
}

absl::StatusOr<rdma::PeerAddress> Node::ReplyBoxAt(rdma::ComputeNodeId to,
                                                   int slot) {
  auto region = PeerRegion(to);
  if (!region.ok()) return region.status();
  return *region + ReplyOffset(slot, config_.id, nodes_, slots_);
}

const uint8_t* Node::Inbox(rdma::ComputeNodeId from, int slot) const {
  return region_.get() + InboxOffset(from, slot, slots_);
}

const uint8_t* Node::ReplyBox(int slot, rdma::ComputeNodeId from) const {
  return region_.get() + ReplyOffset(slot, from, nodes_, slots_);
}

absl::StatusOr<Slot*> Node::AcquireSlot() {
  std::lock_guard<std::mutex> lock(slots_mu_);
  if (free_slots_.empty()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "compute node %d has no free coordinator slot: at most %d sessions "
        "per node in partitioned mode (PartitionedOptions::slots_per_node)",
        config_.id, slots_));
  }
  Slot* s = free_slots_.back();
  free_slots_.pop_back();
  return s;
}

void Node::ReleaseSlot(Slot* slot) {
  std::lock_guard<std::mutex> lock(slots_mu_);
  free_slots_.push_back(slot);
}

bool Node::Inject(double probability) {
  if (probability <= 0) return false;
  std::lock_guard<std::mutex> lock(rng_mu_);
  return std::uniform_real_distribution<double>(0, 1)(rng_) < probability;
}

void Node::At(TwoPhasePoint point) {
  if (config_.options.testing_faults.at_point) {
    config_.options.testing_faults.at_point(point, config_.id);
  }
}

void Node::PeerFailed(rdma::ComputeNodeId n) {
  failed_.fetch_or(uint64_t{1} << n, std::memory_order_acq_rel);
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    greeted_[n] = false;
  }
  for (auto& slot : slots_all_) slot->Fail(n);
}

void Node::PeerRejoined(rdma::ComputeNodeId n) {
  failed_.fetch_and(~(uint64_t{1} << n), std::memory_order_acq_rel);
}

void Node::Crashed() {
  const uint64_t everyone =
      nodes_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << nodes_) - 1;
  failed_.store(everyone & ~(uint64_t{1} << config_.id),
                std::memory_order_release);
  for (auto& slot : slots_all_) {
    for (int n = 0; n < nodes_; ++n) {
      if (n != static_cast<int>(config_.id)) slot->Fail(n);
    }
  }
}

absl::Status Node::PeerUnavailable(rdma::ComputeNodeId n) const {
  return absl::UnavailableError(absl::StrFormat(
      "compute node %d failed: its partitions are unavailable until it "
      "rejoins",
      n));
}

absl::Status Node::ResolveBranchesOf(rdma::ComputeNodeId coordinator,
                                     int* committed, int* aborted) {
  std::vector<std::shared_ptr<Branch>> theirs;
  {
    std::lock_guard<std::mutex> lock(branches_mu_);
    for (auto& [gtid, b] : branches_) {
      if (wal::CoordinatorOf(gtid) == coordinator) theirs.push_back(b);
    }
  }
  for (const std::shared_ptr<Branch>& b : theirs) {
    std::lock_guard<std::mutex> lock(b->mu);  // a running handler ends
    if (b->ended) continue;
    if (!b->prepared) {
      EndBranch(*b);  // undecided: presumed abort
      ++*aborted;
      continue;
    }
    absl::StatusOr<bool> commit = false;
    {
      std::lock_guard<std::mutex> vote(vote_mu_);
      commit = Decided(*vote_endpoint_, *config_.fabric, b->gtid, coordinator);
    }
    if (!commit.ok()) return commit.status();
    if (*commit) {
      CommitBranch(*b, b->txn->commit_ts());
      ++*committed;
    } else {
      EndBranch(*b);
      ++*aborted;
    }
  }
  return absl::OkStatus();
}

PartitionStats Node::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void Node::AddStats(const PartitionStats& s) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_ += s;
}

void Node::Count(Kind kind) {
  PartitionStats s;
  switch (kind) {
    case Kind::kWork:
      s.requests = 1;
      break;
    case Kind::kWorkReply:
      s.replies = 1;
      break;
    case Kind::kPrepare:
      s.prepares = 1;
      break;
    case Kind::kVote:
      s.votes = 1;
      break;
    case Kind::kCommit:
      s.commits = 1;
      break;
    case Kind::kAbort:
      s.aborts = 1;
      break;
    case Kind::kAck:
      s.acks = 1;
      break;
    case Kind::kHello:
      return;
  }
  AddStats(s);
}

absl::Status Node::Send(rdma::Endpoint& endpoint, rdma::ComputeNodeId to,
                        Kind kind, const Header& h, bool droppable) {
  Count(kind);
  if (droppable && Inject(config_.options.testing_faults.drop_message)) {
    return absl::OkStatus();  // lost on the way
  }
  return endpoint.Send(to, MakeMessage(kind, h));
}

void Node::SendVoteLater(rdma::ComputeNodeId to, const Header& h) {
  std::lock_guard<std::mutex> lock(vote_mu_);
  if (absl::Status s = Send(*vote_endpoint_, to, Kind::kVote, h, true);
      !s.ok()) {
    LOG(ERROR) << "compute node " << config_.id << " cannot vote to node " << to
               << ": " << s;
  }
}

void Node::Handle(const rdma::Message& m, rdma::Endpoint& endpoint) {
  const Kind kind = static_cast<Kind>(m.type);
  if (kind == Kind::kHello) {
    OnHello(m, endpoint);
    return;
  }
  switch (kind) {
    case Kind::kWork:
    case Kind::kPrepare:
    case Kind::kCommit:
    case Kind::kAbort: {
      if (!rdma::OnMessageHandlerThread()) {
        // Delivered inline, on the coordinator's own thread (the
        // loopback's default): waiting here is the sender's own time, as
        // the cost model charges it.
        HandleParticipant(m, endpoint);
        return;
      }
      {
        std::lock_guard<std::mutex> lock(participant_mu_);
        participant_queue_.push_back(m);
      }
      participant_cv_.notify_one();
      return;
    }
    case Kind::kWorkReply:
    case Kind::kVote:
    case Kind::kAck:
      OnAnswer(kind, m.Load<Header>(), m.source);
      return;
    case Kind::kHello:
      return;
  }
  LOG(ERROR) << "compute node " << config_.id
             << " got an unknown partitioned-mode message " << m.type;
}

void Node::RunParticipant() {
  rdma::Endpoint& endpoint = *participant_endpoint_;
  for (;;) {
    rdma::Message m;
    {
      std::unique_lock<std::mutex> lock(participant_mu_);
      participant_cv_.wait(lock, [&] {
        return participant_stop_ || !participant_queue_.empty();
      });
      if (participant_stop_) return;
      m = participant_queue_.front();
      participant_queue_.pop_front();
    }
    HandleParticipant(m, endpoint);
  }
}

void Node::HandleParticipant(const rdma::Message& m, rdma::Endpoint& endpoint) {
  const Header h = m.Load<Header>();
  switch (static_cast<Kind>(m.type)) {
    case Kind::kWork:
      OnWork(h, m.source, endpoint);
      return;
    case Kind::kPrepare:
      OnPrepare(h, m.source, endpoint);
      return;
    case Kind::kCommit:
      OnCommit(h, m.source, endpoint);
      return;
    case Kind::kAbort:
      OnAbort(h);
      return;
    default:
      return;
  }
}

std::shared_ptr<Node::Branch> Node::FindBranch(uint64_t gtid, bool create,
                                               absl::Status* error) {
  std::lock_guard<std::mutex> lock(branches_mu_);
  auto it = branches_.find(gtid);
  if (it != branches_.end()) return it->second;
  if (!create) return nullptr;
  auto b = std::make_shared<Branch>();
  b->gtid = gtid;
  b->start = absl::Now();
  if (!free_contexts_.empty()) {
    b->ctx = std::move(free_contexts_.back());
    free_contexts_.pop_back();
  } else {
    auto ctx = config_.manager->NewThreadContext();
    if (!ctx.ok()) {
      *error = ctx.status();
      return nullptr;
    }
    b->ctx = *std::move(ctx);
  }
  if (txn::CommitWatermark* watermark = config_.db->marks; watermark) {
    if (!free_watermark_slots_.empty()) {
      b->watermark_slot = free_watermark_slots_.back();
      free_watermark_slots_.pop_back();
    } else {
      auto slot = watermark->NewSlot();
      if (!slot.ok()) {
        *error = slot.status();
        free_contexts_.push_back(std::move(b->ctx));
        return nullptr;
      }
      b->watermark_slot = *slot;
    }
  }
  b->cc = txn::ConcurrencyControl::Create(config_.db->algorithm);
  b->txn = std::make_unique<txn::Txn>(*config_.db, *b->ctx, *b->cc);
  b->txn->set_watermark_slot(b->watermark_slot);
  if (absl::Status s = b->txn->Begin(); !s.ok()) {
    *error = s;
    return nullptr;
  }
  branches_.emplace(gtid, b);
  return b;
}

void Node::EndBranch(Branch& b) {
  b.ended = true;
  PartitionStats s;
  s.branches_ended = 1;
  s.branch_hold_ns =
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(absl::Now() - b.start));
  AddStats(s);
  b.txn->Abort(txn::AbortReason::kUser);  // no-op once committed
  b.txn.reset();
  b.cc.reset();
  std::lock_guard<std::mutex> lock(branches_mu_);
  free_contexts_.push_back(std::move(b.ctx));
  if (b.watermark_slot != nullptr) {
    free_watermark_slots_.push_back(std::exchange(b.watermark_slot, nullptr));
  }
  branches_.erase(b.gtid);
}

void Node::OnWork(const Header& h, rdma::ComputeNodeId from,
                  rdma::Endpoint& endpoint) {
  Header reply;
  reply.gtid = h.gtid;
  reply.slot = h.slot;
  reply.seq = h.seq;
  reply.status_code = static_cast<uint32_t>(absl::StatusCode::kOk);
  std::string body;
  absl::Status error;
  // A failed coordinator's work still queued here makes no branch: its
  // branches were decided when it was fenced, and none would end later.
  std::shared_ptr<Branch> b =
      peer_failed(from) ? nullptr : FindBranch(h.gtid, /*create=*/true, &error);
  if (b == nullptr && error.ok()) error = PeerUnavailable(from);
  auto fail = [&](absl::StatusCode code) {
    reply.status_code = static_cast<uint32_t>(code);
    body.clear();
  };
  if (b == nullptr) {
    LOG_IF(ERROR, !peer_failed(from))
        << "compute node " << config_.id << ": no branch for node " << from
        << "'s transaction: " << error;
    fail(error.code());
  } else {
    std::unique_lock<std::mutex> lock(b->mu, std::try_to_lock);
    if (!lock.owns_lock() || b->ended || b->prepared) {
      fail(absl::StatusCode::kAborted);
    } else {
      const uint8_t* in = Inbox(from, h.slot);
      const uint8_t* end = in + std::min<uint64_t>(h.body_bytes, kMailboxBytes);
      for (int i = 0; i < h.calls && reply.status_code == 0; ++i) {
        if (end - in < 8) {
          fail(absl::StatusCode::kInternal);
          break;
        }
        const uint32_t fragment = DecodeFixed<uint32_t>(in);
        const uint32_t length = DecodeFixed<uint32_t>(in + 4);
        in += 8;
        if (static_cast<uint64_t>(end - in) < length) {
          fail(absl::StatusCode::kInternal);
          break;
        }
        const ErasedFragment* fn = config_.fragments->Find(fragment);
        std::string output;
        absl::Status s =
            fn == nullptr
                ? absl::InvalidArgumentError("no such fragment on this node")
                : (*fn)(*b->txn,
                        std::string_view(reinterpret_cast<const char*>(in),
                                         length),
                        &output);
        in += length;
        if (!b->txn->active()) {  // a conflict ended the branch
          fail(s.ok() ? absl::StatusCode::kAborted : s.code());
          break;
        }
        PutFixed<uint32_t>(&body, static_cast<uint32_t>(s.code()));
        PutFixed<uint32_t>(&body, static_cast<uint32_t>(s.message().size()));
        PutFixed<uint32_t>(&body, static_cast<uint32_t>(output.size()));
        body.append(s.message().data(), s.message().size());
        body.append(output);
      }
      if (body.size() > kMailboxBytes)
        fail(absl::StatusCode::kResourceExhausted);
      if (reply.status_code != 0 || b->abort_requested.load()) {
        if (reply.status_code == 0) fail(absl::StatusCode::kAborted);
        EndBranch(*b);
      }
    }
  }
  if (!body.empty()) {
    auto box = ReplyBoxAt(from, h.slot);
    absl::Status s =
        box.ok() ? endpoint.PostWriteToPeer(*box, body.data(), body.size())
                 : box.status();
    if (!s.ok()) {
      LOG(ERROR) << "compute node " << config_.id << " answering node " << from
                 << ": " << s;
      return;  // the coordinator times out and aborts
    }
  }
  reply.body_bytes = static_cast<uint32_t>(body.size());
  if (absl::Status s = Send(endpoint, from, Kind::kWorkReply, reply, true);
      !s.ok()) {
    LOG(ERROR) << "compute node " << config_.id << " answering node " << from
               << ": " << s;
  }
}

void Node::OnPrepare(const Header& h, rdma::ComputeNodeId from,
                     rdma::Endpoint& endpoint) {
  Header vote;
  vote.gtid = h.gtid;
  vote.slot = h.slot;
  vote.seq = h.seq;
  vote.vote = Vote::kNo;
  auto send_now = [&] { (void)Send(endpoint, from, Kind::kVote, vote, true); };
  At(TwoPhasePoint::kParticipantBeforeVote);
  absl::Status unused;
  std::shared_ptr<Branch> b = FindBranch(h.gtid, /*create=*/false, &unused);
  if (b == nullptr) {  // rolled back already: it can only vote no
    send_now();
    return;
  }
  std::unique_lock<std::mutex> lock(b->mu, std::try_to_lock);
  if (!lock.owns_lock() || b->ended || b->prepared) {
    send_now();
    return;
  }
  if (b->abort_requested.load() ||
      Inject(config_.options.testing_faults.no_vote) ||
      !b->txn->PrepareBranch(h.commit_ts).ok()) {
    EndBranch(*b);
    send_now();
    return;
  }
  if (!b->txn->writes_anything() && config_.options.read_only_vote) {
    // Read-only: its shared latches go now, nothing is logged, and it
    // takes no part in the second phase.
    (void)b->txn->CommitPrepared();
    EndBranch(*b);
    vote.vote = Vote::kReadOnly;
    PartitionStats s;
    s.read_only_votes = 1;
    AddStats(s);
    send_now();
    return;
  }
  b->prepared = true;
  wal::LogWriter* log = config_.db->log;
  std::optional<wal::Lsn> lsn;
  if (log != nullptr) {
    auto logged = b->txn->LogBranch(wal::RecordType::kPrepare, h.gtid,
                                    wal::EncodePreparePayload(from, ""));
    if (!logged.ok()) {
      EndBranch(*b);
      send_now();
      return;
    }
    lsn = *logged;
    PartitionStats s;
    s.forced_writes = 1;
    AddStats(s);
  }
  // With failover, the branch's writes are in memory (its ring record)
  // before its yes vote: if this node fails holding the vote, its
  // reclaimer commits them as the coordinator decides (decision_board.h).
  if (config_.failover &&
      !b->txn
           ->RecordPrepared(wal::RecordType::kPrepare, h.gtid,
                            wal::EncodePreparePayload(from, ""))
           .ok()) {
    EndBranch(*b);
    send_now();
    return;
  }
  if (log == nullptr || config_.db->watermark != nullptr) {
    // Acknowledged by watermark: no acknowledgement of this transaction,
    // nor of any that reads its writes, comes before the cluster mark
    // covers its commit timestamp, which needs this record durable; a
    // crash that loses it cuts the transaction everywhere
    // (docs/design/durable_acks.md). So the vote need not wait.
    vote.vote = Vote::kYes;
    send_now();
    lock.unlock();
    At(TwoPhasePoint::kParticipantAfterVote);
    return;
  }
  lock.unlock();
  // The vote leaves once the prepare record is durable: from the log's
  // flusher, so this handler returns at once.
  log->WhenDurable(*lsn, [this, from, vote](absl::Status durable) mutable {
    vote.vote = durable.ok() ? Vote::kYes : Vote::kNo;
    SendVoteLater(from, vote);
  });
}

void Node::OnCommit(const Header& h, rdma::ComputeNodeId from,
                    rdma::Endpoint& endpoint) {
  absl::Status unused;
  std::shared_ptr<Branch> b = FindBranch(h.gtid, /*create=*/false, &unused);
  if (b != nullptr) {
    // The branch is idle (prepared, voted); a message of it is handled at
    // most for an instant.
    At(TwoPhasePoint::kParticipantBeforeCommit);
    // Crashed there (a test's failure), this node does nothing more.
    if (peer_failed(from)) return;
    std::unique_lock<std::mutex> lock(b->mu);
    if (!b->ended && b->prepared) CommitBranch(*b, h.commit_ts);
  }
  Header ack;
  ack.gtid = h.gtid;
  ack.slot = h.slot;
  (void)Send(endpoint, from, Kind::kAck, ack, false);
}

void Node::CommitBranch(Branch& b, uint64_t commit_ts) {
  // Logged while the branch still holds its watermark slot.
  if (wal::LogWriter* log = config_.db->log; log != nullptr) {
    (void)log->AppendRecord(wal::RecordType::kParticipantCommit, b.gtid,
                            commit_ts, "");
  }
  if (absl::Status s = b.txn->CommitPrepared(); !s.ok()) {
    LOG(ERROR) << "compute node " << config_.id << " committing branch of "
               << b.gtid << ": " << s;
  }
  b.prepared = false;
  EndBranch(b);
}

void Node::OnAbort(const Header& h) {
  absl::Status unused;
  std::shared_ptr<Branch> b = FindBranch(h.gtid, /*create=*/false, &unused);
  if (b == nullptr) return;
  std::unique_lock<std::mutex> lock(b->mu, std::try_to_lock);
  if (!lock.owns_lock()) {
    // A handler of this branch is running (its coordinator gave up
    // waiting for it): it rolls the branch back when it is done.
    b->abort_requested = true;
    return;
  }
  if (!b->ended) EndBranch(*b);
}

void Node::OnAnswer(Kind kind, const Header& h, rdma::ComputeNodeId from) {
  // Acks are counted by the sender.
  if (h.slot >= slots_all_.size()) return;
  if (kind == Kind::kAck) {
    slots_all_[h.slot]->Acked(from, h.gtid);
    return;
  }
  slots_all_[h.slot]->Deliver(from, h);
}

}  // namespace strand::partition
