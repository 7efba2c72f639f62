#!/usr/bin/env bash
# One compute process of a partitioned TPC-C run with the WAL on, killed
# with SIGKILL mid-run (1 memory node + 2 compute processes over verbs,
# started by scripts/launch.sh; CI runs it in the Soft-RoCE VM). Every
# transaction's coordinator is the node that runs it and half the
# New-Orders and Payments are distributed (--distributed_pct=50), so the
# killed node leaves 2PC branches in every state: prepared on the survivor
# with no decision yet, decided but not acknowledged, committed. The
# survivor names the dead node and stops; then strand_recover merges both
# logs (prepared branches without a commit decision are presumed aborted)
# and tpcc --check_image must find conditions 1-12 and every New-Order
# either process acknowledged. Rounds alternate the killed node.
# Usage: tests/tpcc/tpcc_node_crash_in_vm.sh BUILD_DIR [ROUNDS] [ADDRESS]
set -uo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:?usage: tpcc_node_crash_in_vm.sh BUILD_DIR [ROUNDS] [ADDRESS]}" && pwd)"
rounds="${2:-2}"
addr="${3:-${RDMA_VM_IP:-}}"
[ -n "$addr" ] || { echo "tpcc_node_crash_in_vm.sh: no RDMA address" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source "$here/tests/tpcc/vm_cluster_lib.sh"
write_cluster "$work/cluster.txt" "$addr"
small=(--warehouses=2 --items=2000 --customers=60 --threads=1 --cc=2pl
       --warmup_s=0 --mode=partitioned --distributed_pct=50)
failed=0 acked_total=0 replayed_total=0 in_doubt_total=0
for round in $(seq 1 "$rounds"); do
  victim=$(( (round - 1) % 2 ))
  survivor=$(( 1 - victim ))
  dir="$work/round-$round"
  mkdir -p "$dir"
  # Killed 1-4 s into the run.
  kill_mid_run "$dir/run" "$((1 + RANDOM % 4)).$((RANDOM % 10))" \
    "tpcc --fabric=verbs --cluster=$work/cluster.txt --node_id=$victim" \
    --cluster="$work/cluster.txt" --bin="$build" --pool_mb=1024 \
    --timeout_s=600 --grace_s=60 -- \
    "${small[@]}" --duration_s=120 --peer_timeout_s=5 --seed="$round" \
    --wal=on --wal_dir="$dir/wal" --acked_log="$dir/acked" \
    >"$dir/launch.log" 2>&1
  problems=()
  grep -qs "compute node $victim ($addr:710$victim)" \
    "$dir/run/compute-$survivor.err" ||
    problems+=("compute node $survivor did not name compute node $victim")
  "$build/tools/strand_recover" \
    --wal_dir="$dir/wal" --out_image="$dir/recovered.img" --json \
    >"$dir/recover.json" 2>"$dir/recover.err" ||
    problems+=("strand_recover failed: $(tail -2 "$dir/recover.err")")
  verdict="$("$build/tpcc/tpcc" --warehouses=2 --items=2000 --customers=60 \
    --check_image="$dir/recovered.img" --acked_log="$dir/acked" --json \
    2>"$dir/check.err")" ||
    problems+=("check failed: $(cat "$dir/check.err")")
  summary="$(python3 - "$verdict" "$dir/recover.json" <<'PY'
import json, sys
v = json.loads(sys.argv[1]) if sys.argv[1].startswith("{") else {}
r = json.load(open(sys.argv[2])) if open(sys.argv[2]).read().strip() else {}
print(v.get("acked_checked", 0), v.get("acked_lost", -1),
      r.get("records_replayed", 0), r.get("prepared_branches_in_doubt", 0),
      r.get("prepared_branches_committed", 0))
PY
)"
  read -r acked lost replayed in_doubt prepared_committed <<<"$summary"
  [ "${lost:--1}" = 0 ] || problems+=("acknowledged New-Orders lost: $lost")
  [ "${acked:-0}" -gt 0 ] || problems+=("no acknowledged New-Order to check")
  acked_total=$((acked_total + ${acked:-0}))
  replayed_total=$((replayed_total + ${replayed:-0}))
  in_doubt_total=$((in_doubt_total + ${in_doubt:-0}))
  if [ ${#problems[@]} = 0 ]; then
    echo "ok: round $round, compute node $victim killed: $acked acknowledged New-Orders found, $replayed records replayed, $prepared_committed prepared branches committed, $in_doubt in doubt (presumed aborted)"
    rm -rf "$dir"  # preallocated log segments: the VM's /tmp is in memory
  else
    failed=1
    echo "FAILED: round $round, compute node $victim killed:"
    printf '  %s\n' "${problems[@]}"
    tail -n 5 "$dir/launch.log" "$dir/run/compute-$survivor.err"
  fi
done
echo "node crash: $rounds rounds, $acked_total acknowledged New-Orders checked, $replayed_total records replayed, $in_doubt_total prepared branches in doubt"
[ $failed = 0 ] && echo "node crash: PASS" || echo "node crash: FAIL"
exit $failed
