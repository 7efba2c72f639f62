#!/usr/bin/env bash
# Sets up, builds and runs strand's main job. Extra flags go to the binary.
# Today the main job is fabric_bench (TPC-C does not exist yet): the cost of
# every fabric operation on the embedded loopback fabric, free and with a
# modelled 2 us round trip.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build
build/bench/fabric_bench --threads=1,2 "$@"
build/bench/fabric_bench --threads=1 --ops=read,cas+read,write+faa \
  --rtt_ns=2000 "$@"
