#!/usr/bin/env bash
# launch.sh: runs a whole verbs deployment from its cluster file.
#
#   scripts/launch.sh --cluster=FILE [launcher flags] [-- program flags]
#
# Starts every memory node of FILE (strand_memnode) and waits until each
# serves, then every compute node's process (tpcc unless --program) with
# --fabric=verbs --cluster=FILE --node_id=N and the program flags; on this
# host when a node's address is one of its own, else over ssh (the same
# build directory path on every host, as Deneva's and ScaleStore's
# launchers assume). Every process's output goes to one results directory;
# compute node 0's report is printed at the end. The first process that
# fails (a compute process that exits non-zero, a memory node that dies)
# stops all others, except, with --failover among the program's flags, a
# compute process killed by a signal: the others reclaim its node and go
# on, and with --restart_after_s it is started again and rejoins. Memory nodes are stopped when the compute processes are done. Exit
# status: 0 if every process succeeded (or, with --failover, every one not
# killed), 1 if any failed, 2 on a usage error.
set -u -o pipefail

usage() {
  cat <<'EOF'
Usage: scripts/launch.sh --cluster=FILE [launcher flags] [-- program flags]

Runs a strand verbs deployment: the memory nodes of FILE, then one compute
process per compute node (tpcc by default), each with --fabric=verbs
--cluster=FILE --node_id=N plus the program flags; gathers every process's
output in one results directory and stops everything at the end or at the
first failure.

Launcher flags:
  --cluster=FILE       the cluster file (config/cluster.example); required
  --program=NAME       compute program: tpcc (default) or bank
  --pool_mb=MiB        each memory node's pool (default 1024)
  --bin=DIR            build directory with the binaries (default: build);
                       the same path must hold them on every host
  --results=DIR        output directory (default: under $TMPDIR or /tmp,
                       strand-launch-<date>-<commit>)
  --start_timeout_s=S  how long a memory node may take to serve (default 60)
  --timeout_s=S        stop everything after S seconds (default 0: never;
                       the compute processes detect a dead peer themselves,
                       tpcc --peer_timeout_s)
  --grace_s=S          after the first failure, how long the other compute
                       processes get to report it and exit before they are
                       stopped (default 20)
  --restart_after_s=S  with --failover among the program's flags (tpcc):
                       start a lost compute process again S seconds
                       later with --rejoin, to run until the others' measured
                       run ends (default 0: never); its output goes to
                       compute-N.rejoin.out/.err
  --ssh=CMD            how to run a command on another host (default
                       "ssh -tt -o BatchMode=yes"; -tt so that stopping the
                       launcher stops the remote process too)
  --remote_all         run every node through --ssh, local ones too
  -h, --help           this help

Program flags, after --, are passed to every compute process, e.g.
  scripts/launch.sh --cluster=cluster.txt -- --warehouses=4 --threads=2
With --failover among them (tpcc, shared mode), a compute process killed by
a signal (kill -9), or one that stops with status 3 (it paused past its
lease and found itself fenced), is lost, not failed: the others declare
its node failed, reclaim it and finish the run, and the exit status counts
only the processes not lost. Compute node 0 combines and checks the run,
so it must survive. With --restart_after_s a lost process is started again
with --rejoin: it waits until the others reclaimed its node, joins them
with an empty cache and runs to the end of their measured run (without a
log: tpcc --rejoin refuses --wal=on).
Every check (flags, the cluster file's lines) is made before anything
starts; a misuse exits 2 naming the flag or the line.

After a crash of a run with tpcc --wal=on --wal_dir=DIR, the same command
again recovers it and carries on: compute node 0's process rebuilds the
fresh memory nodes from DIR's newest checkpoint and every node's log
(DIR must hold each compute node's node-<id>/: one host, or a shared
directory), and the others wait for it.
EOF
}

usage_error() {
  echo "launch.sh: $*" >&2
  echo "launch.sh: try --help" >&2
  exit 2
}

here="$(cd "$(dirname "$0")/.." && pwd)"
cluster="" program="tpcc" pool_mb=1024 bin="$here/build" results=""
start_timeout=60 timeout=0 grace=20 ssh_cmd="ssh -tt -o BatchMode=yes" remote_all=0
restart_after=0
program_flags=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cluster=*) cluster="${1#*=}" ;;
    --program=*) program="${1#*=}" ;;
    --pool_mb=*) pool_mb="${1#*=}" ;;
    --bin=*) bin="${1#*=}" ;;
    --results=*) results="${1#*=}" ;;
    --start_timeout_s=*) start_timeout="${1#*=}" ;;
    --timeout_s=*) timeout="${1#*=}" ;;
    --grace_s=*) grace="${1#*=}" ;;
    --restart_after_s=*) restart_after="${1#*=}" ;;
    --ssh=*) ssh_cmd="${1#*=}" ;;
    --remote_all) remote_all=1 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; program_flags+=("$@"); break ;;
    *) usage_error "$1 is not a launcher flag (the program's flags go after --)" ;;
  esac
  shift
