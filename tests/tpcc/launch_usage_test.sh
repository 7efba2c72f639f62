#!/usr/bin/env bash
# scripts/launch.sh refuses misuse with exit status 2 and a message naming
# the flag or the cluster file's line, before starting anything (its runs
# are tests/tpcc/tpcc_cluster_in_vm.sh's).
# Usage: launch_usage_test.sh SOURCE_DIR BUILD_DIR
set -u
launch="$1/scripts/launch.sh"
build="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cluster() { printf "$2" >"$work/$1.txt"; }
cluster ok 'memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n'
cluster no_memory 'compute 0 127.0.0.1 7100\n'
cluster bad_role 'memory 0 127.0.0.1 7000\nstorage 0 127.0.0.1 7100\n'
cluster no_port 'memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1\n'
cluster extra_field 'memory 0 127.0.0.1 7000 fast\ncompute 0 127.0.0.1 7100\n'
cluster port_zero 'memory 0 127.0.0.1 0\ncompute 0 127.0.0.1 7100\n'
cluster port_big 'memory 0 127.0.0.1 70000\ncompute 0 127.0.0.1 7100\n'
cluster port_name 'memory 0 127.0.0.1 http\ncompute 0 127.0.0.1 7100\n'
cluster id_twice 'memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\ncompute 0 127.0.0.1 7101\n'
cluster id_gap 'memory 0 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\ncompute 2 127.0.0.1 7101\n'
cluster id_name 'memory zero 127.0.0.1 7000\ncompute 0 127.0.0.1 7100\n'
failed=0
# expect_usage_error NEEDLE ARGS...: exit 2, NEEDLE in the first line.
expect_usage_error() {
  local needle="$1" out rc
  shift
  out=$("$launch" --results="$work/results" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 ]] || ! grep -qF -- "$needle" <<<"$(head -1 <<<"$out")"; then
    echo "FAIL: launch.sh $* exited $rc (want 2, '$needle' in the message): '$out'"
    failed=1
  else
    echo "ok: launch.sh $*: $(head -1 <<<"$out")"
  fi
}
ok=(--cluster="$work/ok.txt" --bin="$build")
expect_usage_error "--cluster"
expect_usage_error "--cluster" --cluster="$work/missing.txt" --bin="$build"
expect_usage_error "lists no memory node" --cluster="$work/no_memory.txt" --bin="$build"
expect_usage_error "line 2" --cluster="$work/bad_role.txt" --bin="$build"
expect_usage_error "line 2" --cluster="$work/no_port.txt" --bin="$build"
expect_usage_error "line 1" --cluster="$work/extra_field.txt" --bin="$build"
expect_usage_error "port '0'" --cluster="$work/port_zero.txt" --bin="$build"
expect_usage_error "port '70000'" --cluster="$work/port_big.txt" --bin="$build"
expect_usage_error "port 'http'" --cluster="$work/port_name.txt" --bin="$build"
expect_usage_error "listed twice" --cluster="$work/id_twice.txt" --bin="$build"
expect_usage_error "skip 1" --cluster="$work/id_gap.txt" --bin="$build"
expect_usage_error "id 'zero'" --cluster="$work/id_name.txt" --bin="$build"
expect_usage_error "--program" "${ok[@]}" --program=ycsb
expect_usage_error "--pool_mb=lots" "${ok[@]}" --pool_mb=lots
expect_usage_error "--pool_mb=0" "${ok[@]}" --pool_mb=0
expect_usage_error "--timeout_s=-1" "${ok[@]}" --timeout_s=-1
expect_usage_error "--grace_s=1e3" "${ok[@]}" --grace_s=1e3
expect_usage_error "--start_timeout_s=0" "${ok[@]}" --start_timeout_s=0
expect_usage_error "--start_timeout_s=99999999999999999999" "${ok[@]}" \
  --start_timeout_s=99999999999999999999
# A program flag before -- is not taken for the program's.
expect_usage_error "--warehouses=4" "${ok[@]}" --warehouses=4
expect_usage_error "--pool-mb=4" "${ok[@]}" --pool-mb=4
expect_usage_error "--node_id" "${ok[@]}" -- --node_id=3
expect_usage_error "--fabric" "${ok[@]}" -- --fabric=loopback
expect_usage_error "--rejoin" "${ok[@]}" -- --failover --rejoin
expect_usage_error "--restart_after_s=soon" "${ok[@]}" --restart_after_s=soon
expect_usage_error "--restart_after_s needs" "${ok[@]}" --restart_after_s=2
expect_usage_error "--restart_after_s needs" "${ok[@]}" --restart_after_s=2 \
  --program=bank -- --failover
expect_usage_error "not built" --cluster="$work/ok.txt" --bin="$work/nothing-built-here"
"$launch" --help | grep -q -- "--cluster=FILE" ||
  { echo "FAIL: --help does not explain --cluster"; failed=1; }
"$launch" --help | grep -q -- "results.*TMPDIR" ||
  { echo "FAIL: --help does not say results go under \$TMPDIR"; failed=1; }
[[ -e "$work/results" ]] &&
  { echo "FAIL: a refused launch created its results directory"; failed=1; }
exit $failed
