#!/usr/bin/env bash
# scripts/launch.sh refuses misuse with exit status 2 and a reason, before
# starting anything (its runs are tests/tpcc/tpcc_cluster_in_vm.sh's).
# Usage: launch_usage_test.sh SOURCE_DIR BUILD_DIR
set -u
launch="$1/scripts/launch.sh"
build="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n' >"$work/ok.txt"
printf 'compute 0 127.0.0.1 7100\n' >"$work/no_memory.txt"
printf 'memory 0 127.0.0.1 7000\nstorage 0 127.0.0.1 7100\n' >"$work/bad_role.txt"
failed=0
expect_usage_error() {
  local out rc
  out=$("$launch" --results="$work/results" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || -z "$out" ]]; then
    echo "FAIL: launch.sh $* exited $rc (want 2) with message '$out'"
    failed=1
  else
    echo "ok: launch.sh $*: $(echo "$out" | head -1)"
  fi
}
expect_usage_error
expect_usage_error --cluster="$work/missing.txt" --bin="$build"
expect_usage_error --cluster="$work/no_memory.txt" --bin="$build"
expect_usage_error --cluster="$work/bad_role.txt" --bin="$build"
expect_usage_error --cluster="$work/ok.txt" --bin="$build" --program=ycsb
expect_usage_error --cluster="$work/ok.txt" --bin="$build" --pool_mb=lots
expect_usage_error --cluster="$work/ok.txt" --bin="$build" -- --node_id=3
expect_usage_error --cluster="$work/ok.txt" --bin="$build" -- --fabric=loopback
expect_usage_error --cluster="$work/ok.txt" --bin="$work/nothing-built-here"
"$launch" --help | grep -q -- "--cluster=FILE" ||
  { echo "FAIL: --help does not explain --cluster"; failed=1; }
exit $failed
