// wal_bench: what durability costs on this machine, and what group commit
// makes of it.
//
//   1. fsync latency (the physical limit): one 4 KiB block written and
//      fdatasync'ed at a time through the io_uring file layer, per I/O mode.
//      A single committer can never beat 1 / this latency.
//   2. group commit: N threads commit records of --record_bytes through one
//      LogWriter for --duration_s: commits/s, commits per flush (how many
//      commits one write+sync served), and commit latency p50/p99 (from the
//      call to Commit until it returned, i.e. until durable).
//
//   wal_bench                                  # both modes, 1,2,8 threads
//   wal_bench --io_modes=direct --threads=16 --json | jq .
//   wal_bench --fsync_samples=0 --csv     # one CSV table of group commits
//
// Logs go to a fresh directory under --wal_dir (default $TMPDIR or /tmp),
// removed at exit.

#include <gflags/gflags.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/command_line.h"
#include "base/json_line.h"
#include "base/latency_histogram.h"
#include "base/run_output.h"
#include "wal/log_file.h"
#include "wal/log_format.h"
#include "wal/log_writer.h"

DEFINE_string(wal_dir, "",
              "Directory under which the benchmark creates (and at exit "
              "removes) its logs; empty = $TMPDIR, or /tmp. Put it on the "
              "device you want to measure");
DEFINE_string(io_modes, "buffered,direct",
              "Comma-separated I/O modes to measure: buffered (page cache + "
              "fdatasync) and/or direct (O_DIRECT + fdatasync)");
DEFINE_string(threads, "1,2,8",
              "Comma-separated committing-thread counts for group commit");
DEFINE_uint32(fsync_samples, 200,
              "Write+fdatasync rounds measured per mode for fsync latency "
              "(0 skips the fsync measurement)");
DEFINE_uint32(record_bytes, 200,
              "Redo payload bytes of each committed record (the record adds "
              "a 40-byte header)");
DEFINE_double(duration_s, 2, "Seconds each group-commit run lasts");
DEFINE_uint64(wal_segment_mb, 64, "Size of each preallocated segment, MiB");
DEFINE_bool(wal_zero_fill, false,
            "Write zeros over each new segment instead of only fallocate, so "
            "fdatasync need not convert unwritten extents");
DEFINE_uint32(wal_max_write_kb, 256,
              "Largest single io_uring write of a flush, KiB (multiple of 4)");

namespace strand {
namespace {

using wal::LogIoMode;

std::vector<int> ParseThreads(const std::string& s) {
  std::vector<int> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 1 || v > 1024) {
      ExitWithUsageError(absl::StrFormat(
          "--threads=%s: expected comma-separated counts from 1 to 1024", s));
    }
    out.push_back(v);
  }
  if (out.empty()) ExitWithUsageError("--threads is empty");
  return out;
}

std::vector<LogIoMode> ParseModes(const std::string& s) {
  std::vector<LogIoMode> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    auto mode = wal::ParseLogIoMode(std::string_view(part.data(), part.size()));
    if (!mode.ok()) {
      ExitWithUsageError("--io_modes: " + std::string(mode.status().message()));
    }
    out.push_back(*mode);
  }
  if (out.empty()) ExitWithUsageError("--io_modes is empty");
  return out;
}

// A run's record: what every run of this process shares, first.
JsonLine Record(const RunOutput& output, const std::string& dir,
                LogIoMode mode) {
  JsonLine j = output.Record();
  j.Add("bench", "wal")
      .Add("wal_dir", dir)
      .Add("io_mode", wal::LogIoModeName(mode))
      .Add("segment_mb", static_cast<uint64_t>(FLAGS_wal_segment_mb))
      .Add("zero_fill", FLAGS_wal_zero_fill)
      .Add("max_write_kb", static_cast<uint64_t>(FLAGS_wal_max_write_kb))
      .Add("fsync_samples", static_cast<uint64_t>(FLAGS_fsync_samples));
  return j;
}

