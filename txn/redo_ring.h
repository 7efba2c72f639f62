#ifndef STRAND_TXN_REDO_RING_H_
#define STRAND_TXN_REDO_RING_H_

// RedoRing: a compute node's recent commits, kept on a memory node so that
// the survivors of its failure find them there.
//
// A commit that writes through (cc::CcOptions::write_through) puts its
// record in the ring in the same ordered batch as its data, before it:
//   [record: header, the physical writes, the logged redo][data writes]
//   [done word := commit_ts]
// so a record is in the ring before any of its data reached memory
// (rdma/batch.h). A survivor re-applies a record whose done word lacks its
// timestamp (idempotent after-images) and logs its redo again where the
// failed node's log may not have made it durable.
//
// Retention: a record's room is reused once it is done and, with a log, its
// commit timestamp is at or below the node mark the node published
// (txn/commit_watermark.h). Until then a commit that finds no room waits,
// at most Options::full_timeout, then fails with ResourceExhausted naming
// the ring's size. The ring is zeroed when its node (re)starts.
//
// One ring per compute node, on memory node (node % memory nodes), its
// address in cc/root_words.h's kRedoRingsOffset. Cost: the record's bytes
// ride in the commit's batch, no round trip of its own. Thread-safe.
// Design and layout: docs/design/node_failure.md, "The redo ring's layout".

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "rdma/fabric.h"
#include "wal/log_format.h"

namespace strand::txn {

class RedoRing {
 public:
  static constexpr uint32_t kUnitBytes = 64;
  static constexpr uint32_t kHeaderBytes = 64;
  static constexpr uint64_t kMinBytes = 64 << 10;

  struct Options {
    uint64_t bytes = uint64_t{8} << 20;  // header included
    absl::Duration full_timeout = absl::Seconds(10);
  };

  // One physical write of a commit: `bytes` belong at `remote`.
  struct Write {
    rdma::GlobalAddress remote;
    std::string_view bytes;
  };
  // What a commit logged (empty without a log).
  struct Logged {
    wal::RecordType type = wal::RecordType::kCommit;
    uint64_t txn_id = 0;
    std::string_view payload;
  };

  // Compute node `node`'s ring, allocated on first use, zeroed.
  static absl::StatusOr<std::unique_ptr<RedoRing>> Open(
      rdma::Fabric& fabric, rdma::Endpoint& endpoint, rdma::ComputeNodeId node,
      const Options& options);

  // With a log: records are kept until `durable_mark()` (the node mark
  // this node published) reaches their timestamp. Before the first commit.
  void set_durable_mark(std::function<uint64_t()> durable_mark) {
    durable_mark_ = std::move(durable_mark);
  }

  rdma::GlobalAddress address() const { return base_; }
  uint64_t bytes() const { return options_.bytes; }

  // A commit's place in the ring, from Encode until Done.
  struct Slot {
    uint64_t id = 0;
    rdma::GlobalAddress record;  // where the encoded record goes
    rdma::GlobalAddress done;    // its done word
  };
  // Reserves room for the record of a commit with timestamp `ts`, its
  // physical `writes` and what it `logged`, and encodes the record into
  // `*record` (which must live until the batch carrying it ran). Waits
  // while the ring is full (see above).
  absl::StatusOr<Slot> Encode(uint64_t ts, absl::Span<const Write> writes,
                              const Logged& logged, std::string* record);
  // The batch carrying the record, the data and the done word ran.
  void Done(const Slot& slot);

  // Records waiting for retention, for tests and reports.
  size_t live_records() const;

  // What a survivor reads from a failed node's ring.
  struct Record {
    uint64_t commit_ts = 0;
    uint64_t txn_id = 0;
    wal::RecordType type = wal::RecordType::kCommit;
    bool done = false;
    struct PhysicalWrite {
      rdma::GlobalAddress remote;
      std::string bytes;
    };
    std::vector<PhysicalWrite> writes;
    std::string redo;  // the logged payload
  };
  // Where compute node `node`'s ring lies (a null address if it has
  // none): its bytes, whole chunks of `chunk_bytes`.
  struct Span {
    rdma::GlobalAddress start;
    uint64_t bytes = 0;
  };
  static absl::StatusOr<Span> Where(rdma::Endpoint& endpoint,
                                    rdma::ComputeNodeId node,
                                    uint64_t chunk_bytes);
  // Every intact record in compute node `node`'s ring (none if it has no
  // ring), in no particular order.
  static absl::StatusOr<std::vector<Record>> Read(rdma::Endpoint& endpoint,
                                                  rdma::ComputeNodeId node);

 private:
  struct Entry {
    uint64_t offset_units;
    uint32_t units;
    uint64_t ts;
    bool done;
  };

  RedoRing(rdma::GlobalAddress base, const Options& options)
      : base_(base),
        options_(options),
        capacity_units_((options.bytes - kHeaderBytes) / kUnitBytes) {}
  // Frees the oldest records whose room may be reused.
  void Retire() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where `units` fit now, or -1.
  int64_t Place(uint32_t units) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const rdma::GlobalAddress base_;
  const Options options_;
  const uint64_t capacity_units_;
  std::function<uint64_t()> durable_mark_;

  mutable absl::Mutex mu_;
  absl::CondVar freed_;
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t first_id_ ABSL_GUARDED_BY(mu_) = 0;  // id of entries_.front()
  uint64_t tail_units_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace strand::txn

#endif  // STRAND_TXN_REDO_RING_H_
