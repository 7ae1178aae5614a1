#!/usr/bin/env bash
# UCX over RDMA between two emulated hosts in the Soft-RoCE guest, one command (see
# bench/README.md): ibscope p2p (UCX tag bandwidth, ibscope's own rails and UCX_TLS) beside
# ucx_perftest tag_bw with the same UCX_TLS and devices, beside `ibscope probe write_bw` (raw
# verbs) on the same pair, and the 2-rank ring all-reduce's busbw beside the p2p bandwidth.
#
#   bench/ucx_rxe_compare.sh [BUILD_DIR] [--size BYTES] [--window N] [--iters N] [--reps N]
#                            [--timeout S] [--keep]
#
# BUILD_DIR (default build/release) must hold src/ibscope. --size (default 262144) message
# size of every tool; --window (16) messages in flight; --iters (20) windows per run; --reps (3)
# runs of each tool, alternating order (ABBA). Prints the median GB/s (1e9 B/s) of each tool
# and the ratios ibscope p2p / ucx_perftest, ibscope p2p / probe write_bw, ring busbw / p2p.
# Soft-RoCE under TCG: absolute figures say nothing about hardware; compare the ratios.
# Exit: 0 table printed; 1 a run failed; the harness's 77/124/125 pass through.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
BUILD="$REPO/build/release"
ARGS=()
TIMEOUT=900
KEEP=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size | --window | --iters | --reps) ARGS+=("$1" "$2"); shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) BUILD=$(cd "$1" && pwd -P); shift ;;
  esac
done
[ -x "$BUILD/src/ibscope" ] || { echo "error: $BUILD/src/ibscope not built" >&2; exit 2; }
WORK=$(mktemp -d "$REPO/.bench-ucx-rxe.XXXXXX")
trap '[ "$KEEP" = 1 ] && echo "kept $WORK" >&2 || rm -rf "$WORK"' EXIT
share=()
[[ "$BUILD" == "$REPO"/* ]] || share=(--share "$BUILD")
rc=0
"$REPO/tests/rxe/run_in_guest.sh" --timeout "$TIMEOUT" "${share[@]}" -- \
  "$REPO/bench/ucx_rxe_compare_guest.sh" --ibscope "$BUILD/src/ibscope" --work "$WORK/guest" \
  "${ARGS[@]}" | tee "$WORK/runs.txt" || rc=$?
[ "$rc" = 0 ] || { echo "error: the guest run failed (exit $rc)" >&2; exit "$rc"; }
python3 - "$WORK/runs.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) == 3:
        try:
            runs.setdefault(w[0], []).append(float(w[2]))
        except ValueError:
            pass
need = ["ibscope_p2p", "ucx_perftest", "probe_write_bw", "allreduce_ring_busbw"]
missing = [n for n in need if n not in runs]
if missing:
    sys.exit(f"error: no figure from {', '.join(missing)}")
med = {k: statistics.median(v) for k, v in runs.items()}
print(f"\n{'tool':<24} {'median GB/s':>12}  runs")
for k in need:
    print(f"{k:<24} {med[k]:>12.5f}  {' '.join(f'{x:.5f}' for x in runs[k])}")
print(f"\nibscope p2p / ucx_perftest tag_bw : {med['ibscope_p2p'] / med['ucx_perftest']:.3f}")
print(f"ibscope p2p / probe write_bw      : {med['ibscope_p2p'] / med['probe_write_bw']:.3f}")
print(f"ring all-reduce busbw / p2p       : {med['allreduce_ring_busbw'] / med['ibscope_p2p']:.3f}")
PY