done

[ -n "$cluster" ] || usage_error "--cluster=FILE is required"
[ -r "$cluster" ] || usage_error "--cluster=$cluster: cannot read it"
cluster="$(cd "$(dirname "$cluster")" && pwd)/$(basename "$cluster")"
case "$program" in
  tpcc) program_path="$bin/tpcc/tpcc" ;;
  bank) program_path="$bin/examples/bank" ;;
  *) usage_error "--program=$program: expected tpcc or bank" ;;
esac
# whole_number FLAG VALUE LOW HIGH: VALUE is a whole number in [LOW, HIGH].
whole_number() {
  [[ "$2" =~ ^[0-9]+$ ]] ||
    usage_error "--$1=$2 is not a whole number: use $3 to $4"
  [ "${#2}" -le 9 ] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
    usage_error "--$1=$2 is out of range: use $3 to $4"
}
whole_number pool_mb "$pool_mb" 1 1048576
whole_number start_timeout_s "$start_timeout" 1 86400
whole_number timeout_s "$timeout" 0 604800
whole_number grace_s "$grace" 0 3600
whole_number restart_after_s "$restart_after" 0 3600
# With --failover among the program's flags, a compute process killed by a
# signal is a lost node, not a failure: the survivors reclaim it and go on.
survives_loss=0 duration_s=10
for f in "${program_flags[@]+"${program_flags[@]}"}"; do
  case "$f" in
    --fabric=* | --cluster=* | --node_id=* | --rejoin | --rejoin=*)
      usage_error "$f: the launcher sets --fabric, --cluster, --node_id and --rejoin" ;;
    --failover | --failover=true | --failover=1) survives_loss=1 ;;
    --failover=false | --failover=0 | --nofailover) survives_loss=0 ;;
    --duration_s=*) duration_s="${f#*=}" ;;
  esac
done
if [ "$restart_after" -gt 0 ]; then
  [ "$program" = tpcc ] && [ $survives_loss = 1 ] ||
    usage_error "--restart_after_s needs --program=tpcc and --failover among the program's flags"
fi
memnode_path="$bin/rdma/strand_memnode"
for b in "$memnode_path" "$program_path"; do
  [ -x "$b" ] || usage_error "$b is not built (scripts/build.sh, or --bin)"
done

