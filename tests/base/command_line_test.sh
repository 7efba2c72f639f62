#!/usr/bin/env bash
# The command-line manners every strand binary shares (base/command_line.h),
# tried on each binary given, plus the bad inputs found trying them:
#   --help and --helpshort exit 0 and lead with the program's own flags,
#     then the shared fabric flags, without glog's internals; defaults as
#     written in the source (0.95, not 0.94999999999999996); the usage
#     line's defaults are the flags' defaults
#   --version exits 0 and prints the version and the commit
#   an unknown flag inside a --flagfile, or an unreadable --flagfile, exits 2
#   (each binary's own bad inputs are flag_table_test.py's)
#   the output flags (base/run_output.h): --json with --csv, and
#     --progress_json where the binary has no timed run or the file cannot
#     be created, exit 2 (machine_output_test.py checks what they print)
# Usage: command_line_test.sh path/to/binary...
set -u
failed=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf -- '# a comment\n--no_such_flag=3\n' > "$work/unknown.flags"

fail() { echo "FAIL: $*"; failed=1; }

# expect_usage_error BINARY FLAGS...: exit 2 within 30 s, with a message.
expect_usage_error() {
  local bin="$1" out rc
  shift
  out=$(timeout 30 "$bin" "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 || -z "$out" ]]; then
    fail "$(basename "$bin") $* exited $rc (want 2) with message '$out'"
  else
    echo "ok: $(basename "$bin") $*: ${out%%$'\n'*}"
  fi
}

# expect_in TEXT NEEDLE WHAT: TEXT holds NEEDLE (a fixed string).
expect_in() {
  grep -qF -- "$2" <<<"$1" || fail "$3: no '$2'"
}

check_help() {
  local bin="$1" name out rc
  name=$(basename "$bin")
  for flag in --help --helpshort; do
    out=$("$bin" $flag 2>&1)
    rc=$?
    [[ $rc -eq 0 ]] || fail "$name $flag exited $rc (want 0)"
    [[ "$out" == "$name: "* ]] || fail "$name $flag: does not start with '$name: '"
    # The first group of flags is the program's own.
    first_group=$(grep -m1 -E '^[A-Z][^:]*:$' <<<"$out")
    if [[ "$first_group" != "Flags of $name:" ]]; then
      fail "$name $flag: first group is '$first_group', want 'Flags of $name:'"
    fi
    if grep -qE -- '--(logtostderr|minloglevel|v)=' <<<"$out"; then
      fail "$name $flag: lists glog's flags (they belong in --helpfull)"
    fi
    if grep -qE -- '=[-0-9.]*[0-9]{12,}' <<<"$out"; then
      fail "$name $flag: a default is not printed as written: $(grep -E -- '=[-0-9.]*[0-9]{12,}' <<<"$out")"
    fi
  done
  # Every [--name=value] of the usage line with a literal value matches the
  # flag's default (placeholders such as N or DIR, and a|b lists, aside).
  local usage
  usage=$(grep -m1 '^Usage:' <<<"$out")
  while read -r pair; do
    local flag=${pair%%=*} value=${pair#*=}
    [[ "$value" =~ ^[A-Z]+$ || "$value" == *"|"* || "$value" == *","* ||
       "$value" == *"..."* ]] && continue
    # bank's loopback runs two compute nodes unless told otherwise.
    [[ "$name" == bank && "$flag" == compute_nodes ]] && continue
    grep -qE -- "^  --$flag=\"?$value\"? \(" <<<"$out" ||
      fail "$name: usage says [--$flag=$value] but --help gives $(grep -E -- "^  --$flag=" <<<"$out")"
  done < <(grep -oE '\[--[a-z_]+=[^] ]+' <<<"$usage" | sed 's/^\[--//')
  echo "ok: $name --help"

  out=$("$bin" --version 2>&1)
  rc=$?
  [[ $rc -eq 0 ]] || fail "$name --version exited $rc (want 0)"
  [[ "$out" =~ ^$name\ \(strand\)\ [0-9]+\.[0-9]+\.[0-9]+,\ commit\ ([0-9a-f]{7,}(-dirty)?|unknown)$ ]] ||
    fail "$name --version printed '$out'"
  echo "ok: $name --version: $out"

  expect_usage_error "$bin" --flagfile="$work/unknown.flags"
  expect_usage_error "$bin" --flagfile="$work/no-such.flags"
}

for bin in "$@"; do
  check_help "$bin"
  name=$(basename "$bin")
  help=$("$bin" --help 2>&1)
  case "$name" in
    wal_bench | strand_recover) ;;
    strand_memnode)
      # A memory node takes its four flags only: the compute processes'
      # and the loopback's are unknown to it (docs/cluster.md).
      expect_in "$help" "--pool_mb=256 (uint64)" "$name --help"
      expect_in "$help" "--cluster=" "$name --help"
      grep -q -- "--rtt_ns\|--compute_nodes" <<<"$help" &&
        fail "$name --help lists flags a memory node does not take"
      ;;
    *)
      expect_in "$help" "Fabric and cost-model flags" "$name --help"
      expect_in "$help" "--compute_nodes=1 (int32)" "$name --help"
      expect_in "$help" "--rtt_ns=0 (int64)" "$name --help"
      expect_in "$help" "--pool_mb=256 (uint64)" "$name --help"
      ;;
  esac
  case "$name" in
    strand_memnode) ;;  # serves memory: no records to print
    tpcc | ycsb_bench)
      expect_usage_error "$bin" --json --csv
      expect_usage_error "$bin" --progress_json="$work/no-such-dir/series"
      ;;
    *)
      expect_usage_error "$bin" --json --csv
      expect_usage_error "$bin" --progress_json="$work/series"
      ;;
  esac
  case "$name" in
    coherence_bench)
      expect_in "$help" "--read_ratio=0.95 (double)" "$name --help"
      ;;
    ycsb_bench)
      expect_in "$help" "--zipf_theta=0.99 (double)" "$name --help"
      expect_in "$help" '--protocol="selcc" (string)' "$name --help"
      grep -q "lands" <<<"$help" && fail "$name --help: stale 'once ... lands'"
      ;;
  esac
done
exit $failed
