#!/usr/bin/env bash
# ibscope's verbs probes beside perftest on the same Soft-RoCE devices, in one QEMU guest boot
# (see bench/README.md). One command:
#
#   bench/probe_vs_perftest.sh [BUILD_DIR] [--tests LIST] [--sizes LIST] [--bw-sizes LIST]
#       [--lat-sizes LIST] [--iters N] [--reps N] [--devices same|cross] [--mtu N]
#       [--inline N] [--out FILE] [--timeout S] [--wait-idle S] [--keep]
#   bench/probe_vs_perftest.sh --analyze DIR [--out FILE]   # the table again from a --keep DIR
#
# BUILD_DIR (default build/release) must hold src/ibscope. Pairs (--tests, default
# write_bw,write_lat,read_bw,send_lat; also read_lat, send_bw): ibscope probe T vs ib_T.
# Sizes: --bw-sizes (default 4K,64K) for *_bw, --lat-sizes (default 2,4K) for *_lat;
# --sizes sets both. --iters N (default 1000) messages or ping-pongs per run, both tools;
# --reps N (default 5) runs of each tool per test and size, alternating (ABBA order).
# --devices cross (default: rxe0 -> rxe1 across the guest's veth) or same (both ends on
# rxe0, rxe's loopback). Both tools get the same -s -n -t -m -x -I (and -Q for bandwidth)
# explicitly: --mtu (default 1024, rxe's active MTU on a 1500-byte veth), --inline (default 0:
# perftest disables inline on devices it does not recognise, rxe among them).
# Prints one table: median over reps of each tool (bandwidth MB/s = 1e6 B/s; latency p50 vs
# perftest's t_typical, which is its median, plus both p99), ratio, target (bw >= 0.98x,
# lat <= 1.02x), PASS/MISS. --out FILE also writes the table and every rep's figures as JSON.
# --timeout: limit for the whole guest run (default 900 s). --wait-idle S: wait up to S s for
# the host's CPUs to be < 25 % busy first. --keep: keep the raw outputs (path printed).
# Exit: 0 table printed (a MISS is reported, not an error); 1 a run failed or gave no figure;
# 2 usage or missing binaries; the harness's 77 (no QEMU / kernel here), 124, 125 pass through.
set -euo pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
BUILD=""
TESTS="write_bw,write_lat,read_bw,send_lat"
BW_SIZES="4K,64K"
LAT_SIZES="2,4K"
ITERS=1000
REPS=5
DEVICES=cross
MTU=1024
INLINE=0
OUT=""
TIMEOUT=900
WAIT_IDLE=0
KEEP=0
ANALYZE=""
need() { [[ $# -ge 2 && -n $2 ]] || { echo "error: $1 needs a value" >&2; usage; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tests) need "$@"; TESTS=$2; shift 2 ;;
    --sizes) need "$@"; BW_SIZES=$2; LAT_SIZES=$2; shift 2 ;;
    --bw-sizes) need "$@"; BW_SIZES=$2; shift 2 ;;
    --lat-sizes) need "$@"; LAT_SIZES=$2; shift 2 ;;
    --iters) need "$@"; ITERS=$2; shift 2 ;;
    --reps) need "$@"; REPS=$2; shift 2 ;;
    --devices) need "$@"; DEVICES=$2; shift 2 ;;
    --mtu) need "$@"; MTU=$2; shift 2 ;;
    --inline) need "$@"; INLINE=$2; shift 2 ;;
    --out) need "$@"; OUT=$2; shift 2 ;;
    --timeout) need "$@"; TIMEOUT=$2; shift 2 ;;
    --wait-idle) need "$@"; WAIT_IDLE=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --analyze) need "$@"; ANALYZE=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "error: unknown option $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
for v in ITERS REPS MTU INLINE TIMEOUT WAIT_IDLE; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "error: --${v,,}: expected a whole number, got '${!v}'" >&2; exit 2; }
done
(( ITERS >= 2 && REPS >= 1 )) || { echo "error: --iters >= 2 and --reps >= 1" >&2; exit 2; }
case "$MTU" in 256|512|1024|2048|4096) ;; *) echo "error: --mtu: 256..4096, a power of 2" >&2; exit 2 ;; esac
[[ $DEVICES == same || $DEVICES == cross ]] || { echo "error: --devices: same or cross" >&2; exit 2; }
TESTS=${TESTS// /}
for t in ${TESTS//,/ }; do
  case "$t" in write_bw|write_lat|read_bw|read_lat|send_bw|send_lat) ;;
    *) echo "error: --tests: unknown test '$t' (write_bw write_lat read_bw read_lat send_bw send_lat)" >&2; exit 2 ;;
  esac
