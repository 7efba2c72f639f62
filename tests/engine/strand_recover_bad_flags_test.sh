#!/usr/bin/env bash
# Every misuse of strand_recover exits with status 2 and says why, before
# any work. (Misuse that needs a real image and log, such as a --gcl_size
# that contradicts the image or an unwritable --out_image, is covered by
# tests/engine/strand_recover_test.cc.)
# Usage: strand_recover_bad_flags_test.sh path/to/strand_recover
set -u
tool="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/wal/node-0" "$dir/empty"
printf 'not an image' > "$dir/junk.img"
failed=0
expect_usage_error() {
  local out rc
  out=$("$tool" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || -z "$out" ]]; then
    echo "FAIL: strand_recover $* exited $rc (want 2) with message '$out'"
    failed=1
  else
    echo "ok: strand_recover $*: $out"
  fi
}
expect_usage_error
expect_usage_error --wal_dir="$dir/wal"
expect_usage_error --image="$dir/junk.img"
expect_usage_error --image="$dir/no-such.img" --wal_dir="$dir/wal"
expect_usage_error --image="$dir/junk.img" --wal_dir="$dir/wal"
expect_usage_error --image="$dir" --wal_dir="$dir/wal"
expect_usage_error --no_such_flag
expect_usage_error --gcl_size=big
expect_usage_error stray-argument
exit $failed
