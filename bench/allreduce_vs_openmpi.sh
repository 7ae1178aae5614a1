#!/usr/bin/env bash
# ibscope's all-reduce beside Open MPI's on this host, one command (see bench/README.md).
#
#   bench/allreduce_vs_openmpi.sh [BUILD_DIR] [--out DIR] [--ranks "2 4"] [--max SIZE]
#                                 [--no-rabenseifner] [--wait-idle SECONDS]
#
# BUILD_DIR defaults to build/release and must hold src/ibscope, bench/ibscope_bench_memcpy
# and bench/ibscope_bench_mpi_allreduce. Raw outputs go to --out (default a new folder under
# /tmp), never into the repository. Exit status: 0 tables printed, 1 a run was wrong (#wrong
# > 0) or ibscope failed, 2 usage or missing binaries.
set -u -o pipefail

usage() {
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=""
OUT=""
RANKS="2 4"
MAX="256M"
RABENSEIFNER=1
WAIT_IDLE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; OUT=$2; shift 2 ;;
    --ranks) [[ $# -ge 2 ]] || usage; RANKS=$2; shift 2 ;;
    --max) [[ $# -ge 2 ]] || usage; MAX=$2; shift 2 ;;
    --no-rabenseifner) RABENSEIFNER=0; shift ;;
    --wait-idle) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage; WAIT_IDLE=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
BUILD=${BUILD:-build/release}
[[ "$BUILD" = /* ]] || BUILD="$REPO/$BUILD"

IBSCOPE="$BUILD/src/ibscope"
MEMCPY="$BUILD/bench/ibscope_bench_memcpy"
MPIREF="$BUILD/bench/ibscope_bench_mpi_allreduce"
for bin in "$IBSCOPE" "$MEMCPY" "$MPIREF"; do
  if [[ ! -x "$bin" ]]; then
    echo "error: $bin not found; build first: cmake --build ${BUILD#"$REPO"/}" >&2
    [[ "$bin" == "$MPIREF" ]] && echo "  (it is built only when CMake finds MPI: apt-get install openmpi-bin libopenmpi-dev)" >&2
    exit 2
  fi
done
command -v mpirun >/dev/null || { echo "error: mpirun not on PATH (openmpi-bin)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 is needed to build the tables" >&2; exit 2; }

MAX_BYTES=$(numfmt --from=iec "${MAX%B}" 2>/dev/null) || { echo "bad --max: $MAX" >&2; exit 2; }
if [[ -z "$OUT" ]]; then
  OUT=$(mktemp -d "/tmp/ibscope-bench-$(date -u +%Y%m%dT%H%M%SZ)-XXXX")
else
  mkdir -p "$OUT" || exit 2
  OUT=$(cd "$OUT" && pwd)
fi
case "$OUT/" in
  "$REPO"/*) echo "error: --out must be outside the repository ($REPO)" >&2; exit 2 ;;
esac

# Sizes: factor 4 from 1 KiB; big sizes get fewer iterations so 2 + 4 ranks fit in minutes.
PARTS=(lat small big)
SMALL=(-b 1K -e 4M -f 4 -n 20 -w 5)
BIG=(-b 16M -e "$MAX" -f 4 -n 10 -w 3)
LAT=(-b 8 -e 8 -n 200 -w 20)
if (( MAX_BYTES < 16 << 20 )); then
  SMALL=(-b 1K -e "$MAX" -f 4 -n 20 -w 5)
  PARTS=(lat small)
fi
RUN_TIMEOUT=300  # seconds per invocation; a hung run costs one column, not the whole bench

MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
declare -A MCA
VARIANTS=(ompi-default ompi-ucx ompi-ring)
MCA[ompi-default]=""
MCA[ompi-ucx]="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
MCA[ompi-ring]="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4"
if [[ $RABENSEIFNER -eq 1 ]]; then
  VARIANTS+=(ompi-rabenseifner)
  MCA[ompi-rabenseifner]="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 6"
fi

# cpu_busy: percent of all CPU time spent outside idle/iowait over the next 2 s (the load
# average lags by minutes, so it is shown but not used to decide).
cpu_busy() {
  local a b
  a=$(head -1 /proc/stat)
  sleep 2
  b=$(head -1 /proc/stat)
  python3 -c "
a, b = [list(map(int, l.split()[1:])) for l in ('$a', '$b')]
d = [y - x for x, y in zip(a, b)]
idle = d[3] + d[4]
print(round(100 * (sum(d) - idle) / max(sum(d), 1)))"
}
BUSY_PCT=25
busy() { [[ $(cpu_busy) -gt $BUSY_PCT ]]; }
if [[ $WAIT_IDLE -gt 0 ]] && busy; then
  echo "# waiting up to ${WAIT_IDLE}s for the host to go idle (CPU busy > ${BUSY_PCT}%)" >&2
  deadline=$((SECONDS + WAIT_IDLE))
  while busy && [[ $SECONDS -lt $deadline ]]; do sleep 5; done
fi

# busy_jiffies: CPU time used by everything since boot; our_jiffies: by this script's
# finished children (their user + system time, which includes the ranks under mpirun).
busy_jiffies() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
our_jiffies() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }

START=$(date +%s)
{
  echo "# allreduce_vs_openmpi: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
  echo "# $("$IBSCOPE" --version 2>/dev/null | head -1) at $IBSCOPE;" \
       "checkout $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo '+dirty')"
  echo "# $(mpirun --version 2>/dev/null | head -1); UCX $(ucx_info -v 2>/dev/null | sed -n 's/^# Version //p' | head -1)"
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); CPU busy over 2 s before start: $(cpu_busy)%"
  echo "# raw outputs: $OUT"
} | tee "$OUT/banner.txt"
PCT=$(sed -n 's/.*CPU busy over 2 s before start: \([0-9]*\)%.*/\1/p' "$OUT/banner.txt")
if [[ ${PCT:-0} -gt $BUSY_PCT ]]; then
  echo "# WARNING: the host is busy (${PCT}% CPU before start, $(nproc) cores): every column" \
       "will be noisy; rerun when it is idle (--wait-idle 600)" | tee -a "$OUT/banner.txt"
fi

# run LABEL FILE CMD...: stdout to FILE, stderr to FILE.err; returns the command's status.
run() {
  local label=$1 file=$2
  shift 2
  local t0=$SECONDS
  timeout -k 10 "$RUN_TIMEOUT" "$@" >"$file" 2>"$file.err"
  local rc=$?
  printf '#   %-22s %4ds rc=%d\n' "$label" $((SECONDS - t0)) "$rc" >&2
  return $rc
}

# why FILE: the last meaningful lines of a failed run's stderr, on one line.
why() {
  grep -v '^\s*$' "$1.err" | grep -v -- '^-\+$' | tail -4 | tr '\n' ' ' | cut -c1-300
}

BUSY0=$(busy_jiffies)
OURS0=$(our_jiffies)
echo "# memcpy (single core, 256 MiB) ..." >&2
run memcpy-before "$OUT/memcpy-before.txt" "$MEMCPY" 256M 8

STATUS=0
# Interleaved: for each block of sizes, ibscope and then every Open MPI configuration, so
# that a burst of background load hits one block of every column, not whole columns.
for np in $RANKS; do
  dir="$OUT/np$np"
  mkdir -p "$dir"
  echo "# $np ranks" >&2
  declare -A FAILED=()
  for part in "${PARTS[@]}"; do
    case $part in lat) args=("${LAT[@]}") ;; small) args=("${SMALL[@]}") ;; big) args=("${BIG[@]}") ;; esac
    if ! run "ibscope $part" "$dir/ibscope-$part.json" \
        "$IBSCOPE" allreduce --np "$np" "${args[@]}" -d float -o sum --out "$dir" --format json; then
      echo "ibscope: $part run failed: $(why "$dir/ibscope-$part.json")" | tee -a "$dir/skipped.txt" >&2
      STATUS=1
    fi
    for v in "${VARIANTS[@]}"; do
      [[ -n "${FAILED[$v]:-}" ]] && continue
      # shellcheck disable=SC2206  # MCA options are meant to split on spaces
      mca=(${MCA[$v]})
      run "$v $part" "$dir/$v-$part.txt" "${MPIRUN[@]}" -np "$np" "${mca[@]}" "$MPIREF" "${args[@]}"
      rc=$?
      if [[ $rc -ne 0 ]]; then
        # A failed configuration (e.g. pml ucx refusing the transports) loses its column, with
        # the reason printed under the table; the others still run.
        echo "$v: $part run failed (rc=$rc): $(why "$dir/$v-$part.txt")" >> "$dir/skipped.txt"
        [[ $part == lat ]] && FAILED[$v]=1
      fi
    done
  done
  unset FAILED
