# cmake --install: the libraries, their headers, strand_memnode and a CMake
# package, so that another project can
#
#   find_package(strand REQUIRED)
#   target_link_libraries(app PRIVATE strand::strand)
#
# (examples/embed/ does exactly that). `cpack -G DEB` packs the same files
# as a Debian package.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(STRAND_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/strand)

list(TRANSFORM STRAND_LIBRARIES PREPEND strand_ OUTPUT_VARIABLE strand_targets)
install(TARGETS ${strand_targets} strand_strand strand_memnode
  EXPORT strandTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers: the public API as include/strand/*.h, and what it includes of
# the layers under include/strand/internal/, every strand include
# rewritten to that path (cmake/InstallHeaders.cmake says why).
install(CODE "
  set(SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
  set(INCLUDE_DIR \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_INCLUDEDIR}\")
  set(LAYERS \"base;rdma;cc;storage;index;wal;txn;partition;engine\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/InstallHeaders.cmake\")
")

install(EXPORT strandTargets NAMESPACE strand::
        DESTINATION ${STRAND_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/strandConfig.cmake.in
  ${PROJECT_BINARY_DIR}/strandConfig.cmake
  INSTALL_DESTINATION ${STRAND_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/strandConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/strandConfig.cmake
              ${PROJECT_BINARY_DIR}/strandConfigVersion.cmake
        DESTINATION ${STRAND_CMAKE_DIR})

# A Debian package of the above (cpack -G DEB in the build directory).
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_PACKAGE_NAME libstrand-dev)
  set(CPACK_PACKAGE_VENDOR strand)
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "strand: an OLTP engine over \
disaggregated memory (static libraries, headers, CMake package, \
strand_memnode)")
  set(CPACK_PACKAGE_CONTACT "strand developers")
  set(CPACK_GENERATOR DEB)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  # What strandConfig.cmake finds (scripts/setup.sh installs the same).
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libabsl-dev, libgflags-dev, libgoogle-glog-dev, liburing-dev, libibverbs-dev, librdmacm-dev, pkg-config")
  include(CPack)
endif()
