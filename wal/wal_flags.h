#ifndef STRAND_WAL_WAL_FLAGS_H_
#define STRAND_WAL_WAL_FLAGS_H_

// The log flags binaries share: --wal_dir --wal_io_mode --wal_segment_mb
// --wal_zero_fill --wal_max_write_kb. Link strand_wal_flags to get them.

#include <cstdint>

#include "absl/status/statusor.h"
#include "wal/log_writer.h"

namespace strand::wal {

// LogWriterOptions from the flags, validated (the caller fills in
// database_id and compute_node_id). InvalidArgument names the flag.
absl::StatusOr<LogWriterOptions> LogWriterOptionsFromFlags();

}  // namespace strand::wal

#endif  // STRAND_WAL_WAL_FLAGS_H_
