#ifndef STRAND_TXN_COMMIT_WATERMARK_H_
#define STRAND_TXN_COMMIT_WATERMARK_H_

// CommitWatermark: acknowledgement by the cluster's durable timestamp
// watermark, which lets a commit release its latches as soon as its redo
// record is appended (early lock release) on any number of compute nodes,
// and acknowledges an outcome only once every commit it may depend on, on
// any node, is durable.
//
// Each node publishes a node mark N_n on memory node 0 (every record of
// its log with commit_ts <= N_n is durable, and none will follow); the
// cluster mark C = min N_n. Each flush (wal::FlushObserver) logs both and
// then publishes them; an idle node's flusher does so without I/O.
//
// Contract: a transaction that may append holds a Slot; an outcome (a
// commit, a rollback, an error) with acknowledgement timestamp t
// (Txn::AckTimestamp: above every commit timestamp it may depend on) is
// reported once acknowledged() >= t.
//
// Cost: per transaction two stores to the slot's own cache line; per flush
// one round trip (the oracle and every node's word in one batch) and one
// CAS; acknowledgement waits for the slowest node's flush plus one flush of
// this node. Thread-safe. The argument, for 2PL, TO, OCC, SELCC, SEL and
// partitioned mode: docs/design/durable_acks.md.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cc/gcl_manager.h"
#include "txn/node_words.h"
#include "txn/timestamp_oracle.h"
#include "wal/log_writer.h"

namespace strand::txn {

class CommitWatermark : public wal::FlushObserver {
 public:
  // What a node whose log closed cleanly publishes: it appends nothing
  // more, so it never holds the cluster mark back.
  static constexpr uint64_t kClosed = ~uint64_t{0};
  // Slots per node: sessions plus 2PC branches running at once.
  static constexpr size_t kMaxSlots = 4096;

  // A transaction's promise about the timestamps it may still log: every
  // transaction that may append holds one from Txn::Begin to its end, with
  // a lower bound of every commit timestamp it may log.
  class Slot {
   public:
    // Holds `lower_bound`: every record the holder appends from now on has
    // a commit timestamp >= lower_bound.
    void Hold(uint64_t lower_bound) {
      // Timestamps start at 1, so 1 is always a lower bound (and h - 1
      // never wraps).
      value_.store(std::max<uint64_t>(lower_bound, 1),
                   std::memory_order_seq_cst);
    }
    void Release() { value_.store(kFree, std::memory_order_release); }
    uint64_t value() const { return value_.load(std::memory_order_seq_cst); }
    bool held() const { return value() != kFree; }

   private:
    friend class CommitWatermark;
    static constexpr uint64_t kFree = ~uint64_t{0};
    alignas(64) std::atomic<uint64_t> value_{kFree};
  };

  struct Options {
    // How long an acknowledgement may wait for the cluster mark before the
    // waiter gets Unavailable (a node stopped publishing).
    absl::Duration ack_timeout = absl::Seconds(30);
  };

  // The watermark of compute node `self` in a deployment of
  // `compute_nodes`; `oracle` is that node's. Publishes the first node
  // mark (the oracle's current value: the node holds nothing yet).
  static absl::StatusOr<std::unique_ptr<CommitWatermark>> Open(
      cc::GclManager& manager, const TimestampOracle& oracle,
      rdma::ComputeNodeId self, int compute_nodes, const Options& options);
  ~CommitWatermark() override;

  // A free slot, until FreeSlot; ResourceExhausted past kMaxSlots.
  absl::StatusOr<Slot*> NewSlot();
  void FreeSlot(Slot* slot);

  // The cluster mark this node's log persisted: outcomes up to it may be
  // reported. Lock-free.
  uint64_t acknowledged() const {
    return acknowledged_.load(std::memory_order_acquire);
  }
  // Asks for a cluster mark >= `ts` to be persisted soon, even with
  // nothing to flush (a poller with outcomes waiting).
  void Want(uint64_t ts);
  // Want(ts), then blocks until acknowledged() >= ts: OK; the log's error
  // if it failed first; or Unavailable after Options::ack_timeout, naming
  // the node that held the cluster mark back.
  absl::Status WaitAcknowledged(uint64_t ts);

  // This node was declared failed (engine/failure_monitor.h): nothing of
  // it will be acknowledged any more, so every wait, under way or to come,
  // ends with `why` at once instead of after Options::ack_timeout.
  void DeclaredFailed(const absl::Status& why) { Failed(why); }

  rdma::ComputeNodeId self() const { return self_; }
  uint64_t node_mark() const {
    return published_.load(std::memory_order_relaxed);
  }

  // wal::FlushObserver (the log's flusher thread).
  absl::StatusOr<wal::FlushMarks> BeforeFlush() override;
  bool WantsPersisted(const wal::FlushMarks& marks) override;
  void AfterFlush(const wal::FlushMarks& marks, bool persisted) override;
  void Closed() override;
  void Failed(const absl::Status& status) override;

 private:
  CommitWatermark(const TimestampOracle& oracle, rdma::ComputeNodeId self,
                  NodeWords words, const Options& options,
                  std::unique_ptr<cc::ThreadContext> ctx);
  // The smallest value a held slot holds (Slot::kFree if none).
  uint64_t MinHeld() const;

  const TimestampOracle& oracle_;
  const rdma::ComputeNodeId self_;
  const NodeWords words_;
  const Options options_;
  // The flusher's (and Open's) context for the words and the oracle.
  std::unique_ptr<cc::ThreadContext> ctx_;
  std::vector<uint64_t> read_;  // BeforeFlush's scratch: every node's word

  std::unique_ptr<Slot[]> slots_;
  std::atomic<size_t> slots_used_{0};  // high water: slots_[0, used) scanned
  absl::Mutex slots_mu_;
  std::vector<Slot*> free_slots_ ABSL_GUARDED_BY(slots_mu_);

  uint64_t taken_node_mark_ = 0;        // flusher only
  std::atomic<uint64_t> published_{0};  // node mark in the word
  std::atomic<uint64_t> wanted_{0};     // largest Want
  std::atomic<uint64_t> acknowledged_{0};
  // Who held the cluster mark down at the last flush, for errors.
  std::atomic<rdma::ComputeNodeId> lowest_node_{0};
  std::atomic<uint64_t> lowest_mark_{0};
  absl::Mutex ack_mu_;
  absl::CondVar ack_cv_;
  absl::Status failure_ ABSL_GUARDED_BY(ack_mu_);  // the log's
};

}  // namespace strand::txn

#endif  // STRAND_TXN_COMMIT_WATERMARK_H_
