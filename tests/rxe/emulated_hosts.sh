#!/usr/bin/env bash
# Runs one ibscope job as H emulated hosts x P ranks per host INSIDE the Soft-RoCE guest. Each
# host is a process tree with its own hostname (UTS namespace), IPC namespace, /dev/shm and
# boot_id (bind-mounted over /proc/sys/kernel/random/boot_id): UCX tells hosts apart by the
# boot id, so shared memory does not reach across emulated hosts and their ranks talk over
# rxe (and tcp) as between real hosts. The network and the rxe devices are shared (rdma_rxe in
# 6.1 is not namespace-aware): every host sees rxe0 and rxe1. Ranks find each other through
# ibscope's TCP store (IBSCOPE_ROOT on rank 0's address, PMI_RANK/PMI_SIZE).
#
# Usage: emulated_hosts.sh --logs DIR [--hosts H] [--per P] [--port N] [--host-args "A|B"]
#                          [--limit S] -- IBSCOPE ARGS...
#   --logs DIR       rank r's stdout and stderr go to DIR/rank<r>.out and DIR/rank<r>.err,
#                    its exit status to DIR/rank<r>.rc
#   --hosts H        emulated hosts (default 2), named g0, g1, ...
#   --per P          ranks per host (default 1); rank = host * P + local rank
#   --port N         the TCP store's port on 192.0.2.1 (default 29600)
#   --host-args S    extra ibscope arguments per host, '|' between hosts ("--nic rxe0|--nic rxe1")
#   --limit S        each rank is killed after S seconds (default 240)
# Exit: 0 when every rank exited 0, else 1 (the .rc files say which).
set -uo pipefail

logs=
hosts=2
per=1
port=29600
host_args=
limit=240
while [ $# -gt 0 ]; do
  case "$1" in
    --logs) logs="$2"; shift 2 ;;
    --hosts) hosts="$2"; shift 2 ;;
    --per) per="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --host-args) host_args="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "emulated_hosts.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$logs" ] && [ $# -gt 0 ] || { echo "emulated_hosts.sh: need --logs DIR -- ARGS" >&2; exit 2; }
[ "${IBSCOPE_RXE_GUEST:-0}" = 1 ] || { echo "emulated_hosts.sh: runs only in the guest" >&2; exit 2; }
ibscope="${IBSCOPE_BINARY:?IBSCOPE_BINARY: the ibscope binary}"
mkdir -p "$logs"
IFS='|' read -r -a per_host <<<"$host_args"
IBSCOPE_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n') # 128 random bits, as README.md says
export IBSCOPE_ROOT="192.0.2.1:$port" IBSCOPE_TOKEN PMI_SIZE=$((hosts * per))
for ((h = 0; h < hosts; h++)); do
  cat /proc/sys/kernel/random/uuid >"$logs/boot_id.g$h"
  # shellcheck disable=SC2016 # expanded by the inner bash
  unshare --uts --ipc --mount bash -c '
    h=$1 per=$2 logs=$3 limit=$4 ibscope=$5 extra=$6; shift 6
    hostname "g$h"
    mount --bind "$logs/boot_id.g$h" /proc/sys/kernel/random/boot_id || exit 125
    mount -t tmpfs tmpfs /dev/shm || exit 125
    for ((l = 0; l < per; l++)); do
      r=$((h * per + l))
      # shellcheck disable=SC2086 # extra is a word list
      (PMI_RANK=$r timeout -k 5 "$limit" "$ibscope" "$@" $extra >"$logs/rank$r.out" \
        2>"$logs/rank$r.err"; echo $? >"$logs/rank$r.rc") &
    done
    wait' bash "$h" "$per" "$logs" "$limit" "$ibscope" "${per_host[$h]:-}" "$@" &
done
wait
status=0
for ((r = 0; r < hosts * per; r++)); do
  [ "$(cat "$logs/rank$r.rc" 2>/dev/null)" = 0 ] || status=1
done
exit "$status"
