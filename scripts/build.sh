#!/usr/bin/env bash
# Configures and builds strand. Usage: scripts/build.sh [BUILD_DIR] [cmake args]
#   scripts/build.sh                                   # build/ (Release)
#   scripts/build.sh build-asan -DSTRAND_SANITIZE=address
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
scripts/setup.sh
# CI builds from scratch: compiling in batches saves it a fifth.
unity=()
if [ "${CI:-}" = true ]; then unity=(-DSTRAND_UNITY_BUILD=ON); fi
cmake -S . -B "$dir" -G Ninja "${unity[@]}" "$@" >/dev/null
cmake --build "$dir"