// Microseconds of a percentile, for the table.
double Micros(const LatencyHistogram& h, double fraction) {
  return h.Percentile(fraction) / 1e3;
}

// fdatasync latency: 4 KiB appended and synced per round, as a lone
// committer's flush would.
absl::Status MeasureFsync(RunOutput& output, const std::string& dir,
                          LogIoMode mode) {
  const std::string path =
      absl::StrFormat("%s/fsync-%s.dat", dir, wal::LogIoModeName(mode));
  const uint64_t size = uint64_t{FLAGS_wal_segment_mb} << 20;
  auto file = wal::UringLogFileFactory().Create(
      path,
      {.io_mode = mode, .size_bytes = size, .zero_fill = FLAGS_wal_zero_fill});
  if (!file.ok()) return file.status();
  char* block = static_cast<char*>(
      std::aligned_alloc(wal::kBlockBytes, wal::kBlockBytes));
  std::memset(block, 0x5a, wal::kBlockBytes);
  LatencyHistogram latency;
  absl::Status status;
  for (uint32_t i = 0; i < FLAGS_fsync_samples && status.ok(); ++i) {
    const wal::LogWrite w{(i * wal::kBlockBytes) % size, block,
                          wal::kBlockBytes};
    const absl::Time start = absl::Now();
    status = (*file)->WriteAndSync({&w, 1});
    latency.Record(absl::ToInt64Nanoseconds(absl::Now() - start));
  }
  std::free(block);
  file->reset();
  std::filesystem::remove(path);
  if (!status.ok()) return status;
  output.human() << absl::StrFormat(
      "fsync    %-8s 4 KiB write+fdatasync: p50 %8.1f us  p99 %8.1f us  "
      "mean %8.1f us  max %8.1f us  (%d samples; one committer <= %.0f "
      "commits/s)\n",
      wal::LogIoModeName(mode), Micros(latency, 0.5), Micros(latency, 0.99),
      latency.mean_nanos() / 1e3, latency.max_nanos() / 1e3, latency.count(),
      1e9 / latency.mean_nanos());
  JsonLine j = Record(output, dir, mode);
  j.Add("run", "fsync")
      .Add("samples", latency.count())
      .Add("write_bytes", static_cast<uint64_t>(wal::kBlockBytes));
  latency.AddTo(j, "", LatencyHistogram::Unit::kMicros);
  output.Print(j);
  return absl::OkStatus();
}

