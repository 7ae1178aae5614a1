#!/usr/bin/env bash
# Starts one ibscope rank per emulated host (tests/netns/hosts.sh) and waits for all of them.
#
#   run_ranks.sh [--prefix P] [--np K] [--ranks-per-host R] [--timeout S] [--port PORT]
#                [--no-prefix-output] [--env NAME=VALUE]... [--] IBSCOPE ARGS...
#
# Rank i runs in host namespace P-hh, h = i / R (R ranks per host, in blocks, as srun and
# mpirun place them; R defaults to 1; K defaults to R x every host that is up) as
#   ip netns exec P-hh env IBSCOPE_BOOTSTRAP=tcp IBSCOPE_RANK=i IBSCOPE_SIZE=K
#       IBSCOPE_ROOT=<address of host 0>:PORT IBSCOPE_TOKEN=<random> UCX_TLS=tcp
#       UCX_NET_DEVICES=<hosts.sh device> IBSCOPE_HOSTNAME=P-hh IBSCOPE_YIELD_WHEN_IDLE=1
#       [--env ...] IBSCOPE ARGS...
# Everything after IBSCOPE_TOKEN is a default that --env NAME=VALUE overrides (the later
# assignment wins). UCX_TLS=tcp: every namespace looks like the same node to UCX, which would
# otherwise use shared memory and bypass the shaped links. IBSCOPE_HOSTNAME: ibscope names the
# ranks' hosts P-h0, P-h1, ... (results, errors) instead of the one real hostname, so it
# counts one rank per host. IBSCOPE_YIELD_WHEN_IDLE=1: the ranks still share this machine's
# CPUs, so idle ranks yield rather than spin.
#
# Output: every line of rank i's stdout and stderr is prefixed "[ri] " (unless
# --no-prefix-output, then rank 0's stdout is passed through unchanged and the other ranks'
# output goes to stderr, prefixed: convenient for '--format json > file').
# Exit status: the worst (highest) exit status of the ranks that ended by themselves; as soon
# as one rank fails (non-zero), the others get SIGTERM (then SIGKILL after 5 s); those that
# then end by that signal (status 143/137) are not counted. 124 if --timeout (default 600 s)
# passed first (every rank is then ended). 2 usage.
set -uo pipefail

readonly SELF=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
HOSTS=$HERE/hosts.sh

die() { echo "$SELF: error: $*" >&2; exit 2; }

prefix=${IBSCOPE_NETNS_PREFIX:-ibs}
np=""
per_host=1
timeout_s=600
port=""
prefix_output=1
extra_env=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --prefix) prefix=${2:?}; shift 2 ;;
    --np) np=${2:?}; shift 2 ;;
    --ranks-per-host) per_host=${2:?}; shift 2 ;;
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --port) port=${2:?}; shift 2 ;;
    --env) [[ ${2:-} == *=* ]] || die "--env needs NAME=VALUE"; extra_env+=("$2"); shift 2 ;;
    --no-prefix-output) prefix_output=""; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || die "no command: usage: $SELF [options] [--] IBSCOPE ARGS..."
[[ $(id -u) -eq 0 ]] || die "must run as root (ip netns exec)"
[[ $timeout_s =~ ^[0-9]+$ && $timeout_s -gt 0 ]] || die "--timeout '$timeout_s': seconds > 0"

info=$("$HOSTS" --prefix "$prefix" info) || exit 2
eval "$info"  # N DEV SUBNET ... NS_i ADDR_i (values are checked names and addresses)
[[ $per_host =~ ^[0-9]+$ ]] && (( per_host >= 1 )) || die "--ranks-per-host '$per_host': 1 or more"
np=${np:-$((N * per_host))}
[[ $np =~ ^[0-9]+$ ]] && (( np >= 1 && np <= N * per_host )) ||
  die "--np '$np': 1..$((N * per_host)) ($N hosts up x $per_host ranks per host)"
if [[ -z $port ]]; then port=$((20000 + RANDOM % 30000)); fi
token=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')

