#!/usr/bin/env bash
# The multi-process verbs run: strand_memnode and two compute processes
# (verbs_cluster_check) on one RDMA address, checked for exact results.
# Usage: tests/rdma/verbs_multiprocess.sh BUILD_DIR [ADDRESS]
# ADDRESS defaults to $RDMA_VM_IP (set inside shared/rdma-vm's VM).
set -uo pipefail
build="${1:?usage: verbs_multiprocess.sh BUILD_DIR [ADDRESS]}"
addr="${2:-${RDMA_VM_IP:-}}"
if [ -z "$addr" ]; then
  echo "verbs_multiprocess.sh: give an address on an RDMA device" >&2
  exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/cluster.txt" <<CLUSTER
memory   0  $addr  7000
compute  0  $addr  7100
compute  1  $addr  7101
CLUSTER

# Compute processes first: they must wait for the memory node and for each
# other at the start-up barrier.
for id in 0 1; do
  "$build/tests/rdma/verbs_cluster_check" --fabric=verbs \
    --cluster="$work/cluster.txt" --node_id=$id >"$work/compute$id.log" 2>&1 &
  eval "pid$id=\$!"
done
sleep 0.5
"$build/rdma/strand_memnode" --cluster="$work/cluster.txt" --node_id=0 \
  --pool_mb=64 >"$work/memnode.log" 2>&1 &
memnode=$!

status=0
wait "$pid0" || status=1
wait "$pid1" || status=1
kill -TERM "$memnode"
wait "$memnode" || { echo "strand_memnode did not exit cleanly"; status=1; }
for log in memnode compute0 compute1; do
  echo "--- $log"
  cat "$work/$log.log"
done
if [ $status -eq 0 ]; then
  echo "multi-process verbs run: PASS"
else
  echo "multi-process verbs run: FAIL"
fi
exit $status
