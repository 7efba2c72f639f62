#ifndef STRAND_BASE_COMMAND_LINE_H_
#define STRAND_BASE_COMMAND_LINE_H_

// Command-line handling shared by strand binaries. gflags alone exits with
// status 1 on an unknown flag or a malformed value, ignores an unknown flag
// inside a --flagfile, and exits 1 after --help; strand promises status 2
// for every command-line misuse, with a message that names the flag, and
// status 0 for --help and --version.

#include <set>
#include <source_location>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strand {

// Parses gflags. First, wherever they appear:
//   --help, --helpshort  the usage, the program's own flags, then the flags
//                        every strand binary shares (base/flag_help.h);
//                        exit 0
//   --helpfull           every flag of the process, glog's and gflags' too;
//                        exit 0
//   --version            "<program> (strand) <version>, commit <commit>"
//                        (base/build_info.h); exit 0
// Then, on an unknown flag, a value that does not parse, or a stray
// positional argument, on the command line or in a --flagfile (also one
// that cannot be read): prints "<program>: <what is wrong>" and "try
// --help", and exits with status 2. `caller` is where the program's own
// flags are defined: the caller's file, by default.
void ParseCommandLineOrExit(
    int* argc, char*** argv, const std::string& usage,
    std::source_location caller = std::source_location::current());

// Prints "<program>: <message>" and exits with status 2. For flag values
// that parse but make no sense (checked by the binary after parsing).
[[noreturn]] void ExitWithUsageError(const std::string& message);

// Exits as ExitWithUsageError does with `status`'s message, unless `status`
// is OK: a binary's options Validate (base/option_checks.h) feeds it.
void ExitIfUsageError(const absl::Status& status);

// `value`'s value, or exits as ExitIfUsageError does: for the parts of a
// binary's options another layer reads from its own flags
// (rdma::FabricOptionsFromFlags, index::CpuPathSwitchesFromFlags).
template <typename T>
T ValueOrExitIfUsageError(absl::StatusOr<T> value) {
  ExitIfUsageError(value.status());
  return *std::move(value);
}

// The flags set on the command line or in a --flagfile, by name: what a
// binary's options check a flag that has no effect against (a flag left
// at its default is not a mistake).
std::set<std::string> FlagsGiven();

}  // namespace strand

#endif  // STRAND_BASE_COMMAND_LINE_H_
