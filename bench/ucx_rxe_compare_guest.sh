#!/usr/bin/env bash
# The in-guest half of bench/ucx_rxe_compare.sh: between two emulated hosts (g0 on rxe0, g1 on
# rxe1, across the guest's veth), alternately (ABBA) per repetition:
#   ibscope p2p bw        UCX tag bandwidth, ibscope's rails and UCX_TLS (nothing set by hand)
#   ucx_perftest tag_bw   the same message size and window, with the UCX_TLS/UCX_NET_DEVICES
#                         ibscope chose (read back from its results)
#   ibscope probe write_bw  raw verbs RDMA WRITE on the same pair (no UCX)
#   ibscope allreduce ring  2 ranks, busbw at the same size (one ring step = one message)
# Prints one line per run: "<tool> <rep> <GB/s>" (GB/s = 1e9 B/s). Parses ibscope's JSON and
# ucx_perftest's final line; nothing else.
# Usage: ucx_rxe_compare_guest.sh --ibscope BIN --work DIR [--size BYTES] [--window N]
#        [--iters N] [--reps N]
set -euo pipefail

IBSCOPE=""
WORK=""
SIZE=262144
WINDOW=16
ITERS=20
REPS=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ibscope) IBSCOPE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --window) WINDOW=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
HERE=$(cd "$(dirname "$0")" && pwd -P)
HOSTS="$HERE/../tests/rxe/emulated_hosts.sh"
read -r -a DEVS <<<"$IBSCOPE_RXE_DEVICES"
read -r -a ADDRS <<<"$IBSCOPE_RXE_ADDRS"
mkdir -p "$WORK"
export IBSCOPE_BINARY="$IBSCOPE"
port=29800
json_field() { # FILE PYTHON-EXPRESSION over d
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}

ibscope_p2p() {
  local logs="$WORK/p2p.$1"
  port=$((port + 1))
  "$HOSTS" --logs "$logs" --port "$port" --host-args "--nic ${DEVS[0]}|--nic ${DEVS[1]}" -- \
    p2p --tests bw -b "$SIZE" -e "$SIZE" --bw-iters "$ITERS" --window "$WINDOW" -w 2 \
    --pairs first --timeout 120 --format json --out "$WORK/results" >/dev/null
  echo "ibscope_p2p $1 $(json_field "$logs/rank0.out" \
    "max(r['bw_gbps'] for r in d['p2p']['rows'] if r['test'] == 'bw')")"
  json_field "$logs/rank0.out" "d['environment']['ucx_env_set']['UCX_TLS']" >"$WORK/tls"
}

perftest() {
  local tls out="$WORK/perftest.$1"
  tls=$(cat "$WORK/tls")
  port=$((port + 1))
  # Server in emulated host g1 on rxe1, client in g0 on rxe0 (own boot ids, as
  # emulated_hosts.sh), ibscope's UCX_TLS for both; -e: endpoints with peer error handling, as
  # ibscope's (without it tcp holds no lane and UCX 1.13 finds no wire-up for rc_verbs).
  cat /proc/sys/kernel/random/uuid >"$WORK/boot_id.g0"
  cat /proc/sys/kernel/random/uuid >"$WORK/boot_id.g1"
  unshare --uts --ipc --mount bash -c "hostname g1; mount -t tmpfs tmpfs /dev/shm;
    mount --bind '$WORK/boot_id.g1' /proc/sys/kernel/random/boot_id;
    UCX_TLS='$tls' UCX_NET_DEVICES=${DEVS[1]}:1,$(echo "$IBSCOPE_RXE_NETDEVS" | cut -d' ' -f2) \
    timeout 120 ucx_perftest -e -p $port >'$out.server' 2>&1" &
  local server=$!
  sleep 1
  unshare --uts --ipc --mount bash -c "hostname g0; mount -t tmpfs tmpfs /dev/shm;
    mount --bind '$WORK/boot_id.g0' /proc/sys/kernel/random/boot_id;
    UCX_TLS='$tls' UCX_NET_DEVICES=${DEVS[0]}:1,$(echo "$IBSCOPE_RXE_NETDEVS" | cut -d' ' -f1) \
    timeout 120 ucx_perftest -e ${ADDRS[1]} -p $port -t tag_bw -s $SIZE -n $((ITERS * WINDOW)) \
    -w $((2 * WINDOW)) >'$out' 2>&1" || true
  wait "$server" || true
  # Final line: "Final: <iters> <lat> ... <bw MB/s average> <msgrate> ..." (MB = 2^20 B).
  local mbs
  mbs=$(awk '/^Final:/ { print $(NF - 2) }' "$out" | tail -n 1)
  [ -n "$mbs" ] || { echo "perftest produced no Final line:" >&2; cat "$out" >&2; return 1; }
  echo "ucx_perftest $1 $(python3 -c "print($mbs * 1048576 / 1e9)")"
}

probe() {
  local out="$WORK/probe.$1.json"
  "$IBSCOPE" probe write_bw --np 2 -d "${DEVS[0]},${DEVS[1]}" -s "$SIZE" -n $((ITERS * WINDOW)) \
    --format json --out "$WORK/results" --timeout 120 >"$out" 2>"$out.err"
  echo "probe_write_bw $1 $(json_field "$out" "d['probes']['rows'][0]['bw_gbps']")"
}

allreduce() {
  local logs="$WORK/ar.$1"
  port=$((port + 1))
  "$HOSTS" --logs "$logs" --port "$port" --host-args "--nic ${DEVS[0]}|--nic ${DEVS[1]}" -- \
    allreduce -A ring -b "$SIZE" -e "$SIZE" -n "$ITERS" -w 2 --timeout 120 --format json \
    --out "$WORK/results" >/dev/null
  echo "allreduce_ring_busbw $1 $(json_field "$logs/rank0.out" \
    "[r['busbw_gbps'] for r in d['collectives']['rows'] if not r['in_place']][0]")"
}

for ((rep = 1; rep <= REPS; rep++)); do
  if ((rep % 2)); then
    ibscope_p2p "$rep"; perftest "$rep"; probe "$rep"; allreduce "$rep"
  else
    allreduce "$rep"; probe "$rep"; perftest "$rep"; ibscope_p2p "$rep"
  fi
done
