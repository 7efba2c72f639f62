#include "base/run_progress.h"

#include <algorithm>
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
  if (options_.series != nullptr || options_.on_sample != nullptr) {
    JsonLine j = options_.labels;
    j.Add("elapsed_s", static_cast<int64_t>(seconds_))
        .Add(options_.count_key, count)
        .Add(options_.rate_key, rate);
    if (aborted.has_value()) j.Add("aborts", *aborted - last_aborts_);
    if (options_.on_sample != nullptr) options_.on_sample(seconds_, elapsed, j);
    // Flushed per line: the series can be followed while the run goes on.
    if (options_.series != nullptr) *options_.series << j.str() << std::endl;
  }
  line_.Update([&] { return Line(rate, count); });
  last_ = now;
  last_count_ = count;
  if (aborted.has_value()) last_aborts_ = *aborted;
}

std::string RunProgress::Line(double rate, uint64_t count) const {
  const double elapsed = absl::ToDoubleSeconds(absl::Now() - start_);
  std::string time = absl::StrFormat("%5.0f s", elapsed);
  std::string done = absl::StrFormat("%d %s", count, options_.count_key);
  if (options_.target_count > 0) {
    done = absl::StrFormat("%d of %d %s", count, options_.target_count,
                           options_.count_key);
    if (rate > 0 && count < options_.target_count) {
      absl::StrAppendFormat(&done, " (~%.0f s left)",
                            (options_.target_count - count) / rate);
    }
  } else if (options_.duration != absl::InfiniteDuration()) {
    const double total = absl::ToDoubleSeconds(options_.duration);
    time = absl::StrFormat("%5.0f s of %.0f s (%.0f s left)", elapsed, total,
                           std::max(0.0, total - elapsed));
  }
  return absl::StrFormat("  %s  %12.0f %s/s  %s", time, rate, options_.unit,
                         done);
}

}  // namespace strand
