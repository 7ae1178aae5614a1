#!/usr/bin/env bash
# LeakSanitizer over ibscope's main commands (tests/leaks/README.md). Run by ctest in the
# sanitizer build (label leaks): each command runs for real, small, with leak detection on, and
# must exit 0 with no LeakSanitizer report from any process (the launcher and every rank).
# LEAK_CANARY, a sanitizer-built program that loses an allocation on purpose, runs first under
# the same settings and must be reported: proof that those settings still see leaks.
# Usage: check_main_commands.sh IBSCOPE_BINARY [LEAK_CANARY]
set -uo pipefail
ibscope=${1:?usage: check_main_commands.sh IBSCOPE_BINARY [LEAK_CANARY]}
canary=${2:-}
work=$(mktemp -d /tmp/ibscope-leaks.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer (with glibc 2.36) recorded a bogus range for
# the main thread's dynamic TLS in `ibscope run`'s rank 0 ("DTLS 10 at 0x31f1-0x4000042f3" with
# LSAN_OPTIONS=verbosity=1:log_threads=1) and its tracer died reading it at exit ("Tracer caught
# signal 11: addr=0x31f8"), every run once a change elsewhere moved the layout (2026-12-07),
# before any leak check was made. Without the interception the dynamic TLS blocks of dlopen'd
# modules are not scanned: a pointer held only there would show as a leak (a false report, which
# fails), never hide one.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=23:intercept_tls_get_addr=0"
# hwloc dlopens its PCI plugin, which pulls in libpciaccess; libpciaccess keeps the pci.ids
# names it read (~600 KB, thousands of strdup'd strings) in its own globals, and hwloc dlcloses
# the plugin when the topology is destroyed. Once libpciaccess is unloaded those globals are
# gone and LeakSanitizer reports everything they held, from "<unknown module>" frames. Loaded
# from the start, libpciaccess stays mapped and its tables stay reachable: no report, no
# suppression that could also hide one of ours. ASan must come first in the link order unless
# told otherwise; the preloaded library makes no allocation before ASan initialises.
pciaccess=$(ldconfig -p 2>/dev/null | awk '/libpciaccess\.so\.0 /{ print $NF; exit }')
if [ -n "$pciaccess" ]; then
  export LD_PRELOAD="$pciaccess${LD_PRELOAD:+:$LD_PRELOAD}"
  ASAN_OPTIONS+=":verify_asan_link_order=0"
fi
export LSAN_OPTIONS="report_objects=0"
failures=0

if [ -n "$canary" ]; then
  "$canary" > "$work/canary.log" 2>&1
  rc=$?
  if [ $rc -ne 23 ] || ! grep -q "ERROR: LeakSanitizer: detected memory leaks" "$work/canary.log"; then
    echo "FAIL canary (exit $rc, wanted 23 and a LeakSanitizer report): these ASAN_OPTIONS," \
      "LSAN_OPTIONS and LD_PRELOAD do not detect a known leak, so a clean run would prove nothing"
    tail -20 "$work/canary.log"
    exit 1
  fi
  echo "ok   canary: LeakSanitizer reported the leak planted in $(basename "$canary")"
fi

check() {  # check NAME ARGS...: runs ibscope ARGS, requires exit 0 and no leak report
  local name=$1
  shift
  local log="$work/$name.log"
  local start=$SECONDS
  "$ibscope" "$@" > "$log" 2>&1
  local rc=$?
  # LeakSanitizer's own stop-the-world tracer sometimes dies at exit ("Tracer caught signal 11
  # ... LeakSanitizer has encountered a fatal error"; google/sanitizers#1353): it checked nothing,
  # so that run says nothing either way. Once more; a second crash, or any leak report, fails.
  if grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
    ! grep -q "ERROR: LeakSanitizer: detected memory leaks" "$log"; then
    echo "again $name: LeakSanitizer's tracer crashed at exit (no leak check was made)"
    "$ibscope" "$@" > "$log" 2>&1
    rc=$?
  fi
  if [ $rc -ne 0 ] || grep -q "LeakSanitizer" "$log"; then
    echo "FAIL $name (exit $rc, $((SECONDS - start)) s): ibscope $*"
    grep -B2 -A25 "LeakSanitizer" "$log" | head -60 || tail -20 "$log"
    [ $rc -ne 0 ] && tail -20 "$log"
    failures=$((failures + 1))
  else
    echo "ok   $name ($((SECONDS - start)) s): ibscope $*"
  fi
}

newest() { ls -t "$work"/results/"$1"*.json 2>/dev/null | head -1; }

check run run --np 2 -e 64K -n 5 -w 1 --p2p-maxbytes 64K --p2p-iters 50 --p2p-bw-iters 3 \
      --p2p-warmup 2 --out results
check allreduce allreduce --np 3 -A all -b 8 -e 64K -n 5 -w 1 --out results
check p2p p2p --np 2 -b 1 -e 64K --out results
check topo topo --out results

run_file=$(newest ibscope-run)
ar_file=$(newest ibscope-allreduce)
if [ -z "$run_file" ] || [ -z "$ar_file" ]; then
  echo "FAIL: the run and allreduce commands left no results file in $work/results"
  exit 1
fi
check validate validate "$run_file" "$ar_file"
check fit fit "$ar_file"
check report report "$run_file" "$ar_file" -o "$work/report.html"
check predict predict --fit "$ar_file" --nodes 4 --gpus-per-node 2 --inter-lat-us 5 \
      --inter-bw-gbps 48 --sizes 64K,1M
check model model --preset llama2-7b --inter-bw-gbps 48 --inter-lat-us 5 --intra-bw-gbps 300 \
      --intra-lat-us 2
check algorithms algorithms
# Errors take the unwinding paths: a usage error and a corrupt results file must not leak either.
check_fails() {  # check_fails NAME STATUS ARGS...: requires exit STATUS and no leak report
  local name=$1 want=$2
  shift 2
  local log="$work/$name.log"
  "$ibscope" "$@" > "$log" 2>&1
  local rc=$?
  if [ $rc -ne "$want" ] || grep -q "LeakSanitizer" "$log"; then
    echo "FAIL $name (exit $rc, wanted $want): ibscope $*"
    tail -30 "$log"
    failures=$((failures + 1))
  else
    echo "ok   $name (exit $rc as wanted): ibscope $*"
  fi
}
head -c 300 "$ar_file" > "$work/corrupt.json"
check_fails corrupt-file 2 validate "$work/corrupt.json"
check_fails bad-flag 2 allreduce --np 2 -e 12Q

if [ $failures -ne 0 ]; then
  echo "$failures command(s) failed or leaked"
  exit 1
fi
echo "no leaks in the main commands"
