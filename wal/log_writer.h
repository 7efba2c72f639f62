#ifndef STRAND_WAL_LOG_WRITER_H_
#define STRAND_WAL_LOG_WRITER_H_

// LogWriter: one compute node's log with group commit.
//
//   auto writer = LogWriter::Open({.wal_dir = "/ssd/wal", .database_id = id,
//                                  .compute_node_id = 0});
//   RedoBuilder redo;  ...                       // the transaction's writes
//   absl::StatusOr<Lsn> lsn = (*writer)->Commit(txn_id, commit_ts,
//                                               redo.payload());
//   if (!lsn.ok()) abort the commit: it is not durable.
//
// Guarantee: Commit (and WaitDurable) returns OK only after the record and
// every record before it are durable (written and fdatasync'ed, log_file.h).
// After any write or sync error the writer is failed for good: every commit
// not yet durable and every later one returns that error; nothing is
// retried. Segments are created atomically: never seen short or headerless.
// Cost: any number of threads append, each a memcpy and a CRC under a mutex;
// one flusher thread writes all appended so far with one fdatasync, so
// under load one flush serves many commits; a lone commit waits for one
// write+sync. Appenders block beyond max_unflushed_bytes. Open continues a log
// in a new segment after its last valid record (cutting a torn tail; a log
// damaged before its end is refused). With early lock release commits are
// acknowledged by the cluster's durable watermark instead (FlushObserver,
// docs/design/durable_acks.md). Design: docs/design/wal.md.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "wal/log_file.h"
#include "wal/log_format.h"
#include "wal/log_truncation.h"

namespace strand::wal {

// The durable watermarks a flush makes true (txn/commit_watermark.h).
struct FlushMarks {
  uint64_t node = 0;     // every record of this node with ts <= node
  uint64_t cluster = 0;  // every record of every node with ts <= cluster
};

// Computes and publishes the watermarks of a log that acknowledges by
// watermark. Called by the flusher thread only, one call at a time.
class FlushObserver {
 public:
  virtual ~FlushObserver() = default;
  // Before a flush takes what was appended: the marks that hold once
  // everything appended by the time the flush takes its batch is durable
  // (no record appended after that may have a commit timestamp <= node).
  virtual absl::StatusOr<FlushMarks> BeforeFlush() = 0;
  // Nothing was appended: should `marks` be written and synced anyway
  // (someone waits for a cluster watermark not yet in this log)?
  virtual bool WantsPersisted(const FlushMarks& marks) = 0;
  // `marks` hold now; `persisted`: a kWatermark record of them is durable.
  virtual void AfterFlush(const FlushMarks& marks, bool persisted) = 0;
  // The writer closed cleanly: it appends nothing more.
  virtual void Closed() = 0;
  // The writer failed for good (`status`): no marks will follow.
  virtual void Failed(const absl::Status& status) = 0;
};

struct LogWriterOptions {
  std::string wal_dir;       // the log lives in NodeDirectory(wal_dir, id)
  uint64_t database_id = 0;  // written into every segment header, nonzero
  uint32_t compute_node_id = 0;
  uint64_t segment_bytes = uint64_t{64} << 20;  // multiple of 4 KiB
  LogIoMode io_mode = LogIoMode::kDirect;       // why: log_file.h
  bool zero_fill_segments = false;              // LogFileOptions::zero_fill
  size_t max_write_bytes = 256 << 10;  // one io_uring write, multiple of 4 KiB
  size_t max_unflushed_bytes = 16 << 20;  // appenders wait beyond this
  unsigned queue_depth = 64;              // io_uring ring entries per segment
  // Group-commit window: the flusher starts a flush no sooner than this
  // after the previous one started, so one fdatasync serves the commits of
  // the whole window. Zero (default): flush as soon as anything is
  // appended, the lowest latency for a lone synchronous commit. Worth it
  // when commits are pipelined (engine/session.h, CallAsync): the threads
  // do not wait, and fewer flushes cost the 2-core machine fewer wake-ups.
  absl::Duration group_commit_window = absl::ZeroDuration();
  // Watermarks computed at every flush (above); null: none. Must outlive
  // the writer.
  FlushObserver* observer = nullptr;
  // With an observer: whether commits are acknowledged by its watermarks
  // (early lock release), which marks the segments
  // kSegmentAckedByWatermark and so makes recovery cut at the largest
  // cluster watermark persisted. false: the observer only tracks the marks
  // (a checkpoint waits for them, docs/design/checkpoints.md) while every
  // commit is acknowledged once its own record is durable, so recovery
  // must replay every durable record: the segments are not marked.
  bool observer_acknowledges = true;
  // How often the flusher asks an observer for its marks while nothing is
  // appended.
  absl::Duration observer_interval = absl::Milliseconds(1);
};

struct LogWriterStats {
  uint64_t records = 0;            // appended, kWatermark records excluded
  uint64_t watermark_records = 0;  // appended by the flusher
  uint64_t flushes = 0;            // completed write+sync rounds
  uint64_t bytes_written = 0;      // including rewritten partial blocks
  uint64_t segments_created = 0;   // by this writer
  Lsn durable_lsn = 0;
};

class LogWriter {
 public:
  // Opens or continues the log of options.compute_node_id. `factory`
  // (default: io_uring) must outlive the writer.
  static absl::StatusOr<std::unique_ptr<LogWriter>> Open(
      const LogWriterOptions& options,
      LogFileFactory* factory = &UringLogFileFactory());

