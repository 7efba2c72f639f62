#ifndef STRAND_BASE_COMMAND_LINE_H_
#define STRAND_BASE_COMMAND_LINE_H_

// Command-line handling shared by strand binaries. gflags alone exits with
// status 1 on an unknown flag or a malformed value, ignores an unknown flag
// inside a --flagfile, and exits 1 after --help; strand promises status 2
// for every command-line misuse, with a message that names the flag, and
// status 0 for --help and --version.

#include <source_location>
#include <string>

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

}  // namespace strand

#endif  // STRAND_BASE_COMMAND_LINE_H_
