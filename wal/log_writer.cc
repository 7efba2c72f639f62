#include "wal/log_writer.h"

#include <glog/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "base/failure_point.h"
#include "wal/log_reader.h"

namespace strand::wal {
namespace {

// Capacity of an append buffer (larger for a larger record).
constexpr size_t kBufferBytes = 1 << 20;
// Buffers kept for reuse after a flush.
constexpr size_t kFreeBuffers = 8;
static_assert(kBufferBytes % kBlockBytes == 0);

constexpr uint64_t RoundUp(uint64_t n, uint64_t unit) {
  return (n + unit - 1) / unit * unit;
}

}  // namespace

// Records for one segment from file_offset on; the first `lead` bytes are
// a partial block already written by an earlier buffer, copied so the block
// can be written whole again.
struct LogWriter::Buffer {
  explicit Buffer(size_t bytes)
      : data(static_cast<char*>(std::aligned_alloc(kBlockBytes, bytes))),
        capacity(bytes) {
    CHECK(data != nullptr) << "out of memory for a " << bytes
                           << "-byte log buffer";
  }
  ~Buffer() { std::free(data); }

  char* const data;
  const size_t capacity;
  uint64_t segment_index = 0;
  Lsn segment_first_lsn = 0;
  uint64_t file_offset = 0;  // block aligned
  size_t used = 0;           // lead included
  Lsn last_lsn = 0;          // of its last record; 0 if it has none
};

struct LogWriter::SegmentFile {
  uint64_t index = 0;
  std::unique_ptr<LogFile> file;
};

LogWriter::LogWriter(const LogWriterOptions& options, LogFileFactory* factory,
                     std::string node_dir)
    : options_(options), factory_(factory), node_dir_(std::move(node_dir)) {}

absl::StatusOr<std::unique_ptr<LogWriter>> LogWriter::Open(
    const LogWriterOptions& options, LogFileFactory* factory) {
  if (options.wal_dir.empty()) {
    return absl::InvalidArgumentError("LogWriterOptions.wal_dir is empty");
  }
  if (options.database_id == 0) {
    return absl::InvalidArgumentError("LogWriterOptions.database_id is 0");
  }
  if (options.segment_bytes % kBlockBytes != 0 ||
      options.segment_bytes < kMinSegmentBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "segment size %d bytes: must be a multiple of 4 KiB and >= %d",
        options.segment_bytes, kMinSegmentBytes));
  }
  if (options.max_write_bytes == 0 ||
      options.max_write_bytes % kBlockBytes != 0) {
    return absl::InvalidArgumentError(
        "LogWriterOptions.max_write_bytes must be a positive multiple of 4 "
        "KiB");
  }
  std::string node_dir =
      NodeDirectory(options.wal_dir, options.compute_node_id);
  std::error_code ec;
  if (std::filesystem::create_directories(node_dir, ec)) {
    if (absl::Status s = SyncDirectory(options.wal_dir); !s.ok()) return s;
  }
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("create log directory %s: %s", node_dir, ec.message()));
  }

  // Continue after the last valid record of an existing log, learning
  // each segment's largest commit timestamp (what truncation needs).
  absl::StatusOr<std::unique_ptr<LogReader>> reader =
      LogReader::Open(node_dir, options.database_id);
  if (!reader.ok()) return reader.status();
  LogRecord record;
  std::map<uint64_t, SegmentSpan> spans;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&record);
    if (!more.ok()) return more.status();
    if (!*more) break;
    SegmentSpan& span = spans[record.segment_index];
    span.last_lsn = record.header.lsn;
    if (record.header.type != RecordType::kWatermark) {
      span.max_commit_ts =
          std::max(span.max_commit_ts, record.header.commit_ts);
    }
  }
  const LogReaderStats& found = (*reader)->stats();
  if (found.dropped_bytes > 0) {
    LOG(WARNING) << node_dir << ": cut " << found.dropped_bytes
                 << " bytes of torn or stale log tail (" << found.end
                 << "); continuing after LSN " << found.last_lsn;
  }

  std::unique_ptr<LogWriter> writer(
      new LogWriter(options, factory, std::move(node_dir)));
  {
    absl::MutexLock lock(&writer->mu_);
    const Lsn last_lsn = (*reader)->end_lsn();
    writer->segment_index_ = (*reader)->last_segment_index() + 1;
    writer->segment_first_lsn_ = last_lsn + 1;
    writer->append_offset_ = kSegmentHeaderBytes;
    writer->last_lsn_ = writer->taken_lsn_ = writer->durable_lsn_ = last_lsn;
    writer->durable_lsn_published_.store(last_lsn, std::memory_order_release);
    writer->spans_ = std::move(spans);
    // Segments of the log that hold no record (their header only) are
    // kept in the map too: truncation deletes them like any other.
    for (uint64_t index : (*reader)->segment_indexes()) {
      writer->spans_.try_emplace(index);
    }
    if ((*reader)->truncation().has_value()) {
      writer->truncation_ = *(*reader)->truncation();
    }
  }
  writer->flusher_ = std::thread([w = writer.get()] { w->FlusherLoop(); });
  return writer;
}

