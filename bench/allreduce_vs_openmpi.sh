#!/usr/bin/env bash
# ibscope's all-reduce algorithms beside Open MPI's on this host, one command (see bench/README.md).
#
#   bench/allreduce_vs_openmpi.sh [BUILD_DIR] [--out DIR] [--ranks "2 4"] [--max SIZE]
#                                 [--algos LIST] [--no-rabenseifner] [--wait-idle SECONDS]
#
# BUILD_DIR defaults to build/release and must hold src/ibscope, bench/ibscope_bench_memcpy
# and bench/ibscope_bench_mpi_allreduce. --algos: ibscope all-reduce algorithms, comma list or
# all (default; see 'ibscope algorithms'). Raw outputs go to --out (default a new folder under
# /tmp), never into the repository. Exit status: 0 tables printed, 1 a run was wrong (#wrong
# > 0), ibscope failed or no Open MPI configuration ran, 2 usage or missing binaries.
# Missed performance targets are reported (PASS/MISS), not turned into an exit status.
set -u -o pipefail

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
BUILD=""
OUT=""
RANKS="2 4"
MAX="256M"
ALGOS="all"
RABENSEIFNER=1
WAIT_IDLE=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; OUT=$2; shift 2 ;;
    --ranks) [[ $# -ge 2 && $2 =~ ^[[:space:]]*[0-9]+([[:space:],]+[0-9]+)*[[:space:]]*$ ]] || usage
             RANKS=${2//,/ }; shift 2 ;;
    --max) [[ $# -ge 2 ]] || usage; MAX=$2; shift 2 ;;
    --algos) [[ $# -ge 2 && -n $2 ]] || usage; ALGOS=$2; shift 2 ;;
    --no-rabenseifner) RABENSEIFNER=0; shift ;;
    --wait-idle) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage; WAIT_IDLE=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
for np in $RANKS; do
  (( np >= 2 )) || { echo "error: --ranks: every rank count must be >= 2 (got $np)" >&2; exit 2; }
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
# The reference must take -s (an explicit size list); a build from before it did not.
if ! grep -q -a -- '-s SIZE,SIZE' "$MPIREF"; then
  echo "error: $MPIREF predates '-s SIZE,...'; rebuild: cmake --build ${BUILD#"$REPO"/}" >&2
  exit 2
fi

# ibscope's registered all-reduce algorithms, from 'ibscope algorithms'.
REGISTERED=$("$IBSCOPE" algorithms 2>/dev/null | awk '$1 == "allreduce" { print $2 }' | paste -sd, -)
if [[ -z "$REGISTERED" ]]; then
  echo "error: '$IBSCOPE algorithms' lists no all-reduce algorithm (too old a build?)" >&2
  exit 2
fi
if [[ "$ALGOS" == all ]]; then
  ALGOS=$REGISTERED
else
  ALGOS=${ALGOS// /}
  for a in ${ALGOS//,/ }; do
    [[ ",$REGISTERED," == *",$a,"* ]] || {
      echo "error: --algos: '$a' is not a registered all-reduce algorithm ($REGISTERED)" >&2; exit 2; }
  done
fi

MAX_BYTES=$(numfmt --from=iec "${MAX%B}" 2>/dev/null) || { echo "bad --max: $MAX" >&2; exit 2; }
(( MAX_BYTES >= 8 )) || { echo "bad --max: $MAX (at least 8)" >&2; exit 2; }
if [[ -z "$OUT" ]]; then
  OUT=$(mktemp -d "/tmp/ibscope-bench-$(date -u +%Y%m%dT%H%M%SZ)-XXXX")
else
  # Checked before anything is created: a refused --out leaves no folder behind.
  OUT=$(realpath -m -- "$OUT")
  case "$OUT/" in
    "$REPO"/*) echo "error: --out must be outside the repository ($REPO)" >&2; exit 2 ;;
  esac
  mkdir -p "$OUT" || exit 2
fi

# Sizes: 8 B, then 1 KiB .. MAX by factor 4, in three blocks with their own iteration counts
# (the same on both sides). Big sizes get few iterations so 2 + 4 ranks x 5 ibscope
# algorithms x 8 Open MPI configurations fit in about 10-15 minutes on 2 idle cores.
#   lat   8 B, 1 KiB, 4 KiB      -n 200 -w 20   (the latency table)
#   mid   16 KiB .. 4 MiB        -n 20  -w 5
#   big   16 MiB .. 256 MiB      -n 5   -w 2
# Every size first runs one verified call, then a barrier, the warm-ups, the timed calls.
declare -A SIZES ITERS
PARTS=()
sizes_in() {  # sizes_in LO HI: LO, 4 LO, ... <= min(HI, MAX_BYTES), comma separated
  local s=$1 hi=$2 list=""
  (( hi > MAX_BYTES )) && hi=$MAX_BYTES
  while (( s <= hi )); do list+="${list:+,}$s"; s=$((s * 4)); done
  echo "$list"
}
SIZES[lat]=8$(l=$(sizes_in 1024 4096); echo "${l:+,$l}")
SIZES[mid]=$(sizes_in $((16 << 10)) $((4 << 20)))
SIZES[big]=$(sizes_in $((16 << 20)) $((1 << 62)))
ITERS[lat]="-n 200 -w 20"
ITERS[mid]="-n 20 -w 5"
ITERS[big]="-n 5 -w 2"
for part in lat mid big; do [[ -n "${SIZES[$part]}" ]] && PARTS+=("$part"); done
IBS_TIMEOUT=600  # seconds per invocation; a hung run costs one block, not the whole bench
MPI_TIMEOUT=300

MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
FORCE="--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm"
declare -A MCA
VARIANTS=(ompi-default ompi-ucx ompi-1-linear ompi-2-nonoverlap ompi-3-recdbl ompi-4-ring
          ompi-5-segring)
MCA[ompi-default]=""
MCA[ompi-ucx]="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
MCA[ompi-1-linear]="$FORCE 1"
MCA[ompi-2-nonoverlap]="$FORCE 2"
MCA[ompi-3-recdbl]="$FORCE 3"
MCA[ompi-4-ring]="$FORCE 4"
# Segmented ring with its default segment size (0) is exactly the ring (Open MPI falls back to
# it when count < ranks x segment); 1 MiB segments, as Open MPI's old fixed rules used, make it
# a pipelined ring from ranks x 1 MiB up.
MCA[ompi-5-segring]="$FORCE 5 --mca coll_tuned_allreduce_algorithm_segmentsize 1048576"
if [[ $RABENSEIFNER -eq 1 ]]; then
  VARIANTS+=(ompi-6-rabenseifner)
  MCA[ompi-6-rabenseifner]="$FORCE 6"
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
  echo "# ranks: $RANKS; ibscope algorithms: $ALGOS; Open MPI: ${VARIANTS[*]}"
  for part in "${PARTS[@]}"; do
    echo "# sizes ${SIZES[$part]}: ${ITERS[$part]} (both sides)"
  done
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); CPU busy over 2 s before start: $(cpu_busy)%"
  echo "# raw outputs: $OUT"
} | tee "$OUT/banner.txt"
PCT=$(sed -n 's/.*CPU busy over 2 s before start: \([0-9]*\)%.*/\1/p' "$OUT/banner.txt")
if [[ ${PCT:-0} -gt $BUSY_PCT ]]; then
  echo "# WARNING: the host is busy (${PCT}% CPU before start, $(nproc) cores): every column" \
       "will be noisy; rerun when it is idle (--wait-idle 600)" | tee -a "$OUT/banner.txt"
fi

# run LABEL SECONDS FILE CMD...: stdout to FILE, stderr to FILE.err; returns the command's status.
run() {
  local label=$1 limit=$2 file=$3
  shift 3
  local t0=$SECONDS
  timeout -k 10 "$limit" "$@" >"$file" 2>"$file.err"
  local rc=$?
  printf '#   %-26s %4ds rc=%d\n' "$label" $((SECONDS - t0)) "$rc" >&2
  return $rc
}

# why FILE: the last meaningful lines of a failed run's stderr, on one line.
why() {
  grep -v '^\s*$' "$1.err" | grep -v -- '^-\+$' | tail -4 | tr '\n' ' ' | cut -c1-300
}

BUSY0=$(busy_jiffies)
OURS0=$(our_jiffies)
echo "# memcpy (single core, 256 MiB) ..." >&2
run memcpy-before 120 "$OUT/memcpy-before.txt" "$MEMCPY" 256M 8

STATUS=0
# Interleaved: for each block of sizes, ibscope (every algorithm) and then every Open MPI
# configuration, so that a burst of background load hits one block of every column, not whole
# columns.
for np in $RANKS; do
  dir="$OUT/np$np"
  mkdir -p "$dir"
  echo "# $np ranks" >&2
  declare -A FAILED=()
  for part in "${PARTS[@]}"; do
    # shellcheck disable=SC2206  # "-n N -w W" is meant to split
    iters=(${ITERS[$part]})
    if ! run "ibscope $part" "$IBS_TIMEOUT" "$dir/ibscope-$part.json" \
        "$IBSCOPE" allreduce --np "$np" -A "$ALGOS" --sizes "${SIZES[$part]}" "${iters[@]}" \
        -d float -o sum --out "$dir" --format json; then
      echo "ibscope: $part run failed: $(why "$dir/ibscope-$part.json")" | tee -a "$dir/skipped.txt" >&2
      STATUS=1
    fi
    for v in "${VARIANTS[@]}"; do
      [[ -n "${FAILED[$v]:-}" ]] && continue
      # shellcheck disable=SC2206  # MCA options are meant to split on spaces
      mca=(${MCA[$v]})
      run "$v $part" "$MPI_TIMEOUT" "$dir/$v-$part.txt" "${MPIRUN[@]}" -np "$np" "${mca[@]}" \
        "$MPIREF" -s "${SIZES[$part]}" "${iters[@]}"
      rc=$?
      if [[ $rc -ne 0 ]]; then
        # A failed configuration (e.g. pml ucx refusing the transports) loses its column, with
        # the reason printed under the table; the others still run.
        echo "$v: $part run failed (rc=$rc): $(why "$dir/$v-$part.txt")" >> "$dir/skipped.txt"
        [[ $part == "${PARTS[0]}" ]] && FAILED[$v]=1
      fi
    done
  done
  unset FAILED
done

run memcpy-after 120 "$OUT/memcpy-after.txt" "$MEMCPY" 256M 8
ELAPSED=$(( $(date +%s) - START ))
# CPU time that other processes took while the bench ran: the noise in every column.
HZ=$(getconf CLK_TCK)
OTHER=$(( ($(busy_jiffies) - BUSY0) - ($(our_jiffies) - OURS0) ))
(( OTHER < 0 )) && OTHER=0
LOAD_AFTER="# load average after: $(cut -d' ' -f1-3 /proc/loadavg); other processes used $((OTHER / HZ)) CPU-s during the ${ELAPSED} s run ($(( 100 * OTHER / HZ / (ELAPSED * $(nproc) > 0 ? ELAPSED * $(nproc) : 1) ))% of the machine)"
echo "$LOAD_AFTER" >> "$OUT/banner.txt"

ITER_NOTE=$(for part in "${PARTS[@]}"; do printf '%s=%s; ' "$part" "${ITERS[$part]}"; done)
python3 - "$OUT" "$ELAPSED" "$RANKS" "$ALGOS" "$ITER_NOTE" "${VARIANTS[@]}" <<'PY' | tee "$OUT/summary.txt"
import json, os, sys

out, elapsed, ranks, algos, iter_note = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), \
    sys.argv[4].split(","), sys.argv[5]
variants = sys.argv[6:]
MIB = 1 << 20
LAT_MAX = 4096
TARGET_RATIO, TARGET_MEMCPY = 1.10, 0.60
PARTS = ("lat", "mid", "big")
SHORT = {"ompi-default": "def", "ompi-ucx": "ucx", "ompi-1-linear": "lin",
         "ompi-2-nonoverlap": "nonov", "ompi-3-recdbl": "rdbl", "ompi-4-ring": "ring",
         "ompi-5-segring": "segring", "ompi-6-rabenseifner": "rab"}
CORES = os.cpu_count() or 1

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

def us(x, width):
    if x is None:
        return f"{'-':>{width}}"
    return f"{x:{width}.2f}" if x < 1000 else f"{x:{width}.0f}"

def num(x, width, digits=2):
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"

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
    """{algorithm: {size: (mean us, busbw)}}, #wrong per algorithm, transports."""
    rows, wrong, transports = {a: {} for a in algos}, {a: 0 for a in algos}, set()
    for part in PARTS:
        doc = ibscope_doc(d, part)
        if doc is None:
            continue
        transports.update((doc.get("environment", {}).get("transports") or {}).values())
        for r in doc.get("collectives", {}).get("rows", []):
            if (r.get("in_place") or r.get("type") != "float" or r.get("op") != "sum"
                    or r.get("collective", "allreduce") != "allreduce"):
                continue
            a = r.get("algorithm", "ring")
            if a not in rows:
                continue
            rows[a][r["size_bytes"]] = (r["time_us"], r["busbw_gbps"])
            wrong[a] += r.get("wrong") or 0
    return rows, wrong, transports

def load_mpi(d, v, p):
    rows, wrong = {}, 0
    for part in PARTS:
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
            size, t_us = int(f[0]), float(f[1])
            rows[size] = (t_us, size / (t_us * 1e3) * 2 * (p - 1) / p if t_us > 0 else None)
            wrong += max(int(f[4]), 0)
    return rows, wrong

def best(table, cols, size, key):
    """(name, mean us, busbw) of the best column at size: key 'bw' highest busbw, 't' lowest
    time (the same column at one size, unless a figure is missing)."""
    known = [(c, *table[c][size]) for c in cols if size in table[c] and table[c][size][1]]
    if not known:
        return None
    return max(known, key=lambda x: x[2]) if key == "bw" else min(known, key=lambda x: x[1])

mem = [m for m in (read_memcpy("memcpy-before.txt"), read_memcpy("memcpy-after.txt")) if m]
memcpy = max(mem) if mem else None
print()
print(f"memcpy, one core, 256 MiB, best of 8: "
      + ", ".join(f"{m:.2f}" for m in mem) + " GB/s (before, after); using "
      + (f"{memcpy:.2f}" if memcpy else "n/a"))
any_wrong = False
no_mpi = False
verdicts = []  # (np, target, size, verdict)
for np_s in ranks:
    p = int(np_s)
    d = os.path.join(out, f"np{p}")
    ib, ib_wrong, ib_transports = load_ibscope(d)
    mpi_all = {v: load_mpi(d, v, p) for v in variants}
    mpi = {v: mpi_all[v][0] for v in variants if mpi_all[v][0]}
    mcols = list(mpi)
    if not mcols:
        no_mpi = True
    sizes = sorted(set(s for a in algos for s in ib[a]) | set(s for v in mcols for s in mpi[v]))
    over = f", oversubscribed on {CORES} cores" if p > CORES else ""

    # 1. bandwidth: every ibscope algorithm, the best of each side, the ratios.
    print()
    print(f"== {p} ranks{over}: float sum, out-of-place, busbw GB/s (1e9 B), busbw = algbw * 2(p-1)/p ==")
    print(f"{'size':>6}" + "".join(f" {a:>7}" for a in algos)
          + f" {'best ibscope':>15} {'best Open MPI':>16} {'ibs/ompi':>8} {'ibs/memcpy':>10}")
    for s in sizes:
        bi = best(ib, algos, s, "bw")
        bo = best(mpi, mcols, s, "bw")
        ratio = bi[2] / bo[2] if bi and bo else None
        frac = bi[2] / memcpy if bi and memcpy else None
        print(f"{fmt_size(s):>6}" + "".join(f" {bw(ib[a].get(s, (None, None))[1], 7)}" for a in algos)
              + (f" {bi[0]:>7} {bw(bi[2], 7)}" if bi else f" {'-':>15}")
              + (f" {SHORT.get(bo[0], bo[0]):>8} {bw(bo[2], 7)}" if bo else f" {'-':>16}")
              + f" {num(ratio, 8)} {num(frac, 10)}")

    # 2. Open MPI, every configuration.
    if mcols:
        print()
        print(f"   Open MPI per configuration, {p} ranks, busbw GB/s:")
        print(f"{'size':>6}" + "".join(f" {SHORT.get(v, v):>7}" for v in mcols))
        for s in sizes:
            print(f"{fmt_size(s):>6}" + "".join(f" {bw(mpi[v].get(s, (None, None))[1], 7)}" for v in mcols))

    # 3. latency, small sizes: time of each, the best of each side, the ratio.
    small = [s for s in sizes if s <= LAT_MAX]
    if small:
        print()
        print(f"== {p} ranks{over}: latency 8 B .. 4 KiB, time per call as nccl-tests, average over ranks (us) ==")
        print(f"{'size':>6}" + "".join(f" {a:>7}" for a in algos)
              + f" {'best ibscope':>16} {'best Open MPI':>17} {'t ibs/ompi':>10}")
        for s in small:
            bi = best(ib, algos, s, "t")
            bo = best(mpi, mcols, s, "t")
            ratio = bi[1] / bo[1] if bi and bo else None
            print(f"{fmt_size(s):>6}" + "".join(f" {us(ib[a].get(s, (None,))[0], 7)}" for a in algos)
                  + (f" {bi[0]:>7} {us(bi[1], 8)}" if bi else f" {'-':>16}")
                  + (f" {SHORT.get(bo[0], bo[0]):>8} {us(bo[1], 8)}" if bo else f" {'-':>17}")
                  + f" {num(ratio, 10)}")
        if mcols:
            print()
            print(f"   Open MPI per configuration, {p} ranks, time (us):")
            print(f"{'size':>6}" + "".join(f" {SHORT.get(v, v):>7}" for v in mcols))
            for s in small:
                print(f"{fmt_size(s):>6}" + "".join(f" {us(mpi[v].get(s, (None,))[0], 7)}" for v in mcols))

    # 4. targets, from the same figures.
    print()
    print(f"targets, {p} ranks{over} (from the tables above: same run, same figures):")
    def verdict(target, s, ok, text):
        v = "NODATA" if ok is None else "PASS" if ok else "MISS"
        verdicts.append((p, target, s, v))
        print(f"    {fmt_size(s):>6}  {v:<6}  {text}")
    big = [s for s in sizes if s >= MIB]
    print(f"  [bw]  best ibscope >= {TARGET_RATIO:.2f}x best Open MPI busbw at >= 1 MiB"
          + ("" if big else ": no size >= 1 MiB measured"))
    for s in big:
        bi, bo = best(ib, algos, s, "bw"), best(mpi, mcols, s, "bw")
        if bi and bo:
            r = bi[2] / bo[2]
            verdict("bw", s, r >= TARGET_RATIO,
                    f"{r:5.2f}x  ({bi[0]} {bi[2]:.3f} vs {SHORT.get(bo[0], bo[0])} {bo[2]:.3f} GB/s)")
        else:
            verdict("bw", s, None, "missing: " + ("ibscope" if not bi else "Open MPI"))
    if p == 2:
        print(f"  [mem] best ibscope >= {TARGET_MEMCPY:.2f}x memcpy"
              + (f" ({memcpy:.2f} GB/s)" if memcpy else " (not measured)") + " at 2 ranks, >= 1 MiB"
              + ("" if big else ": no size >= 1 MiB measured"))
        for s in big:
            bi = best(ib, algos, s, "bw")
            if bi and memcpy:
                r = bi[2] / memcpy
                verdict("mem", s, r >= TARGET_MEMCPY, f"{r:5.2f}x  ({bi[0]} {bi[2]:.3f} GB/s)")
            else:
                verdict("mem", s, None, "missing: " + ("ibscope" if not bi else "memcpy"))
    else:
        print(f"  [mem] memcpy target: 2 ranks only")
    print(f"  [lat] 8 B latency <= best Open MPI")
    bi, bo = best(ib, algos, 8, "t"), best(mpi, mcols, 8, "t")
    if bi and bo:
        verdict("lat", 8, bi[1] <= bo[1],
                f"{bi[1] / bo[1]:5.2f}x  ({bi[0]} {bi[1]:.2f} vs {SHORT.get(bo[0], bo[0])} {bo[1]:.2f} us)")
    else:
        verdict("lat", 8, None, "missing: " + ("ibscope" if not bi else "Open MPI"))

    # 5. context: correctness, transports, skipped runs.
    wrong = {**{f"ibscope {a}": ib_wrong[a] for a in algos},
             **{SHORT.get(v, v): mpi_all[v][1] for v in mcols}}
    if any(wrong.values()):
        any_wrong = True
        print("#wrong: " + ", ".join(f"{k} {w}" for k, w in wrong.items() if w))
    else:
        print("#wrong: 0 in every column")
    for t in sorted(ib_transports):
        print(f"ibscope transports: {t}")
    try:
        with open(os.path.join(d, "skipped.txt")) as f:
            for line in f:
                print("skipped: " + line.rstrip())
    except OSError:
        pass

print()
print("summary of targets:")
for p in dict.fromkeys(v[0] for v in verdicts):
    parts = []
    for t, name in (("bw", f">= {TARGET_RATIO:.2f}x Open MPI"), ("mem", f">= {TARGET_MEMCPY:.2f}x memcpy"),
                    ("lat", "8 B latency")):
        vs = [v for v in verdicts if v[0] == p and v[1] == t]
        if vs:
            n = sum(v[3] == "PASS" for v in vs)
            missed = [fmt_size(v[2]) for v in vs if v[3] != "PASS"]
            parts.append(f"{name} {n}/{len(vs)} PASS" + (f" (not: {' '.join(missed)})" if missed else ""))
    note = " [oversubscribed]" if p > CORES else ""
    print(f"  {p} ranks{note}: " + "; ".join(parts))
print()
print("ibscope: " + ", ".join(algos) + " (-A, out-of-place rows; it also measures in-place, not shown)."
      " Open MPI: " + ", ".join(f"{SHORT.get(v, v)} = {v}" for v in variants) + ".")
print("def = defaults (pml ob1, coll tuned fixed rules); ucx = --mca pml ucx; 1..6 = "
      "coll_tuned_allreduce_algorithm forced (segring with 1 MiB segments). best = highest busbw"
      " (lowest time) among the columns at that size.")
print(f"iterations, the same on both sides: {iter_note}one verified call first. "
      f"runtime {elapsed} s; raw outputs in {out}")
sys.exit(1 if any_wrong else 3 if no_mpi else 0)
PY
rc=$?
if [[ $rc -eq 3 ]]; then
  echo "error: no Open MPI configuration produced a figure (see skipped: lines)" >&2
  STATUS=1
elif [[ $rc -ne 0 ]]; then
  STATUS=1
fi
echo "$LOAD_AFTER"
exit $STATUS
