#!/usr/bin/env bash
# Configures and builds strand. Usage: scripts/build.sh [BUILD_DIR] [cmake args]
#   scripts/build.sh                                   # build/ (Release)
#   scripts/build.sh build-asan -DSTRAND_SANITIZE=address
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
scripts/setup.sh
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
cmake --build "$dir"
