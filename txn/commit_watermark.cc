#include "txn/commit_watermark.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cc/root_words.h"
#include "glog/logging.h"
#include "rdma/batch.h"
#include "rdma/fabric_options.h"

namespace strand::txn {

static_assert(8 * rdma::FabricOptions::kMaxComputeNodes <=
                  cc::kDurableMarksBytes,
              "a durable mark word for every compute node");

CommitWatermark::CommitWatermark(const TimestampOracle& oracle,
                                 rdma::ComputeNodeId self, NodeWords words,
                                 const Options& options,
                                 std::unique_ptr<cc::ThreadContext> ctx)
    : oracle_(oracle),
      self_(self),
      words_(words),
      options_(options),
      ctx_(std::move(ctx)),
      read_(words.compute_nodes()),
      slots_(new Slot[kMaxSlots]) {}

CommitWatermark::~CommitWatermark() = default;

absl::StatusOr<std::unique_ptr<CommitWatermark>> CommitWatermark::Open(
    cc::GclManager& manager, const TimestampOracle& oracle,
    rdma::ComputeNodeId self, int compute_nodes, const Options& options) {
  absl::StatusOr<NodeWords> words = NodeWords::At(
      cc::kDurableMarksOffset, cc::kDurableMarksBytes, compute_nodes);
  if (!words.ok()) return words.status();
  if (self >= compute_nodes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "durable watermark of compute node %d in a deployment of %d nodes",
        self, compute_nodes));
  }
  absl::StatusOr<std::unique_ptr<cc::ThreadContext>> ctx =
      manager.NewThreadContext();
  if (!ctx.ok()) return ctx.status();
  std::unique_ptr<CommitWatermark> w(
      new CommitWatermark(oracle, self, *words, options, *std::move(ctx)));
  // Nothing is held yet and every earlier record of this node is durable
  // (a log continued by LogWriter::Open was read to its end): the oracle's
  // value is a true node mark. Set, not raised: an earlier incarnation may
  // have left kClosed.
  absl::StatusOr<uint64_t> now = oracle.Current(*w->ctx_);
  if (!now.ok()) return now.status();
  if (absl::Status s = w->words_.Set(w->ctx_->endpoint(), self, *now);
      !s.ok()) {
    return s;
  }
  w->published_.store(*now, std::memory_order_relaxed);
  w->taken_node_mark_ = *now;
  return w;
}

absl::StatusOr<CommitWatermark::Slot*> CommitWatermark::NewSlot() {
  absl::MutexLock lock(&slots_mu_);
  if (!free_slots_.empty()) {
    Slot* slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  const size_t used = slots_used_.load(std::memory_order_relaxed);
  if (used == kMaxSlots) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "compute node %d runs %d sessions and 2PC branches at once: the most "
        "its durable watermark tracks",
        self_, kMaxSlots));
  }
  // Published after the slot exists; a flusher scanning [0, used) may miss
  // a slot taken meanwhile, which holds nothing yet.
  slots_used_.store(used + 1, std::memory_order_release);
  return &slots_[used];
}

void CommitWatermark::FreeSlot(Slot* slot) {
  slot->Release();
  absl::MutexLock lock(&slots_mu_);
  free_slots_.push_back(slot);
}

uint64_t CommitWatermark::MinHeld() const {
  uint64_t min = Slot::kFree;
  const size_t used = slots_used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; ++i) min = std::min(min, slots_[i].value());
  return min;
}

void CommitWatermark::Want(uint64_t ts) {
  uint64_t wanted = wanted_.load(std::memory_order_relaxed);
  while (ts > wanted && !wanted_.compare_exchange_weak(
                            wanted, ts, std::memory_order_relaxed)) {
  }
}

