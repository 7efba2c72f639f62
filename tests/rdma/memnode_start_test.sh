#!/usr/bin/env bash
# strand_memnode given a valid cluster file and node id is past its usage
# checks: it serves (where an RDMA device exists: then it is stopped with
# SIGTERM and must exit 0) or fails at the device (exit 1, naming it),
# never exit 2. The VM runs it for real (tests/rdma/verbs_in_vm.sh); this
# catches a usage check that refuses every valid command line.
# Usage: memnode_start_test.sh BUILD_DIR
set -euo pipefail
memnode="$1/rdma/strand_memnode"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'memory 0 127.0.0.1 7211\ncompute 0 127.0.0.1 7311\n' >"$work/cluster"
"$memnode" --cluster="$work/cluster" --node_id=0 --pool_mb=64 \
  >"$work/out" 2>&1 &
pid=$!
for _ in $(seq 50); do
  kill -0 "$pid" 2>/dev/null || break
  grep -q "serving" "$work/out" && break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
fi
rc=0
wait "$pid" || rc=$?
if grep -q "serving" "$work/out"; then
  [ "$rc" -eq 0 ] || { echo "FAIL: served, then exit $rc"; exit 1; }
elif [ "$rc" -ne 1 ] || ! grep -q "RDMA device" "$work/out"; then
  echo "FAIL: exit $rc, want 1 naming the missing RDMA device:"
  cat "$work/out"
  exit 1
fi
echo "ok: $(head -1 "$work/out")"
