#ifndef STRAND_BASE_OPTION_CHECKS_H_
#define STRAND_BASE_OPTION_CHECKS_H_

// The checks every binary's options struct makes in its Validate, so that
// each bad input is refused the same way, before any work starts, with a
// message naming the setting (as OptionNaming does: "--warehouses" for a
// user of the binary) and what to change:
//
//   --warehouses=0 is out of range: use 1 to 10000
//   --remote_neworder=nan is not a number: use 0 to 1
//   --threads=1,,2 has an empty item: give comma-separated counts from 1 to
//     1024
//   --zipf_theta has no effect without --distribution=zipf: drop it
//   --cache_mb=18446744073709551615 exceeds this machine's 15987 MiB of
//     memory
//
// Each returns InvalidArgument (a binary exits 2 on it, base/command_line.h)
// or OK.

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/option_naming.h"

namespace strand {

// `value` lies in [low, high]. A floating-point NaN never does, and is
// called out as not a number (gflags parses "nan"). `unit`, if given,
// follows the bound ("use 1 to 256 threads").
template <typename T>
absl::Status CheckInRange(const OptionNaming& naming,
                          const OptionSetting& setting, T value, T low, T high,
                          absl::string_view unit = "") {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  auto amount = [&](T bound) {
    if constexpr (std::is_integral_v<T>) return naming.Amount(setting, bound);
    return absl::StrCat(bound);
  };
  const std::string bounds = absl::StrCat(
      "use ", amount(low), " to ", amount(high), unit.empty() ? "" : " ", unit);
  if constexpr (std::is_floating_point_v<T>) {
    if (value != value) {
      return absl::InvalidArgumentError(absl::StrCat(
          naming.Setting(setting, value), " is not a number: ", bounds));
    }
  }
  if (value >= low && value <= high) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(naming.Setting(setting, value),
                                                 " is out of range: ", bounds));
}

// `value` is one of `choices`.
absl::Status CheckChoice(const OptionNaming& naming,
                         const OptionSetting& setting, absl::string_view value,
                         absl::Span<const absl::string_view> choices);

// The items of a comma-separated list ("read,write"), each one of
// `choices`. An empty list, or an empty item ("read,,write", "read,"), is an
// error: it reads like a typo, and would run nothing (or less than meant).
absl::StatusOr<std::vector<std::string>> ParseChoiceList(
    const OptionNaming& naming, const OptionSetting& setting,
    absl::string_view text, absl::Span<const absl::string_view> choices);

// The counts of a comma-separated list ("1,2,8"), each from `low` to
// `high`; an empty list or item is an error, as above.
absl::StatusOr<std::vector<int>> ParseCountList(const OptionNaming& naming,
                                                const OptionSetting& setting,
                                                absl::string_view text, int low,
                                                int high);

// A setting that has no effect unless `condition` holds (a flag the user
// gave for nothing): "--zipf_theta has no effect without
// --distribution=zipf: drop it". `why`, if given, follows the condition
// in parentheses. OK when `given` is false or `condition_holds`.
absl::Status CheckOnlyWith(const OptionNaming& naming,
                           const OptionSetting& setting, bool given,
                           bool condition_holds, absl::string_view condition,
                           absl::string_view why = "");

// This machine's physical memory, in bytes.
uint64_t MachineMemoryBytes();

// `count` copies of `mib` MiB (a cache per compute node, say) fit in this
// machine's physical memory (and so `mib` MiB in bytes fits 64 bits).
// `setting` is in MiB; `what` says what the copies are, for the message
// ("one per compute node").
absl::Status CheckFitsMemory(const OptionNaming& naming,
                             const OptionSetting& setting, uint64_t mib,
                             uint64_t count = 1, absl::string_view what = "");

// A directory this process may create files in: `path` itself, or (with
// `may_create`, for a directory the program creates) its nearest existing
// ancestor. Tried by creating and removing a file there, so a read-only
// file system or a missing permission is found now, not after a load.
absl::Status CheckWritableDirectory(const OptionNaming& naming,
                                    const OptionSetting& setting,
                                    const std::string& path, bool may_create);

}  // namespace strand

#endif  // STRAND_BASE_OPTION_CHECKS_H_
