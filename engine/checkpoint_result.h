#ifndef STRAND_ENGINE_CHECKPOINT_RESULT_H_
#define STRAND_ENGINE_CHECKPOINT_RESULT_H_

// What a checkpoint reports (Engine::Checkpoint, engine/checkpointer.h
// takes them; docs/design/checkpoints.md says how).

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace strand::engine {

// What one checkpoint did and cost.
struct CheckpointResult {
  uint64_t sequence = 0;
  std::string dir;
  std::string kind;
  uint64_t start_ts = 0;  // S
  uint64_t end_ts = 0;    // E
  uint64_t tables = 0, indexes = 0;
  uint64_t tuples = 0, index_entries = 0;
  uint64_t bytes_written = 0;  // the files
  // What the copy read from the memory nodes through this node's cache
  // (its endpoint's counters: misses only; hits read the cache).
  uint64_t bytes_read = 0;
  uint64_t round_trips = 0;
  absl::Time started;
  absl::Duration wait_start;  // step 1
  absl::Duration copy;        // step 2
  absl::Duration wait_end;    // step 3's wait
  absl::Duration publish;     // fsyncs, manifest, verification
  absl::Duration truncate;    // step 4
  absl::Duration total;
  // CPU seconds of the thread that took it (the copy, the files, the
  // waits' polls): what it took from the transactions on a busy machine.
  double cpu_s = 0;
  // Step 4.
  uint64_t truncated_to_ts = 0;  // 0: no truncation
  uint64_t log_segments_deleted = 0;
  uint64_t log_bytes_deleted = 0;
  uint64_t checkpoints_deleted = 0;

  std::string Summary() const;
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CHECKPOINT_RESULT_H_
