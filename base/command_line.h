#ifndef STRAND_BASE_COMMAND_LINE_H_
#define STRAND_BASE_COMMAND_LINE_H_

// Command-line handling shared by strand binaries. gflags alone exits with
// status 1 on an unknown flag or a malformed value; strand promises status 2
// for every command-line misuse, with a message that names the flag.

#include <string>

namespace strand {

// Parses gflags (--help and friends work as usual). On an unknown flag, a
// value that does not parse, or a stray positional argument: prints
// "<program>: <what is wrong>" and "try --help", and exits with status 2.
void ParseCommandLineOrExit(int* argc, char*** argv, const std::string& usage);

// Prints "<program>: <message>" and exits with status 2. For flag values
// that parse but make no sense (checked by the binary after parsing).
[[noreturn]] void ExitWithUsageError(const std::string& message);

}  // namespace strand

#endif  // STRAND_BASE_COMMAND_LINE_H_
