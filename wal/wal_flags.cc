#include "wal/wal_flags.h"

#include <gflags/gflags.h>

#include "absl/strings/str_format.h"

DEFINE_string(wal_dir, "",
              "Directory of the write-ahead log; each compute node writes "
              "<wal_dir>/node-<id>/ (benchmarks: empty = a fresh directory "
              "under $TMPDIR or /tmp, removed at exit)");
DEFINE_string(wal_io_mode, "buffered",
              "How log data reaches the disk: buffered (write to the page "
              "cache + fdatasync) or direct (O_DIRECT + fdatasync)");
DEFINE_uint64(wal_segment_mb, 64,
              "Size of each preallocated log segment file, MiB");
DEFINE_bool(wal_zero_fill, false,
            "Write zeros over each new segment (instead of only fallocate) "
            "so later fdatasyncs need not convert unwritten extents");
DEFINE_uint32(wal_max_write_kb, 256,
              "Largest single io_uring write of a flush, KiB (multiple of 4); "
              "a larger flush is several writes in flight together");

namespace strand::wal {

absl::StatusOr<LogWriterOptions> LogWriterOptionsFromFlags() {
  LogWriterOptions o;
  o.wal_dir = FLAGS_wal_dir;
  auto mode = ParseLogIoMode(FLAGS_wal_io_mode);
  if (!mode.ok()) {
    return absl::InvalidArgumentError("--wal_io_mode: " +
                                      std::string(mode.status().message()));
  }
  o.io_mode = *mode;
  if (FLAGS_wal_segment_mb < 1 || FLAGS_wal_segment_mb > 65536) {
    return absl::InvalidArgumentError(
        "--wal_segment_mb must be from 1 to 65536");
  }
  o.segment_bytes = FLAGS_wal_segment_mb << 20;
  o.zero_fill_segments = FLAGS_wal_zero_fill;
  if (FLAGS_wal_max_write_kb < 4 || FLAGS_wal_max_write_kb % 4 != 0 ||
      FLAGS_wal_max_write_kb > 65536) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--wal_max_write_kb=%d: must be a multiple of 4 from 4 to 65536",
        FLAGS_wal_max_write_kb));
  }
  o.max_write_bytes = size_t{FLAGS_wal_max_write_kb} << 10;
  return o;
}

}  // namespace strand::wal