absl::Status CommitWatermark::WaitAcknowledged(uint64_t ts) {
  if (acknowledged() >= ts) return absl::OkStatus();
  Want(ts);
  const absl::Time deadline = absl::Now() + options_.ack_timeout;
  absl::MutexLock lock(&ack_mu_);
  while (acknowledged() < ts) {
    if (!failure_.ok()) return failure_;
    if (ack_cv_.WaitWithDeadline(&ack_mu_, deadline) && acknowledged() < ts) {
      return absl::UnavailableError(absl::StrFormat(
          "compute node %d: timestamp %d not acknowledged within %s: the "
          "cluster's durable watermark this node persisted is %d, held back "
          "by compute node %d (its last published mark %d): a node stopped "
          "publishing, or a log cannot sync; the outcome may or may not "
          "survive a crash",
          self_, ts, absl::FormatDuration(options_.ack_timeout), acknowledged(),
          lowest_node_.load(std::memory_order_relaxed),
          lowest_mark_.load(std::memory_order_relaxed)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<wal::FlushMarks> CommitWatermark::BeforeFlush() {
  // The oracle first, then the slots (seq_cst loads after the FAA's
  // completion): a holder this scan misses took its slot after the scan
  // began, so its timestamp comes from an FAA after the oracle was read,
  // and is > now. docs/design/durable_acks.md.
  uint64_t now = 0;
  rdma::Batch batch;
  batch.FetchAndAdd(cc::RootWordAddress(cc::RootWord::kTimestampOracle), 0,
                    &now);
  for (int node = 0; node < words_.compute_nodes(); ++node) {
    batch.FetchAndAdd(words_.word(static_cast<rdma::ComputeNodeId>(node)), 0,
                      &read_[node]);
  }
  if (absl::Status s = ctx_->endpoint().Execute(batch); !s.ok()) return s;
  const uint64_t held = MinHeld();
  uint64_t node = std::min(now, held == Slot::kFree ? now : held - 1);
  // A slot may hold a stale lower bound taken after the last flush's scan:
  // its holder's timestamp is above that flush's mark all the same.
  node = std::max(node, taken_node_mark_);
  taken_node_mark_ = node;
  uint64_t cluster = node;
  rdma::ComputeNodeId lowest = self_;
  for (int n = 0; n < words_.compute_nodes(); ++n) {
    if (n != self_ && read_[n] < cluster) {
      cluster = read_[n];
      lowest = static_cast<rdma::ComputeNodeId>(n);
    }
  }
  lowest_node_.store(lowest, std::memory_order_relaxed);
  lowest_mark_.store(cluster, std::memory_order_relaxed);
  return wal::FlushMarks{.node = node, .cluster = cluster};
}

bool CommitWatermark::WantsPersisted(const wal::FlushMarks& marks) {
  const uint64_t acked = acknowledged();
  return marks.cluster > acked &&
         wanted_.load(std::memory_order_relaxed) > acked;
}

void CommitWatermark::AfterFlush(const wal::FlushMarks& marks, bool persisted) {
  const uint64_t published = published_.load(std::memory_order_relaxed);
  if (marks.node > published) {
    absl::StatusOr<uint64_t> now =
        words_.RaiseTo(ctx_->endpoint(), self_, published, marks.node);
    if (now.ok()) {
      published_.store(*now, std::memory_order_relaxed);
    } else {
      LOG_EVERY_T(WARNING, 10)
          << "compute node " << self_
          << ": could not publish its durable watermark: " << now.status();
    }
  }
  if (persisted && marks.cluster > acknowledged()) {
    absl::MutexLock lock(&ack_mu_);
    acknowledged_.store(marks.cluster, std::memory_order_release);
    ack_cv_.SignalAll();
  }
}

void CommitWatermark::Failed(const absl::Status& status) {
  absl::MutexLock lock(&ack_mu_);
  failure_ = status;
  ack_cv_.SignalAll();
}

void CommitWatermark::Closed() {
  absl::StatusOr<uint64_t> now =
      words_.RaiseTo(ctx_->endpoint(), self_,
                     published_.load(std::memory_order_relaxed), kClosed);
  if (now.ok()) published_.store(*now, std::memory_order_relaxed);
}

}  // namespace strand::txn
