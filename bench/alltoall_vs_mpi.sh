#!/usr/bin/env bash
# ibscope's all-to-all beside Open MPI's and MPICH's MPI_Alltoall, one command (bench/README.md).
#
#   bench/alltoall_vs_mpi.sh [BUILD_DIR] [--out DIR] [--ranks "2 4"] [--sizes LIST]
#                            [--algos LIST|all] [-n ITERS] [-w WARMUP] [--netns-hosts N]
#                            [--rate RATE] [--prefix P]
#
# Per setup (N local ranks for each --ranks; then, when --netns-hosts N > 0 and we are root,
# N emulated hosts with one rank each: tests/netns/hosts.sh, links shaped to --rate) runs
#   ibscope alltoall -A <each of --algos> --sizes LIST -n -w --format json (data verified),
#   the MPI reference (bench/mpi_alltoall_ref.c, built here with mpicc.openmpi and mpicc.mpich)
#   under mpirun.openmpi and under mpirun.mpich, same sizes, iterations and warm-ups,
# and prints per size the busbw (GB/s = 1e9 B/s, busbw = algbw x (p-1)/p) of every column and
# the ratio of ibscope's best algorithm to the best MPI. Defaults: --ranks "2 4", --sizes
# 64K,128K,256K,512K,1M,2M,4M, --algos all (every alltoall algorithm 'ibscope algorithms'
# lists; hier only on the local setups), -n 50 -w 10, --netns-hosts 4, --rate 1gbit, --prefix a2m.
# BUILD_DIR defaults to build/release (src/ibscope in it). Raw outputs go to --out (default a
# new folder under /tmp), never into the repository. Exit status: 0 tables printed, 1 a run
# was wrong (#wrong > 0) or failed, 2 usage or missing tools. The namespaces are removed on exit.
set -u -o pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
}
die() { echo "alltoall_vs_mpi: error: $*" >&2; exit 2; }

REPO=$(cd "$(dirname "$0")/.." && pwd -P)
BUILD="" OUT="" RANKS="2 4" SIZES="64K,128K,256K,512K,1M,2M,4M" ALGOS=all ITERS=50 WARMUP=10
NETNS=4 RATE=1gbit PREFIX=a2m
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT=${2:?}; shift 2 ;;
    --ranks) RANKS=${2:?}; RANKS=${RANKS//,/ }; shift 2 ;;
    --sizes) SIZES=${2:?}; shift 2 ;;
    --algos|-A) ALGOS=${2:?}; shift 2 ;;
    -n) ITERS=${2:?}; shift 2 ;;
    -w) WARMUP=${2:?}; shift 2 ;;
    --netns-hosts) NETNS=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --prefix) PREFIX=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option: $1" >&2; usage ;;
    *) [[ -z "$BUILD" ]] || usage; BUILD=$1; shift ;;
  esac
done
for np in $RANKS; do
  if ! [[ $np =~ ^[0-9]+$ ]] || (( np < 2 )); then die "--ranks: counts >= 2"; fi
