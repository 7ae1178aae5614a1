#!/usr/bin/env bash
# ibscope p2p beside ucx_perftest between two processes of this host (see bench/README.md).
#
#   bench/p2p_vs_ucx_perftest.sh [BUILD_DIR] [--out DIR] [--reps N] [--lat-iters N]
#                                [--bw-msgs N]
#
# Both tools, in the same minutes, alternating which goes first: one-way latency (half the
# round trip; ibscope's p50, ucx_perftest's "50.0%ile") and one-way bandwidth, at 8 B and
# 1 MiB. ucx_perftest runs with its defaults (no error handling: UCX may pick cma) and with -e
# (peer error handling, as ibscope's endpoints); ibscope runs with its default
# (IBSCOPE_UCX_ERR_MODE=peer) and with IBSCOPE_UCX_ERR_MODE=cma (peer error handling towards
# other hosts only). The table gives the median over --reps (default 3) and the issue-25 targets
# (bandwidth >= 0.98x tag_bw, latency <= 1.05x tag_lat) for each ibscope mode against
# ucx_perftest's defaults, then the same for the best rep of each (this VM's runs are bimodal:
# the same binary measures 0.2 or 0.6 us from one start to the next, both tools alike).
# --lat-iters round trips at 8 B (default 100000), a fiftieth of them (at least 1000) at 1 MiB.
# Raw outputs go to --out (default a new folder under /tmp).
# Exit status: 0 table printed, 1 a run failed, 2 usage or missing binaries. A missed target is
# reported (MISS), not turned into an exit status.
set -u -o pipefail

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
BUILD=""
OUT=""
REPS=3
LAT_ITERS=100000
BW_MSGS=20000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) [[ $# -ge 2 ]] || usage; OUT=$2; shift 2 ;;
    --reps) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; REPS=$2; shift 2 ;;
    --lat-iters) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; LAT_ITERS=$2; shift 2 ;;
    --bw-msgs) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; BW_MSGS=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
