#include "base/command_line.h"

#include <fnmatch.h>
#include <gflags/gflags.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/build_info.h"
#include "base/flag_help.h"

namespace strand {
namespace {

// A --flagfile may name other flag files; deeper than this is a loop.
constexpr int kMaxFlagFileDepth = 8;

std::string& ProgramName() {
  static std::string* name = new std::string("strand");
  return *name;
}

bool IsGflagsBuiltin(absl::string_view name) {
  for (absl::string_view builtin :
       {"help", "helpfull", "helpshort", "helpon", "helpmatch", "helppackage",
        "helpxml", "version", "fromenv", "tryfromenv", "undefok"}) {
    if (name == builtin) return true;
  }
  return false;
}

// "--name=value" or "-name" split into its name and, if given, its value.
struct FlagArgument {
  std::string name;
  std::optional<std::string> value;
};

FlagArgument SplitFlag(absl::string_view arg) {
  absl::string_view body =
      arg.substr(std::min(arg.find_first_not_of('-'), arg.size()));
  const size_t eq = body.find('=');
  if (eq == absl::string_view::npos) return {std::string(body), std::nullopt};
  return {std::string(body.substr(0, eq)), std::string(body.substr(eq + 1))};
}

// --help, --helpshort, --helpfull and --version print and exit 0, whatever
// else the command line holds.
void HandleInformationalFlags(int argc, char** argv,
                              absl::string_view program_file) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") return;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const FlagArgument flag = SplitFlag(arg);
    if (flag.value.has_value() && *flag.value != "true" && *flag.value != "1") {
      continue;
    }
    if (flag.name == "help" || flag.name == "helpshort") {
      std::cout << FlagHelp(ProgramName(), program_file) << std::flush;
      std::exit(0);
    }
    if (flag.name == "helpfull") {
      gflags::ShowUsageWithFlags(argv[0]);
      std::exit(0);
    }
    if (flag.name == "version") {
      std::cout << ProgramName() << " (strand) " << StrandVersion()
                << ", commit " << StrandCommit() << "\n"
                << std::flush;
      std::exit(0);
    }
  }
}

int CheckFlag(absl::string_view arg, const char* next, absl::string_view where,
              int depth);

// Checks every flag of the comma-separated flag files in `paths` as gflags
// will read them: one flag per line, '#' comments, and lines without a
// leading '-' listing the program names (globs) the flags after them apply
// to.
void CheckFlagFiles(absl::string_view paths, int depth) {
  if (depth > kMaxFlagFileDepth) {
    ExitWithUsageError(absl::StrCat("--flagfile=", paths,
                                    ": flag files nested more than ",
                                    kMaxFlagFileDepth, " deep (a loop?)"));
  }
  for (absl::string_view path : absl::StrSplit(paths, ',', absl::SkipEmpty())) {
    std::ifstream file{std::string(path)};
    if (!file) {
      ExitWithUsageError(absl::StrCat("--flagfile=", path, ": cannot read it (",
                                      std::strerror(errno), ")"));
    }
    const std::string where = absl::StrCat(" (in --flagfile=", path, ")");
    bool applies = true;
    std::string line;
    while (std::getline(file, line)) {
      const absl::string_view text = absl::StripAsciiWhitespace(line);
      if (text.empty() || text[0] == '#') continue;
      if (text[0] != '-') {
        applies = false;
        for (absl::string_view glob :
             absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
          if (fnmatch(std::string(glob).c_str(), ProgramName().c_str(), 0) ==
              0) {
            applies = true;
          }
        }
        continue;
      }
      if (applies) CheckFlag(text, nullptr, where, depth);
    }
  }
}

// Checks one "--name[=value]" argument; `next` is the following argument
// (the value of "--name value"), or null; `where` is appended to messages.
// Returns how many arguments it used.
int CheckFlag(absl::string_view arg, const char* next, absl::string_view where,
              int depth) {
  const FlagArgument flag = SplitFlag(arg);
  const std::string& name = flag.name;
  if (name == "flagfile") {
    if (flag.value.has_value()) {
      CheckFlagFiles(*flag.value, depth + 1);
      return 1;
    }
    if (next == nullptr) {
      ExitWithUsageError(absl::StrCat("flag --flagfile needs a value", where));
    }
    CheckFlagFiles(next, depth + 1);
    return 2;
  }
  if (IsGflagsBuiltin(name)) return 1;
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
    // "--nofoo" turns off the boolean flag foo.
    if (absl::StartsWith(name, "no") && !flag.value.has_value() &&
        gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) &&
        info.type == "bool") {
      return 1;
    }
    ExitWithUsageError(absl::StrCat("unknown flag --", name, where));
  }
  std::string value;
  int used = 1;
  if (flag.value.has_value()) {
    value = *flag.value;
  } else if (info.type == "bool") {
    return 1;
  } else if (next != nullptr) {
    value = next;
    used = 2;
  } else {
    ExitWithUsageError(absl::StrCat("flag --", name, " needs a value", where));
  }
  // Try the value on a copy of the flag's state: SetCommandLineOption
  // reports a parse failure with an empty result.
  gflags::FlagSaver saver;
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    ExitWithUsageError(absl::StrCat("--", name, "=", value, " is not a valid ",
                                    info.type, " value", where));
  }
  return used;
}

}  // namespace

void ExitWithUsageError(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n%s: try --help\n", ProgramName().c_str(),
               message.c_str(), ProgramName().c_str());
  std::exit(2);
}

void ExitIfUsageError(const absl::Status& status) {
  if (!status.ok()) ExitWithUsageError(std::string(status.message()));
}

std::set<std::string> FlagsGiven() {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::set<std::string> given;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!flag.is_default) given.insert(flag.name);
  }
  return given;
}

void ParseCommandLineOrExit(int* argc, char*** argv, const std::string& usage,
                            std::source_location caller) {
  absl::string_view program = (*argv)[0];
  if (size_t slash = program.rfind('/'); slash != absl::string_view::npos) {
    program.remove_prefix(slash + 1);
  }
  ProgramName() = std::string(program);
  gflags::SetUsageMessage(usage);
  HandleInformationalFlags(*argc, *argv, caller.file_name());
  for (int i = 1; i < *argc;) {
    absl::string_view arg = (*argv)[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') {
      ExitWithUsageError(absl::StrCat("unexpected argument '", std::string(arg),
                                      "': this program takes only flags"));
    }
    i += CheckFlag(arg, i + 1 < *argc ? (*argv)[i + 1] : nullptr, "",
                   /*depth=*/0);
  }
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  if (*argc > 1) {
    ExitWithUsageError(absl::StrCat("unexpected argument '", (*argv)[1],
                                    "': this program takes only flags"));
  }
}

}  // namespace strand