LogWriter::~LogWriter() {
  absl::Status status = Close();
  LOG_IF(WARNING, !status.ok()) << node_dir_ << ": " << status;
}

std::unique_ptr<LogWriter::Buffer> LogWriter::NewBuffer(
    size_t min_bytes, const Buffer* previous) {
  const uint64_t file_offset = append_offset_ / kBlockBytes * kBlockBytes;
  const size_t lead = append_offset_ - file_offset;
  const size_t needed = RoundUp(lead + min_bytes, kBlockBytes);
  std::unique_ptr<Buffer> b;
  if (needed <= kBufferBytes && !free_.empty()) {
    b = std::move(free_.back());
    free_.pop_back();
  } else {
    b = std::make_unique<Buffer>(std::max(needed, kBufferBytes));
  }
  b->segment_index = segment_index_;
  b->segment_first_lsn = segment_first_lsn_;
  b->file_offset = file_offset;
  b->used = lead;
  b->last_lsn = 0;
  if (lead > 0) {
    CHECK(previous != nullptr && previous->segment_index == segment_index_ &&
          previous->file_offset + previous->used == append_offset_)
        << "partial block at " << append_offset_ << " has no source buffer";
    std::memcpy(b->data, previous->data + (file_offset - previous->file_offset),
                lead);
  }
  return b;
}

absl::StatusOr<Lsn> LogWriter::AppendRecord(RecordType type, uint64_t txn_id,
                                            uint64_t commit_ts,
                                            std::string_view redo_payload) {
  if (type == RecordType::kWatermark) {
    return absl::InvalidArgumentError(
        "kWatermark records are the flusher's to append");
  }
  const size_t size = EncodedRecordBytes(redo_payload.size());
  if (size > options_.segment_bytes - kSegmentHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "log record of %d bytes does not fit in a %d-byte segment", size,
        options_.segment_bytes));
  }
  absl::MutexLock lock(&mu_);
  while (failure_.ok() && !closing_ && unflushed_bytes_ > 0 &&
         unflushed_bytes_ + size > options_.max_unflushed_bytes) {
    space_cv_.Wait(&mu_);
  }
  if (!failure_.ok()) return failure_;
  if (closing_) return absl::FailedPreconditionError("log writer is closed");
  if (options_.observer != nullptr && commit_ts <= taken_node_mark_ &&
      type != RecordType::kAdopted && type != RecordType::kNodeExcluded) {
    // A flush already promised that no such record would follow: the
    // caller's timestamp was not held (txn/commit_watermark.h).
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: commit timestamp %d is not above the node's durable watermark "
        "%d",
        node_dir_, commit_ts, taken_node_mark_));
  }
  const Lsn lsn = AppendLocked(type, txn_id, commit_ts, redo_payload, size);
  ++stats_.records;
  // Only an idle flusher needs waking: a busy one takes this record with
  // its next batch (no futex call per commit under load).
  if (flusher_idle_) work_cv_.Signal();
  return lsn;
}

