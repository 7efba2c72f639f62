#include "base/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace strand {

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      next_(terminal_ ? absl::Now() : absl::Now() + kLogPeriod) {}

void ProgressLine::Update(absl::FunctionRef<std::string()> text) {
  if (!enabled_) return;
  const absl::Time now = absl::Now();
  if (now < next_) return;
  next_ = now + (terminal_ ? kTerminalPeriod : kLogPeriod);
  if (terminal_) {
    const std::string line = text();
    // Pad over a longer line shown before.
    std::fprintf(stderr, "\r%-*s", static_cast<int>(shown_), line.c_str());
    std::fflush(stderr);
    shown_ = line.size();
    return;
  }
  std::fprintf(stderr, "%s\n", text().c_str());
  std::fflush(stderr);
}

void ProgressLine::Clear() {
  if (!enabled_ || !terminal_ || shown_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(shown_), "");
  std::fflush(stderr);
  shown_ = 0;
}

void ProgressLine::RunShowing(std::string_view what,
                              absl::FunctionRef<void()> fn) {
  absl::Notification done;
  const absl::Time start = absl::Now();
  // `fn` runs on the caller's thread; a helper shows the time it takes.
  std::thread shower([&] {
    ProgressLine line;
    while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(250))) {
      // Quick calls show nothing, on a terminal too.
      if (absl::Now() - start < absl::Seconds(1)) continue;
      line.Update([&] {
        return absl::StrFormat("%s: %.0f s", std::string(what),
                               absl::ToDoubleSeconds(absl::Now() - start));
      });
    }
    line.Clear();
  });
  fn();
  done.Notify();
  shower.join();
}

}  // namespace strand
