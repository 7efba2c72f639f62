#!/usr/bin/env bash
# Damage is never silent: tpcc runs with the WAL, periodic
# checkpoints and 1 MiB segments, and is killed with SIGKILL; then, on
# copies of its directory, strand_recover must
#   - fail (exit 1) naming the file when a log segment is cut short (to
#     0 bytes, into its header, in the middle: the issue's
#     `truncate -s` reproduction recovered silently before), and recover
#     up to it with --allow_log_data_loss, saying DATA LOST;
#   - fail naming the node when a node-<id>/ directory is missing;
#   - pass over a damaged newest checkpoint (a flipped byte, a file cut
#     short, no manifest), name it, and recover from the previous one.
# Usage: damaged_log_test.sh path/to/tpcc path/to/strand_recover
set -u
tpcc="$1"
recover="$2"
dir=$(mktemp -d)
trap 'kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

"$tpcc" --warehouses=2 --compute_nodes=2 --items=2000 --customers=60 \
  --wal=on --wal_dir="$dir/wal" --wal_segment_mb=1 \
  --checkpoint_interval_s=0.5 --duration_s=600 --warmup_s=0 \
  --populate_memory=touch >"$dir/run.out" 2>&1 &
pid=$!
# Until the third checkpoint is published: two kept, logs truncated.
for _ in $(seq 600); do
  [[ -f "$dir/wal/checkpoint-00000003/MANIFEST" ]] && break
  kill -0 "$pid" 2>/dev/null || fail "tpcc exited: $(tail -5 "$dir/run.out")"
  sleep 0.1
done
[[ -f "$dir/wal/checkpoint-00000003/MANIFEST" ]] ||
  fail "no third checkpoint within 60 s"
sleep 0.5
kill -9 "$pid"
wait "$pid" 2>/dev/null

# Recovers cleanly as it is.
"$recover" --wal_dir="$dir/wal" >"$dir/clean.out" 2>&1 ||
  fail "clean recovery failed: $(cat "$dir/clean.out")"

fresh() {  # a copy of the run's directory to damage
  rm -rf "$dir/copy"
  cp -r "$dir/wal" "$dir/copy"
}

# A log segment cut short: not the newest one of its node, and not one the
# newest checkpoint makes unnecessary to read (its last).
first_segment() {
  ls "$dir/copy/node-$1" | grep '\.wal$' | sort | tail -2 | head -1
}
for size in 0 100 4096 300000; do
  fresh
  seg=$(first_segment 0)
  [[ -n "$seg" ]] || fail "node-0 has no segment"
  truncate -s "$size" "$dir/copy/node-0/$seg"
  out=$("$recover" --wal_dir="$dir/copy" 2>&1)
  rc=$?
  [[ $rc -eq 1 ]] || fail "segment cut to $size bytes: exit $rc, want 1: $out"
  grep -q "node-0.*$seg\|$seg" <<<"$out" ||
    fail "segment cut to $size bytes: the error does not name $seg: $out"
  echo "ok: node-0/$seg cut to $size bytes: $(grep -o "$seg[^:]*" <<<"$out" | head -1)"
done
out=$("$recover" --wal_dir="$dir/copy" --allow_log_data_loss 2>&1)
rc=$?
[[ $rc -eq 0 ]] || fail "--allow_log_data_loss: exit $rc: $out"
grep -q "DATA LOST" <<<"$out" || fail "--allow_log_data_loss did not say DATA LOST: $out"
echo "ok: --allow_log_data_loss recovers up to it and says DATA LOST"

# A node's whole log directory missing.
fresh
rm -rf "$dir/copy/node-1"
out=$("$recover" --wal_dir="$dir/copy" 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "missing node-1: exit $rc, want 1: $out"
grep -q "node-1" <<<"$out" || fail "missing node-1 is not named: $out"
echo "ok: a missing node-1/ is an error naming it"

# The newest checkpoint damaged: passed over, named, the previous one used.
published=$(cd "$dir/wal" && ls -d checkpoint-*/MANIFEST | cut -d/ -f1 | sort)
newest=$(tail -1 <<<"$published")
older=$(tail -2 <<<"$published" | head -1)
[[ "$newest" != "$older" ]] || fail "only one checkpoint kept: $newest"
damage_checkpoint() {
  case "$1" in
    flip) python3 - "$dir/copy/$newest/table-1" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x40
open(p, "wb").write(b)
PY
      ;;
    cut) truncate -s 1000 "$dir/copy/$newest/table-1" ;;
    manifest) rm "$dir/copy/$newest/MANIFEST" ;;
  esac
}
for how in flip cut manifest; do
  fresh
  damage_checkpoint "$how"
  out=$("$recover" --wal_dir="$dir/copy" --json 2>"$dir/err")
  rc=$?
  [[ $rc -eq 0 ]] || fail "newest checkpoint damaged ($how): exit $rc: $(cat "$dir/err")"
  grep -q "passed over: .*$newest" "$dir/err" ||
    fail "damaged $newest ($how) is not named: $(cat "$dir/err")"
  grep -q "\"base\":\"[^\"]*$older\"" <<<"$out" ||
    fail "damaged $newest ($how): not recovered from $older: $out"
  echo "ok: $newest damaged ($how): passed over, recovered from $older"
done
echo "ok"