Lsn LogWriter::AppendLocked(RecordType type, uint64_t txn_id,
                            uint64_t commit_ts, std::string_view payload,
                            size_t size) {
  if (append_offset_ + size > options_.segment_bytes) {
    ++segment_index_;
    segment_first_lsn_ = last_lsn_ + 1;
    append_offset_ = kSegmentHeaderBytes;
    append_span_ = nullptr;
  }
  if (append_span_ == nullptr) append_span_ = &spans_[segment_index_];
  Buffer* b = pending_.empty() ? nullptr : pending_.back().get();
  if (b == nullptr || b->segment_index != segment_index_ ||
      b->used + size > b->capacity) {
    const Buffer* previous =
        b != nullptr && b->segment_index == segment_index_ ? b : nullptr;
    pending_.push_back(NewBuffer(size, previous));
    b = pending_.back().get();
  }
  const Lsn lsn = ++last_lsn_;
  // durable_lsn_: the watermark that lets a reader tell damage from a
  // torn tail (log_format.h).
  EncodeRecord({.type = type,
                .lsn = lsn,
                .txn_id = txn_id,
                .commit_ts = commit_ts,
                .durable_lsn = durable_lsn_},
               payload, b->data + b->used);
  b->used += size;
  b->last_lsn = lsn;
  append_span_->last_lsn = lsn;
  if (type != RecordType::kWatermark) {
    append_span_->max_commit_ts =
        std::max(append_span_->max_commit_ts, commit_ts);
  }
  append_offset_ += size;
  untaken_bytes_ += size;
  unflushed_bytes_ += size;
  return lsn;
}

absl::Status LogWriter::WaitDurable(Lsn lsn) {
  absl::MutexLock lock(&mu_);
  if (lsn > last_lsn_) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WaitDurable(%d): only LSNs up to %d were appended", lsn, last_lsn_));
  }
  while (durable_lsn_ < lsn && failure_.ok()) durable_cv_.Wait(&mu_);
  return durable_lsn_ >= lsn ? absl::OkStatus() : failure_;
}

void LogWriter::WhenDurable(Lsn lsn, DurableCallback done) {
  absl::Status now;
  {
    absl::MutexLock lock(&mu_);
    if (lsn > last_lsn_) {
      now = absl::InvalidArgumentError(absl::StrFormat(
          "WhenDurable(%d): only LSNs up to %d were appended", lsn, last_lsn_));
    } else if (durable_lsn_ >= lsn) {
      now = absl::OkStatus();
    } else if (!failure_.ok()) {
      now = failure_;
    } else if (closed_ && flusher_idle_) {
      now = absl::FailedPreconditionError("log writer is closed");
    } else {
      callbacks_.emplace(lsn, std::move(done));
      return;
    }
  }
  std::move(done)(now);
}

std::vector<LogWriter::DurableCallback> LogWriter::TakeDueCallbacks() {
  std::vector<DurableCallback> due;
  auto end =
      failure_.ok() ? callbacks_.upper_bound(durable_lsn_) : callbacks_.end();
  for (auto it = callbacks_.begin(); it != end; ++it) {
    due.push_back(std::move(it->second));
  }
  callbacks_.erase(callbacks_.begin(), end);
  return due;
}

absl::StatusOr<Lsn> LogWriter::Commit(uint64_t txn_id, uint64_t commit_ts,
                                      std::string_view redo_payload) {
  absl::StatusOr<Lsn> lsn = Append(txn_id, commit_ts, redo_payload);
  if (!lsn.ok()) return lsn;
  if (absl::Status s = WaitDurable(*lsn); !s.ok()) return s;
  return lsn;
}

