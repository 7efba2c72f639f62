#include "base/run_progress.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace strand {

RunProgress::RunProgress(Options options)
    : options_(std::move(options)),
      line_(options_.stderr_line),
      start_(absl::Now()),
      last_(start_),
      last_aborts_(options_.aborts_at_start) {}

void RunProgress::Poll(uint64_t count,
                       absl::FunctionRef<std::optional<uint64_t>()> aborts) {
  const absl::Time now = absl::Now();
  if (now < start_ + absl::Seconds(seconds_ + 1)) return;
  // One sample for however many seconds passed since the last (a poll
  // that came late): its rate is over the time since then.
  seconds_ = absl::ToInt64Seconds(now - start_);
  const double elapsed = absl::ToDoubleSeconds(now - last_);
  const double rate = (count - last_count_) / elapsed;
  const std::optional<uint64_t> aborted = aborts();
  if (options_.series != nullptr) {
    JsonLine j = options_.labels;
    j.Add("elapsed_s", static_cast<int64_t>(seconds_))
        .Add(options_.count_key, count)
        .Add(options_.rate_key, rate);
    if (aborted.has_value()) j.Add("aborts", *aborted - last_aborts_);
    // Flushed per line: the series can be followed while the run goes on.
    *options_.series << j.str() << std::endl;
  }
  line_.Update([&] {
    return absl::StrFormat("  %5d s  %12.0f %s/s  %12d %s", seconds_, rate,
                           options_.unit, count, options_.count_key);
  });
  last_ = now;
  last_count_ = count;
  if (aborted.has_value()) last_aborts_ = *aborted;
}

}  // namespace strand
