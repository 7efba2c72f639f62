#ifndef STRAND_BASE_BUILD_INFO_H_
#define STRAND_BASE_BUILD_INFO_H_

// What a strand binary was built from, for --version and for reports that
// must say how a figure was made: the version (CMake's project version) and
// the git commit of the source tree when it was built, "-dirty" appended if
// the tree had uncommitted changes, "unknown" outside a git checkout.
// Generated on every build (cmake/BuildInfo.cmake) into the
// strand_command_line library, which only the binaries link, so a new
// commit relinks the binaries and not every test.

#include <string_view>

namespace strand {

std::string_view StrandVersion();  // "0.1.0"
std::string_view StrandCommit();   // "b7fa1bc0d1e2", "b7fa1bc0d1e2-dirty"

}  // namespace strand

#endif  // STRAND_BASE_BUILD_INFO_H_
