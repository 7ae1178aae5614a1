#!/usr/bin/env bash
# ibscope's all-reduce across emulated hosts vs the shaped link's TCP goodput (bench/README.md).
#
#   bench/ring_vs_link.sh [BUILD_DIR] [--hosts 4] [--ranks-per-host 1] [--rate 1gbit[,...]]
#                         [--out DIR] [--algos LIST|all] [--repeat R] [-b 1M] [-e 64M] [-n 5]
#                         [-w 2] [--prefix rvl] [--wait-idle SECONDS] [--no-iperf] [--keep]
#
# Needs root (network namespaces). Sets up --hosts namespaces joined by a bridge, each link
# shaped with tbf to --rate (tests/netns/hosts.sh), then per rate: the ground truth
# rate x 1448/1514, ibscope p2p bw host 0 -> host 1 (and iperf3 if installed), and
# 'ibscope allreduce -A <algo> -b .. -e .. -f 2 --format json' for every algorithm that
# 'ibscope algorithms' lists (or --algos), --repeat times, interleaved, with --ranks-per-host
# ranks on each host (in blocks). Prints one table per rate: busbw and the link ratio per size
# and algorithm. Link ratio = algbw x 2(H-1)/H / goodput for H hosts: what each host's link
# carries per direction at least for an all-reduce, over what it can carry (with one rank per
# host it is busbw / goodput). Targets at >= 16 MiB: link ratio >= 0.95 for the ring (one rank
# per host) and for hier (PASS/MISS). The namespaces are removed on exit unless --keep.
# BUILD_DIR defaults to build/release (src/ibscope in it). Raw outputs go to --out (default
# a new folder under /tmp). Exit status: 0 tables printed and every ring target PASS,
# 1 a MISS or a failed run, 2 usage / setup.
set -u -o pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}
die() { echo "ring_vs_link: error: $*" >&2; exit 2; }

REPO=$(cd "$(dirname "$0")/.." && pwd)
HOSTS_SH=$REPO/tests/netns/hosts.sh
RUN_RANKS=$REPO/tests/netns/run_ranks.sh
BUILD="" OUT="" NHOSTS=4 PER_HOST=1 RATES=1gbit ALGOS=all REPEAT=2 MINB=1M MAXB=64M ITERS=5 WARMUP=2
PREFIX=rvl WAIT_IDLE=0 IPERF=1 KEEP=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hosts) NHOSTS=${2:?}; shift 2 ;;
    --ranks-per-host) PER_HOST=${2:?}; shift 2 ;;
    --rate|--rates) RATES=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --algos|-A) ALGOS=${2:?}; shift 2 ;;
    --repeat) REPEAT=${2:?}; shift 2 ;;
    -b) MINB=${2:?}; shift 2 ;;
    -e) MAXB=${2:?}; shift 2 ;;
    -n) ITERS=${2:?}; shift 2 ;;
    -w) WARMUP=${2:?}; shift 2 ;;
    --prefix) PREFIX=${2:?}; shift 2 ;;
    --wait-idle) WAIT_IDLE=${2:?}; shift 2 ;;
    --no-iperf) IPERF=""; shift ;;
    --keep) KEEP=1; shift ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
