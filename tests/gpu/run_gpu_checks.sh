#!/usr/bin/env bash
# Every GPU check in one go, on a machine with an NVIDIA GPU, its driver and the CUDA toolkit
# (tests/gpu/README.md):
#   1. build     configure (once) and build ibscope, ibscope_gpu_tests and
#                ibscope_bench_gpu_reduce with -DIBSCOPE_CUDA=ON into BUILD_DIR;
#   2. kernels   ibscope_gpu_tests: every type x op against the host kernels byte for byte,
#                memory, streams, events, copies, device info, dma-buf export;
#   3. bench     ibscope_bench_gpu_reduce: reduction GB/s beside device-to-device copy GB/s and
#                the device's peak, 1 MiB .. BENCH_MAX;
#   4. p2p       two local ranks, GPU buffers, staged through host memory, then direct (UCX
#                moves device memory itself; SKIP when this UCX has no CUDA support);
#   5. allreduce two local ranks, GPU buffers, 8 B .. 64 MiB, results checked (-c 1).
# Then a summary: PASS/FAIL/SKIP per step with its key figures, and where the logs are.
#
# usage: tests/gpu/run_gpu_checks.sh [BUILD_DIR (default build/gpu)]
# Environment: BENCH_MAX (default 1G), P2P_MAX (default 64M), JOBS (default nproc),
#   STEP_TIMEOUT (seconds per step, default 300), LOG_DIR (default a new /tmp folder).
# Exit status: 0 when no step failed (SKIP is not a failure), 1 otherwise, 2 usage.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -gt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
build=${1:-build/gpu}
bench_max=${BENCH_MAX:-1G}
p2p_max=${P2P_MAX:-64M}
jobs=${JOBS:-$(nproc)}
step_timeout=${STEP_TIMEOUT:-300}
log_dir=${LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/ibscope-gpu-checks-XXXXXX")}
mkdir -p "$log_dir"

names=()
results=()
figures=()
record() { names+=("$1"); results+=("$2"); figures+=("$3"); }

# run_step NAME -- COMMAND...: runs COMMAND under `timeout`, output to LOG_DIR/NAME.log (and the
# terminal); sets step_rc without letting set -e end the script.
step_rc=0
run_step() {
  local name=$1
  shift 2
  echo
  echo "== $name: $* ($(date +%T))"
  set +e
  timeout --kill-after=10 "$step_timeout" "$@" 2>&1 | tee "$log_dir/$name.log"
  step_rc=${PIPESTATUS[0]}
  set -e
  [ "$step_rc" -ne 124 ] || echo "$name: timed out after ${step_timeout}s" | tee -a "$log_dir/$name.log"
}

summary() {
  echo
  echo "==================== GPU checks: summary ===================="
  local failed=0 i
  for i in "${!names[@]}"; do
    printf '%-16s %-5s %s\n' "${names[$i]}" "${results[$i]}" "${figures[$i]}"
    [ "${results[$i]}" != FAIL ] || failed=1
  done
  echo "logs: $log_dir"
  return $failed
}

# ---- 0. the machine ---------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L | tee "$log_dir/nvidia-smi.log" || true
else
  echo "nvidia-smi not found (driver tools missing?)"
fi

# ---- 1. build ---------------------------------------------------------------------------------
ibscope=$build/src/ibscope
gpu_tests=$build/tests/ibscope_gpu_tests
gpu_bench=$build/bench/ibscope_bench_gpu_reduce
build_ok=1
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  run_step configure -- cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DIBSCOPE_CUDA=ON -DIBSCOPE_BUILD_TESTS=ON
  [ "$step_rc" -eq 0 ] || build_ok=0
fi
if [ "$build_ok" = 1 ]; then
  run_step build -- cmake --build "$build" -j "$jobs" \
    --target ibscope ibscope_gpu_tests ibscope_bench_gpu_reduce
  [ "$step_rc" -eq 0 ] || build_ok=0
fi
if [ "$build_ok" = 0 ]; then
  record build FAIL "see $log_dir/configure.log / build.log"
  summary || true
  exit 1
fi
record build PASS "$build ($(grep -E '^CMAKE_BUILD_TYPE' "$build/CMakeCache.txt" | cut -d= -f2))"

# ---- 2. kernel tests --------------------------------------------------------------------------
run_step kernels -- env IBSCOPE_GPU_REQUIRED=1 "$gpu_tests" --durations yes
line=$(grep -E 'All tests passed|test cases:' "$log_dir/kernels.log" | tail -n1 || true)
if [ "$step_rc" -eq 0 ]; then record kernels PASS "$line"; else record kernels FAIL "rc $step_rc; $line"; fi

# ---- 3. reduction bench -----------------------------------------------------------------------
run_step bench -- "$gpu_bench" --max "$bench_max"
line=$(grep -E '^gpu_reduce_gbps' "$log_dir/bench.log" | tail -n1 || true)
if [ "$step_rc" -eq 0 ] && [ -n "$line" ]; then
  record bench PASS "$line"
else
  record bench FAIL "rc $step_rc; $line"
fi

# ---- 4. p2p, staged and direct ----------------------------------------------------------------
# The largest size's row of the bandwidth table (the last table line that starts with a size).
last_row() { grep -E '^[[:space:]]*[0-9]+(\.[0-9]+)?[[:space:]]*([KMG]i?B|B)?[[:space:]]' "$1" | tail -n1 | tr -s ' ' || true; }
for path in staged direct; do
  run_step "p2p-$path" -- "$ibscope" p2p --np 2 --mem cuda --mem-path "$path" -b 1 -e "$p2p_max" \
    --out "$log_dir/results"
  if [ "$step_rc" -eq 0 ]; then
    record "p2p-$path" PASS "$(last_row "$log_dir/p2p-$path.log")"
  elif [ "$path" = direct ] &&
       grep -qiE 'ucx.*(cuda|gpu)|(cuda|gpu).*ucx' "$log_dir/p2p-$path.log"; then
    # This UCX cannot move device memory itself: not a failure of ibscope.
    record "p2p-$path" SKIP "$(grep -iE 'ucx.*(cuda|gpu)|(cuda|gpu).*ucx' "$log_dir/p2p-$path.log" | head -n1)"
  else
    record "p2p-$path" FAIL "rc $step_rc; $(tail -n1 "$log_dir/p2p-$path.log")"
  fi
done

# ---- 5. all-reduce on GPU buffers, checked -----------------------------------------------------
run_step allreduce -- "$ibscope" allreduce --np 2 --mem cuda -b 8 -e 64M -c 1 \
  --out "$log_dir/results"
if [ "$step_rc" -eq 0 ]; then
  record allreduce PASS "$(last_row "$log_dir/allreduce.log")"
else
  record allreduce FAIL "rc $step_rc; $(tail -n1 "$log_dir/allreduce.log")"
fi

summary
