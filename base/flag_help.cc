#include "base/flag_help.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace strand {
namespace {

constexpr int kWidth = 79;
constexpr absl::string_view kDescriptionIndent = "      ";
constexpr absl::string_view kFabricFlagsFile = "rdma/fabric_flags.cc";
constexpr absl::string_view kOutputFlagsFile = "base/run_output.cc";
constexpr absl::string_view kCpuPathFlagsFile = "index/cpu_path_flags.cc";

// Every strand source file's __FILE__ starts like this one's, minus
// "base/flag_help.cc" ("../" or "/src/strand/", as the build spelled it).
absl::string_view StrandSourceRoot() {
  constexpr std::string_view kThisFile = __FILE__;
  constexpr std::string_view kRelative = "base/flag_help.cc";
  static_assert(kThisFile.ends_with(kRelative));
  return absl::string_view(kThisFile.data(),
                           kThisFile.size() - kRelative.size());
}

// The title of a strand source file's group of flags.
std::string GroupTitle(absl::string_view relative_file) {
  if (relative_file == kFabricFlagsFile) {
    return "Fabric and cost-model flags (every binary on the fabric; "
           "docs/method.md)";
  }
  if (relative_file == kOutputFlagsFile) {
    return "Output flags (every binary; base/run_output.h)";
  }
  if (relative_file == kCpuPathFlagsFile) {
    return "CPU-path switches, each off for its ablation "
           "(index/cpu_path_flags.h)";
  }
  return absl::StrCat("Flags from ", relative_file);
}

void AppendWrapped(absl::string_view text, std::string* out) {
  std::string line(kDescriptionIndent);
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line.size() > kDescriptionIndent.size() &&
        line.size() + 1 + word.size() > kWidth) {
      absl::StrAppend(out, line, "\n");
      line = std::string(kDescriptionIndent);
    }
    if (line.size() > kDescriptionIndent.size()) line += ' ';
    absl::StrAppend(&line, word);
  }
  if (line.size() > kDescriptionIndent.size()) absl::StrAppend(out, line, "\n");
}

void AppendFlag(const gflags::CommandLineFlagInfo& flag, std::string* out) {
  absl::StrAppend(out, "  --", flag.name, "=", FlagDefaultAsWritten(flag), " (",
                  flag.type, ")\n");
  AppendWrapped(flag.description, out);
}

}  // namespace

std::string FlagDefaultAsWritten(const gflags::CommandLineFlagInfo& flag) {
  if (flag.type == "string")
    return absl::StrCat("\"", flag.default_value, "\"");
  if (flag.type == "double") {
    char* end = nullptr;
    const double value = std::strtod(flag.default_value.c_str(), &end);
    if (end == nullptr || *end != '\0') return flag.default_value;
    char buffer[64];
    // Without a precision, to_chars writes the shortest round-trip form.
    const auto [ptr, ec] =
        std::to_chars(buffer, buffer + sizeof(buffer), value);
    if (ec != std::errc()) return flag.default_value;
    return std::string(buffer, ptr);
  }
  return flag.default_value;
}

std::string FlagHelp(absl::string_view program,
                     absl::string_view program_file) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::vector<const gflags::CommandLineFlagInfo*> own;
  // Other strand files' flags by file, the fabric's first.
  std::map<std::pair<bool, std::string>,
           std::vector<const gflags::CommandLineFlagInfo*>>
      others;
  const absl::string_view root = StrandSourceRoot();
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    absl::string_view file = flag.filename;
    if (file == program_file) {
      own.push_back(&flag);
      continue;
    }
    if (!root.empty() && absl::StartsWith(file, root)) {
      file.remove_prefix(root.size());
    } else if (absl::EndsWith(file, kFabricFlagsFile)) {
      file = kFabricFlagsFile;  // a build that spelled paths differently
    } else {
      continue;  // a library's: glog, gflags (--helpfull)
    }
    others[{file != kFabricFlagsFile, std::string(file)}].push_back(&flag);
  }
  auto by_name = [](const gflags::CommandLineFlagInfo* a,
                    const gflags::CommandLineFlagInfo* b) {
    return a->name < b->name;
  };
  std::string out = absl::StrCat(program, ": ", gflags::ProgramUsage(), "\n");
  if (!own.empty()) {
    std::sort(own.begin(), own.end(), by_name);
    absl::StrAppend(&out, "\nFlags of ", program, ":\n");
    for (const auto* flag : own) AppendFlag(*flag, &out);
  }
  for (auto& [key, group] : others) {
    std::sort(group.begin(), group.end(), by_name);
    absl::StrAppend(&out, "\n", GroupTitle(key.second), ":\n");
    for (const auto* flag : group) AppendFlag(*flag, &out);
  }
  absl::StrAppend(&out,
                  "\n--flagfile=FILE reads flags from FILE, one per line. "
                  "--version prints the\nversion and commit. --helpfull "
                  "lists every flag, the libraries' (glog, gflags)\ntoo.\n");
  return out;
}

}  // namespace strand
