#!/usr/bin/env bash
# tpcc --failover --fail_node (docs/design/node_failure.md): one process
# hosting 3 compute nodes, a small database, a few seconds.
#   1. WAL on, node 1 fails at 1 s and rejoins 1.5 s later: exit 0,
#      conditions 1-12 hold, every acknowledged New-Order is there (the
#      failed node's too), the survivors committed while it was out, it
#      committed again after its rejoin, the failure's figures are in the
#      JSON and each node's rate in the per-second series, and no call
#      failed as an error of the run.
#   2. No WAL, node 0 fails at 1 s and never rejoins: the checks read
#      through a survivor, exit 0, the JSON says it did not rejoin.
# Misuse of the flags (exit 2 naming the flag) is flag_table_test.py's.
# Usage: failover_test.sh path/to/tpcc
set -u
tpcc="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

small=(--compute_nodes=3 --threads=1 --warehouses=3 --items=1000
  --customers=30 --warmup_s=0 --populate_memory=touch --failover
  --node_lease_ms=100 --json)

# check_json FILE PYTHON-EXPRESSIONS...: each holds of r, the run's record
# (and s, its per-second series, if FILE.series exists).
check_json() {
  local file="$1"
  shift
  /usr/bin/python3 - "$file" "$@" <<'EOF'
import json, os, sys
path = sys.argv[1]
lines = [l for l in open(path) if l.strip()]
r = json.loads(lines[-1])
s = []
if os.path.exists(path + ".series"):
    s = [json.loads(l) for l in open(path + ".series") if l.strip()]
bad = [e for e in sys.argv[2:] if not eval(e)]
for e in bad:
    print(f"FAIL: {e}: failover = {json.dumps(r.get('failover'))}")
sys.exit(1 if bad else 0)
EOF
}

# 1. A failure and a rejoin, with the WAL.
out="$dir/rejoin.json"
"$tpcc" "${small[@]}" --duration_s=4 --fail_node=1@1 --rejoin_after_s=1.5 \
  --wal=on --wal_dir="$dir/wal" --acked_log="$dir/acked" \
  --progress_json="$out.series" >"$out" 2>"$dir/rejoin.err"
rc=$?
[[ $rc -eq 0 ]] || fail "failure and rejoin: exit $rc: $(tail -20 "$dir/rejoin.err")"
check_json "$out" \
  'r["consistency_ok"]' 'r["errors"] == 0' \
  'r["acked_checked"] > 0' 'r["acked_lost"] == 0' \
  'r["failover"]["ok"]' 'r["failover"]["node"] == 1' \
  'abs(r["failover"]["failed_at_s"] - 1) < 0.5' \
  '0 < r["failover"]["detection_s"] < 5' \
  'r["failover"]["reclaimed"]' 'r["failover"]["reclaimer"] != 1' \
  'all(k in r["failover"] for k in ("fence_ms", "ring_ms", "relog_ms",
       "latch_scan_ms", "reclaim_ms", "records_reapplied",
       "records_relogged", "latches_cleared_exclusive",
       "latches_cleared_shared", "recovered_after_s",
       "survivors_txn_per_sec_before", "survivor_aborts_until_recovered",
       "calls_failed_by_node_failure", "rejoin_s"))' \
  'r["failover"]["survivor_commits_during_outage"] > 0' \
  'r["failover"]["rejoined"]' \
  'abs(r["failover"]["rejoined_at_s"] - 2.5) < 1' \
  'r["failover"]["node_commits_after_rejoin"] > 0' \
  'r["calls_failed_by_node_failure"] == r["failover"]["calls_failed_by_node_failure"]' \
  'len(s) >= 3 and all(len(p["txn_per_sec_by_node"]) == 3 for p in s)' \
  'min(p["txn_per_sec_by_node"][1] for p in s) <= 0.05 * max(p["txn_per_sec_by_node"][1] for p in s)' \
  || fail "failure and rejoin: $(grep failover "$dir/rejoin.err" | head -8)"
grep -q "^failover: node 1 rejoined" "$dir/rejoin.err" ||
  fail "the human report does not say node 1 rejoined"
echo "ok: node 1 failed and rejoined: $(grep '^failover:' "$dir/rejoin.err" | tr '\n' ' ' | cut -c1-400)"

# 2. Compute node 0 fails for good, no WAL.
out="$dir/gone.json"
"$tpcc" "${small[@]}" --duration_s=2 --fail_node=0@1 \
  --acked_log="$dir/acked-gone" >"$out" 2>"$dir/gone.err"
rc=$?
[[ $rc -eq 0 ]] || fail "node 0 failed for good: exit $rc: $(tail -20 "$dir/gone.err")"
check_json "$out" \
  'r["consistency_ok"]' 'r["errors"] == 0' 'r["acked_lost"] == 0' \
  'r["failover"]["ok"]' 'r["failover"]["reclaimed"]' \
  'not r["failover"]["rejoined"]' 'r["failover"]["rejoined_at_s"] is None' \
  'r["failover"]["survivor_commits_during_outage"] > 0' \
  || fail "node 0 failed for good"
echo "ok: node 0 failed for good, checked through a survivor"

# 3. Partitioned mode: node 1 fails at 1 s and rejoins 1.5 s later. Its
# warehouses are unavailable meanwhile: the survivors' calls that need them
# fail (counted apart, not errors), the others commit.
out="$dir/partitioned.json"
"$tpcc" "${small[@]}" --mode=partitioned --duration_s=4 --fail_node=1@1 \
  --rejoin_after_s=1.5 --progress_json="$out.series" >"$out" \
  2>"$dir/partitioned.err"
rc=$?
[[ $rc -eq 0 ]] || fail "partitioned: exit $rc: $(tail -20 "$dir/partitioned.err")"
check_json "$out" \
  'r["consistency_ok"]' 'r["errors"] == 0' \
  'r["failover"]["ok"]' 'r["failover"]["reclaimed"]' \
  'r["failover"]["survivor_commits_during_outage"] > 0' \
  'r["failover"]["survivor_calls_unavailable"] > 0' \
  'all(k in r["failover"] for k in ("branches_committed",
       "branches_aborted", "records_undecided"))' \
  'r["failover"]["rejoined"]' \
  'r["failover"]["node_commits_after_rejoin"] > 0' \
  || fail "partitioned: $(grep failover "$dir/partitioned.err" | head -8)"
echo "ok: partitioned: $(grep '^failover:' "$dir/partitioned.err" | tr '\n' ' ' | cut -c1-400)"