[[ $NHOSTS =~ ^[0-9]+$ ]] && (( NHOSTS >= 2 )) || die "--hosts: 2 or more"
[[ $REPEAT =~ ^[0-9]+$ ]] && (( REPEAT >= 1 )) || die "--repeat: 1 or more"
[[ $PER_HOST =~ ^[0-9]+$ ]] && (( PER_HOST >= 1 )) || die "--ranks-per-host: 1 or more"
[[ $ITERS =~ ^[0-9]+$ && $WARMUP =~ ^[0-9]+$ && $WAIT_IDLE =~ ^[0-9]+$ ]] || die "-n/-w/--wait-idle: numbers"
BUILD=${BUILD:-build/release}
[[ "$BUILD" = /* ]] || BUILD="$REPO/$BUILD"
IBSCOPE="$BUILD/src/ibscope"
[[ -x $IBSCOPE ]] || die "$IBSCOPE not found; build first: cmake --build ${BUILD#"$REPO"/} --target ibscope"
[[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces); try: sudo $0 ..."
command -v python3 >/dev/null || die "python3 is needed for the tables"
MIN_BYTES=$(numfmt --from=iec "${MINB%B}" 2>/dev/null) || die "bad -b: $MINB"
MAX_BYTES=$(numfmt --from=iec "${MAXB%B}" 2>/dev/null) || die "bad -e: $MAXB"
(( MIN_BYTES >= 4 && MIN_BYTES <= MAX_BYTES )) || die "-b must be <= -e"
IFS=, read -r -a RATE_LIST <<< "$RATES"

if [[ -z "$OUT" ]]; then
  OUT=$(mktemp -d "/tmp/ibscope-ring-vs-link-$(date -u +%Y%m%dT%H%M%SZ)-XXXX")
else
  mkdir -p "$OUT" || exit 2
  OUT=$(cd "$OUT" && pwd)
fi
case "$OUT/" in "$REPO"/*) die "--out must be outside the repository ($REPO)" ;; esac
mkdir -p "$OUT/results"

# rate text (tc units) -> bits per second
rate_bps() {
  python3 - "$1" <<'EOF'
import re, sys
m = re.fullmatch(r"([0-9.]+)(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)", sys.argv[1])
if not m: sys.exit(1)
mult = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
        "bps": 8, "kbps": 8e3, "mbps": 8e6, "gbps": 8e9, "tbps": 8e12}[m[2]]
print(int(float(m[1]) * mult))
EOF
}
for r in "${RATE_LIST[@]}"; do rate_bps "$r" >/dev/null || die "--rate '$r': use tc units, e.g. 200mbit, 1gbit"; done

# Algorithms: 'ibscope algorithms' prints either "  <algo>  <description>" (one collective)
# or "  <collective>  <algo>  <cost>  <description>"; keep the all-reduce ones.
list_algorithms() {
  "$IBSCOPE" algorithms | awk '
    /^#/ { if ($0 ~ /collective/) multi = 1; next }
    NF == 0 { next }
    multi { if ($1 == "allreduce") print $2; next }
    { print $1 }'
}
mapfile -t ALL_ALGOS < <(list_algorithms)
[[ ${#ALL_ALGOS[@]} -gt 0 ]] || die "'$IBSCOPE algorithms' listed no all-reduce algorithm"
if [[ $ALGOS == all ]]; then
  ALGO_LIST=("${ALL_ALGOS[@]}")
else
  IFS=, read -r -a ALGO_LIST <<< "$ALGOS"
fi
# ring first: it is the one with a target
mapfile -t ALGO_LIST < <(printf '%s\n' "${ALGO_LIST[@]}" | awk '$0 == "ring" { print; next } { rest[++n] = $0 } END { for (i = 1; i <= n; i++) print rest[i] }')

# --- CPU accounting (the machine is shared: say how busy it was) -------------------------------
cpu_jiffies() { awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
cpu_busy() {  # percent busy over 2 s
  local a b
  a=$(cpu_jiffies); sleep 2; b=$(cpu_jiffies)
  awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); t = y[2] - x[2];
    printf "%d\n", (t > 0) ? 100 * (y[1] - x[1]) / t : 0 }'
}
children_ticks() {  # CPU ticks used by this script's finished children (ranks included)
  awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat
}
wait_idle() {
  (( WAIT_IDLE > 0 )) || return 0
  local t0=$SECONDS b
  while (( SECONDS - t0 < WAIT_IDLE )); do
    b=$(cpu_busy)
    (( b <= 25 )) && return 0
    echo "# CPU ${b}% busy: waiting (up to ${WAIT_IDLE} s)" >&2
  done
  echo "# warning: CPU still busy after ${WAIT_IDLE} s; measuring anyway" >&2
}

# Runs one job across the hosts, records its CPU context in $OUT/runs.tsv.
#   run_job NAME TIMEOUT NP PER_HOST -- IBSCOPE ARGS...
run_job() {
  local name=$1 timeout=$2 np=$3 per_host=$4; shift 5
  local j0 j1 c0 c1 rc t0
  j0=$(cpu_jiffies); c0=$(children_ticks); t0=$(date +%s.%N)
  ns_counters > "$OUT/$name.before"
  "$RUN_RANKS" --prefix "$PREFIX" --np "$np" --ranks-per-host "$per_host" --timeout "$timeout" \
    --no-prefix-output -- \
    "$IBSCOPE" "$@" --out "$OUT/results" > "$OUT/$name.json" 2> "$OUT/$name.err"
  rc=$?
  j1=$(cpu_jiffies); c1=$(children_ticks)
  ns_counters > "$OUT/$name.after"
  python3 - "$name" "$rc" "$t0" "$j0" "$j1" "$c0" "$c1" "$(getconf CLK_TCK)" \
    "$OUT/$name.before" "$OUT/$name.after" >> "$OUT/runs.tsv" <<'EOF'
import sys, time
name, rc, t0 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
j0, j1 = [list(map(int, a.split())) for a in sys.argv[4:6]]
c0, c1, hz = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
def counters(path):
    d = {}
    for line in open(path):
        k, v = line.split()
        d[k] = int(v)
    return d
b, a = counters(sys.argv[9]), counters(sys.argv[10])
delta = {k: a.get(k, 0) - b.get(k, 0) for k in a}
busy = j1[0] - j0[0]; total = j1[1] - j0[1]
mine = (c1 - c0)                      # ticks of this job's processes (ranks, ip, sed)
others = max(busy - mine, 0)          # everything else on the machine
wall = time.time() - t0
print("\t".join(map(str, [name, rc, f"{wall:.1f}", f"{100 * busy / max(total, 1):.0f}",
      f"{mine / hz:.1f}", f"{others / hz:.1f}", delta.get("retrans", 0), delta.get("drops", 0),
      delta.get("overlimits", 0)])))
EOF
  return $rc
}

# TCP retransmissions and tbf drops summed over every host (both link directions).
ns_counters() {
  local i retr=0 drops=0 over=0 v
  for ((i = 0; i < NHOSTS; i++)); do
    v=$(ip netns exec "$PREFIX-h$i" nstat -az TcpRetransSegs 2>/dev/null | awk '$1 == "TcpRetransSegs" { print $2 }')
    retr=$((retr + ${v:-0}))
  done
  read -r d o < <( { for ((i = 0; i < NHOSTS; i++)); do
        ip netns exec "$PREFIX-h$i" tc -s qdisc show dev "$DEV" root
      done; ip netns exec "$PREFIX-sw" tc -s qdisc show; } |
    awk '/dropped/ { for (k = 1; k <= NF; k++) { if ($k == "dropped") d += $(k + 1) + 0; if ($k == "overlimits") o += $(k + 1) + 0 } }
         END { print d + 0, o + 0 }')
  echo "retrans $retr"; echo "drops ${d:-0}"; echo "overlimits ${o:-0}"
}

# --- set up ------------------------------------------------------------------------------------
cleanup() {
  if [[ -z $KEEP ]]; then "$HOSTS_SH" --prefix "$PREFIX" down >/dev/null 2>&1 || true
  else echo "# --keep: namespaces with prefix '$PREFIX' left up; remove with: $HOSTS_SH --prefix $PREFIX down" >&2; fi
}
on_signal() { echo "ring_vs_link: interrupted" >&2; exit 130; }
trap cleanup EXIT
trap on_signal INT TERM

"$HOSTS_SH" --prefix "$PREFIX" up "$NHOSTS" --rate "${RATE_LIST[0]}" > "$OUT/hosts-up.txt" 2>&1 \
  || { cat "$OUT/hosts-up.txt" >&2; trap - EXIT; die "could not set up the hosts (is prefix '$PREFIX' in use? $HOSTS_SH --prefix $PREFIX down)"; }
eval "$("$HOSTS_SH" --prefix "$PREFIX" info)"

printf 'name\trc\twall_s\tcpu_busy_pct\tjob_cpu_s\tother_cpu_s\ttcp_retrans\ttbf_drops\ttbf_overlimits\n' > "$OUT/runs.tsv"
{
  echo "# ring_vs_link: $NHOSTS hosts (namespaces '$PREFIX-h*', device $DEV), rates ${RATE_LIST[*]}, tbf burst $BURST latency $LATENCY on both veth ends"
  echo "# ibscope: $IBSCOPE ($("$IBSCOPE" --version 2>/dev/null | head -1))"
  echo "# algorithms: ${ALGO_LIST[*]} (of: ${ALL_ALGOS[*]}); sizes $MINB..$MAXB x2, -n $ITERS -w $WARMUP, repeat $REPEAT; $PER_HOST rank(s) per host"
  echo "# raw outputs: $OUT"
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); CPU busy over 2 s: $(cpu_busy)%  ($(nproc) cores)"
} | tee "$OUT/summary.txt"

# Sum of the sweep's sizes, for deadlines: bytes per rank of one pass over every size.
SWEEP_BYTES=$(python3 -c "
s, e, t = $MIN_BYTES, $MAX_BYTES, 0
while s <= e: t += s; s *= 2
print(t)")

status=0
for rate in "${RATE_LIST[@]}"; do
  for ((i = 0; i < NHOSTS; i++)); do "$HOSTS_SH" --prefix "$PREFIX" rate "$i" "$rate" >/dev/null || die "rate change failed"; done
  bps=$(rate_bps "$rate")
  goodput=$(python3 -c "print($bps / 8 * 1448 / 1514)")   # bytes/s of TCP payload
  echo "$rate $bps $goodput" >> "$OUT/rates.txt"
  wait_idle

  # p2p bw host 0 -> host 1 over UCX tcp: 1M and 4M messages, 16 in flight per window.
  p2p_timeout=$(python3 -c "print(int(60 + 3 * 8 * 16 * 5 * 5 * 2**20 / $goodput))")
  run_job "p2p-$rate" "$p2p_timeout" 2 1 -- p2p --tests bw --pairs first -b 1M -e 4M -f 4 \
    --window 16 --bw-iters 5 -w 1 --format json || status=1

  if [[ -n $IPERF ]] && command -v iperf3 >/dev/null; then
    ip netns exec "$PREFIX-h1" iperf3 -s -1 -D -I "$OUT/iperf3-server.pid" >/dev/null 2>&1
    sleep 0.3
    ip netns exec "$PREFIX-h0" iperf3 -c "$ADDR_1" -t 5 -O 1 -J > "$OUT/iperf3-$rate.json" 2>&1 || true
    [[ -s $OUT/iperf3-server.pid ]] && kill "$(cat "$OUT/iperf3-server.pid")" 2>/dev/null
    rm -f "$OUT/iperf3-server.pid"
  fi

  # all-reduce: every algorithm, interleaved, --repeat times
  # deadline: rd-like algorithms move up to ~2x the buffer per rank per call
  ar_timeout=$(python3 -c "print(int(120 + 3 * 2 * $SWEEP_BYTES * ($ITERS + $WARMUP + 2) / $goodput))")
  for ((rep = 1; rep <= REPEAT; rep++)); do
    for algo in "${ALGO_LIST[@]}"; do
      wait_idle
      name="ar-$rate-$algo-$rep"
      echo "# $(date +%T) $name ..." >&2
      run_job "$name" "$ar_timeout" "$((NHOSTS * PER_HOST))" "$PER_HOST" -- allreduce -A "$algo" -b "$MINB" -e "$MAXB" -f 2 \
        -n "$ITERS" -w "$WARMUP" --format json || { status=1; echo "# $name failed: see $OUT/$name.err" >&2; }
    done
  done
done

# --- tables ------------------------------------------------------------------------------------
python3 - "$OUT" "$NHOSTS" "$PER_HOST" <<'EOF' | tee -a "$OUT/summary.txt"
import glob, json, os, statistics, sys
out, nhosts, per_host = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = {}
with open(os.path.join(out, "runs.tsv")) as f:
    head = f.readline().rstrip("\n").split("\t")
    for line in f:
        r = dict(zip(head, line.rstrip("\n").split("\t")))
        runs[r["name"]] = r
rates = [l.split() for l in open(os.path.join(out, "rates.txt"))]
miss = False

def load(path):
    """A JSON document from a file; UCX prints its warnings on stdout too, so skip any lines
    before the document's first line ('{')."""
    try:
        with open(path) as f:
            text = f.read()
        if not text.startswith("{"):
            text = text[text.index("\n{") + 1:]
        return json.loads(text)
    except Exception:
        return None

def mib(b):
    return f"{b >> 20}M" if b >= 1 << 20 else f"{b >> 10}K"

for rate, bps, goodput in rates:
    g = float(goodput) / 1e9  # GB/s
    print(f"\n## rate {rate}: TCP goodput ground truth {rate} x 1448/1514 = {g * 1e3:.2f} MB/s")
    doc = load(os.path.join(out, f"p2p-{rate}.json"))
    if doc and doc.get("p2p"):
        for row in doc["p2p"]["rows"]:
            if row["test"] == "bw":
                print(f"   ibscope p2p bw h0->h1 {mib(row['size_bytes']):>4} x{row['window']}: "
                      f"{row['bw_gbps'] * 1e3:7.2f} MB/s = {row['bw_gbps'] / g:.3f} x goodput "
                      f"(best window {row['peak_bw_gbps'] / g:.3f})")
    else:
        print(f"   ibscope p2p bw: no result (see p2p-{rate}.err)")
    ip = load(os.path.join(out, f"iperf3-{rate}.json"))
    try:
        bs = ip["end"]["sum_received"]["bits_per_second"] / 8 / 1e9
        print(f"   iperf3 h0->h1 (5 s, 1 s omitted): {bs * 1e3:7.2f} MB/s = {bs / g:.3f} x goodput")
    except Exception:
        pass
    rows = {}   # (size, algo) -> [busbw per repeat]
    link = {}   # (size, algo) -> [algbw x 2(H-1)/H per repeat]
    p50 = {}
    transports = set()
    names = sorted(n for n in runs if n.startswith(f"ar-{rate}-"))
    for n in names:
        algo = n[len(f"ar-{rate}-"):].rsplit("-", 1)[0]
        d = load(os.path.join(out, n + ".json"))
        if not d:
            print(f"   {n}: no results document (exit {runs[n]['rc']}; see {n}.err)")
            miss = True
            continue
        if not d.get("complete", True):
            print(f"   {n}: incomplete: {(d.get('error') or {}).get('message', '?')}")
        for t in (d.get("environment", {}).get("transports") or {}).values():
            transports.add(str(t)[:90])
        for r in d.get("collectives", {}).get("rows", []):
            if r.get("in_place"):
                continue
            key = (r["size_bytes"], r["algorithm"])
            rows.setdefault(key, []).append(r["busbw_gbps"])
            h = len(set(d["job"]["hosts"]))
            link.setdefault(key, []).append(r["algbw_gbps"] * 2 * (h - 1) / h)
            p50.setdefault(key, []).append(r["size_bytes"] / (r["iteration_us"]["p50"] * 1e-6) / 1e9
                                           * 2 * (r["ranks"] - 1) / r["ranks"])
            if r.get("wrong"):
                print(f"   {n}: {r['wrong']} wrong elements at {r['size_bytes']} B")
                miss = True
    print(f"\n{'size':>6} {'algo':>6} {'busbw GB/s':>10} {'min':>7} {'max':>7} {'p50-bw':>7} "
          f"{'ratio':>6}  target")
    for (size, algo) in sorted(rows, key=lambda k: (k[0], k[1] != "ring", k[1])):
        v = rows[(size, algo)]
        med = statistics.median(v)
        ratio = statistics.median(link[(size, algo)]) / g
        mark = ""
        if ((algo == "ring" and per_host == 1) or algo == "hier") and size >= 16 << 20:
            ok = ratio >= 0.95
            mark = "PASS" if ok else "MISS"
            miss |= not ok
        print(f"{mib(size):>6} {algo:>6} {med:10.4f} {min(v):7.4f} {max(v):7.4f} "
              f"{statistics.median(p50[(size, algo)]):7.4f} {ratio:6.3f}  {mark}")
    print("   busbw: median over repeats of the mean-time busbw (min, max: the repeats); "
          "p50-bw: busbw from the median iteration;\n"
          "   ratio = algbw x 2(H-1)/H / goodput (the link's share); targets at >= 16 MiB: "
          "ratio >= 0.95 for ring (one rank per host) and hier")
    print(f"\n   {'run':<26} {'rc':>3} {'wall s':>7} {'CPU%':>5} {'job CPU s':>9} "
          f"{'other CPU s':>11} {'retrans':>8} {'tbf drops':>9}")
    for n in [f"p2p-{rate}"] + names:
        r = runs.get(n)
        if r:
            print(f"   {n:<26} {r['rc']:>3} {r['wall_s']:>7} {r['cpu_busy_pct']:>5} "
                  f"{r['job_cpu_s']:>9} {r['other_cpu_s']:>11} {r['tcp_retrans']:>8} "
                  f"{r['tbf_drops']:>9}")
    if transports:
        print("   UCX lanes: " + "; ".join(sorted(transports))[:300])
print(f"\n# {'every ring target PASS' if not miss else 'some target MISS or a run failed'}; "
      f"raw outputs in {out}")
sys.exit(1 if miss else 0)
EOF
tables_rc=$?
(( status == 0 && tables_rc == 0 )) || exit 1
exit 0
