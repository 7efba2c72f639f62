#!/usr/bin/env bash
# tpcc --check_image after a crash: tpcc runs with the WAL and the
# acknowledged-New-Order file, is killed with SIGKILL, strand_recover
# rebuilds the pool, and tpcc --check_image finds every acknowledged
# New-Order and conditions 1-12 (exit 0). The load's checkpoint alone,
# without the log, lacks those orders: --check_image must say so (exit 1).
# Usage: check_image_test.sh path/to/tpcc path/to/strand_recover
set -u
tpcc="$1"
recover="$2"
dir=$(mktemp -d)
trap 'kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
scale=(--warehouses=1 --items=2000 --customers=60)
fail() {
  echo "FAIL: $*"
  echo "--- tpcc output:"
  cat "$dir/run.out"
  exit 1
}

"$tpcc" "${scale[@]}" --threads=2 --wal=on --wal_dir="$dir/wal" \
  --acked_log="$dir/acked" --duration_s=600 --warmup_s=0 \
  --populate_memory=touch >"$dir/run.out" 2>&1 &
pid=$!
manifest="$dir/wal/checkpoint-00000001/MANIFEST"
for _ in $(seq 600); do
  [[ -f "$manifest" ]] && break
  kill -0 "$pid" 2>/dev/null || fail "tpcc exited before its checkpoint"
  sleep 0.1
done
[[ -f "$manifest" ]] || fail "no checkpoint of the load within 60 s"
sleep 1
kill -9 "$pid"
wait "$pid" 2>/dev/null

"$recover" --wal_dir="$dir/wal" \
  --out_image="$dir/recovered.img" >"$dir/recover.out" 2>&1 ||
  fail "strand_recover: $(cat "$dir/recover.out")"

# The load's checkpoint with an empty log: what the pool held before the
# run.
mkdir -p "$dir/base/node-0"
cp -r "$dir/wal/checkpoint-00000001" "$dir/base/"
"$recover" --wal_dir="$dir/base" --out_image="$dir/load.img" \
  >"$dir/recover-base.out" 2>&1 ||
  fail "strand_recover of the checkpoint alone: $(cat "$dir/recover-base.out")"

out=$("$tpcc" "${scale[@]}" --check_image="$dir/recovered.img" \
  --acked_log="$dir/acked" --json 2>"$dir/check.err")
rc=$?
echo "recovered: $out"
[[ $rc -eq 0 ]] || fail "check of the recovered image exited $rc: $(cat "$dir/check.err")"
checked=$(sed -n 's/.*"acked_checked":\([0-9]*\).*/\1/p' <<<"$out")
[[ -n "$checked" && "$checked" -gt 0 ]] ||
  fail "no acknowledged New-Order was checked: $out"
grep -q '"acked_lost":0' <<<"$out" || fail "losses: $out"
grep -q '"consistency_ok":true' <<<"$out" || fail "inconsistent: $out"

out=$("$tpcc" "${scale[@]}" --check_image="$dir/load.img" \
  --acked_log="$dir/acked" 2>&1)
rc=$?
echo "load checkpoint only: $(grep acknowledged <<<"$out")"
[[ $rc -eq 1 ]] || fail "the load's checkpoint passed the check (exit $rc): $out"
grep -q "lost: w=" <<<"$out" || fail "no lost order named: $out"

# Misuse is exit 2.
"$tpcc" --check_image="$dir/no-such.img" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a missing image is not a usage error"
"$tpcc" "${scale[@]}" --check_image="$dir/recovered.img" \
  --acked_log="$dir/no-such" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a missing --acked_log is not a usage error"
echo "ok"
