#include "base/command_line.h"

#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace strand {
namespace {

std::string& ProgramName() {
  static std::string* name = new std::string("strand");
  return *name;
}

bool IsGflagsBuiltin(std::string_view name) {
  for (std::string_view builtin :
       {"help", "helpfull", "helpshort", "helpon", "helpmatch", "helppackage",
        "helpxml", "version", "flagfile", "fromenv", "tryfromenv", "undefok"}) {
    if (name == builtin) return true;
  }
  return false;
}

// Checks one "--name[=value]" argument; `next` is the following argument
// (the value of "--name value"), or null. Returns how many arguments it used.
int CheckFlag(std::string_view arg, const char* next) {
  std::string_view body = arg.substr(arg.find_first_not_of('-'));
  const size_t eq = body.find('=');
  const std::string name(body.substr(0, eq));
  if (IsGflagsBuiltin(name)) return 1;
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) {
    // "--nofoo" turns off the boolean flag foo.
    if (absl::StartsWith(name, "no") && eq == std::string_view::npos &&
        gflags::GetCommandLineFlagInfo(name.substr(2).c_str(), &info) &&
        info.type == "bool") {
      return 1;
    }
    ExitWithUsageError(absl::StrCat("unknown flag --", name));
  }
  std::string value;
  int used = 1;
  if (eq != std::string_view::npos) {
    value = std::string(body.substr(eq + 1));
  } else if (info.type == "bool") {
    return 1;
  } else if (next != nullptr) {
    value = next;
    used = 2;
  } else {
    ExitWithUsageError(absl::StrCat("flag --", name, " needs a value"));
  }
  // Try the value on a copy of the flag's state: SetCommandLineOption
  // reports a parse failure with an empty result.
  gflags::FlagSaver saver;
  if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
    ExitWithUsageError(absl::StrCat("--", name, "=", value, " is not a valid ",
                                    info.type, " value"));
  }
  return used;
}

}  // namespace

void ExitWithUsageError(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n%s: try --help\n", ProgramName().c_str(),
               message.c_str(), ProgramName().c_str());
  std::exit(2);
}

void ParseCommandLineOrExit(int* argc, char*** argv, const std::string& usage) {
  std::string_view program = (*argv)[0];
  if (size_t slash = program.rfind('/'); slash != std::string_view::npos) {
    program.remove_prefix(slash + 1);
  }
  ProgramName() = std::string(program);
  gflags::SetUsageMessage(usage);
  for (int i = 1; i < *argc;) {
    std::string_view arg = (*argv)[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') {
      ExitWithUsageError(absl::StrCat("unexpected argument '", std::string(arg),
                                      "': this program takes only flags"));
    }
    i += CheckFlag(arg, i + 1 < *argc ? (*argv)[i + 1] : nullptr);
  }
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  if (*argc > 1) {
    ExitWithUsageError(absl::StrCat("unexpected argument '", (*argv)[1],
                                    "': this program takes only flags"));
  }
}

}  // namespace strand
