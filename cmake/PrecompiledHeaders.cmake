# Precompiled headers. The standard library, abseil and GoogleTest are
# nearly all a compiler reads for one of strand's files (a test file: 193k
# preprocessed lines, 4% of them strand's own; parsing alone was 11 of its
# 19 s), so each file parsed them again. Two precompiled headers, built
# once per build directory and reused by every target:
#   strand_pch       cmake/precompiled/strand.h       libraries, binaries
#   strand_test_pch  cmake/precompiled/strand_test.h  GoogleTest suites
# A target whose flags differ from the header's (GCC checks them) silently
# parses the headers itself, so reusing can never miscompile, only not help.
option(STRAND_PRECOMPILED_HEADERS
       "Reuse precompiled standard, abseil and GoogleTest headers" ON)

# strand_add_pch(<pch target> <header> <libraries...>): an object library
# whose only product is the precompiled <header>, compiled with the usage
# requirements of <libraries> so that the targets reusing it have the same.
function(strand_add_pch name header)
  if(NOT STRAND_PRECOMPILED_HEADERS)
    return()
  endif()
  add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/precompiled/empty.cc)
  target_link_libraries(${name} PRIVATE ${ARGN})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_precompile_headers(${name} PRIVATE ${PROJECT_SOURCE_DIR}/${header})
endfunction()

# strand_use_pch(<pch target> <targets...>)
function(strand_use_pch name)
  if(NOT STRAND_PRECOMPILED_HEADERS)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    target_precompile_headers(${target} REUSE_FROM ${name})
  endforeach()
endfunction()

# strand_use_pch_in_subdirectories(<pch target> [EXCEPT <directories...>]):
# every library and executable defined in the subdirectories of this
# directory that the build added, but those listed, reuses <pch target>.
function(strand_use_pch_in_subdirectories name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" EXCEPT)
  get_property(dirs DIRECTORY PROPERTY SUBDIRECTORIES)
  foreach(dir IN LISTS dirs)
    get_filename_component(leaf ${dir} NAME)
    if(leaf IN_LIST ARG_EXCEPT)
      continue()
    endif()
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "EXECUTABLE")
        strand_use_pch(${name} ${target})
      endif()
    endforeach()
  endforeach()
endfunction()