  // Flushes what was appended, then stops the flusher (see Close).
  ~LogWriter();

  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  // Appends a kCommit record and returns its LSN, not yet durable.
  // InvalidArgument if the record cannot fit in a segment; the writer's
  // failure status if it has failed.
  absl::StatusOr<Lsn> Append(uint64_t txn_id, uint64_t commit_ts,
                             std::string_view redo_payload) {
    return AppendRecord(RecordType::kCommit, txn_id, commit_ts, redo_payload);
  }
  // Appends a record of any type but kWatermark (log_format.h), as Append
  // does. With an observer, FailedPrecondition if `commit_ts` is not above
  // the node watermark a flush took already, except for a failed node's
  // records a survivor logs again (kAdopted, kNodeExcluded: log_format.h).
  absl::StatusOr<Lsn> AppendRecord(RecordType type, uint64_t txn_id,
                                   uint64_t commit_ts,
                                   std::string_view payload);

  // Calls `done` once `lsn` is durable (OK), or with the writer's error if
  // it fails or closes first: on the flusher thread, or before returning
  // when that is already decided. For code that must not block on the log
  // (a 2PC participant votes from here, partition/node.h). `done`
  // runs without the writer's lock and may append; it must not wait for
  // durability itself (the flusher would wait for itself).
  using DurableCallback = absl::AnyInvocable<void(absl::Status) &&>;
  void WhenDurable(Lsn lsn, DurableCallback done);

  // Returns OK once `lsn` is durable, or the error that stopped the writer
  // before it was.
  absl::Status WaitDurable(Lsn lsn);

  // Append + WaitDurable: the group-commit entry point.
  absl::StatusOr<Lsn> Commit(uint64_t txn_id, uint64_t commit_ts,
                             std::string_view redo_payload);

  // Makes everything appended durable and stops the flusher; later calls
  // fail. Returns the writer's failure status, if any. Idempotent.
  absl::Status Close();

  // Log truncation after a checkpoint (docs/design/checkpoints.md): deletes
  // the segments at the front of the log whose every record is durable and
  // has a commit timestamp <= `ts`, never the segment appends go to, in
  // index order, after recording the truncation durably
  // (log_truncation.h). `after_each_delete` runs after each file is gone
  // (crash tests stop there). Concurrent with appends; one Truncate at a
  // time.
  absl::StatusOr<LogTruncationStats> Truncate(
      uint64_t ts, absl::FunctionRef<void()> after_each_delete = [] {});

  // Lock-free (an atomic mirror of the flusher's value): pollers do not
  // contend with appenders for the mutex.
  Lsn durable_lsn() const {
    return durable_lsn_published_.load(std::memory_order_acquire);
  }
  // True once the writer failed for good (lock-free); status() says why.
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The failure, or OK.
  absl::Status status() const;
  // The LSN of the last record appended (0 if none): a read-only
  // transaction that released no latches early waits for it (txn/).
  Lsn last_lsn() const;
  LogWriterStats stats() const;
  const std::string& node_dir() const { return node_dir_; }