BUILD=${BUILD:-build/release}
[[ "$BUILD" = /* ]] || BUILD="$REPO/$BUILD"
IBSCOPE="$BUILD/src/ibscope"
[[ -x "$IBSCOPE" ]] || { echo "error: $IBSCOPE not found; build first" >&2; exit 2; }
command -v ucx_perftest >/dev/null || { echo "error: ucx_perftest not on PATH (ucx-utils)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
OUT=${OUT:-$(mktemp -d /tmp/ibscope-p2p-vs-perftest.XXXXXX)}
mkdir -p "$OUT" || exit 2
# ibscope's bandwidth window: 64 messages in flight; the same number of messages in all.
WINDOW=64
BW_WINDOWS=$(( (BW_MSGS + WINDOW - 1) / WINDOW ))
RESULTS="$OUT/results.tsv"  # tool mode test size_bytes rep value (us or GB/s)
: >"$RESULTS"
port=$((20000 + RANDOM % 20000))

# Round trips per latency run: --lat-iters at 8 B, a fiftieth of it (>= 1000) above 64 KiB.
lat_iters() {
  if (($1 > 65536)); then
    echo $((LAT_ITERS / 50 > 1000 ? LAT_ITERS / 50 : 1000))
  else
    echo "$LAT_ITERS"
  fi
}

# ucx_perftest MODE(default|e) TEST(tag_lat|tag_bw) SIZE REP
perftest() {
  local mode=$1 test=$2 size=$3 rep=$4 flag="" iters out
  iters=$(lat_iters "$size")
  [[ $mode == e ]] && flag="-e"
  [[ $test == tag_bw ]] && iters=$BW_MSGS
  out="$OUT/perftest.$mode.$test.$size.$rep"
  port=$((port + 1))
  timeout 120 ucx_perftest $flag -p "$port" >"$out.server" 2>&1 &
  local server=$! tries=0
  sleep 0.3
  until timeout 120 ucx_perftest $flag 127.0.0.1 -p "$port" -t "$test" -s "$size" -n "$iters" \
      >"$out" 2>&1; do
    tries=$((tries + 1))
    ((tries < 20)) || { echo "error: ucx_perftest $test $size failed, see $out" >&2; kill $server 2>/dev/null; return 1; }
    sleep 0.2  # the server was not listening yet
  done
  wait "$server" 2>/dev/null
  # "Final: <iters> <lat p50 us> <lat avg> <lat overall> <bw avg MB/s> <bw overall> ...",
  # MB = 2^20 B.
  local line
  line=$(awk '/^Final:/ { print $3, $6 }' "$out" | tail -n 1)
  [[ -n $line ]] || { echo "error: ucx_perftest printed no Final line: $out" >&2; return 1; }
  read -r lat mbs <<<"$line"
  if [[ $test == tag_lat ]]; then
    printf 'ucx_perftest\t%s\tlatency\t%s\t%s\t%s\n' "$mode" "$size" "$rep" "$lat" >>"$RESULTS"
  else
    printf 'ucx_perftest\t%s\tbw\t%s\t%s\t%s\n' "$mode" "$size" "$rep" \
      "$(python3 -c "print($mbs * 1048576 / 1e9)")" >>"$RESULTS"
  fi
}

# ibscope MODE(peer|cma) SIZE REP: latency and bw in one run.
ibscope_p2p() {
  local mode=$1 size=$2 rep=$3 out="$OUT/ibscope.$1.$2.$3.json"
  if ! IBSCOPE_UCX_ERR_MODE=$mode "$IBSCOPE" p2p --np 2 -b "$size" -e "$size" \
      --tests latency,bw -n "$(lat_iters "$size")" --bw-iters "$BW_WINDOWS" --window "$WINDOW" \
      --format json --out "$OUT/results" --timeout 120 >"$out" 2>"$out.err"; then
    echo "error: ibscope p2p failed, see $out.err" >&2
    return 1
  fi
  python3 - "$out" "$mode" "$size" "$rep" >>"$RESULTS" <<'EOF'
import json, sys
path, mode, size, rep = sys.argv[1:]
for r in json.load(open(path))["p2p"]["rows"]:
    if r["test"] == "latency":
        print(f"ibscope\t{mode}\tlatency\t{size}\t{rep}\t{r['time_us']['p50']}")
    elif r["test"] == "bw":
        print(f"ibscope\t{mode}\tbw\t{size}\t{rep}\t{r['bw_gbps']}")
EOF
}

echo "# raw outputs: $OUT" >&2
for ((rep = 1; rep <= REPS; rep++)); do
  for size in 8 1048576; do
    if ((rep % 2)); then
      ibscope_p2p peer $size $rep && ibscope_p2p cma $size $rep || exit 1
      for m in default e; do
        perftest $m tag_lat $size $rep && perftest $m tag_bw $size $rep || exit 1
      done
    else
      for m in e default; do
        perftest $m tag_bw $size $rep && perftest $m tag_lat $size $rep || exit 1
      done
      ibscope_p2p cma $size $rep && ibscope_p2p peer $size $rep || exit 1
    fi
  done
done

python3 - "$RESULTS" "$REPS" <<'EOF'
import statistics, sys
from collections import defaultdict
path, reps = sys.argv[1], sys.argv[2]
vals = defaultdict(list)
for line in open(path):
    tool, mode, test, size, rep, v = line.split("\t")
    vals[(tool, mode, test, int(size))].append(float(v))
def table(title, pick):
  med = {k: pick(k[2], v) for k, v in vals.items()}
  print(title)
  print(f"{'test':<11} {'size_B':>8} {'perftest':>10} {'perftest -e':>12} "
        f"{'ibscope peer':>13} {'ibscope cma':>12} {'peer/pt':>8} {'cma/pt':>8}  target")
  for test, unit in (("latency", "us"), ("bw", "GB/s")):
    for size in (8, 1048576):
      pt = med[("ucx_perftest", "default", test, size)]
      pte = med[("ucx_perftest", "e", test, size)]
      peer = med[("ibscope", "peer", test, size)]
      cma = med[("ibscope", "cma", test, size)]
      rp, rc = peer / pt, cma / pt
      if test == "latency":
        goal = "<= 1.05"
        verdict = lambda r: "PASS" if r <= 1.05 else "MISS"
      else:
        goal = ">= 0.98"
        verdict = lambda r: "PASS" if r >= 0.98 else "MISS"
      print(f"{test + ' ' + unit:<11} {size:>8} {pt:>10.3f} {pte:>12.3f} {peer:>13.3f} "
            f"{cma:>12.3f} {rp:>8.2f} {rc:>8.2f}  {goal}: peer {verdict(rp)}, cma {verdict(rc)}")

table(f"# ibscope p2p beside ucx_perftest, 2 processes on this host, median of {reps} reps",
      lambda test, v: statistics.median(v))
table(f"# the same, best of {reps} reps (lowest latency, highest bandwidth)",
      lambda test, v: min(v) if test == "latency" else max(v))
EOF
