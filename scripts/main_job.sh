#!/usr/bin/env bash
# Sets up, builds and runs strand's main job: TPC-C on the embedded default
# deployment (loopback fabric, 2 warehouses, 2 compute nodes), about 10 s of
# the standard mix, then the report and the consistency check of clause
# 3.3.2 (exit status 1 if any condition fails). Extra flags go to tpcc.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh build
build/tpcc/tpcc --warehouses=2 --compute_nodes=2 --threads=1 \
  --duration_s=10 --warmup_s=1 "$@"
