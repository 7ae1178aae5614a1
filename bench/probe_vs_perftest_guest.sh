#!/usr/bin/env bash
# The in-guest half of bench/probe_vs_perftest.sh: runs `ibscope probe TEST` and the perftest
# program that measures the same (ib_write_bw, ...) alternately on the same RDMA devices, with
# the same size, iteration count, tx depth, MTU, inline size, GID index (and, for bandwidth,
# CQ moderation), and records every run's raw output. It parses nothing: the host side
# (probe_vs_perftest.sh) builds the table from WORK/manifest.tsv and WORK/runs/.
#
# Usage (normally started by probe_vs_perftest.sh through tests/rxe/run_in_guest.sh):
#   probe_vs_perftest_guest.sh --ibscope BIN --work DIR [--tests LIST] [--bw-sizes LIST]
#       [--lat-sizes LIST] [--iters N] [--reps N] [--devices same|cross] [--mtu N]
#       [--inline N] [--gid N] [--bw-tx-depth N]
# Devices and addresses come from IBSCOPE_RXE_DEVICES / IBSCOPE_RXE_ADDRS (the rxe harness):
#   same  = both ends on the first device (rxe0, rxe's loopback path)
#   cross = first device (rxe0, initiator) -> second device (rxe1, target), across the veth
# Order: in odd repetitions ibscope runs first, in even ones perftest (ABBA), so a slow drift
# of the machine's speed does not favour one tool.
set -euo pipefail

IBSCOPE=""
WORK=""
TESTS="write_bw,write_lat,read_bw,send_lat"
BW_SIZES="4096,65536"
LAT_SIZES="2,4096"
ITERS=1000
REPS=5
DEVICES=cross
MTU=1024
INLINE=0
GID=""
BW_TX=128

die() { echo "probe_vs_perftest_guest: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ibscope) IBSCOPE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --tests) TESTS=$2; shift 2 ;;
    --bw-sizes) BW_SIZES=$2; shift 2 ;;
    --lat-sizes) LAT_SIZES=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --devices) DEVICES=$2; shift 2 ;;
    --mtu) MTU=$2; shift 2 ;;
    --inline) INLINE=$2; shift 2 ;;
    --gid) GID=$2; shift 2 ;;
    --bw-tx-depth) BW_TX=$2; shift 2 ;;
    *) die "unknown argument: $1" ;;
  esac
done
[[ -x "$IBSCOPE" ]] || die "--ibscope: no executable at '$IBSCOPE'"
[[ -d "$WORK" ]] || die "--work: no directory '$WORK'"

read -r -a DEVS <<<"${IBSCOPE_RXE_DEVICES:-rxe0 rxe1}"
read -r -a ADDRS <<<"${IBSCOPE_RXE_ADDRS:-192.0.2.1 192.0.2.2}"
GID=${GID:-${IBSCOPE_RXE_GID_INDEX:-1}}
case "$DEVICES" in
  same) DEV_A=${DEVS[0]}; DEV_B=${DEVS[0]}; ADDR_B=${ADDRS[0]}; IBS_DEVS=${DEVS[0]} ;;
  cross) DEV_A=${DEVS[0]}; DEV_B=${DEVS[1]}; ADDR_B=${ADDRS[1]}; IBS_DEVS="${DEVS[0]},${DEVS[1]}" ;;
  *) die "--devices: same or cross" ;;
esac

perftest_of() {
  case "$1" in
    write_bw) echo ib_write_bw ;; write_lat) echo ib_write_lat ;;
    read_bw) echo ib_read_bw ;; read_lat) echo ib_read_lat ;;
    send_bw) echo ib_send_bw ;; send_lat) echo ib_send_lat ;;
    *) die "--tests: unknown test '$1'" ;;
  esac
}
for t in ${TESTS//,/ }; do
  command -v "$(perftest_of "$t")" >/dev/null || die "$(perftest_of "$t") not on PATH (perftest)"
done

# The flags both tools get, explicitly (perftest's defaults, which ibscope shares, except
# where noted). CQ moderation for bandwidth: perftest signals one completion per 100 messages
# (at most the tx depth) up to 8 KiB and every message above (MSG_SIZE_CQ_MOD_LIMIT); passed
# to both so that they signal alike.
common_flags() { # TEST SIZE -> flags understood by both tools
  local test=$1 size=$2 tx cq
  local flags=(-s "$size" -n "$ITERS" -m "$MTU" -x "$GID")
  case "$test" in
    *_bw)
      tx=$BW_TX
      if (( size > 8192 )); then cq=1; else cq=$(( BW_TX < 100 ? BW_TX : 100 )); fi
      flags+=(-t "$tx" -Q "$cq") ;;
    *_lat) flags+=(-t 1) ;;
  esac
  # RDMA READ carries no inline data (both tools force 0); passing -I would only warn.
  [[ "$test" == read_* ]] || flags+=(-I "$INLINE")
  echo "${flags[@]}"
}

