# Gives each strand library the usage requirements an embedder needs and the
# name it is known by, in this build (add_subdirectory) and once installed
# (find_package): strand_<layer> is strand::<layer>, and strand::strand is
# everything up to engine/ (the embedding API).
#
# An application includes "strand/...": include/strand/ here, installed
# as <prefix>/include/strand/ (cmake/InstallHeaders.cmake). Inside strand
# every header is included as "layer/file.h", from the source root.

include(GNUInstallDirs)

set(STRAND_LIBRARIES base command_line rdma rdma_flags cc storage index wal txn
    partition engine)

foreach(layer IN LISTS STRAND_LIBRARIES)
  set(target strand_${layer})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # The headers are C++20: so must be every program that includes them.
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer})
  add_library(strand::${layer} ALIAS ${target})
endforeach()

add_library(strand_strand INTERFACE)
target_link_libraries(strand_strand INTERFACE strand_engine)
set_target_properties(strand_strand PROPERTIES EXPORT_NAME strand)
add_library(strand::strand ALIAS strand_strand)

# The memory-node server a verbs deployment runs (docs/embedding.md).
set_target_properties(strand_memnode PROPERTIES EXPORT_NAME memnode)
add_executable(strand::memnode ALIAS strand_memnode)
