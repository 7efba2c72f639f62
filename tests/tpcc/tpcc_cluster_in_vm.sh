#!/usr/bin/env bash
# TPC-C as a verbs deployment of separate processes, started by
# scripts/launch.sh from a cluster file: 1 memory node and 2 compute
# processes on one RDMA address (CI runs it in the Soft-RoCE VM).
#  1. a Delivery-heavy run: the combined report (node 0's JSON) shows 2
#     compute nodes, both committed transactions, and the consistency
#     check passed; node 0 handed deleted rows' slots back for reuse
#     (epochs shared through the pool);
#  2. the same in partitioned mode (2PC across processes);
#  3. a compute process killed mid-run: the other names it, and the
#     launcher exits non-zero within the bounded wait;
#  4. with the WAL on and a checkpoint every second, both compute
#     processes killed mid-run; the same launch again resumes in place
#     (node 0's process recovers from the checkpoint and both logs, both
#     processes append to the same directory) and is killed too; then
#     strand_recover rebuilds a database that keeps conditions 1-12 and
#     every New-Order either process acknowledged in either run (tpcc
#     --check_image);
#  5. the memory node killed mid-run: the launcher names it, and every
#     process is gone within the bounded wait;
#  6. partitioned with the WAL on, one compute process killed, recovered
#     and checked (tpcc_node_crash_in_vm.sh, 2 rounds: each node once);
#  7. with --failover, 3 compute processes, one killed: the other two
#     reclaim it and finish (tpcc_failover_in_vm.sh).
# Usage: tests/tpcc/tpcc_cluster_in_vm.sh BUILD_DIR [ADDRESS]
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:?usage: tpcc_cluster_in_vm.sh BUILD_DIR [ADDRESS]}" && pwd)"
addr="${2:-${RDMA_VM_IP:-}}"
[ -n "$addr" ] || { echo "tpcc_cluster_in_vm.sh: no RDMA address" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/tests/tpcc/vm_cluster_lib.sh"
write_cluster "$work/cluster.txt" "$addr"
# Small enough for the emulated VM: 2 warehouses of a scaled-down load.
small=(--warehouses=2 --items=2000 --customers=60 --threads=1 --cc=2pl
       --protocol=selcc --warmup_s=0.5)
failed=0
stage() {  # stage TITLE: a heading with the time taken so far
  echo "=== [tpcc cluster] $1 (at $SECONDS s)"
}

# The runs whose checks count something (slots handed back, distributed
# transactions) run a number of transactions, not seconds: a timed run
# that stalls measures next to nothing (a 3 s partitioned run committed 6
# transactions, and CI saw one with none distributed; the emulated VM is
# slow under host load, and partitioned mode then had a deadlock between
# handler threads, since fixed: docs/design/partitioned.md).
# 40% Delivery, so that each process seals several batches of deleted
# NEW-ORDER slots; a batch goes back only once the other process's bound in
# the pool passed it (docs/design/slot_reuse.md, "Across processes").
stage "launcher: 1 memory node + 2 compute processes; deleted rows' slots reused across processes"
start=$SECONDS
"$here/scripts/launch.sh" --cluster="$work/cluster.txt" --bin="$build" \
  --pool_mb=1024 --results="$work/run" --timeout_s=600 -- \
  "${small[@]}" --customers=150 --mix=30,30,0,40,0 --txns=1200 \
  --peer_timeout_s=30 --json
status=$?
echo "(launch took $((SECONDS - start)) s)"
check "launcher exit status 0" [ $status = 0 ]
if [ $status != 0 ]; then  # what each process said, to say why
  show_tails "$work/run" 30 launch.txt memory-0.out compute-0.err compute-1.err
fi
json="$(grep '^{' "$work/run/compute-0.out" | tail -1)"
check "node 0 printed the combined JSON report" [ -n "$json" ]
report() {  # report FIELD: the field of node 0's JSON report
  python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' \
    "$json" "$1" 2>/dev/null
}
check "the report covers the deployment" [ "$(report scope)" = deployment ]
check "2 compute nodes" [ "$(report compute_nodes)" = 2 ]
check "2 compute processes" [ "$(report processes)" = 2 ]
check "consistency ok" [ "$(report consistency_ok)" = True ]
check "no errors" [ "$(report errors)" = 0 ]
by_node="$(report txn_per_sec_by_node)"
echo "txn/s by node: $by_node"
check "both nodes committed" python3 -c '
import ast, sys
rates = ast.literal_eval(sys.argv[1])
sys.exit(0 if len(rates) == 2 and min(rates) > 0 else 1)' "$by_node"
check "node 1 printed its own figures" \
  grep -q "compute node 1 (2 compute processes" "$work/run/compute-1.err"
check "reuse: the epochs met in the pool" [ "$(report epochs)" = pool ]
grep -h "handed back" "$work/run/compute-0.err"
check "reuse: compute node 0 handed deleted slots back" \
  grep -Eq "handed back for reuse: [1-9][0-9]* by this process" \
  "$work/run/compute-0.err"

stage "partitioned mode with 2PC, 10% distributed"
"$here/scripts/launch.sh" --cluster="$work/cluster.txt" --bin="$build" \
  --pool_mb=1024 --results="$work/partitioned" --timeout_s=600 -- \
  "${small[@]}" --txns=400 --peer_timeout_s=30 --mode=partitioned \
  --distributed_pct=10 --json >/dev/null
status=$?
check "partitioned: launcher exit status 0" [ $status = 0 ]
if [ $status != 0 ]; then  # what each process said, to say why
  show_tails "$work/partitioned" 30 launch.txt memory-0.out compute-0.err \
    compute-1.err
fi
json="$(grep '^{' "$work/partitioned/compute-0.out" | tail -1)"
check "partitioned: the report says so" [ "$(report mode)" = partitioned ]
check "partitioned: 2 compute nodes" [ "$(report compute_nodes)" = 2 ]
check "partitioned: consistency ok" [ "$(report consistency_ok)" = True ]
echo "distributed share: $(report distributed_share)"
check "partitioned: some transactions were distributed" python3 -c '
import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' \
  "$(report distributed_share)"

stage "a compute process killed mid-run"
kill_mid_run "$work/kill" 2 \
  "tpcc --fabric=verbs --cluster=$work/cluster.txt --node_id=1" \
  --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
  --timeout_s=600 --grace_s=60 -- \
  "${small[@]}" --duration_s=120 --peer_timeout_s=5
status=$launch_status
cat "$work/kill/launch.txt"
show_tails "$work/kill" 5 compute-0.err
check "launcher exit status non-zero" [ $status != 0 ]
check "launcher named compute node 1" \
  grep -q "compute node 1 ($addr:7101) exited with status" "$work/kill/launch.txt"
check "compute node 0 named compute node 1" \
  grep -q "compute node 1 ($addr:7101)" "$work/kill/compute-0.err"
check "compute node 0 exited non-zero on its own" \
  grep -q "compute node 0 ($addr:7100): exit status 1" "$work/kill/launch.txt"
check "within the bounded wait (< 60 s)" [ $waited -lt 60 ]

stage "WAL on, pipelined (tpcc's default), checkpoints: both compute processes killed, resumed, killed again, then recovery"
wal_run=("${small[@]}" --duration_s=120 --peer_timeout_s=30 --wal=on
         --wal_dir="$work/wal" --acked_log="$work/acked"
         --checkpoint_interval_s=1)
kill_mid_run "$work/wal-run" 4 \
  "tpcc --fabric=verbs --cluster=$work/cluster.txt" \
  --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
  --timeout_s=600 --grace_s=60 -- "${wal_run[@]}"
echo "--- compute node 0 (wal lines)"
grep -hE "^wal:" "$work"/wal-run/compute-0.*
check "wal: node 0 checkpointed the load" \
  grep -q "checkpoint 1 (initial)" "$work"/wal-run/compute-0.*
ls -d "$work"/wal/checkpoint-*
check "wal: node 0 checkpointed while both processes ran" \
  eval 'ls -d "$work"/wal/checkpoint-* | grep -qv checkpoint-00000001'
check "wal: commits pipelined (early lock release, watermark acks)" \
  grep -q "early_lock_release on, pipeline 1024" "$work"/wal-run/compute-0.*
check "wal: both processes logged" \
  [ -d "$work/wal/node-0" -a -d "$work/wal/node-1" ]
check "wal: both processes acknowledged New-Orders" \
  [ -s "$work/acked.node-0" -a -s "$work/acked.node-1" ]
acked_first=$(cat "$work"/acked.node-* | wc -c)
# Fresh memory nodes, the same command: it carries on from the directory.
kill_mid_run "$work/wal-resume" 3 \
  "tpcc --fabric=verbs --cluster=$work/cluster.txt" \
  --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
  --timeout_s=600 --grace_s=60 -- "${wal_run[@]}"
echo "--- resumed run (wal lines)"
grep -hE "^wal:" "$work"/wal-resume/compute-0.* "$work"/wal-resume/compute-1.*
check "wal: node 0's process recovered from a checkpoint and both logs" \
  grep -q "recovery: checkpoint" "$work"/wal-resume/compute-0.*
check "wal: node 0's process checkpointed the recovered pool" \
  grep -q "(resume)" "$work"/wal-resume/compute-0.*
check "wal: node 1's process carried on after it" \
  grep -q "compute node 0's process recovered the pool" \
  "$work"/wal-resume/compute-1.*
check "wal: the resumed run acknowledged more New-Orders" \
  [ "$(cat "$work"/acked.node-* | wc -c)" -gt "$acked_first" ]
"$build/tools/strand_recover" \
  --wal_dir="$work/wal" --out_image="$work/recovered.img" 2>&1 | tail -5
check "wal: strand_recover merged both logs" [ -f "$work/recovered.img" ]
# The check takes only the database's shape (tpcc refuses run flags).
verdict="$("$build/tpcc/tpcc" --warehouses=2 --items=2000 --customers=60 \
  --check_image="$work/recovered.img" --acked_log="$work/acked" --json 2>&1)"
status=$?
echo "$verdict"
check "wal: recovered database consistent, no acknowledged order lost" \
  [ $status = 0 ]
check "wal: acknowledged orders were checked" python3 -c '
import json, sys
line = [l for l in sys.argv[1].splitlines() if l.startswith("{")][-1]
sys.exit(0 if json.loads(line)["acked_checked"] > 0 else 1)' "$verdict"

stage "the memory node killed mid-run"
kill_mid_run "$work/memkill" 2 "strand_memnode --cluster=$work/cluster.txt" \
  --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
  --timeout_s=600 --grace_s=20 -- \
  "${small[@]}" --duration_s=120 --peer_timeout_s=30
status=$launch_status
cat "$work/memkill/launch.txt"
show_tails "$work/memkill" 4 compute-0.err compute-1.err
check "memory node killed: launcher exit status non-zero" [ $status != 0 ]
check "memory node killed: launcher named it" \
  grep -q "memory node 0 ($addr:7000) died during the run" \
  "$work/memkill/launch.txt"
compute_left() {  # [t]: the pattern must not match pgrep's own caller
  pgrep -f -- "[t]pcc --fabric=verbs --cluster=$work/cluster.txt" >/dev/null
}
check "memory node killed: no compute process left" eval '! compute_left'
for n in 0 1; do
  check "memory node killed: compute node $n named it" \
    grep -q "memory node 0 ($addr:7000)" "$work/memkill/compute-$n.err"
done
check "memory node killed: within the bounded wait (< 60 s)" [ $waited -lt 60 ]

stage "partitioned, WAL on: one compute process killed (each once)"
"$here/tests/tpcc/tpcc_node_crash_in_vm.sh" "$build" 2 "$addr" || failed=1

stage "failover across processes: 3 compute processes, one killed, the others finish"
"$here/tests/tpcc/tpcc_failover_in_vm.sh" "$build" "$addr" || failed=1

[ $failed = 0 ] && echo "tpcc cluster: PASS" || echo "tpcc cluster: FAIL"
exit $failed