mkdir -p "$WORK/runs"
MANIFEST="$WORK/manifest.tsv"
printf 'idx\trep\ttest\tsize\ttool\trc\tattempts\twall_s\tfile\tcommand\n' >"$MANIFEST"
{
  echo "guest: $(uname -r), $(nproc) vCPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "devices: $DEVICES (initiator $DEV_A, target $DEV_B at $ADDR_B), GID index $GID"
  echo "perftest: $(dpkg-query -W -f '${Version}' perftest 2>/dev/null || echo '?')"
} >"$WORK/guest_info.txt"
cat "$WORK/guest_info.txt"

IDX=0
PORT=18515
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

run_ibscope() { # TEST SIZE FILE -> rc
  local test=$1 size=$2 file=$3 out
  out="/tmp/pvp-ibscope-$IDX"
  mkdir -p "$out"
  # shellcheck disable=SC2046
  timeout -k 5 300 "$IBSCOPE" probe "$test" --np 2 -d "$IBS_DEVS" $(common_flags "$test" "$size") --no-bind \
    --format json --out "$out" >"$file" 2>"$file.err"
}

# perftest: server on the target device in the background, client on the initiator's device.
# The client is retried while the server is not listening yet; the whole pair is retried when
# perftest's CPU-MHz calibration fails under TCG ("Can't produce a report").
run_perftest() { # TEST SIZE FILE -> rc; sets ATTEMPTS
  local test=$1 size=$2 file=$3 prog flags rc srv
  prog=$(perftest_of "$test")
  flags=$(common_flags "$test" "$size")
  ATTEMPTS=0
  for _ in 1 2 3 4; do
    PORT=$(( PORT >= 19500 ? 18515 : PORT + 1 ))
    # shellcheck disable=SC2086
    timeout -k 5 300 "$prog" -d "$DEV_B" $flags -p "$PORT" >"$file.server" 2>&1 &
    srv=$!
    rc=1
    for _ in $(seq 1 40); do
      ATTEMPTS=$((ATTEMPTS + 1))
      sleep 0.25
      # shellcheck disable=SC2086
      timeout -k 5 300 "$prog" -d "$DEV_A" $flags -p "$PORT" "$ADDR_B" >"$file" 2>"$file.err" && rc=0 || rc=$?
      if [[ $rc -eq 0 ]]; then break; fi
      # Not listening yet: the client could not connect; anything else is a real failure.
      if grep -qiE "couldn't connect|unable to open file descriptor|connection refused" \
           "$file" "$file.err"; then
        kill -0 "$srv" 2>/dev/null && continue
      fi
      break
    done
    if [[ $rc -ne 0 ]]; then kill "$srv" 2>/dev/null || true; fi
    wait "$srv" 2>/dev/null || true
    [[ $rc -eq 0 ]] && return 0
    grep -q "Can't produce a report" "$file" "$file.err" "$file.server" || return "$rc"
    echo "#   $prog: CPU-MHz calibration failed (Can't produce a report); retrying" >&2
  done
  return "$rc"
}

record() { # REP TEST SIZE TOOL RC T0 FILE COMMAND
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\n' "$IDX" "$1" "$2" "$3" "$4" "$5" \
    "${ATTEMPTS:-1}" "$(since "$6")" "$7" "$8" >>"$MANIFEST"
}

one() { # REP TEST SIZE TOOL
  local rep=$1 test=$2 size=$3 tool=$4 file t0 rc=0
  IDX=$((IDX + 1))
  file="$WORK/runs/$(printf '%03d' "$IDX")-$tool-$test-$size-rep$rep.txt"
  t0=$(now)
  ATTEMPTS=1
  if [[ $tool == ibscope ]]; then
    run_ibscope "$test" "$size" "$file" || rc=$?
    record "$rep" "$test" "$size" ibscope "$rc" "$t0" "$file" \
      "ibscope probe $test --np 2 -d $IBS_DEVS $(common_flags "$test" "$size")"
  else
    run_perftest "$test" "$size" "$file" || rc=$?
    record "$rep" "$test" "$size" perftest "$rc" "$t0" "$file" \
      "$(perftest_of "$test") -d $DEV_B $(common_flags "$test" "$size") & $(perftest_of "$test") -d $DEV_A $(common_flags "$test" "$size") $ADDR_B"
  fi
  printf '#   rep %d %-9s %6s B  %-8s rc=%d  %5.1fs\n' "$rep" "$test" "$size" "$tool" "$rc" \
    "$(since "$t0")" >&2
}

START=$(now)
for rep in $(seq 1 "$REPS"); do
  for test in ${TESTS//,/ }; do
    case "$test" in *_bw) sizes=$BW_SIZES ;; *) sizes=$LAT_SIZES ;; esac
    for size in ${sizes//,/ }; do
      if (( rep % 2 == 1 )); then
        one "$rep" "$test" "$size" ibscope; one "$rep" "$test" "$size" perftest
      else
        one "$rep" "$test" "$size" perftest; one "$rep" "$test" "$size" ibscope
      fi
    done
  done
done
echo "guest: $IDX runs in $(since "$START" | cut -d. -f1) s; load average at the end" \
     "$(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/guest_info.txt"