done

run memcpy-after "$OUT/memcpy-after.txt" "$MEMCPY" 256M 8
ELAPSED=$(( $(date +%s) - START ))
# CPU time that other processes took while the bench ran: the noise in every column.
HZ=$(getconf CLK_TCK)
OTHER=$(( ($(busy_jiffies) - BUSY0) - ($(our_jiffies) - OURS0) ))
(( OTHER < 0 )) && OTHER=0
LOAD_AFTER="# load average after: $(cut -d' ' -f1-3 /proc/loadavg); other processes used $((OTHER / HZ)) CPU-s during the ${ELAPSED} s run ($(( 100 * OTHER / HZ / (ELAPSED * $(nproc) > 0 ? ELAPSED * $(nproc) : 1) ))% of the machine)"
echo "$LOAD_AFTER" >> "$OUT/banner.txt"

python3 - "$OUT" "$ELAPSED" "$RANKS" "${VARIANTS[@]}" <<'PY' | tee "$OUT/summary.txt" || STATUS=1
import json, os, sys

out, elapsed, ranks, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
MIB = 1 << 20
TARGET_RATIO, TARGET_MEMCPY = 1.10, 0.60

def fmt_size(b):
    for unit, s in (("G", 1 << 30), ("M", MIB), ("K", 1 << 10)):
        if b >= s and b % s == 0:
            return f"{b // s}{unit}"
    return f"{b}"