# The cluster file, checked line by line as the processes will read it
# (rdma/verbs/cluster_config.h): "role id address port", ids of each role
# from 0 without gaps or repeats, ports 1 to 65535. Each entry of memory
# and compute is "id address port".
memory=() compute=()
declare -A seen_id
line_number=0
while IFS= read -r raw || [ -n "$raw" ]; do
  line_number=$((line_number + 1))
  text="${raw%%#*}"
  read -r -a fields <<<"$text"
  [ ${#fields[@]} -eq 0 ] && continue
  where="--cluster=$cluster, line $line_number ('$(echo $text)')"
  [ ${#fields[@]} -eq 4 ] ||
    usage_error "$where: expected 4 fields, role id address port"
  role="${fields[0]}" id="${fields[1]}" address="${fields[2]}" port="${fields[3]}"
  case "$role" in
    memory | compute) ;;
    *) usage_error "$where: unknown role '$role' (memory or compute)" ;;
  esac
  [[ "$id" =~ ^[0-9]+$ ]] && [ "${#id}" -le 4 ] ||
    usage_error "$where: id '$id' is not a node id (0, 1, ...)"
  [ -z "${seen_id[$role-$((10#$id))]+x}" ] ||
    usage_error "$where: $role node $id is listed twice"
  seen_id[$role-$((10#$id))]=1
  [[ "$port" =~ ^[0-9]+$ ]] && [ "${#port}" -le 5 ] &&
    [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
    usage_error "$where: port '$port' is not a port (1 to 65535)"
  case "$role" in
    memory) memory+=("$role $((10#$id)) $address $port") ;;
    compute) compute+=("$role $((10#$id)) $address $port") ;;
  esac
done <"$cluster"
[ ${#memory[@]} -gt 0 ] || usage_error "--cluster=$cluster lists no memory node"
[ ${#compute[@]} -gt 0 ] || usage_error "--cluster=$cluster lists no compute node"
for role in memory compute; do
  count=$([ $role = memory ] && echo ${#memory[@]} || echo ${#compute[@]})
  for ((i = 0; i < count; i++)); do
    [ -n "${seen_id[$role-$i]+x}" ] ||
      usage_error "--cluster=$cluster: the $role node ids skip $i (they run from 0 without gaps)"
  done
done

if [ -z "$results" ]; then
  # Outside the source tree: a run's output is not the project's.
  commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  results="${TMPDIR:-/tmp}/strand-launch-$(date +%Y%m%d-%H%M%S)-$commit"
fi
mkdir -p "$results" || usage_error "--results=$results: cannot create it"
summary="$results/launch.txt"
: >"$summary"
say() { echo "launch.sh: $*" | tee -a "$summary" >&2; }

# Locked memory: verbs registers the pool and the caches.
ulimit -l unlimited 2>/dev/null ||
  say "warning: cannot raise ulimit -l (memory registration may fail)"

local_addresses=" localhost $(hostname) $(hostname -f 2>/dev/null) \
$(hostname -I 2>/dev/null) $(ip -o addr show 2>/dev/null |
  awk '{split($4, a, "/"); print a[1]}' | tr '\n' ' ') "
is_local() {
  [ "$remote_all" = 1 ] && return 1
  case "$1" in 127.*) return 0 ;; esac
  case "$local_addresses" in *" $1 "*) return 0 ;; esac
  return 1
}

# Starts "$@" on host $1 (or here), output to $2.out/.err; sets $started.
start() {
  local host="$1" out="$2"
  shift 2
  if is_local "$host"; then
    "$@" >"$out.out" 2>"$out.err" </dev/null &
  else
    local quoted
    printf -v quoted '%q ' "$@"
    # shellcheck disable=SC2086
    $ssh_cmd "$host" "ulimit -l unlimited 2>/dev/null; cd $(printf %q "$here") && exec $quoted" \
      >"$out.out" 2>"$out.err" </dev/null &
  fi
  started=$!
}

declare -A pid_of name_of
failed=0
stop_all() {
  local p
  for p in "${!name_of[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in $(seq 50); do
    local alive=0
    for p in "${!name_of[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  for p in "${!name_of[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
}
trap 'say "interrupted: stopping every process"; stop_all; exit 1' INT TERM

launch_time="$(date +%s.%N)"
say "results in $results"

# Memory nodes first; each serves once it prints its ready line.
for line in "${memory[@]}"; do
  read -r _ id address port <<<"$line"
  start "$address" "$results/memory-$id" "$memnode_path" \
    --cluster="$cluster" --node_id="$id" --pool_mb="$pool_mb"
  pid_of["memory-$id"]=$started
  name_of[$started]="memory node $id ($address:$port)"
done
for line in "${memory[@]}"; do
  read -r _ id address port <<<"$line"
  p=${pid_of["memory-$id"]}
  deadline=$((SECONDS + start_timeout))
  until grep -q "serving" "$results/memory-$id.out" 2>/dev/null; do
    if ! kill -0 "$p" 2>/dev/null; then
      say "FAILED: ${name_of[$p]} exited before serving:"
      sed 's/^/  /' "$results/memory-$id.err" >&2
      failed=1
      break 2
    fi
    if [ $SECONDS -ge $deadline ]; then
      say "FAILED: ${name_of[$p]} did not serve within ${start_timeout}s"
      failed=1
      break 2
    fi
    sleep 0.1
  done
done
if [ $failed = 1 ]; then
  stop_all
  exit 1
fi
say "${#memory[@]} memory node(s) serving; starting ${#compute[@]} compute process(es): $program ${program_flags[*]+"${program_flags[*]}"}"

computes=()
for line in "${compute[@]}"; do
  read -r _ id address port <<<"$line"
  start "$address" "$results/compute-$id" "$program_path" --fabric=verbs \
    --cluster="$cluster" --node_id="$id" \
    "${program_flags[@]+"${program_flags[@]}"}"
  computes+=("$started")
  pid_of["compute-$id"]=$started
  name_of[$started]="compute node $id ($address:$port)"
done

# Wait for the compute processes; the first failure stops everything (the
# compute processes first get --grace_s to name the failed peer themselves).
lost=0 restarted=0
declare -A restart_at=()
# restart ID: starts compute node ID again with --rejoin, to run until the
# end of compute node 0's measured run (its "measuring starts" line plus
# --duration_s), if more than a second of it is left.
restart() {
  local id="$1" line address port start_line left
  line="$(printf '%s\n' "${compute[@]}" | awk -v id="$id" '$2 == id')"
  read -r _ _ address port <<<"$line"
  start_line="$(grep -ho 'measuring starts at unix time [0-9.]*' \
    "$results/compute-0.err" "$results/compute-0.out" 2>/dev/null | head -1)"
  left="$(awk -v a="${start_line##* }" -v d="$duration_s" \
    -v now="$(date +%s.%N)" 'BEGIN { printf "%d", a + d - now - 1 }')"
  if [ -z "$start_line" ] || [ "$left" -lt 1 ]; then
    say "not restarting compute node $id: less than a second of the measured run is left"
    return
  fi
  start "$address" "$results/compute-$id.rejoin" "$program_path" \
    --fabric=verbs --cluster="$cluster" --node_id="$id" \
    "${program_flags[@]+"${program_flags[@]}"}" --rejoin --warmup_s=0 \
    --duration_s="$left"
  computes+=("$started")
  pid_of["compute-$id-rejoin"]=$started
  name_of[$started]="compute node $id ($address:$port), restarted"
  remaining=$((remaining + 1))
  restarted=$((restarted + 1))
  say "RESTARTED: compute node $id rejoins for the last ${left}s of the run (output: compute-$id.rejoin.out)"
}
declare -A status_of
stop_deadline=0 stopped=0
fail() {
  failed=1
  stop_deadline=$((SECONDS + grace))
}
remaining=${#computes[@]}
while [ $remaining -gt 0 ] || [ ${#restart_at[@]} -gt 0 ]; do
  for p in "${computes[@]}"; do
    [ -n "${status_of[$p]+x}" ] && continue
    kill -0 "$p" 2>/dev/null && continue
    wait "$p"
    status_of[$p]=$?
    remaining=$((remaining - 1))
    # Killed (status > 128), or it found itself declared failed and
    # fenced (3: tpcc's kExitDeclaredFailed, after a pause past its lease).
    if { [ "${status_of[$p]}" -gt 128 ] || [ "${status_of[$p]}" = 3 ]; } &&
      [ $survives_loss = 1 ] && [ $failed = 0 ]; then
      if [ "${status_of[$p]}" = 3 ]; then
        say "LOST: ${name_of[$p]} stopped: it was declared failed and fenced (status 3); with --failover the others reclaim it and go on"
      else
        say "LOST: ${name_of[$p]} was killed (status ${status_of[$p]}); with --failover the others reclaim it and go on"
      fi
      lost=$((lost + 1))
      if [ "$restart_after" -gt 0 ]; then
        for key in "${!pid_of[@]}"; do
          [ "${pid_of[$key]}" = "$p" ] && [[ "$key" =~ ^compute-([0-9]+)$ ]] &&
            restart_at[${BASH_REMATCH[1]}]=$((SECONDS + restart_after))
        done
      fi
    elif [ "${status_of[$p]}" != 0 ] && [ $failed = 0 ]; then
      say "FAILED: ${name_of[$p]} exited with status ${status_of[$p]}; the others get ${grace}s to report it and exit"
      fail
    fi
  done
  for line in "${memory[@]}"; do
    read -r _ id _ _ <<<"$line"
    p=${pid_of["memory-$id"]}
    if [ $failed = 0 ] && ! kill -0 "$p" 2>/dev/null; then
      say "FAILED: ${name_of[$p]} died during the run; the compute processes get ${grace}s to report it and exit"
      fail
    fi
  done
  for id in "${!restart_at[@]}"; do
    if [ $failed = 0 ] && [ $SECONDS -ge "${restart_at[$id]}" ]; then
      unset "restart_at[$id]"
      restart "$id"
    fi
  done
  if [ "$timeout" -gt 0 ] && [ $failed = 0 ] &&
    awk -v now="$(date +%s.%N)" -v t0="$launch_time" -v limit="$timeout" \
      'BEGIN { exit !(now - t0 > limit) }'; then
    say "FAILED: still running after --timeout_s=$timeout; stopping everything"
    fail
    stop_deadline=$SECONDS
  fi
  if [ $failed = 1 ] && [ $SECONDS -ge $stop_deadline ] && [ $stopped = 0 ]; then
    for q in "${computes[@]}"; do
      [ -n "${status_of[$q]+x}" ] && continue
      say "stopping ${name_of[$q]}, still running ${grace}s after the failure"
      kill -TERM "$q" 2>/dev/null
    done
    stopped=1
  fi
  { [ $remaining -gt 0 ] || [ ${#restart_at[@]} -gt 0 ]; } && sleep 0.2
done

# Memory nodes exit when the run ends.
for line in "${memory[@]}"; do
  read -r _ id _ _ <<<"$line"
  kill -TERM "${pid_of["memory-$id"]}" 2>/dev/null
done
stop_all

for line in "${compute[@]}"; do
  read -r _ id _ _ <<<"$line"
  p=${pid_of["compute-$id"]}
  say "${name_of[$p]}: exit status ${status_of[$p]:-killed}" \
    "(output: compute-$id.out, compute-$id.err)"
  p=${pid_of["compute-$id-rejoin"]:-}
  [ -n "$p" ] && say "${name_of[$p]}: exit status ${status_of[$p]:-killed}" \
    "(output: compute-$id.rejoin.out, compute-$id.rejoin.err)"
done
start_line="$(grep -ho 'measuring starts at unix time [0-9.]*' \
  "$results/compute-0.err" "$results/compute-0.out" 2>/dev/null | head -1)"
if [ -n "$start_line" ]; then
  say "launch to first measured transaction: $(awk -v a="${start_line##* }" \
    -v b="$launch_time" 'BEGIN { printf "%.1f", a - b }') s"
fi
[ $lost -gt 0 ] && say "$lost compute process(es) killed and reclaimed, $restarted restarted; the others finished the run"
echo "=== compute node 0's report ($results/compute-0.out)"
cat "$results/compute-0.out"
exit $failed
