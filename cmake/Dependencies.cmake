# Finds every dependency of strand. A missing one stops configure with the
# Debian package that provides it (scripts/setup.sh installs all of them).
# strandConfig.cmake.in finds the same ones for an installed strand.

find_package(PkgConfig QUIET)
if(NOT PkgConfig_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()

macro(strand_require_package name debian_package)
  find_package(${name} CONFIG QUIET ${ARGN})
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR
      "${name} not found: apt-get install ${debian_package} "
      "(or run scripts/setup.sh)")
  endif()
endmacro()

macro(strand_require_pkgconfig target module debian_package)
  pkg_check_modules(${target} QUIET IMPORTED_TARGET ${module})
  if(NOT ${target}_FOUND)
    message(FATAL_ERROR
      "${module} not found: apt-get install ${debian_package} "
      "(or run scripts/setup.sh)")
  endif()
endmacro()

find_package(Threads REQUIRED)
strand_require_package(absl libabsl-dev)
strand_require_package(gflags libgflags-dev)
strand_require_package(glog libgoogle-glog-dev)
if(STRAND_BUILD_TESTS)  # only the tests need GoogleTest
  strand_require_package(GTest "libgtest-dev libgmock-dev")
  if(NOT TARGET GTest::gmock)
    message(FATAL_ERROR "GoogleMock not found: apt-get install libgmock-dev")
  endif()
endif()
strand_require_pkgconfig(URING liburing liburing-dev)
strand_require_pkgconfig(IBVERBS libibverbs libibverbs-dev)
strand_require_pkgconfig(RDMACM librdmacm librdmacm-dev)
