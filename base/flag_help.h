#ifndef STRAND_BASE_FLAG_HELP_H_
#define STRAND_BASE_FLAG_HELP_H_

// The --help text of a strand binary. gflags' own --help lists every flag
// of the process grouped by source file, so a strand binary's came out as
// mostly glog's internals, its defaults printed with 17 digits
// (0.94999999999999996), and --helpshort left out the shared fabric flags
// (--compute_nodes, --rtt_ns, --pool_mb). This one prints, in order:
//
//   the usage message (gflags::SetUsageMessage)
//   "Flags of <program>:"   the flags defined in the program's own file
//   "<group>:"              the flags of every other strand source file,
//                           one group per file: the shared fabric flags
//                           (rdma/fabric_flags.cc) first, the output flags
//                           (--json, --csv; base/run_output.cc) among them
//   a line pointing at --helpfull for the libraries' flags (glog, gflags)
//
// each flag as "--name=default (type)" over its description, wrapped.

#include <gflags/gflags.h>

#include <string>

#include "absl/strings/string_view.h"

namespace strand {

// `program` is the binary's name, `program_file` the source file that
// defines its own flags, spelled as its __FILE__ (so as gflags records it).
std::string FlagHelp(absl::string_view program, absl::string_view program_file);

// A flag's default as one would write it on the command line: a double in
// the shortest form that reads back as the same value (0.95, 1e-06), a
// string in quotes, anything else as gflags prints it.
std::string FlagDefaultAsWritten(const gflags::CommandLineFlagInfo& flag);

}  // namespace strand

#endif  // STRAND_BASE_FLAG_HELP_H_