 private:
  struct Buffer;
  struct SegmentFile;

  LogWriter(const LogWriterOptions& options, LogFileFactory* factory,
            std::string node_dir);

  // New buffer for the current segment starting at the block containing
  // append_offset_, seeded with that block's bytes from `previous` (if
  // append_offset_ is not block aligned).
  std::unique_ptr<Buffer> NewBuffer(size_t min_bytes, const Buffer* previous)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Encodes a record of `size` encoded bytes into the pending buffers.
  Lsn AppendLocked(RecordType type, uint64_t txn_id, uint64_t commit_ts,
                   std::string_view payload, size_t size)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlusherLoop();
  // Waits until there is something to flush, the observer's interval
  // passed, or closing. False: closing with nothing left to flush.
  bool WaitForWork(absl::Time* last_flush_start)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fails every waiting callback: the writer closed.
  void FailCallbacksOnClose() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the callbacks whose LSN is durable (all of them once failed).
  std::vector<DurableCallback> TakeDueCallbacks()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes and syncs `batch` (the flusher, without mu_).
  absl::Status WriteBatch(std::vector<std::unique_ptr<Buffer>>& batch);

  const LogWriterOptions options_;
  LogFileFactory* const factory_;
  const std::string node_dir_;

  mutable absl::Mutex mu_;
  absl::CondVar work_cv_;     // flusher: something to flush, or closing
  absl::CondVar durable_cv_;  // waiters: durable_lsn_ moved, or failure
  absl::CondVar space_cv_;    // appenders: unflushed bytes went down
  std::deque<std::unique_ptr<Buffer>> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Buffer>> free_ ABSL_GUARDED_BY(mu_);
  uint64_t segment_index_ ABSL_GUARDED_BY(mu_) = 0;  // of the next append
  Lsn segment_first_lsn_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t append_offset_ ABSL_GUARDED_BY(mu_) = 0;  // in that segment
  Lsn last_lsn_ ABSL_GUARDED_BY(mu_) = 0;            // last appended
  Lsn taken_lsn_ ABSL_GUARDED_BY(mu_) = 0;           // last taken to flush
  Lsn durable_lsn_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t untaken_bytes_ ABSL_GUARDED_BY(mu_) = 0;    // not yet taken
  uint64_t unflushed_bytes_ ABSL_GUARDED_BY(mu_) = 0;  // not yet durable
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool flusher_idle_ ABSL_GUARDED_BY(mu_) = false;  // waiting for work
  // The node mark of the last flush that took a batch (observer only):
  // later records must have a larger commit timestamp.
  uint64_t taken_node_mark_ ABSL_GUARDED_BY(mu_) = 0;
  LogWriterStats stats_ ABSL_GUARDED_BY(mu_);
  // WhenDurable's callbacks by LSN.
  std::multimap<Lsn, DurableCallback> callbacks_ ABSL_GUARDED_BY(mu_);
  // Written under mu_ together with durable_lsn_ / failure_, read without.
  // durable_lsn_published_ is stored after the data is durable (release),
  // so a poller that sees it may acknowledge.
  std::atomic<Lsn> durable_lsn_published_{0};
  std::atomic<bool> failed_{false};

  // Per segment, by index: its last LSN and largest commit timestamp
  // (kWatermark records aside), for Truncate.
  struct SegmentSpan {
    Lsn last_lsn = 0;  // 0: no record yet
    uint64_t max_commit_ts = 0;
  };
  std::map<uint64_t, SegmentSpan> spans_ ABSL_GUARDED_BY(mu_);
  SegmentSpan* append_span_ ABSL_GUARDED_BY(mu_) = nullptr;  // segment_index_'s
  // What the truncations so far deleted (the note on disk).
  TruncationNote truncation_ ABSL_GUARDED_BY(mu_);
  absl::Mutex truncate_mu_;  // one Truncate at a time

  std::unique_ptr<SegmentFile> file_;  // flusher only
  std::thread flusher_;
};

}  // namespace strand::wal

#endif  // STRAND_WAL_LOG_WRITER_H_