done

# to_bytes LIST: "4K,64K" -> "4096,65536" (K/M/G = 2^10/2^20/2^30).
to_bytes() {
  local out=() item n
  for item in ${1//,/ }; do
    [[ $item =~ ^([0-9]+)([KkMmGg]?)$ ]] || { echo "error: bad size '$item' in '$1'" >&2; exit 2; }
    n=${BASH_REMATCH[1]}
    case "${BASH_REMATCH[2]}" in K|k) n=$((n << 10)) ;; M|m) n=$((n << 20)) ;; G|g) n=$((n << 30)) ;; esac
    (( n >= 1 )) || { echo "error: sizes must be at least 1 byte" >&2; exit 2; }
    out+=("$n")
  done
  [[ ${#out[@]} -gt 0 ]] || { echo "error: empty size list" >&2; exit 2; }
  (IFS=,; echo "${out[*]}")
}
BW_BYTES=$(to_bytes "$BW_SIZES")
LAT_BYTES=$(to_bytes "$LAT_SIZES")

BUILD=${BUILD:-build/release}
[[ "$BUILD" = /* ]] || BUILD="$REPO/$BUILD"
IBSCOPE="$BUILD/src/ibscope"
[[ -x "$IBSCOPE" ]] || { echo "error: $IBSCOPE not found; build first (cmake --build ${BUILD#"$REPO"/})" >&2; exit 2; }
"$IBSCOPE" probe --help >/dev/null 2>&1 || { echo "error: $IBSCOPE has no 'probe' command (too old a build)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
if [[ -n $OUT ]]; then
  OUT_DIR=$(dirname "$OUT")
  [[ -d $OUT_DIR ]] || { echo "error: --out: no directory $OUT_DIR" >&2; exit 2; }
  OUT="$(cd "$OUT_DIR" && pwd -P)/$(basename "$OUT")"
fi

# The table is built by the Python program at the end from WORK (manifest.tsv, runs/).
analyze() { # WORK ELAPSED LOAD_BEFORE BUSY_BEFORE OTHER_CPU_S
  python3 - "$1" "${OUT:-}" "$2" "$3" "$4" "$5" <<'PY'
import json, re, statistics, sys

work, out_path, elapsed, load_before, busy_before, other_cpu_s = sys.argv[1:7]
MIB = 1 << 20
BW_TARGET, LAT_TARGET = 0.98, 1.02
PERFTEST = {"write_bw": "ib_write_bw", "write_lat": "ib_write_lat", "read_bw": "ib_read_bw",
            "read_lat": "ib_read_lat", "send_bw": "ib_send_bw", "send_lat": "ib_send_lat"}


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def ibscope_figures(path):
    """The probe row of an ibscope --format json run (stdout may carry lines before '{')."""
    text = read(path)
    m = re.search(r"^\{", text, re.M)
    start = m.start() if m else -1
    if start < 0:
        return None, "no JSON document"
    try:
        doc = json.JSONDecoder().raw_decode(text[start:])[0]
    except ValueError as e:
        return None, f"malformed JSON: {e}"
    rows = doc.get("probes", {}).get("rows", [])
    if not rows:
        return None, doc.get("error") or "no probe row"
    r = rows[0]
    t = r["time_us"]
    return {"bw_MBps": r["bw_gbps"] * 1e3, "peak_MBps": r["peak_bw_gbps"] * 1e3,
            "msg_rate_mps": r["msg_rate_mps"], "p50_us": t["p50"], "p99_us": t["p99"],
            "p99_9_us": t["p99_9"], "min_us": t["min"], "max_us": t["max"], "mean_us": t["mean"],
            "tx_depth": r["tx_depth"], "mtu": r["mtu_bytes"], "inline_granted": r["inline_bytes"],
            "cq_mod": doc["probes"]["params"].get("cq_moderation"),
            "warmup": doc["probes"]["params"].get("warmup")}, None


def perftest_figures(path, latency):
    """perftest's client report: the line after the '#bytes' header, plus its parameters."""
    text = read(path)
    fig = {}
    for key, pat in (("tx_depth", r"TX depth\s*:\s*(\d+)"), ("cq_mod", r"CQ Moderation\s*:\s*(\d+)"),
                     ("mtu", r"Mtu\s*:\s*(\d+)"), ("inline", r"Max inline data\s*:\s*(\d+)"),
                     ("outstanding_reads", r"Outstand reads\s*:\s*(\d+)")):
        m = re.search(pat, text)
        if m:
            fig[key] = int(m.group(1))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes") and i + 1 < len(lines):
            v = lines[i + 1].split()
            try:
                nums = [float(x) for x in v]
            except ValueError:
                continue
            if latency and len(nums) >= 9:
                fig.update(min_us=nums[2], max_us=nums[3], p50_us=nums[4], mean_us=nums[5],
                           p99_us=nums[7], p99_9_us=nums[8])
                return fig, None
            if not latency and len(nums) >= 5:
                # perftest's MB/sec is MiB/s (it divides by 0x100000): convert to 1e6 B/s.
                fig.update(bw_MBps=nums[3] * MIB / 1e6, peak_MBps=nums[2] * MIB / 1e6,
                           msg_rate_mps=nums[4])
                # Cross-check of the unit: message rate x size.
                fig["bw_from_msgrate_MBps"] = nums[4] * nums[0]
                return fig, None
    err = "Can't produce a report" if "Can't produce a report" in text else "no result line"
    return None, err


runs = []
with open(f"{work}/manifest.tsv") as f:
    header = f.readline().rstrip("\n").split("\t")
    for line in f:
        runs.append(dict(zip(header, line.rstrip("\n").split("\t"))))

failures = []
for r in runs:
    r["size"] = int(r["size"])
    r["rep"] = int(r["rep"])
    latency = r["test"].endswith("_lat")
    if r["tool"] == "ibscope":
        fig, err = ibscope_figures(r["file"])
    else:
        fig, err = perftest_figures(r["file"], latency)
    if r["rc"] != "0" and err is None:
        err = f"exit {r['rc']}"
    if err:
        tail = " ".join(l for l in read(r["file"] + ".err").splitlines()[-3:])[:300]
        failures.append(f"{r['tool']} {r['test']} {r['size']} B rep {r['rep']}: {err} {tail}".rstrip())
        fig = None
    r["figures"] = fig


def median(xs):
    return statistics.median(xs) if xs else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


keys = []
for r in runs:
    k = (r["test"], r["size"])
    if k not in keys:
        keys.append(k)
rows = []
notes = []
for test, size in keys:
    latency = test.endswith("_lat")
    metric = "p50_us" if latency else "bw_MBps"
    per_tool = {}
    for tool in ("ibscope", "perftest"):
        figs = [r["figures"] for r in runs
                if r["test"] == test and r["size"] == size and r["tool"] == tool and r["figures"]]
        vals = [f[metric] for f in figs if f.get(metric) is not None]
        p99s = [f["p99_us"] for f in figs if f.get("p99_us") is not None]
        per_tool[tool] = {"median": median(vals), "min": min(vals) if vals else None,
                          "max": max(vals) if vals else None, "n": len(vals),
                          "p99_median": median(p99s), "reps": vals, "figs": figs}
    a, b = per_tool["ibscope"]["median"], per_tool["perftest"]["median"]
    ratio = a / b if a is not None and b else None
    target = f"<= {LAT_TARGET}" if latency else f">= {BW_TARGET}"
    if ratio is None:
        verdict = "NODATA"
    elif latency:
        verdict = "PASS" if ratio <= LAT_TARGET else "MISS"
    else:
        verdict = "PASS" if ratio >= BW_TARGET else "MISS"
    # Best rep of each side (highest bandwidth, lowest p50): less exposed to a run that fell
    # into a slow mode of the emulated machine; shown beside the verdict, not used for it.
    best_ratio = None
    if per_tool["ibscope"]["n"] and per_tool["perftest"]["n"]:
        if latency:
            best_ratio = per_tool["ibscope"]["min"] / per_tool["perftest"]["min"]
        else:
            best_ratio = per_tool["ibscope"]["max"] / per_tool["perftest"]["max"]
    p99_ratio = None
    if latency and per_tool["ibscope"]["p99_median"] and per_tool["perftest"]["p99_median"]:
        p99_ratio = per_tool["ibscope"]["p99_median"] / per_tool["perftest"]["p99_median"]
    # What each side actually ran with (perftest prints it; ibscope's row records it).
    fi = per_tool["ibscope"]["figs"][0] if per_tool["ibscope"]["figs"] else {}
    fp = per_tool["perftest"]["figs"][0] if per_tool["perftest"]["figs"] else {}
    if fi and fp:
        diffs = []
        for k in ("tx_depth", "mtu", "cq_mod"):
            if k in fp and fi.get(k) is not None and fi[k] != fp[k] and not (k == "cq_mod" and latency):
                diffs.append(f"{k} ibscope {fi[k]} vs perftest {fp[k]}")
        ibs_inline = not test.startswith("read") and size <= (fi.get("inline_granted") or 0)
        pt_inline = size <= fp.get("inline", 0)
        if ibs_inline != pt_inline:
            diffs.append(f"inline: ibscope {'posts inline' if ibs_inline else 'not inline'} "
                         f"(device granted {fi.get('inline_granted')} B), perftest "
                         f"{'inline' if pt_inline else 'not inline'} (max inline {fp.get('inline')} B)")
        if diffs:
            notes.append(f"{test} {size} B: " + "; ".join(diffs))
        if not latency and fp.get("bw_MBps"):
            chk = fp["bw_from_msgrate_MBps"] / fp["bw_MBps"]
            if abs(chk - 1) > 0.02:
                notes.append(f"{test} {size} B: perftest's MB/sec x 2^20 and its msg rate x size "
                             f"disagree by {100 * (chk - 1):.1f} %")
    rows.append({"test": test, "perftest": PERFTEST[test], "size_bytes": size,
                 "metric": "p50 latency (us); perftest t_typical" if latency else "bandwidth (MB/s = 1e6 B/s)",
                 "ibscope": {k: v for k, v in per_tool["ibscope"].items() if k != "figs"},
                 "perftest_figures": {k: v for k, v in per_tool["perftest"].items() if k != "figs"},
                 "ratio": ratio, "target": target, "verdict": verdict, "best_ratio": best_ratio,
                 "p99_ratio": p99_ratio})

w = max(len("test"), *(len(r["test"]) for r in rows)) if rows else 4
head = (f"{'test':<{w}} {'size(B)':>8} {'metric':<7} {'ibscope':>9} {'[min-max]':>17} "
        f"{'perftest':>9} {'[min-max]':>17} {'ratio':>6} {'target':>7} {'':<6} {'best':>6} "
        f"{'p99 ibs':>8} {'p99 pt':>8} {'ratio':>6}")
lines = [head]
for r in rows:
    lat = r["test"].endswith("_lat")
    i, p = r["ibscope"], r["perftest_figures"]
    rng = lambda t: f"[{fmt(t['min'])}-{fmt(t['max'])}]" if t["n"] else "-"
    lines.append(
        f"{r['test']:<{w}} {r['size_bytes']:>8} {'p50 us' if lat else 'MB/s':<7} {fmt(i['median']):>9} "
        f"{rng(i):>17} {fmt(p['median']):>9} {rng(p):>17} {fmt(r['ratio'], 3):>6} "
        f"{r['target']:>7} {r['verdict']:<6} {fmt(r['best_ratio'], 3):>6} "
        f"{fmt(i['p99_median']) if lat else '':>8} {fmt(p['p99_median']) if lat else '':>8} "
        f"{fmt(r['p99_ratio'], 3) if lat else '':>6}")
print()
print("\n".join(lines))
print("# medians over reps (n = reps with a figure: "
      + ", ".join(f"{r['test']} {r['size_bytes']}: {r['ibscope']['n']}/{r['perftest_figures']['n']}" for r in rows)
      + "); bandwidth in MB/s = 1e6 B/s (perftest's MB/sec is MiB/s, converted); latency: ibscope p50"
      " vs perftest t_typical (its median), write/send = half round trip, read = whole read;"
      " best: best rep of ibscope / best rep of perftest (not used for the verdict);"
      " p99 columns: median over reps of each run's p99")
for n in notes:
    print("# note:", n)
for f in failures:
    print("# FAILED:", f)
passes = sum(r["verdict"] == "PASS" for r in rows)
print(f"# targets: {passes} of {len(rows)} PASS"
      + ("" if passes == len(rows) else " (MISS: " + ", ".join(
          f"{r['test']} {r['size_bytes']} B" for r in rows if r["verdict"] != "PASS") + ")"))

if out_path:
    doc = {"banner": read(f"{work}/banner.txt").splitlines(),
           "guest": read(f"{work}/guest_info.txt").splitlines(),
           "host": {"load_average_before": load_before, "cpu_busy_before_pct": int(busy_before),
                    "other_processes_cpu_s": int(other_cpu_s), "elapsed_s": int(elapsed)},
           "table": lines, "rows": rows, "notes": notes, "failures": failures,
           "runs": [{k: r[k] for k in ("idx", "rep", "test", "size", "tool", "rc", "attempts",
                                        "wall_s", "command", "figures")} for r in runs]}
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"# written: {out_path}")
sys.exit(1 if failures or any(r["verdict"] == "NODATA" for r in rows) else 0)
PY
}
if [[ -n $ANALYZE ]]; then
  [[ -s $ANALYZE/manifest.tsv ]] || { echo "error: --analyze: no manifest.tsv in $ANALYZE" >&2; exit 2; }
  [[ -f $ANALYZE/banner.txt ]] && cat "$ANALYZE/banner.txt"
  analyze "$ANALYZE" 0 "?" 0 0
  exit $?
fi

# Host noise: CPU busy % over 2 s (the load average lags by minutes).
cpu_busy() {
  local a b
  a=$(head -1 /proc/stat); sleep 2; b=$(head -1 /proc/stat)
  awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x); split(b, y); t = 0
    for (i = 2; i <= n; i++) t += y[i] - x[i]
    idle = (y[5] - x[5]) + (y[6] - x[6]); printf "%d", (t > 0 ? 100 * (t - idle) / t : 0) }'
}
BUSY_PCT=25
if (( WAIT_IDLE > 0 )); then
  deadline=$((SECONDS + WAIT_IDLE))
  while (( $(cpu_busy) > BUSY_PCT && SECONDS < deadline )); do
    echo "# waiting for the host to go idle (CPU busy > ${BUSY_PCT}%) ..." >&2
    sleep 5
  done
fi
busy_jiffies() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

WORK=$(mktemp -d /tmp/ibscope-probe-vs-perftest.XXXXXX)
cleanup() { if (( KEEP )); then echo "# raw outputs kept in $WORK" >&2; else rm -rf "$WORK"; fi; }
trap cleanup EXIT

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
BUSY_BEFORE=$(cpu_busy)
{
  echo "# probe_vs_perftest: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores;" \
       "ibscope $IBSCOPE (checkout $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$(git -C "$REPO" diff --quiet HEAD -- probes 2>/dev/null || echo '+dirty probes/'))"
  echo "# tests $TESTS; bw sizes $BW_BYTES; lat sizes $LAT_BYTES; -n $ITERS; $REPS reps; devices $DEVICES;" \
       "-m $MTU -I $INLINE, -t 128 (bw) / 1 (lat)"
  echo "# host load average before: $LOAD_BEFORE; CPU busy over 2 s: ${BUSY_BEFORE}%"
} | tee "$WORK/banner.txt"
if (( BUSY_BEFORE > BUSY_PCT )); then
  echo "# WARNING: the host is busy (${BUSY_BEFORE}% CPU, $(nproc) cores): the guest's timings will be noisy" \
    | tee -a "$WORK/banner.txt"
fi

SHARES=(--share "$WORK")
[[ $BUILD == "$REPO"/* ]] || SHARES+=(--share "$BUILD")
BUSY0=$(busy_jiffies)
T0=$SECONDS
RC=0
"$REPO/tests/rxe/run_in_guest.sh" --timeout "$TIMEOUT" "${SHARES[@]}" -- \
  bash "$REPO/bench/probe_vs_perftest_guest.sh" --ibscope "$IBSCOPE" --work "$WORK" \
  --tests "$TESTS" --bw-sizes "$BW_BYTES" --lat-sizes "$LAT_BYTES" --iters "$ITERS" \
  --reps "$REPS" --devices "$DEVICES" --mtu "$MTU" --inline "$INLINE" || RC=$?
ELAPSED=$((SECONDS - T0))
if [[ $RC -ne 0 || ! -s "$WORK/manifest.tsv" ]]; then
  echo "error: the guest run failed (exit $RC)" >&2
  [[ $RC -ne 0 ]] && exit "$RC"
  exit 1
fi
# The guest (QEMU) is this script's child: what the host's other processes used meanwhile.
HZ=$(getconf CLK_TCK)
OURS=$(awk '{ print $16 + $17 }' "/proc/$$/stat")
OTHER=$(( $(busy_jiffies) - BUSY0 - OURS ))
(( OTHER < 0 )) && OTHER=0
echo "# host load average after: $(cut -d' ' -f1-3 /proc/loadavg); the run took ${ELAPSED} s;" \
     "other processes used $((OTHER / HZ)) CPU-s meanwhile ($(( 100 * OTHER / HZ / (ELAPSED * $(nproc) > 0 ? ELAPSED * $(nproc) : 1) ))% of the machine)" \
  | tee -a "$WORK/banner.txt"

analyze "$WORK" "$ELAPSED" "$LOAD_BEFORE" "$BUSY_BEFORE" "$((OTHER / HZ))"