done
[[ $ITERS =~ ^[0-9]+$ && $WARMUP =~ ^[0-9]+$ && $NETNS =~ ^[0-9]+$ ]] || die "-n/-w/--netns-hosts: numbers"
(( NETNS == 0 || NETNS >= 2 )) || die "--netns-hosts: 0 or >= 2"
BUILD=${BUILD:-build/release}
[[ "$BUILD" = /* ]] || BUILD="$REPO/$BUILD"
IBSCOPE="$BUILD/src/ibscope"
[[ -x $IBSCOPE ]] || die "$IBSCOPE not found; build first: cmake --build ${BUILD#"$REPO"/} --target ibscope"
for tool in mpicc.openmpi mpirun.openmpi mpicc.mpich mpirun.mpich python3; do
  command -v "$tool" >/dev/null ||
    die "$tool not on PATH (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev python3)"
done
REGISTERED=$("$IBSCOPE" algorithms 2>/dev/null | awk '$1 == "alltoall" { print $2 }' | paste -sd, -)
[[ -n $REGISTERED ]] || die "'$IBSCOPE algorithms' lists no alltoall algorithm"
[[ $ALGOS == all ]] && ALGOS=$REGISTERED
for a in ${ALGOS//,/ }; do
  [[ ",$REGISTERED," == *",$a,"* ]] || die "--algos: '$a' is not an alltoall algorithm ($REGISTERED)"
done
if (( NETNS > 0 )) && [[ $(id -u) -ne 0 ]]; then
  echo "# not root: skipping the emulated hosts (--netns-hosts 0 to silence)" >&2
  NETNS=0
fi

if [[ -z "$OUT" ]]; then
  OUT=$(mktemp -d "/tmp/ibscope-alltoall-vs-mpi-$(date -u +%Y%m%dT%H%M%SZ)-XXXX")
else
  OUT=$(realpath -m -- "$OUT")
  case "$OUT/" in "$REPO"/*) die "--out must be outside the repository ($REPO)" ;; esac
  mkdir -p "$OUT" || exit 2
fi

# The reference, built with each MPI's own compiler wrapper.
for mpi in openmpi mpich; do
  "mpicc.$mpi" -O2 -std=c11 -Wall -o "$OUT/mpi_alltoall_ref.$mpi" "$REPO/bench/mpi_alltoall_ref.c" ||
    die "mpicc.$mpi could not build bench/mpi_alltoall_ref.c"
done

HOSTS_SH=$REPO/tests/netns/hosts.sh
RUN_RANKS=$REPO/tests/netns/run_ranks.sh
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() { if (( NETNS > 0 )); then "$HOSTS_SH" down --prefix "$PREFIX" >/dev/null 2>&1; fi; }
trap cleanup EXIT

{
  echo "# alltoall_vs_mpi: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) cores"
  echo "# $("$IBSCOPE" --version 2>/dev/null | head -1); checkout $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo '+dirty')"
  echo "# $(mpirun.openmpi --version 2>/dev/null | head -1); $(mpirun.mpich --version 2>/dev/null | sed -n 's/^ *Version: *//p' | head -1 | sed 's/^/MPICH /')"
  echo "# ranks: $RANKS local; netns hosts: $NETNS at $RATE; sizes $SIZES; -n $ITERS -w $WARMUP; ibscope -A $ALGOS"
  echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# raw outputs: $OUT"
} | tee "$OUT/banner.txt"

STATUS=0
NSIZES=$(tr ',' '\n' <<<"$SIZES" | grep -c .)
# rows FILE: how many table rows (size time algbw busbw wrong) FILE has.
rows() { awk 'NF == 5 && $1 ~ /^[0-9]+$/' "$1" 2>/dev/null | wc -l; }
# run LABEL FILE CMD...: stdout to FILE, stderr to FILE.err. 10 minutes at most; a run whose
# every size's row is written and that has not ended 20 s later is stopped and counts as done
# with a note (MPICH over TCP between the emulated hosts does not return from MPI_Finalize).
run() {
  local label=$1 file=$2 t0=$SECONDS
  shift 2
  setsid timeout -k 10 600 "$@" >"$file" 2>"$file.err" &
  local pid=$! complete_at=0 note=""
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    [[ $file == *.txt ]] || continue  # the MPI reference's table; ibscope's JSON ends itself
    if (( complete_at == 0 )) && (( $(rows "$file") >= NSIZES )); then complete_at=$SECONDS; fi
    if (( complete_at > 0 && SECONDS - complete_at > 20 )); then
      note=" (every row written; stopped: did not exit 20 s after its last row)"
      # Its own session (setsid): the launcher, its proxies and the ranks it started here.
      kill -TERM -- "-$pid" 2>/dev/null; pkill -TERM -f "$OUT/mpi_alltoall_ref" 2>/dev/null
      sleep 2
      kill -KILL -- "-$pid" 2>/dev/null; pkill -KILL -f "$OUT/mpi_alltoall_ref" 2>/dev/null
    fi
  done
  wait "$pid"
  local rc=$?
  [[ -n $note ]] && rc=0
  printf '#   %-34s %4ds rc=%d%s\n' "$label" $((SECONDS - t0)) "$rc" "$note" >&2
  (( rc == 0 )) || { echo "$label failed (rc=$rc): $(tail -3 "$file.err" | tr '\n' ' ')" >> "$OUT/failed.txt"; STATUS=1; }
  return $rc
}

OMPI=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none)
MPICH=(mpirun.mpich)
for np in $RANKS; do
  d="$OUT/local-np$np"
  mkdir -p "$d"
  echo "# $np local ranks" >&2
  for a in ${ALGOS//,/ }; do
    run "ibscope -A $a np$np" "$d/ibscope-$a.json" "$IBSCOPE" alltoall --np "$np" -A "$a" \
      --sizes "$SIZES" -n "$ITERS" -w "$WARMUP" -d float --format json --out "$d"
  done
  run "openmpi np$np" "$d/openmpi.txt" "${OMPI[@]}" -np "$np" "$OUT/mpi_alltoall_ref.openmpi" \
    -s "$SIZES" -n "$ITERS" -w "$WARMUP"
  run "mpich np$np" "$d/mpich.txt" "${MPICH[@]}" -np "$np" "$OUT/mpi_alltoall_ref.mpich" \
    -s "$SIZES" -n "$ITERS" -w "$WARMUP"
done

if (( NETNS > 0 )); then
  d="$OUT/netns-h$NETNS"
  mkdir -p "$d"
  echo "# $NETNS emulated hosts at $RATE, one rank each" >&2
  "$HOSTS_SH" down --prefix "$PREFIX" >/dev/null 2>&1
  "$HOSTS_SH" up "$NETNS" --rate "$RATE" --prefix "$PREFIX" >"$d/hosts.txt" 2>&1 ||
    die "hosts.sh up failed: $(tail -3 "$d/hosts.txt")"
  eval "$("$HOSTS_SH" info --prefix "$PREFIX")"  # DEV, ...
  for a in ${ALGOS//,/ }; do
    [[ $a == hier ]] && continue  # one rank per host: hier is scattered between hosts
    run "ibscope -A $a netns" "$d/ibscope-$a.json" "$RUN_RANKS" --prefix "$PREFIX" --np "$NETNS" \
      --no-prefix-output -- "$IBSCOPE" alltoall -A "$a" --sizes "$SIZES" -n "$ITERS" \
      -w "$WARMUP" -d float --format json --out "$d"
  done
  # Each MPI runs its launcher in host 0's namespace and starts one rank per host through a
  # "remote shell" that enters that host's namespace (in_ns.sh), so both the control path and
  # the data path cross the shaped links; the data path is forced onto TCP over the hosts'
  # device (Open MPI: btl tcp; MPICH ch4:ucx: UCX_TLS=tcp), never shared memory.
  cat > "$OUT/in_ns.sh" <<'WRAP'
#!/usr/bin/env bash
# launcher agent: [OPTIONS] HOST CMD... -> CMD in network namespace HOST
while [[ $1 == -* ]]; do shift; done
host=$1; shift
exec ip netns exec "$host" /bin/sh -c "$*"
WRAP
  chmod +x "$OUT/in_ns.sh"
  HOSTLIST=$(for ((i = 0; i < NETNS; i++)); do echo "$PREFIX-h$i"; done | paste -sd, -)
  run "openmpi netns" "$d/openmpi.txt" ip netns exec "$PREFIX-h0" "${OMPI[@]}" -np "$NETNS" \
    --host "${HOSTLIST//,/:1,}:1" --mca plm_rsh_agent "$OUT/in_ns.sh" \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include "$DEV" \
    --mca oob_tcp_if_include "$DEV" \
    "$OUT/mpi_alltoall_ref.openmpi" -s "$SIZES" -n "$ITERS" -w "$WARMUP"
  run "mpich netns" "$d/mpich.txt" ip netns exec "$PREFIX-h0" env MPIR_CVAR_NOLOCAL=1 \
    UCX_TLS=tcp,self UCX_NET_DEVICES="$DEV" "${MPICH[@]}" -hosts "$HOSTLIST" -ppn 1 \
    -launcher ssh -launcher-exec "$OUT/in_ns.sh" -iface "$DEV" -np "$NETNS" \
    "$OUT/mpi_alltoall_ref.mpich" -s "$SIZES" -n "$ITERS" -w "$WARMUP"
fi
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/banner.txt"

python3 - "$OUT" "$ALGOS" <<'PY' | tee "$OUT/summary.txt"
import glob, json, os, sys

out, algos = sys.argv[1], sys.argv[2].split(",")
any_wrong = False

def load_ibscope(path):
    global any_wrong
    rows = {}
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return rows
    for r in doc.get("collectives", {}).get("rows", []):
        if r.get("in_place") or r.get("collective") != "alltoall":
            continue
        rows[r["size_bytes"]] = r["busbw_gbps"]
        any_wrong |= (r.get("wrong") or 0) > 0
    return rows

def load_mpi(path):
    global any_wrong
    rows = {}
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return rows
    for line in lines:
        f = line.split()
        # Only the table's rows: a launcher killed after the rows adds its own lines.
        if line.startswith("#") or len(f) != 5 or not f[0].isdigit():
            continue
        rows[int(f[0])] = float(f[3])
        any_wrong |= int(f[4]) > 0
    return rows

def size_text(b):
    for unit, s in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= s and b % s == 0:
            return f"{b // s}{unit}"
    return str(b)

def cell(x):
    return f"{'-':>9}" if x is None else f"{x:9.4f}"

for d in sorted(glob.glob(os.path.join(out, "local-np*")), key=lambda p: int(p.split("np")[-1])) + \
        sorted(glob.glob(os.path.join(out, "netns-h*"))):
    name = os.path.basename(d)
    ib = {a: load_ibscope(os.path.join(d, f"ibscope-{a}.json")) for a in algos}
    ib = {a: r for a, r in ib.items() if r}
    mpi = {m: load_mpi(os.path.join(d, f"{m}.txt")) for m in ("openmpi", "mpich")}
    sizes = sorted(set(s for r in list(ib.values()) + list(mpi.values()) for s in r))
    print()
    print(f"== {name}: busbw GB/s (1e9 B/s), busbw = algbw x (p-1)/p; size = one rank's send buffer ==")
    head = f"{'size':>6} " + " ".join(f"{a:>9}" for a in ib) + f" {'openmpi':>9} {'mpich':>9}  {'best ibscope':>12} {'best MPI':>9} {'ratio':>6}"
    print(head)
    for s in sizes:
        cols = [ib[a].get(s) for a in ib]
        known_ib = [(ib[a][s], a) for a in ib if s in ib[a]]
        known_mpi = [(mpi[m][s], m) for m in mpi if s in mpi[m]]
        bi = max(known_ib) if known_ib else None
        bm = max(known_mpi) if known_mpi else None
        ratio = f"{bi[0] / bm[0]:6.2f}" if bi and bm and bm[0] > 0 else f"{'-':>6}"
        print(f"{size_text(s):>6} " + " ".join(cell(c) for c in cols) +
              f" {cell(mpi['openmpi'].get(s))} {cell(mpi['mpich'].get(s))}  "
              f"{(bi[1] if bi else '-'):>12} {(bm[1] if bm else '-'):>9} {ratio}")
if any_wrong:
    print("\nWRONG: some run reported #wrong > 0")
sys.exit(1 if any_wrong else 0)
PY
rc=$?
(( rc != 0 )) && STATUS=1
[[ -s "$OUT/failed.txt" ]] && { echo; echo "failed runs:"; cat "$OUT/failed.txt"; }
exit $STATUS
