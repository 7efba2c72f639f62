#!/usr/bin/env bash
# A stored procedure across compute processes over verbs: strand_memnode and
# two `bank` processes (examples/bank.cc), one compute node each. Node 0
# creates and loads the accounts; both run transfers and check, while the
# other keeps writing, that the total balance is exact.
# Usage: tests/engine/bank_multiprocess.sh BUILD_DIR [ADDRESS]
set -uo pipefail
build="${1:?usage: bank_multiprocess.sh BUILD_DIR [ADDRESS]}"
addr="${2:-${RDMA_VM_IP:-}}"
[ -n "$addr" ] || { echo "bank_multiprocess.sh: no RDMA address" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/cluster.txt" <<CLUSTER
memory   0  $addr  7400
compute  0  $addr  7500
compute  1  $addr  7501
CLUSTER

for id in 0 1; do
  "$build/examples/bank" --fabric=verbs --cluster="$work/cluster.txt" \
    --node_id=$id --accounts=64 --threads=1 --duration_s=3 --cc=2pl \
    >"$work/bank$id.log" 2>&1 &
  eval "pid$id=\$!"
done
"$build/rdma/strand_memnode" --cluster="$work/cluster.txt" --node_id=0 \
  --pool_mb=64 >"$work/memnode.log" 2>&1 &
memnode=$!

status=0
wait "$pid0" || status=1
wait "$pid1" || status=1
kill -TERM "$memnode"
wait "$memnode" || { echo "strand_memnode did not exit cleanly"; status=1; }
for log in memnode bank0 bank1; do
  echo "--- $log"
  cat "$work/$log.log"
done
if [ $status -eq 0 ]; then
  echo "bank across two compute processes over verbs: PASS"
else
  echo "bank across two compute processes over verbs: FAIL"
fi
exit $status
