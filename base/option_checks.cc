#include "base/option_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace strand {
namespace {

// "a, b or c".
std::string OneOf(absl::Span<const absl::string_view> choices) {
  if (choices.size() < 2) return absl::StrJoin(choices, "");
  return absl::StrCat(absl::StrJoin(choices.first(choices.size() - 1), ", "),
                      " or ", choices.back());
}

// The items of a comma-separated list; an error for an empty list or item.
// `expected` says what a valid list holds.
absl::StatusOr<std::vector<std::string>> SplitList(const OptionNaming& naming,
                                                   const OptionSetting& setting,
                                                   absl::string_view text,
                                                   absl::string_view expected) {
  if (text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(naming.Name(setting), " is empty: give ", expected));
  }
  std::vector<std::string> items = absl::StrSplit(text, ',');
  for (const std::string& item : items) {
    if (item.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(naming.Setting(setting, text),
                       " has an empty item: give ", expected));
    }
  }
  return items;
}

}  // namespace

absl::Status CheckChoice(const OptionNaming& naming,
                         const OptionSetting& setting, absl::string_view value,
                         absl::Span<const absl::string_view> choices) {
  for (absl::string_view choice : choices) {
    if (value == choice) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(naming.Setting(setting, value),
                                                 " is not a choice: use ",
                                                 OneOf(choices)));
}

absl::StatusOr<std::vector<std::string>> ParseChoiceList(
    const OptionNaming& naming, const OptionSetting& setting,
    absl::string_view text, absl::Span<const absl::string_view> choices) {
  const std::string expected =
      absl::StrCat("a comma-separated list of ", OneOf(choices));
  auto items = SplitList(naming, setting, text, expected);
  if (!items.ok()) return items.status();
  for (const std::string& item : *items) {
    bool known = false;
    for (absl::string_view choice : choices) known |= item == choice;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat(naming.Setting(setting, text), ": '", item,
                       "' is not a choice: use ", expected));
    }
  }
  return items;
}

absl::StatusOr<std::vector<int>> ParseCountList(const OptionNaming& naming,
                                                const OptionSetting& setting,
                                                absl::string_view text, int low,
                                                int high) {
  const std::string expected =
      absl::StrFormat("comma-separated counts from %d to %d", low, high);
  auto items = SplitList(naming, setting, text, expected);
  if (!items.ok()) return items.status();
  std::vector<int> counts;
  for (const std::string& item : *items) {
    int count = 0;
    if (!absl::SimpleAtoi(item, &count) || count < low || count > high) {
      return absl::InvalidArgumentError(
          absl::StrCat(naming.Setting(setting, text), ": '", item,
                       "' is not a count from ", low, " to ", high));
    }
    counts.push_back(count);
  }
  return counts;
}

absl::Status CheckOnlyWith(const OptionNaming& naming,
                           const OptionSetting& setting, bool given,
                           bool condition_holds, absl::string_view condition,
                           absl::string_view why) {
  if (!given || condition_holds) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      naming.Name(setting), " has no effect without ", condition,
      why.empty() ? "" : absl::StrCat(" (", why, ")"), ": drop it"));
}

uint64_t MachineMemoryBytes() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

absl::Status CheckFitsMemory(const OptionNaming& naming,
                             const OptionSetting& setting, uint64_t mib,
                             uint64_t count, absl::string_view what) {
  const uint64_t machine_mib = MachineMemoryBytes() >> 20;
  if (count == 0 || mib <= machine_mib / count) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s%s%s exceeds this machine's %d MiB of memory: lower %s",
      naming.Setting(setting, mib),
      count > 1 ? absl::StrFormat(" x %d", count) : "",
      what.empty() ? "" : absl::StrCat(" (", what, ")"), machine_mib,
      naming.Name(setting)));
}

absl::Status CheckWritableDirectory(const OptionNaming& naming,
                                    const OptionSetting& setting,
                                    const std::string& path, bool may_create) {
  namespace fs = std::filesystem;
  const std::string name = naming.Setting(setting, path);
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(naming.Name(setting), " is empty: give a directory"));
  }
  std::error_code ec;
  fs::path dir = fs::absolute(path, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", ec.message()));
  }
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is not a directory: give a directory"));
  }
  if (!fs::exists(dir, ec)) {
    if (!may_create) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, " does not exist: create it, or give another"));
    }
    // The nearest ancestor that exists is where the directory is made.
    while (!fs::exists(dir, ec) && dir.has_parent_path() &&
           dir.parent_path() != dir) {
      dir = dir.parent_path();
    }
    if (!fs::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", dir.string(),
                       " is not a directory, so it cannot be "
                       "created"));
    }
  }
  const std::string probe =
      (dir / absl::StrFormat(".strand-write-probe-%d", ::getpid())).string();
  const int fd =
      ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: cannot create files in %s (%s): give a "
                        "writable directory",
                        name, dir.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

}  // namespace strand