absl::Status LogWriter::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return failure_;
    closed_ = closing_ = true;
    work_cv_.Signal();
    space_cv_.SignalAll();
  }
  if (flusher_.joinable()) flusher_.join();
  file_.reset();
  absl::MutexLock lock(&mu_);
  return failure_;
}

absl::Status LogWriter::status() const {
  absl::MutexLock lock(&mu_);
  return failure_;
}

Lsn LogWriter::last_lsn() const {
  absl::MutexLock lock(&mu_);
  return last_lsn_;
}

LogWriterStats LogWriter::stats() const {
  absl::MutexLock lock(&mu_);
  LogWriterStats s = stats_;
  s.durable_lsn = durable_lsn_;
  return s;
}

void LogWriter::FailCallbacksOnClose() {
  std::vector<DurableCallback> left;
  for (auto& [lsn, done] : callbacks_) left.push_back(std::move(done));
  callbacks_.clear();
  mu_.Unlock();
  for (auto& done : left) {
    std::move(done)(absl::FailedPreconditionError("log writer closed"));
  }
  mu_.Lock();
}

bool LogWriter::WaitForWork(absl::Time* last_flush_start) {
  flusher_idle_ = true;
  if (options_.observer == nullptr) {
    while (last_lsn_ == taken_lsn_ && !closing_) work_cv_.Wait(&mu_);
  } else {
    const absl::Time tick = absl::Now() + options_.observer_interval;
    while (last_lsn_ == taken_lsn_ && !closing_ &&
           !work_cv_.WaitWithDeadline(&mu_, tick)) {
    }
  }
  flusher_idle_ = false;
  if (last_lsn_ == taken_lsn_) return !closing_;  // an observer's tick
  // Group-commit window: let more commits join this flush. Appenders keep
  // appending meanwhile (the wait releases mu_) without waking us
  // (flusher_idle_ is false); Close does.
  const absl::Time open_until =
      *last_flush_start + options_.group_commit_window;
  while (!closing_ && absl::Now() < open_until) {
    work_cv_.WaitWithDeadline(&mu_, open_until);
  }
  *last_flush_start = absl::Now();
  return true;
}

