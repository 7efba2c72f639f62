#ifndef STRAND_BASE_PROGRESS_LINE_H_
#define STRAND_BASE_PROGRESS_LINE_H_

// Progress of a long phase (committing memory, loading, a measured run) on
// stderr. On a terminal, one line rewritten in place; otherwise (a log
// file, a pipe, a CI job) a new line every few seconds, the first only
// once the phase has taken that long: a redirected log shows the program
// alive through a long phase, and a short phase leaves no line in it.
//
//   ProgressLine line;
//   while (loading) {
//     absl::SleepFor(absl::Milliseconds(250));
//     line.Update([&] { return absl::StrFormat("loading: %d%%", pct); });
//   }
//   line.Clear();

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"

namespace strand {

class ProgressLine {
 public:
  // Time between two lines when stderr is not a terminal, and between two
  // rewrites of the line on a terminal.
  static constexpr absl::Duration kLogPeriod = absl::Seconds(5);
  static constexpr absl::Duration kTerminalPeriod = absl::Milliseconds(250);

  // `enabled` false: shows nothing (a caller that was asked to be quiet).
  explicit ProgressLine(bool enabled = true);

  // Shows `text()` if one is due (`text` is not called otherwise): on a
  // terminal every kTerminalPeriod, rewriting the line; otherwise every
  // kLogPeriod.
  void Update(absl::FunctionRef<std::string()> text);
  // Ends the phase: erases the terminal's line (a log keeps its lines).
  void Clear();

  // Runs `fn`, showing "<what>: N s" while it takes: for a call that blocks
  // for a while without reporting progress of its own.
  static void RunShowing(std::string_view what, absl::FunctionRef<void()> fn);

 private:
  bool enabled_;
  bool terminal_;
  absl::Time next_;   // when the next line is due
  size_t shown_ = 0;  // terminal: length of the line shown
};

}  // namespace strand

#endif  // STRAND_BASE_PROGRESS_LINE_H_
