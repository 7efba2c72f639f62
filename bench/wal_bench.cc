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
#include <set>
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
#include "base/option_checks.h"
#include "base/run_output.h"
#include "base/status_macros.h"
#include "wal/log_file.h"
#include "wal/log_format.h"
#include "wal/log_writer.h"

namespace strand {

// What wal_bench is told: one field per flag, checked together by Validate
// before any file is written.
struct WalBenchOptions {
  std::string wal_dir;  // empty: $TMPDIR, or /tmp
  std::string io_modes = "buffered,direct";
  std::string threads = "1,2,8";
  uint32_t fsync_samples = 200;  // 0: no fsync measurement
  uint32_t record_bytes = 200;
  double duration_s = 2;  // per group-commit run
  uint64_t wal_segment_mb = 64;
  bool wal_zero_fill = false;
  uint32_t wal_max_write_kb = 256;
  std::set<std::string> given;

  absl::Status Validate(const OptionNaming& naming) const;
  // Where the logs go: --wal_dir, or $TMPDIR, or /tmp.
  std::string parent_dir() const;
  // The lists, parsed (Validate said they parse).
  std::vector<wal::LogIoMode> modes() const;
  std::vector<int> thread_counts() const;
};

}  // namespace strand

namespace {
// Every flag's default is the options struct's.
const strand::WalBenchOptions kDefaults;
}  // namespace

DEFINE_string(wal_dir, kDefaults.wal_dir.c_str(),
              "Directory under which the benchmark creates (and at exit "
              "removes) its logs; empty = $TMPDIR, or /tmp. Put it on the "
              "device you want to measure");
DEFINE_string(io_modes, kDefaults.io_modes.c_str(),
              "Comma-separated I/O modes to measure: buffered (page cache + "
              "fdatasync) and/or direct (O_DIRECT + fdatasync)");
DEFINE_string(threads, kDefaults.threads.c_str(),
              "Comma-separated committing-thread counts for group commit");
DEFINE_uint32(fsync_samples, kDefaults.fsync_samples,
              "Write+fdatasync rounds measured per mode for fsync latency "
              "(0 skips the fsync measurement)");
DEFINE_uint32(record_bytes, kDefaults.record_bytes,
              "Redo payload bytes of each committed record (the record adds "
              "a 40-byte header)");
DEFINE_double(duration_s, kDefaults.duration_s,
              "Seconds each group-commit run lasts");
DEFINE_uint64(wal_segment_mb, kDefaults.wal_segment_mb,
              "Size of each preallocated segment, MiB");
DEFINE_bool(wal_zero_fill, kDefaults.wal_zero_fill,
            "Write zeros over each new segment instead of only fallocate, so "
            "fdatasync need not convert unwritten extents");
DEFINE_uint32(wal_max_write_kb, kDefaults.wal_max_write_kb,
              "Largest single io_uring write of a flush, KiB (multiple of 4)");

