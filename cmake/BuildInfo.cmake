# Run at build time (cmake -P), before strand_command_line compiles: writes
# OUTPUT from INPUT with the version and the git commit of SOURCE_DIR, so
# that --version names the commit a binary was built from. configure_file
# rewrites OUTPUT only when its text changes, so a build at the same commit
# recompiles and relinks nothing.
#
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DSTRAND_VERSION=... \
#         -P BuildInfo.cmake
execute_process(
  COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
  RESULT_VARIABLE rev_result
  OUTPUT_VARIABLE STRAND_COMMIT
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rev_result EQUAL 0)
  set(STRAND_COMMIT "unknown")  # not a git checkout (a source tarball)
else()
  # A measurement taken with uncommitted changes should say so.
  execute_process(
    COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD --
    RESULT_VARIABLE diff_result ERROR_QUIET)
  if(NOT diff_result EQUAL 0)
    string(APPEND STRAND_COMMIT "-dirty")
  endif()
endif()
configure_file("${INPUT}" "${OUTPUT}" @ONLY)