# The command is resolved here, not inside the namespace (same file system, but be explicit).
cmd=("$@")
if [[ ${cmd[0]} == */* ]]; then
  [[ -x ${cmd[0]} ]] || die "'${cmd[0]}' is not an executable file"
  cmd[0]=$(readlink -f "${cmd[0]}")
fi

pids=()
declare -A rank_of=() reaped=()
killed=""
timed_out=""

end_all() {  # SIGTERM to every rank still running, SIGKILL after 5 s
  local p i alive
  for p in "${pids[@]}"; do [[ -n ${reaped[$p]:-} ]] || kill -TERM "$p" 2>/dev/null; done
  for i in $(seq 1 50); do
    alive=""
    for p in "${pids[@]}"; do
      [[ -z ${reaped[$p]:-} ]] && kill -0 "$p" 2>/dev/null && alive=1
    done
    [[ -z $alive ]] && return
    sleep 0.1
  done
  for p in "${pids[@]}"; do [[ -n ${reaped[$p]:-} ]] || kill -KILL "$p" 2>/dev/null; done
}

on_signal() { echo "$SELF: interrupted: ending all ranks" >&2; end_all; exit 130; }
trap on_signal INT TERM

for ((i = 0; i < np; i++)); do
  ns_var=NS_$((i / per_host))
  envs=(IBSCOPE_BOOTSTRAP=tcp IBSCOPE_RANK=$i IBSCOPE_SIZE=$np "IBSCOPE_ROOT=$ADDR_0:$port"
        "IBSCOPE_TOKEN=$token" UCX_TLS=tcp "UCX_NET_DEVICES=$DEV"
        "IBSCOPE_HOSTNAME=${!ns_var}" IBSCOPE_YIELD_WHEN_IDLE=1 "${extra_env[@]}")
  if [[ -n $prefix_output ]]; then
    ip netns exec "${!ns_var}" env "${envs[@]}" "${cmd[@]}" \
      > >(sed -u "s/^/[r$i] /") 2>&1 < /dev/null &
  elif (( i == 0 )); then
    ip netns exec "${!ns_var}" env "${envs[@]}" "${cmd[@]}" \
      2> >(sed -u "s/^/[r$i] /" >&2) < /dev/null &
  else
    ip netns exec "${!ns_var}" env "${envs[@]}" "${cmd[@]}" \
      > >(sed -u "s/^/[r$i] /" >&2) 2>&1 < /dev/null &
  fi
  pids+=($!)
  rank_of[$!]=$i
done

# Poll: bash reaps each rank as it ends (kill -0 then fails) and keeps its status for
# 'wait PID'. ('wait -n' loses ranks that end together: they leave bash's job table.)
deadline=$((SECONDS + timeout_s))
worst=0
failed=""
while (( ${#reaped[@]} < np )); do
  for p in "${pids[@]}"; do
    [[ -z ${reaped[$p]:-} ]] || continue
    kill -0 "$p" 2>/dev/null && continue
    wait "$p"
    st=$?
    reaped[$p]=1
    r=${rank_of[$p]}
    if [[ -n $killed ]] && (( st == 143 || st == 137 )); then
      echo "$SELF: rank $r ended (status $st) after being told to stop" >&2
      continue
    fi
    [[ -z $killed || $st -eq 0 ]] || echo "$SELF: rank $r exited with status $st" >&2
    (( st > worst )) && worst=$st
    if (( st != 0 )) && [[ -z $killed ]]; then
      echo "$SELF: rank $r exited with status $st: ending the other ranks" >&2
      failed=$r
      killed=1
      end_all
    fi
  done
  (( ${#reaped[@]} < np )) || break
  if [[ -z $killed ]] && (( SECONDS >= deadline )); then
    echo "$SELF: timeout after ${timeout_s} s: ending all ranks" >&2
    timed_out=1
    killed=1
    worst=124
    end_all
  fi
  sleep 0.2
done

# Let the output filters (process substitutions) drain.
sleep 0.1
[[ -z $failed ]] || echo "$SELF: first failure: rank $failed" >&2
exit "$worst"