namespace strand {
namespace {

using wal::LogIoMode;

// A run's record: what every run of this process shares, first.
JsonLine Record(const WalBenchOptions& o, const RunOutput& output,
                const std::string& dir, LogIoMode mode) {
  JsonLine j = output.Record();
  j.Add("bench", "wal")
      .Add("wal_dir", dir)
      .Add("io_mode", wal::LogIoModeName(mode))
      .Add("segment_mb", o.wal_segment_mb)
      .Add("zero_fill", o.wal_zero_fill)
      .Add("max_write_kb", static_cast<uint64_t>(o.wal_max_write_kb))
      .Add("fsync_samples", static_cast<uint64_t>(o.fsync_samples));
  return j;
}

// Microseconds of a percentile, for the table.
double Micros(const LatencyHistogram& h, double fraction) {
  return h.Percentile(fraction) / 1e3;
}

// fdatasync latency: 4 KiB appended and synced per round, as a lone
// committer's flush would.
absl::Status MeasureFsync(const WalBenchOptions& o, RunOutput& output,
                          const std::string& dir, LogIoMode mode) {
  const std::string path =
      absl::StrFormat("%s/fsync-%s.dat", dir, wal::LogIoModeName(mode));
  const uint64_t size = o.wal_segment_mb << 20;
  auto file = wal::UringLogFileFactory().Create(
      path,
      {.io_mode = mode, .size_bytes = size, .zero_fill = o.wal_zero_fill});
  if (!file.ok()) return file.status();
  char* block = static_cast<char*>(
      std::aligned_alloc(wal::kBlockBytes, wal::kBlockBytes));
  std::memset(block, 0x5a, wal::kBlockBytes);
  LatencyHistogram latency;
  absl::Status status;
  for (uint32_t i = 0; i < o.fsync_samples && status.ok(); ++i) {
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
  JsonLine j = Record(o, output, dir, mode);
  j.Add("run", "fsync")
      .Add("samples", latency.count())
      .Add("write_bytes", static_cast<uint64_t>(wal::kBlockBytes));
  latency.AddTo(j, "", LatencyHistogram::Unit::kMicros);
  output.Print(j);
  return absl::OkStatus();
}

absl::Status MeasureGroupCommit(const WalBenchOptions& o, RunOutput& output,
                                const std::string& dir, LogIoMode mode,
                                int threads, uint32_t node_id) {
  auto writer = wal::LogWriter::Open(
      {.wal_dir = dir,
       .database_id = 0xbe7c4,
       .compute_node_id = node_id,
       .segment_bytes = o.wal_segment_mb << 20,
       .io_mode = mode,
       .zero_fill_segments = o.wal_zero_fill,
       .max_write_bytes = size_t{o.wal_max_write_kb} << 10});
  if (!writer.ok()) return writer.status();
  const std::string payload(o.record_bytes, 'r');
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
  absl::SleepFor(absl::Seconds(o.duration_s));
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
      o.record_bytes);
  JsonLine j = Record(o, output, dir, mode);
  j.Add("run", "group_commit")
      .Add("threads", threads)
      .Add("record_bytes", static_cast<uint64_t>(o.record_bytes))
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

constexpr OptionSetting kWalDir{"wal_dir", "wal_dir"};
constexpr OptionSetting kIoModes{"io_modes", "io_modes"};
constexpr OptionSetting kThreads{"threads", "threads"};
constexpr OptionSetting kFsyncSamples{"fsync_samples", "fsync_samples"};
constexpr OptionSetting kRecordBytes{"record_bytes", "record_bytes"};
constexpr OptionSetting kDuration{"duration_s", "duration_s"};
constexpr OptionSetting kSegmentMb{"wal_segment_mb", "wal_segment_mb"};
constexpr OptionSetting kMaxWriteKb{"wal_max_write_kb", "wal_max_write_kb"};

}  // namespace

absl::Status WalBenchOptions::Validate(const OptionNaming& naming) const {
  STRAND_RETURN_IF_ERROR(
      ParseChoiceList(naming, kIoModes, io_modes, {"buffered", "direct"})
          .status());
  STRAND_RETURN_IF_ERROR(
      ParseCountList(naming, kThreads, threads, 1, 1024).status());
  // At a few milliseconds each on a disk, 100000 rounds take minutes.
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint32_t>(naming, kFsyncSamples, fsync_samples, 0, 100000));
  STRAND_RETURN_IF_ERROR(CheckInRange(naming, kDuration, duration_s, 1e-3,
                                      3600.0, "seconds per run"));
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint64_t>(naming, kSegmentMb, wal_segment_mb, 1, 65536));
  STRAND_RETURN_IF_ERROR(
      CheckInRange<uint32_t>(naming, kRecordBytes, record_bytes, 1, 1 << 20));
  if (wal::EncodedRecordBytes(record_bytes) + wal::kSegmentHeaderBytes >
      (wal_segment_mb << 20)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s does not fit in a segment of %s: lower it or raise "
                        "--wal_segment_mb",
                        naming.Setting(kRecordBytes, record_bytes),
                        naming.Setting(kSegmentMb, wal_segment_mb)));
  }
  if (wal_max_write_kb < 4 || wal_max_write_kb % 4 != 0 ||
      wal_max_write_kb > 65536) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is not valid: use a multiple of 4 from 4 to 65536",
                        naming.Setting(kMaxWriteKb, wal_max_write_kb)));
  }
  const std::string dir = parent_dir();
  STRAND_RETURN_IF_ERROR(
      CheckWritableDirectory(naming, kWalDir, dir, /*may_create=*/false));
  // Each run preallocates a segment there.
  std::error_code ec;
  const std::filesystem::space_info space = std::filesystem::space(dir, ec);
  if (!ec && (wal_segment_mb << 20) > space.available) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a segment of %s does not fit in the %d MiB free there: lower "
        "--wal_segment_mb or give another --wal_dir",
        naming.Setting(kWalDir, dir),
        naming.Setting(kSegmentMb, wal_segment_mb), space.available >> 20));
  }
  return absl::OkStatus();
}

std::string WalBenchOptions::parent_dir() const {
  if (!wal_dir.empty()) return wal_dir;
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::vector<LogIoMode> WalBenchOptions::modes() const {
  std::vector<LogIoMode> out;
  auto names = ParseChoiceList(OptionNaming::Fields(""), kIoModes, io_modes,
                               {"buffered", "direct"});
  for (const std::string& name : names.value_or(std::vector<std::string>{})) {
    out.push_back(*wal::ParseLogIoMode(name));
  }
  return out;
}

std::vector<int> WalBenchOptions::thread_counts() const {
  return ParseCountList(OptionNaming::Fields(""), kThreads, threads, 1, 1024)
      .value_or(std::vector<int>{});
}

namespace {

// The options from the flags, validated: exits with status 2 naming the
// flag on any misuse, before any file is written.
WalBenchOptions OptionsFromFlags() {
  WalBenchOptions o;
  o.wal_dir = FLAGS_wal_dir;
  o.io_modes = FLAGS_io_modes;
  o.threads = FLAGS_threads;
  o.fsync_samples = FLAGS_fsync_samples;
  o.record_bytes = FLAGS_record_bytes;
  o.duration_s = FLAGS_duration_s;
  o.wal_segment_mb = FLAGS_wal_segment_mb;
  o.wal_zero_fill = FLAGS_wal_zero_fill;
  o.wal_max_write_kb = FLAGS_wal_max_write_kb;
  o.given = FlagsGiven();
  ExitIfUsageError(o.Validate(OptionNaming::Flags("WalBenchOptions::")));
  return o;
}

int Main() {
  RunOutput output = RunOutput::FromFlags();
  const WalBenchOptions o = OptionsFromFlags();
  std::string pattern = o.parent_dir() + "/wal_bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "wal_bench: cannot create a directory under " << o.parent_dir()
              << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string dir = pattern;
  output.human() << absl::StrFormat(
      "wal_bench: dir=%s segment_mb=%d zero_fill=%v max_write_kb=%d "
      "record_bytes=%d duration_s=%g per group-commit run\n",
      dir, o.wal_segment_mb, o.wal_zero_fill, o.wal_max_write_kb,
      o.record_bytes, o.duration_s);
  absl::Status status;
  uint32_t node_id = 0;
  for (LogIoMode mode : o.modes()) {
    if (o.fsync_samples > 0) status = MeasureFsync(o, output, dir, mode);
    for (int threads : o.thread_counts()) {
      if (!status.ok()) break;
      status = MeasureGroupCommit(o, output, dir, mode, threads, node_id++);
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
