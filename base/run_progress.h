#ifndef STRAND_BASE_RUN_PROGRESS_H_
#define STRAND_BASE_RUN_PROGRESS_H_

// A measured run's progress, sampled once a second: a line on stderr
// (base/progress_line.h) and, with --progress_json, one JSON line per
// second in that file, so a run's warm-up, stalls and drift can be plotted
// rather than guessed from its average:
//
//   {"elapsed_s":2,"commits":51234,"txn_per_sec":25611,"aborts":17}
//
// where the count is cumulative since the measured window opened, and the
// rate and the aborts are the last second's. The stderr line says how far
// the run is from its end and when it will get there:
//
//     5 s of 20 s (15 s left)        20704 txn/s        117989 commits
//     5 s                            20704 txn/s   117989 of 200000 commits
//                                                  (~4 s left)
//
// The caller polls often (every few milliseconds); a sample is taken at
// each whole second of the run.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "base/json_line.h"
#include "base/progress_line.h"

namespace strand {

class RunProgress {
 public:
  struct Options {
    // Field names: the cumulative count and the last second's rate; and
    // the unit the stderr line counts in ("5 s  20704 txn/s  117989 commits").
    std::string count_key = "commits";
    std::string rate_key = "txn_per_sec";
    std::string unit = "txn";
    // Fields first on every line (e.g. which workload of several).
    JsonLine labels = JsonLine();
    // The cumulative abort count as the window opened.
    uint64_t aborts_at_start = 0;
    // Where the run ends: after `duration`, or (if `target_count` > 0) once
    // the count reaches it. Shown on the stderr line with the time left.
    absl::Duration duration = absl::InfiniteDuration();
    uint64_t target_count = 0;
    // --progress_json's file; null: no series.
    std::ostream* series = nullptr;
    bool stderr_line = true;
    // Not null: called at every sample, with a series or without, with
    // the sample's second, the seconds it spans (more than 1 for a late
    // poll) and its series line, to which the caller may add fields of its
    // own (tpcc adds each compute node's rate).
    std::function<void(int64_t elapsed_s, double span_s, JsonLine& line)>
        on_sample = nullptr;
  };

  // The run's measured window opens now.
  explicit RunProgress(Options options);

  // Takes the samples due: `count` is cumulative since the window opened;
  // `aborts` (called only when a sample is due) is a cumulative count, or
  // nullopt for a run whose operations do not abort.
  void Poll(uint64_t count,
            absl::FunctionRef<std::optional<uint64_t>()> aborts);
  // The window closed: erases the terminal's line.
  void Finish() { line_.Clear(); }

 private:
  // "5 s of 20 s (15 s left)  20704 txn/s  117989 commits".
  std::string Line(double rate, uint64_t count) const;

  Options options_;
  ProgressLine line_;
  absl::Time start_;
  absl::Time last_;      // of the last sample (or the start)
  int64_t seconds_ = 0;  // samples taken
  uint64_t last_count_ = 0;
  uint64_t last_aborts_;
};

}  // namespace strand

#endif  // STRAND_BASE_RUN_PROGRESS_H_