void LogWriter::FlusherLoop() {
  FlushObserver* const observer = options_.observer;
  absl::Time last_flush_start = absl::InfinitePast();
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (!WaitForWork(&last_flush_start)) {
        FailCallbacksOnClose();
        break;
      }
    }
    // Outside the lock: the marks may cost the observer round trips.
    absl::StatusOr<FlushMarks> marks = FlushMarks();
    if (observer != nullptr) {
      marks = observer->BeforeFlush();
      if (!marks.ok()) {
        LOG_EVERY_T(WARNING, 10)
            << node_dir_
            << ": no durable watermark this flush: " << marks.status();
      }
    }
    std::vector<std::unique_ptr<Buffer>> batch;
    Lsn batch_lsn = 0;
    uint64_t batch_bytes = 0;
    bool persist_marks = false;
    {
      absl::MutexLock lock(&mu_);
      const bool appended = last_lsn_ != taken_lsn_;
      if (observer != nullptr && marks.ok()) {
        persist_marks = appended || observer->WantsPersisted(*marks);
        if (persist_marks) {
          const std::string payload = EncodeWatermarkPayload(marks->cluster);
          AppendLocked(RecordType::kWatermark, 0, marks->node, payload,
                       EncodedRecordBytes(payload.size()));
          ++stats_.watermark_records;
        }
        taken_node_mark_ = std::max(taken_node_mark_, marks->node);
      }
      if (last_lsn_ != taken_lsn_) {
        for (auto& b : pending_) batch.push_back(std::move(b));
        pending_.clear();
        // Appends continue in a buffer that starts with the partial block.
        if (append_offset_ % kBlockBytes != 0) {
          pending_.push_back(NewBuffer(0, batch.back().get()));
        }
        batch_lsn = taken_lsn_ = last_lsn_;
        batch_bytes = untaken_bytes_;
        untaken_bytes_ = 0;
      }
    }
    if (batch.empty()) {
      // Everything appended is durable already: the marks hold as they are.
      if (observer != nullptr && marks.ok()) {
        observer->AfterFlush(*marks, /*persisted=*/false);
      }
      continue;
    }
    const absl::Status status = WriteBatch(batch);
    if (status.ok()) {
      ReachFailurePoint(options_.compute_node_id, FailurePoint::kLogFlushed);
    }
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      durable_lsn_ = batch_lsn;
      durable_lsn_published_.store(batch_lsn, std::memory_order_release);
      ++stats_.flushes;
    } else if (failure_.ok()) {
      failure_ = absl::Status(
          status.code(),
          absl::StrFormat("log of %s failed, LSNs after %d are not durable: %s",
                          node_dir_, durable_lsn_, status.message()));
      failed_.store(true, std::memory_order_release);
    }
    unflushed_bytes_ -= batch_bytes;
    for (auto& b : batch) {
      if (free_.size() < kFreeBuffers && b->capacity == kBufferBytes) {
        free_.push_back(std::move(b));
      }
    }
    durable_cv_.SignalAll();
    space_cv_.SignalAll();
    std::vector<DurableCallback> due = TakeDueCallbacks();
    const absl::Status outcome = failure_;
    mu_.Unlock();
    if (observer != nullptr && marks.ok() && status.ok()) {
      observer->AfterFlush(*marks, persist_marks);
    }
    for (auto& done : due) std::move(done)(outcome);
    if (observer != nullptr && !outcome.ok()) observer->Failed(outcome);
    mu_.Lock();
    if (!failure_.ok()) return;
  }
  if (observer != nullptr) observer->Closed();
}

absl::Status LogWriter::WriteBatch(
    std::vector<std::unique_ptr<Buffer>>& batch) {
  std::vector<LogWrite> writes;
  uint64_t bytes = 0;
  uint64_t segments_created = 0;
  size_t i = 0;
  absl::Status status;
  while (i < batch.size() && status.ok()) {
    const Buffer& first = *batch[i];
    if (file_ == nullptr || file_->index != first.segment_index) {
      CHECK(file_ == nullptr || file_->index < first.segment_index);
      // A new segment is preallocated and gets its header under a
      // temporary name, then is renamed into place: a segment file is
      // never shorter than its header says, nor without a header, unless
      // it was damaged afterwards (log_reader.h).
      const std::string path = SegmentPath(node_dir_, first.segment_index);
      const std::string tmp = path + ".tmp";
      ::unlink(tmp.c_str());  // a crashed writer's
      auto file =
          factory_->Create(tmp, {.io_mode = options_.io_mode,
                                 .size_bytes = options_.segment_bytes,
                                 .zero_fill = options_.zero_fill_segments,
                                 .queue_depth = options_.queue_depth});
      if (!file.ok()) {
        status = file.status();
        break;
      }
      // The previous segment's largest commit timestamp, final now (no
      // record goes there any more): recovery skips that segment whole
      // when a checkpoint holds it (log_reader.h).
      uint64_t previous_max_plus_one = 0;
      {
        absl::MutexLock lock(&mu_);
        auto previous = spans_.find(first.segment_index - 1);
        if (previous != spans_.end()) {
          previous_max_plus_one = previous->second.max_commit_ts + 1;
        }
      }
      Buffer header(kSegmentHeaderBytes);
      EncodeSegmentHeader(
          {.database_id = options_.database_id,
           .compute_node_id = options_.compute_node_id,
           .flags =
               options_.observer != nullptr && options_.observer_acknowledges
                   ? kSegmentAckedByWatermark
                   : 0u,
           .segment_index = first.segment_index,
           .first_lsn = first.segment_first_lsn,
           .segment_bytes = options_.segment_bytes,
           .previous_max_commit_ts_plus_one = previous_max_plus_one},
          header.data);
      const LogWrite header_write{0, header.data, kSegmentHeaderBytes};
      status = (*file)->WriteAndSync({&header_write, 1});
      if (!status.ok()) break;
      if (::rename(tmp.c_str(), path.c_str()) != 0) {
        status = absl::InternalError(absl::StrFormat(
            "rename %s to %s: %s", tmp, path, std::strerror(errno)));
        break;
      }
      status = SyncDirectory(node_dir_);
      if (!status.ok()) break;
      file_ = std::make_unique<SegmentFile>(
          SegmentFile{first.segment_index, *std::move(file)});
      ++segments_created;
      bytes += kSegmentHeaderBytes;
    }
    writes.clear();
    for (; i < batch.size() && batch[i]->segment_index == file_->index; ++i) {
      Buffer& b = *batch[i];
      if (b.last_lsn == 0) continue;  // only a copied partial block
      size_t end = RoundUp(b.used, kBlockBytes);
      std::memset(b.data + b.used, 0, end - b.used);
      // The next buffer starts with a copy of this one's partial last
      // block and carries it on. Both in one submission, io_uring may
      // complete them in either order: this copy, padded with zeros,
      // would cut a hole if it landed last. The next one writes it.
      if (i + 1 < batch.size()) {
        const Buffer& next = *batch[i + 1];
        if (next.segment_index == b.segment_index && next.last_lsn != 0 &&
            next.file_offset < b.file_offset + end) {
          end = next.file_offset - b.file_offset;
        }
      }
      for (size_t off = 0; off < end; off += options_.max_write_bytes) {
        const size_t n = std::min(options_.max_write_bytes, end - off);
        writes.push_back({b.file_offset + off, b.data + off, n});
        bytes += n;
      }
    }
    if (!writes.empty()) status = file_->file->WriteAndSync(writes);
  }
  absl::MutexLock lock(&mu_);
  stats_.bytes_written += bytes;
  stats_.segments_created += segments_created;
  return status;
}

