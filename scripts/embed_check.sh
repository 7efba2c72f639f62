#!/usr/bin/env bash
# Builds and runs examples/embed/, an application that is its own CMake
# project, the two ways an application gets strand:
#   1. find_package: installs BUILD_DIR (a built strand) to a fresh prefix,
#      checks that its include/ holds strand/ alone (public headers, and
#      the internal ones under strand/internal/) and that the example
#      includes "strand/..." only, and builds the example against it;
#   2. add_subdirectory: builds the example with this source tree inside
#      (strand's libraries only; GoogleTest hidden, since it must not be
#      needed).
# Every directory it uses is fresh and removed afterwards.
# Usage: scripts/embed_check.sh [BUILD_DIR]   (default build/, as
# scripts/build.sh makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
build="$(cd "${1:-build}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Runs a command, showing its output only if it fails.
quiet() {
  "$@" >"$work/log" 2>&1 || { cat "$work/log"; return 1; }
}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# CI compiles strand's sources in batches here too (scripts/build.sh).
unity=()
if [ "${CI:-}" = true ]; then unity=(-DSTRAND_UNITY_BUILD=ON); fi

echo "--- find_package: cmake --install $build, then examples/embed"
quiet cmake --install "$build" --prefix "$work/prefix"
# The install holds strand's headers under include/strand/ only, and none
# of them names a header by a path the application could also have.
top="$(ls "$work/prefix/include")"
if [ "$top" != "strand" ]; then
  echo "embed_check: include/ holds more than strand/: $top" >&2
  exit 1
fi
layers='base|rdma|cc|storage|index|wal|txn|partition|engine'
if grep -rEn "#include \"($layers)/" "$work/prefix/include"; then
  echo "embed_check: installed headers above include layer paths" >&2
  exit 1
fi
# The example includes strand's public headers only.
if grep -En '#include "' examples/embed/main.cc | grep -Ev '"(strand|absl)/'; then
  echo "embed_check: examples/embed includes the headers above;" \
    "an application includes \"strand/...\" only" >&2
  exit 1
fi
quiet cmake -S examples/embed -B "$work/installed" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}"
quiet cmake --build "$work/installed"
"$work/installed/embed_example"

echo "--- add_subdirectory: examples/embed with STRAND_SOURCE_DIR=$PWD"
quiet cmake -S examples/embed -B "$work/subdirectory" -G Ninja \
  -DSTRAND_SOURCE_DIR="$PWD" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  "${launcher[@]}" "${unity[@]}"
# Only the libraries, strand_memnode and the example: no tests or benches.
targets="$(ninja -C "$work/subdirectory" -t targets all | grep -c '_test:' || true)"
if [ "$targets" -ne 0 ]; then
  echo "embed_check: add_subdirectory pulled in $targets test targets" >&2
  exit 1
fi
quiet cmake --build "$work/subdirectory"
"$work/subdirectory/embed_example"
echo "--- embedding: PASS (find_package and add_subdirectory)"
