#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt, clang) and runs each for a bounded
# time on a scratch corpus seeded from tests/fuzz/corpus/<name>/ (the checked-in seeds are
# only read). Exits 1 when any target found a crash, leak, timeout or out-of-memory, and says
# how to turn the input into a regression test. docs/fuzzing.md has the longer runs.
#
#   tests/fuzz/run_fuzzers.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
#
# Environment: IBSCOPE_FUZZ_BUILD (build folder, default build/fuzz), CXX (default clang++),
# IBSCOPE_FUZZ_WORK (scratch folder, default a new temporary one, kept when something failed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
[[ $# -gt 0 ]] && shift
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds < 1)); then
  echo "run_fuzzers.sh: SECONDS_PER_TARGET must be a positive integer, got '$seconds'" >&2
  exit 2
fi
build=${IBSCOPE_FUZZ_BUILD:-$root/build/fuzz}
cxx=${CXX:-clang++}
if ! command -v "$cxx" >/dev/null; then
  echo "run_fuzzers.sh: $cxx not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi

# The target list is the one CMake uses (targets.cmake), so the two cannot disagree.
mapfile -t all < <(sed -n 's/^set(IBSCOPE_FUZZ_TARGETS \(.*\))$/\1/p' "$here/targets.cmake" |
                   tr ' ' '\n')
targets=("$@")
((${#targets[@]} > 0)) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  if [[ " ${all[*]} " != *" $t "* ]]; then
    echo "run_fuzzers.sh: unknown target '$t' (targets: ${all[*]})" >&2
    exit 2
  fi
done

echo "# building ${targets[*]} in $build ($cxx)"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$build" --target "${targets[@]/#/fuzz_}" -- -j"${IBSCOPE_FUZZ_JOBS:-2}" >/dev/null

work=${IBSCOPE_FUZZ_WORK:-$(mktemp -d -t ibscope-fuzz.XXXXXX)}
mkdir -p "$work"
jobs=${IBSCOPE_FUZZ_JOBS:-$(nproc)}

# Runs one target on its scratch corpus; its summary goes to $work/T/summary, its exit status
# to $work/T/rc.
fuzz_one() {
  local t=$1 corpus=$work/$1/corpus artifacts=$work/$1/artifacts/ log=$work/$1/fuzz.log
  rm -rf "${work:?}/$t"
  mkdir -p "$corpus" "$artifacts"
  cp "$here/corpus/$t"/* "$corpus"/
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$artifacts")
  [[ -f $here/dicts/$t.dict ]] && args+=(-dict="$here/dicts/$t.dict")
  local start rc elapsed execs rate cov files
  start=$(date +%s)
  set +e
  "$build/fuzz_$t" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  files=$(find "$corpus" -type f | wc -l)
  {
    printf '%-10s %s  execs %s (%s/s)  %s  corpus %s files  %ss\n' "$t" \
      "$([[ $rc == 0 ]] && echo ok || echo FAILED)" "${execs:-?}" "${rate:-?}" "${cov:-cov: ?}" \
      "$files" "$elapsed"
    if [[ $rc != 0 ]]; then
      grep -E '^==[0-9]+==ERROR|^SUMMARY|fuzz property failed|uncaught exception|what\(\)' "$log" |
        head -5 | sed 's/^/    /'
      for input in "$artifacts"*; do
        [[ -f $input ]] || continue
        echo "    input: $input"
        echo "    make it a regression test (then fix the parser until fuzz/replay/$t passes):"
        echo "      cp $input $here/regressions/$t/$(basename "$input")"
      done
      echo "    log: $log"
    fi
  } >"$work/$t.summary"
  echo "$rc" >"$work/$t.rc"
}

# Up to $jobs targets at once (one core each; the default is every core), summaries in order.
echo "# fuzzing ${#targets[@]} targets, ${seconds}s each, $jobs at a time"
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait || true
failed=()
for t in "${targets[@]}"; do
  cat "$work/$t.summary"
  [[ $(cat "$work/$t.rc" 2>/dev/null) == 0 ]] || failed+=("$t")
done

if ((${#failed[@]} > 0)); then
  echo "# fuzzing found problems in: ${failed[*]} (scratch kept in $work)"
  exit 1
fi
[[ -n ${IBSCOPE_FUZZ_WORK:-} ]] || rm -rf "$work"
echo "# fuzzing: ${#targets[@]} targets, ${seconds}s each, nothing found"