absl::Status MeasureGroupCommit(RunOutput& output, const std::string& dir,
                                LogIoMode mode, int threads, uint32_t node_id) {
  auto writer = wal::LogWriter::Open(
      {.wal_dir = dir,
       .database_id = 0xbe7c4,
       .compute_node_id = node_id,
       .segment_bytes = uint64_t{FLAGS_wal_segment_mb} << 20,
       .io_mode = mode,
       .zero_fill_segments = FLAGS_wal_zero_fill,
       .max_write_bytes = size_t{FLAGS_wal_max_write_kb} << 10});
  if (!writer.ok()) return writer.status();
  const std::string payload(FLAGS_record_bytes, 'r');
  std::vector<LatencyHistogram> latencies(threads);
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  const absl::Time start = absl::Now();
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const absl::Time begin = absl::Now();
        if (!(*writer)->Commit(i, i, payload).ok()) {
          failed = true;
          return;
        }
        latencies[t].Record(absl::ToInt64Nanoseconds(absl::Now() - begin));
      }
    });
  }
  absl::SleepFor(absl::Seconds(FLAGS_duration_s));
  stop = true;
  for (auto& t : pool) t.join();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const wal::LogWriterStats stats = (*writer)->stats();
  absl::Status close = (*writer)->Close();
  std::filesystem::remove_all((*writer)->node_dir());
  if (failed) return close.ok() ? absl::InternalError("commit failed") : close;
  LatencyHistogram latency;
  for (const LatencyHistogram& h : latencies) latency.Merge(h);
  const uint64_t commits = latency.count();
  const double per_flush =
      stats.flushes > 0 ? static_cast<double>(stats.records) / stats.flushes
                        : 0;
  output.human() << absl::StrFormat(
      "commit   %-8s threads=%-3d %9.0f commits/s  %6.1f commits/flush  "
      "latency p50 %8.1f us  p99 %8.1f us  (%d commits, %d flushes, "
      "%d-byte payloads)\n",
      wal::LogIoModeName(mode), threads, commits / seconds, per_flush,
      Micros(latency, 0.5), Micros(latency, 0.99), commits, stats.flushes,
      FLAGS_record_bytes);
  JsonLine j = Record(output, dir, mode);
  j.Add("run", "group_commit")
      .Add("threads", threads)
      .Add("record_bytes", static_cast<uint64_t>(FLAGS_record_bytes))
      .Add("duration_s", seconds)
      .Add("commits", commits)
      .Add("flushes", stats.flushes)
      .Add("commits_per_sec", commits / seconds)
      .Add("commits_per_flush", per_flush)
      .Add("log_mb_per_sec", stats.bytes_written / seconds / 1e6);
  latency.AddTo(j, "", LatencyHistogram::Unit::kMicros);
  output.Print(j);
  return close;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const std::vector<LogIoMode> modes = ParseModes(FLAGS_io_modes);
  const std::vector<int> thread_counts = ParseThreads(FLAGS_threads);
  if (FLAGS_record_bytes > (1 << 20)) {
    ExitWithUsageError("--record_bytes must be at most 1048576");
  }
  if (!(FLAGS_duration_s > 0) || FLAGS_duration_s > 3600) {
    ExitWithUsageError("--duration_s must be > 0 and <= 3600");
  }
  if (FLAGS_wal_segment_mb < 1 || FLAGS_wal_segment_mb > 65536) {
    ExitWithUsageError("--wal_segment_mb must be from 1 to 65536");
  }
  if (wal::EncodedRecordBytes(FLAGS_record_bytes) + wal::kSegmentHeaderBytes >
      (FLAGS_wal_segment_mb << 20)) {
    ExitWithUsageError(
        "--record_bytes does not fit in a --wal_segment_mb "
        "segment");
  }
  if (FLAGS_wal_max_write_kb < 4 || FLAGS_wal_max_write_kb % 4 != 0 ||
      FLAGS_wal_max_write_kb > 65536) {
    ExitWithUsageError(
        "--wal_max_write_kb must be a multiple of 4 from 4 to 65536");
  }
  std::string parent = FLAGS_wal_dir;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = parent + "/wal_bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "wal_bench: cannot create a directory under " << parent << ": "
              << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string dir = pattern;
  output.human() << absl::StrFormat(
      "wal_bench: dir=%s segment_mb=%d zero_fill=%v max_write_kb=%d "
      "record_bytes=%d duration_s=%g per group-commit run\n",
      dir, FLAGS_wal_segment_mb, FLAGS_wal_zero_fill, FLAGS_wal_max_write_kb,
      FLAGS_record_bytes, FLAGS_duration_s);
  absl::Status status;
  uint32_t node_id = 0;
  for (LogIoMode mode : modes) {
    if (FLAGS_fsync_samples > 0) status = MeasureFsync(output, dir, mode);
    for (int threads : thread_counts) {
      if (!status.ok()) break;
      status = MeasureGroupCommit(output, dir, mode, threads, node_id++);
    }
    if (!status.ok()) break;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!status.ok()) {
    std::cerr << "wal_bench: " << status.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace strand

int main(int argc, char** argv) {
  strand::ParseCommandLineOrExit(
      &argc, &argv,
      "Measures fsync latency and group-commit throughput/latency of the "
      "write-ahead log.\n"
      "Usage: wal_bench [--io_modes=buffered,direct] [--threads=1,2,8] "
      "[--duration_s=2] [--wal_dir=DIR] [--json|--csv]\n"
      "With --csv, the fsync runs and the group-commit runs are two tables, "
      "each with its header (--fsync_samples=0 leaves one).");
  return strand::Main();
}