def bw(x, width):
    """GB/s with three significant digits at least, '-' when missing."""
    if x is None:
        return f"{'-':>{width}}"
    return f"{x:{width}.3f}" if x >= 0.1 else f"{x:{width}.4f}" if x >= 0.001 else f"{x:{width}.1e}"

def read_memcpy(name):
    try:
        with open(os.path.join(out, name)) as f:
            return float(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None

def ibscope_doc(d, part):
    """The results document ibscope printed, or, when it failed (it then prints nothing), the
    partial results file it names on stderr: the sizes finished before the failure."""
    try:
        with open(os.path.join(d, f"ibscope-{part}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(d, f"ibscope-{part}.json.err")) as f:
            for line in f:
                if "# partial results" in line or "# results:" in line:
                    with open(line.rsplit(": ", 1)[1].strip()) as g:
                        return json.load(g)
    except (OSError, ValueError, IndexError):
        pass
    return None

def load_ibscope(d):
    rows, wrong, transports = {}, 0, set()
    for part in ("lat", "small", "big"):
        doc = ibscope_doc(d, part)
        if doc is None:
            continue
        transports.update((doc.get("environment", {}).get("transports") or {}).values())
        for r in doc.get("collectives", {}).get("rows", []):
            if r.get("in_place") or r.get("type") != "float" or r.get("op") != "sum":
                continue
            rows[r["size_bytes"]] = (r["time_us"]["mean"], r["busbw_gbps"], r["time_us"]["p50"])
            wrong += r.get("wrong") or 0
    return rows, wrong, transports

def load_mpi(d, v, np_):
    rows, wrong = {}, 0
    for part in ("lat", "small", "big"):
        try:
            with open(os.path.join(d, f"{v}-{part}.txt")) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) != 5 or line.startswith("#"):
                continue
            # busbw again from the time: the printed column is rounded.
            size, t_us, p = int(f[0]), float(f[1]), int(np_)
            rows[size] = (t_us, size / (t_us * 1e3) * 2 * (p - 1) / p if t_us > 0 else None)
            wrong += max(int(f[4]), 0)
    return rows, wrong

mem = [m for m in (read_memcpy("memcpy-before.txt"), read_memcpy("memcpy-after.txt")) if m]
memcpy = max(mem) if mem else None
print()
print(f"memcpy, one core, 256 MiB, best of 8: "
      + ", ".join(f"{m:.2f}" for m in mem) + " GB/s (before, after); using "
      + (f"{memcpy:.2f}" if memcpy else "n/a"))
short = {"ompi-default": "def", "ompi-ucx": "ucx", "ompi-ring": "ring",
         "ompi-rabenseifner": "rab"}
any_wrong = False
for np_ in ranks:
    d = os.path.join(out, f"np{np_}")
    ib, ib_wrong, ib_transports = load_ibscope(d)
    mpi = {v: load_mpi(d, v, np_) for v in variants}
    cols = [v for v in variants if mpi[v][0]]
    print()
    print(f"== {np_} ranks, float sum, out-of-place, busbw GB/s (1e9), busbw = algbw * 2(p-1)/p ==")
    hdr = f"{'size':>6} {'ibs t(us)':>10} {'ibs p50':>9} {'ibscope':>8}" + "".join(f" {short.get(v, v):>7}" for v in cols)
    hdr += f" {'bestOMPI':>8} {'ibs/best':>8} {'ibs/memcpy':>10}"
    print(hdr)
    sizes = sorted(s for s in set(ib) | {s for v in cols for s in mpi[v][0]} if s >= 1024)
    misses = 0
    for s in sizes:
        ibt, ibb, ibp = ib.get(s, (None, None, None))
        vals = [mpi[v][0].get(s, (None, None))[1] for v in cols]
        known = [(x, v) for x, v in zip(vals, cols) if x is not None]
        best, best_v = max(known) if known else (None, None)
        ratio = ibb / best if ibb is not None and best else None
        frac = ibb / memcpy if ibb is not None and memcpy else None
        line = f"{fmt_size(s):>6} " + (f"{ibt:10.1f}" if ibt is not None else f"{'-':>10}")
        line += f" {ibp:9.1f}" if ibp is not None else f" {'-':>9}"
        line += f" {bw(ibb, 8)}" + "".join(f" {bw(x, 7)}" for x in vals) + f" {bw(best, 8)}"
        line += (f" {ratio:8.2f}" if ratio is not None else f" {'-':>8}")
        line += (f" {frac:10.2f}" if frac is not None else f" {'-':>10}")
        if np_ == "2" and s >= MIB:
            miss = ratio is None or frac is None or ratio < TARGET_RATIO or frac < TARGET_MEMCPY
            if miss:
                line += " *"
                misses += 1
        print(line)
    ib8 = ib.get(8, (None, None, None))
    lat = [("ibscope", ib8[0])] + [(short.get(v, v), mpi[v][0].get(8, (None,))[0])
                                                  for v in cols]
    print("8 B latency, mean of per-iteration max over ranks (us): "
          + ", ".join(f"{n} {t:.2f}" if t is not None else f"{n} -" for n, t in lat)
          + (f" (ibscope p50 {ib8[2]:.2f})" if ib8[2] is not None else ""))
    wrong = {"ibscope": ib_wrong, **{short.get(v, v): mpi[v][1] for v in cols}}
    for t in sorted(ib_transports):
        print(f"ibscope transports: {t}")
    if any(wrong.values()):
        any_wrong = True
        print("#wrong: " + ", ".join(f"{k} {w}" for k, w in wrong.items() if w))
    else:
        print("#wrong: 0 in every column")
    if np_ == "2":
        print(f"targets (2 ranks, >= 1M): ibscope busbw >= {TARGET_RATIO:.2f} x best Open MPI and "
              f">= {TARGET_MEMCPY:.2f} x memcpy; '*' = missed ({misses} rows)")
    else:
        print(f"({np_} ranks on {os.cpu_count()} cores: oversubscribed, no targets)")
    try:
        with open(os.path.join(d, "skipped.txt")) as f:
            for line in f:
                print("skipped: " + line.rstrip())
    except OSError:
        pass
print()
print("columns: def = Open MPI defaults (pml ob1, coll tuned fixed rules); ucx = --mca pml ucx;"
      " ring = coll_tuned_allreduce_algorithm 4; rab = 6 (rabenseifner)")
print(f"sizes 1K..4M: -n 20 -w 5; 16M..: -n 10 -w 3; 8 B: -n 200 -w 20. runtime {elapsed} s; "
      f"raw outputs in {out}")
sys.exit(1 if any_wrong else 0)
PY
echo "$LOAD_AFTER"
exit $STATUS
