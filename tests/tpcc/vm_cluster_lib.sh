# Shared by the scripts that run TPC-C as a verbs cluster in the Soft-RoCE
# VM (source it; needs $here, the repository root).

# check NAME CONDITION...: runs CONDITION and prints "ok: NAME", or
# "FAILED: NAME" and sets failed=1.
check() {
  local name="$1"
  shift
  if "$@"; then echo "ok: $name"; else echo "FAILED: $name"; failed=1; fi
}

# show_tails DIR LINES FILE...: the last LINES lines of each FILE in DIR
# (a run's outputs), each under its name.
show_tails() {
  local dir="$1" lines="$2" f
  shift 2
  for f in "$@"; do
    echo "--- $f (last $lines lines)"
    tail -n "$lines" "$dir/$f" 2>/dev/null
  done
}

# write_cluster FILE ADDRESS [COMPUTE]: 1 memory node and COMPUTE compute
# nodes (default 2) on ADDRESS.
write_cluster() {
  echo "memory   0  $2  7000" >"$1"
  local n
  for ((n = 0; n < ${3:-2}; n++)); do
    echo "compute  $n  $2  $((7100 + n))" >>"$1"
  done
}

# kill_mid_run RESULTS DELAY PATTERN LAUNCH_ARGS...: starts scripts/launch.sh
# LAUNCH_ARGS --results=RESULTS in the background, waits until both compute
# processes are measuring, sleeps DELAY seconds, kills every process whose
# command line matches PATTERN with SIGKILL, and waits for the launcher.
# Sets launch_status (the launcher's exit status) and waited (seconds from
# the kill to the launcher's exit).
kill_mid_run() {
  signal_mid_run kill "$@"
}

# pause_mid_run SECONDS RESULTS DELAY PATTERN LAUNCH_ARGS...: the same, but
# the processes are stopped (SIGSTOP) for SECONDS, then continued.
pause_mid_run() {
  signal_mid_run "pause:$1" "${@:2}"
}

# signal_mid_run ACTION RESULTS DELAY PATTERN LAUNCH_ARGS...: the two
# above; ACTION: kill, or pause:SECONDS.
signal_mid_run() {
  local action="$1" results="$2" delay="$3" pattern="$4"
  shift 4
  "$here/scripts/launch.sh" --results="$results" "$@" &
  local launcher=$!
  until grep -qs "measuring starts" "$results"/compute-0.* &&
    grep -qs "measuring starts" "$results"/compute-1.*; do
    kill -0 $launcher 2>/dev/null || break
    sleep 0.5
  done
  sleep "$delay"
  if [ "$action" = kill ]; then
    pkill -KILL -f -- "$pattern"
  else
    pkill -STOP -f -- "$pattern"
    sleep "${action#pause:}"
    pkill -CONT -f -- "$pattern"
  fi
  local killed_at=$SECONDS
  wait $launcher
  launch_status=$?
  waited=$((SECONDS - killed_at))
  echo "(launcher exited $launch_status, ${waited}s after the ${action%%:*})"
}
