#!/usr/bin/env bash
# Everything that runs on the verbs backend, for a machine with an RDMA
# device (CI runs it in shared/rdma-vm's Soft-RoCE VM, see .ci/run):
#  1. the fabric suites of tests/rdma on an in-process verbs deployment
#     (STRAND_TEST_FABRIC=verbs), unchanged, fencing, and tests/txn's
#     epochs through the pool;
#  2. the multi-process run (verbs_multiprocess.sh);
#  3. fabric_bench --fabric=verbs against a strand_memnode process.
# Usage: tests/rdma/verbs_in_vm.sh BUILD_DIR [ADDRESS]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:?usage: verbs_in_vm.sh BUILD_DIR [ADDRESS]}" && pwd)"
addr="${2:-${RDMA_VM_IP:-}}"
[ -n "$addr" ] || { echo "verbs_in_vm.sh: no RDMA address" >&2; exit 2; }
failed=0

echo "=== [verbs] fabric suites on an in-process verbs deployment ($addr)"
export STRAND_TEST_FABRIC=verbs STRAND_TEST_RDMA_ADDRESS="$addr"
for suite in fabric_ops_test messages_test block_allocator_test \
             fabric_options_test cluster_config_test verbs_fabric_test \
             fence_test verbs_fence_test; do
  start=$(date +%s%N)
  if out="$(timeout 300 "$build/tests/rdma/$suite" 2>&1)"; then
    elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf '%-22s %s (%d ms)\n' "$suite" \
      "$(grep -E '^\[  PASSED  \]' <<<"$out")" "$elapsed_ms"
  else
    echo "$out" | tail -40
    echo "$suite FAILED"
    failed=1
  fi
done

# Deleted slots' epochs through the pool words (txn/pool_epochs.h) over
# the device's atomics: three compute nodes' managers driven by hand.
# (TPC-C across processes reuses slots too: tpcc_cluster_in_vm.sh.)
echo "=== [verbs] epochs through the pool ($addr)"
start=$(date +%s%N)
if out="$(timeout 300 "$build/tests/txn/epoch_manager_test" 2>&1)"; then
  printf '%-22s %s (%d ms)\n' epoch_manager_test \
    "$(grep -E '^\[  PASSED  \]' <<<"$out")" \
    $(( ($(date +%s%N) - start) / 1000000 ))
else
  echo "$out" | tail -40
  echo "epoch_manager_test FAILED"
  failed=1
fi

# tests/engine/node_failure_test.cc also runs here
# (STRAND_TEST_FABRIC=verbs) and passed by hand, but not in every CI run:
# the guest's rxe now and then stalls an atomic for the endpoint's whole
# 10-s completion timeout, past the test's reclaim bound (see
# docs/design/node_failure.md, "Status"). Not run by CI until that is
# dealt with.
unset STRAND_TEST_FABRIC STRAND_TEST_RDMA_ADDRESS

# The guest kernel (Debian 12's 6.1) refuses O_DIRECT on tmpfs, which the
# host's may not: the log's buffered fallback runs for real only here.
echo "=== [wal] O_DIRECT fallback on the guest's tmpfs"
if out="$(timeout 120 "$build/tests/wal/log_writer_test" \
    --gtest_filter='*DirectModeFallsBack*' 2>&1)"; then
  grep -E '^\[  PASSED  \]|O_DIRECT not supported' <<<"$out"
else
  echo "$out" | tail -20
  echo "log_writer_test FAILED"
  failed=1
fi

echo "=== [verbs] multi-process: strand_memnode + 2 compute processes"
"$here/verbs_multiprocess.sh" "$build" "$addr" || failed=1

echo "=== [verbs] fabric_bench --fabric=verbs (1 thread, round-trip cost)"
work="$(mktemp -d)"
printf 'memory 0 %s 7200\ncompute 0 %s 7300\n' "$addr" "$addr" \
  >"$work/cluster.txt"
"$build/rdma/strand_memnode" --cluster="$work/cluster.txt" --node_id=0 \
  --pool_mb=64 >"$work/memnode.log" 2>&1 &
memnode=$!
timeout 120 "$build/bench/fabric_bench" --fabric=verbs \
  --cluster="$work/cluster.txt" --node_id=0 --threads=1 --duration_s=0.5 ||
  failed=1
kill -TERM "$memnode"
wait "$memnode" || { cat "$work/memnode.log"; failed=1; }
rm -rf "$work"

echo "=== [verbs] a stored procedure across two compute processes (examples/bank)"
"$here/../engine/bank_multiprocess.sh" "$build" "$addr" || failed=1

if [ $failed -eq 0 ]; then echo "=== [verbs] all passed"; else echo "=== [verbs] FAILED"; fi
exit $failed