absl::StatusOr<LogTruncationStats> LogWriter::Truncate(
    uint64_t ts, absl::FunctionRef<void()> after_each_delete) {
  absl::MutexLock truncating(&truncate_mu_);
  std::vector<uint64_t> doomed;
  TruncationNote note;
  LogTruncationStats stats;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      return absl::FailedPreconditionError("log writer is closed");
    }
    note = truncation_;
    Lsn deleted_through = note.first_lsn - 1;
    auto it = spans_.begin();
    for (; it != spans_.end(); ++it) {
      const auto& [index, span] = *it;
      // Never the segment appends go to; only durable records, all at or
      // below `ts`.
      if (index >= segment_index_ || span.last_lsn > durable_lsn_ ||
          span.max_commit_ts > ts) {
        break;
      }
      doomed.push_back(index);
      deleted_through = std::max(deleted_through, span.last_lsn);
    }
    if (doomed.empty()) {
      stats.first_segment =
          spans_.empty() ? segment_index_ : spans_.begin()->first;
      stats.segments_left = spans_.size();
      return stats;
    }
    note.first_segment = it == spans_.end() ? segment_index_ : it->first;
    note.first_lsn = deleted_through + 1;
    note.truncated_ts = std::max(note.truncated_ts, ts);
    spans_.erase(spans_.begin(), it);
    truncation_ = note;
    stats.first_segment = note.first_segment;
    stats.segments_left = spans_.size();
  }
  // The note first: a crash between the deletions leaves segments below
  // the note's first one, which readers accept (log_truncation.h).
  if (absl::Status s = WriteTruncationNote(node_dir_, note); !s.ok()) {
    return s;
  }
  if (absl::Status s =
          DeleteSegments(node_dir_, doomed, after_each_delete, &stats);
      !s.ok()) {
    return s;
  }
  return stats;
}

}  // namespace strand::wal
