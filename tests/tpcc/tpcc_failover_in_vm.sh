#!/usr/bin/env bash
# Failover across processes (docs/design/node_failure.md): TPC-C in shared
# mode with --failover, 1 memory node and 3 compute processes started by
# scripts/launch.sh on one RDMA address (CI runs it in the Soft-RoCE VM).
# Compute node 2's process is killed (SIGKILL) while all measure; the
# other two must reclaim it and finish their run: the launcher exits 0
# naming the lost process, a survivor reclaimed node 2, node 0's report has
# no errors, each survivor committed after node 2 was declared failed, and
# the consistency check over the whole database passed. Without the log,
# the launcher restarts the killed process (--restart_after_s): it rejoins
# (tpcc --rejoin), commits, exits 0, and node 0 counts its figures. With
# the WAL on (pipelined, tpcc's default; a rejoin cannot log yet) node 2
# stays out and node 0 counts one failed process. Last, node 2's process
# is paused (SIGSTOP) past its lease and resumed: it must find itself
# fenced and stop with status 3, and the same checks hold.
# Usage: tests/tpcc/tpcc_failover_in_vm.sh BUILD_DIR [ADDRESS]
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:?usage: tpcc_failover_in_vm.sh BUILD_DIR [ADDRESS]}" && pwd)"
addr="${2:-${RDMA_VM_IP:-}}"
[ -n "$addr" ] || { echo "tpcc_failover_in_vm.sh: no RDMA address" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/tests/tpcc/vm_cluster_lib.sh"
write_cluster "$work/cluster.txt" "$addr" 3
# A scaled-down load, one warehouse per node; a lease long enough that the
# emulated guest's stalls do not expire a live node's.
small=(--warehouses=3 --items=2000 --customers=60 --threads=1 --cc=2pl
       --protocol=selcc --warmup_s=0.5 --failover --node_lease_ms=1000)
failed=0

# one_round NAME HOW RESTART_AFTER_S FLAGS...: node 2's failure and its
# checks. HOW: kill (SIGKILL), or pause (SIGSTOP for 4 leases, then SIGCONT:
# it must find itself fenced and stop with status 3 on its own). Node 2 is
# restarted RESTART_AFTER_S seconds after it is lost (0: never).
one_round() {
  local name="$1" how="$2" restart="$3"
  shift 3
  echo "=== [tpcc failover] $name (at $SECONDS s)"
  local results="$work/$name"
  local failure=(kill_mid_run)
  [ "$how" = pause ] && failure=(pause_mid_run 4)
  "${failure[@]}" "$results" 3 \
    "tpcc --fabric=verbs --cluster=$work/cluster.txt --node_id=2 " \
    --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
    --timeout_s=600 --grace_s=60 --restart_after_s="$restart" -- \
    "${small[@]}" --peer_timeout_s=30 --json "$@"
  cat "$results/launch.txt"
  check "$name: launcher exit status 0" [ "$launch_status" = 0 ]
  if [ "$how" = pause ]; then
    grep -h "cannot take part any more" "$results/compute-2.err"
    check "$name: node 2 saw its lease had run out" \
      grep -q "lease ran out" "$results/compute-2.err"
    check "$name: the resumed node 2 stopped itself, fenced (status 3)" \
      grep -q "LOST: compute node 2 ($addr:7102) stopped: it was declared failed and fenced (status 3)" \
      "$results/launch.txt"
  else
    check "$name: the launcher names the lost process" \
      grep -q "LOST: compute node 2 ($addr:7102) was killed" "$results/launch.txt"
  fi
  grep -h "compute node 2 reclaimed by node\|compute node 2's lease" \
    "$results/compute-0.err" "$results/compute-1.err"
  check "$name: a survivor reclaimed compute node 2" \
    grep -qh "compute node 2 reclaimed by node" "$results/compute-0.err" \
    "$results/compute-1.err"
  local json
  json="$(grep '^{' "$results/compute-0.out" | tail -1)"
  report() {
    python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' \
      "$json" "$1" 2>/dev/null
  }
  if [ "$restart" = 0 ]; then
    check "$name: node 0 counts one failed process" \
      [ "$(report failed_processes)" = 1 ]
  else
    check "$name: the launcher restarted node 2" \
      grep -q "RESTARTED: compute node 2 rejoins" "$results/launch.txt"
    check "$name: the restarted node 2 exited 0" \
      grep -q "compute node 2 ($addr:7102), restarted: exit status 0" \
      "$results/launch.txt"
    grep -h "rejoined the running deployment" "$results"/compute-2.rejoin.*
    check "$name: node 2 rejoined the running deployment" \
      grep -qh "rejoined the running deployment" "$results"/compute-2.rejoin.*
    echo "node 2's own report: $(grep '^{' "$results/compute-2.rejoin.out" |
      tail -1 | python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(r["commits"], "commits,", r["errors"], "errors")' 2>&1)"
    check "$name: node 0 counts node 2's commits after its rejoin" \
      python3 -c '
import json, sys
rates = json.loads(sys.argv[1])["txn_per_sec_by_node"]
sys.exit(0 if len(rates) > 2 and rates[2] > 0 else 1)' "$json"
  fi
  check "$name: consistency ok" [ "$(report consistency_ok)" = True ]
  check "$name: no errors" [ "$(report errors)" = 0 ]
  echo "txn/s by node: $(report txn_per_sec_by_node)"
  check "$name: both survivors committed" python3 -c '
import json, sys
rates = json.loads(sys.argv[1])["txn_per_sec_by_node"]
sys.exit(0 if rates[0] > 0 and rates[1] > 0 else 1)' "$json"
  # Each survivor's own report: what it committed after the failure.
  local node after
  for node in 0 1; do
    grep -h "failover: compute node 2 was declared failed" \
      "$results/compute-$node.err"
    after="$(sed -n 's/.*compute node '$node' committed \([0-9]*\) transactions after.*/\1/p' \
      "$results/compute-$node.err" | head -1)"
    check "$name: survivor $node committed after the failure" \
      [ "${after:-0}" -gt 0 ]
  done
  if [ $failed != 0 ]; then
    show_tails "$results" 30 compute-0.err compute-1.err compute-2.err \
      compute-2.rejoin.err compute-2.rejoin.out memory-0.out
  fi
}

# 20-s runs: the guest takes seconds to tear the killed process down (its
# registered memory) and the restarted one seconds to connect and join;
# with the log, the reclaim's relog waited up to 7 s for node 0's log
# (fdatasync on the guest's tmpfs, its vCPUs busy with retrying workers).
one_round nolog_restart kill 1 --wal=off --duration_s=20
one_round wal kill 0 --wal=on --wal_dir="$work/wal" --duration_s=20
# Paused past its lease: on resuming, its operations fail (fenced) and it
# must stop by itself, not write on or hang: at its board's next beat,
# which sees its lease ran out (or, later, when an operation fails).
one_round nolog_pause pause 0 --wal=off --duration_s=20

[ $failed = 0 ] && echo "tpcc failover: PASS" || echo "tpcc failover: FAIL"
exit $failed
