#!/usr/bin/env bash
# A throw-away single-node Slurm for launcher tests: munged, slurmctld and slurmd, each with its
# own state in one temp directory, on ports picked here (never the system's 6817/6818), and the
# system's /etc/slurm and /etc/munge left alone. The daemons run in their own sessions (setsid),
# so they outlive the caller's process group; `stop` ends them.
#
#   tests/launchers/slurm.sh start     prints, on stdout, the lines
#                                        SLURM_CONF=<dir>/slurm.conf
#                                        IBSCOPE_SLURM_DIR=<dir>
#                                        IBSCOPE_SLURM_MPI=<space-separated srun --mpi=list>
#                                      once sinfo shows the node idle (diagnostics on stderr)
#   tests/launchers/slurm.sh stop DIR  cancels the jobs of that cluster, stops exactly the
#                                      daemons it recorded in DIR/pids and removes DIR
#
# Exit status of start: 0 ready; 77 (one line on stderr) when the slurm/munge binaries are
# missing, we are not root, or the daemons cannot start; 1 instead of 77 when
# IBSCOPE_SLURM_REQUIRED=1 (CI). On any failure start stops what it started and removes DIR.
# Measured on 2 cores: start about 1.5 s, stop well under 1 s.
set -euo pipefail

readonly READY_DEADLINE_S=${IBSCOPE_SLURM_READY_S:-30}

die_skip() {  # die_skip MESSAGE: 77, or 1 when Slurm is required
  if [ "${IBSCOPE_SLURM_REQUIRED:-0}" = 1 ]; then
    echo "slurm.sh: $1 (IBSCOPE_SLURM_REQUIRED=1: failing instead of skipping)" >&2
    exit 1
  fi
  echo "slurm.sh: skipped: $1" >&2
  exit 77
}

free_port() {  # a TCP port nobody uses, away from Slurm's defaults
  # Below the kernel's ephemeral range (32768 and up by default): a port picked there can be
  # taken by an outgoing connection before slurmd binds it (CI: "Unable to bind listen port
  # (38378): Address already in use"). Every socket counts, not only listening ones.
  local port used
  used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' || true)
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if ! grep -qx "$port" <<<"$used"; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

stop_dir() {  # stop_dir DIR: scancel, stop the recorded PIDs (newest first), remove DIR
  local dir=$1 pid name i
  [ -d "$dir" ] || return 0
  if [ -f "$dir/slurm.conf" ] && [ -s "$dir/pids" ] && command -v scancel >/dev/null; then
    SLURM_CONF=$dir/slurm.conf timeout 5 scancel --quiet --full --signal=KILL \
      --user="$(id -un)" >/dev/null 2>&1 || true
  fi
  if [ -f "$dir/pids" ]; then
    local -a pids=()
    while read -r name pid; do
      [ -n "${pid:-}" ] && pids=("$pid" "${pids[@]}")
      : "$name"
    done <"$dir/pids"
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for i in $(seq 1 50); do
      local alive=0
      for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ "$alive" = 0 ] && break
      sleep 0.1
      : "$i"
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  rm -rf -- "$dir"
}

log_tails() {  # the last lines of each daemon's log, for a failure message
  local dir=$1 f
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] || continue
    echo "--- tail of $f ---" >&2
    tail -n 15 "$f" >&2
  done
}

cmd_start() {
  local b
  for b in munged mungekey slurmctld slurmd srun sinfo scancel ss setsid; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
      die_skip "'$b' not found (install slurmctld slurmd slurm-client munge iproute2)"
  done
  [ "$(id -u)" -eq 0 ] || die_skip "the throw-away Slurm runs its daemons as root; not root"
  local munged=/usr/sbin/munged mungekey=/usr/sbin/mungekey
  command -v munged >/dev/null 2>&1 && munged=$(command -v munged)
  command -v mungekey >/dev/null 2>&1 && mungekey=$(command -v mungekey)

  local host cpus mem_mb ctld_port slurmd_port
  host=$(hostname -s)
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal:/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  ctld_port=$(free_port) || die_skip "no free TCP port for slurmctld"
  slurmd_port=$(free_port) || die_skip "no free TCP port for slurmd"
  [ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

  DIR=$(mktemp -d "${TMPDIR:-/tmp}/ibscope-slurm.XXXXXX")
  chmod 0711 "$DIR"  # munged wants its socket directory searchable by all
  trap 'stop_dir "$DIR"' EXIT
  mkdir -p "$DIR"/{munge,state,spool,log,run}
  chmod 0711 "$DIR/munge"
  : >"$DIR/pids"

  # munge: its own key, socket, pid, seed and log in DIR (the system's /etc/munge untouched).
  "$mungekey" --create --keyfile="$DIR/munge/munge.key" >/dev/null 2>&1 ||
    die_skip "mungekey could not create a key in $DIR"
  chmod 0400 "$DIR/munge/munge.key"
  local sock=$DIR/munge/munge.socket
  setsid "$munged" --foreground --force --socket="$sock" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munge/munged.pid" --seed-file="$DIR/munge/munged.seed" \
    --log-file="$DIR/log/munged.log" </dev/null >>"$DIR/log/munged.log" 2>&1 &
  echo "munged $!" >>"$DIR/pids"

  cat >"$DIR/slurm.conf" <<EOF
# Written by tests/launchers/slurm.sh: a throw-away single-node cluster.
ClusterName=ibscope-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$DIR/plugstack.conf
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
InactiveLimit=0
KillWait=2
MinJobAge=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  : >"$DIR/plugstack.conf"
  export SLURM_CONF=$DIR/slurm.conf

  # munged must answer before the Slurm daemons authenticate.
  local i
  for i in $(seq 1 50); do
    [ -S "$sock" ] && break
    sleep 0.1
    : "$i"
  done
  [ -S "$sock" ] || { log_tails "$DIR"; die_skip "munged did not start (socket $sock)"; }

  setsid slurmctld -D -i -f "$SLURM_CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >>"$DIR/pids"
  setsid slurmd -D -f "$SLURM_CONF" -N "$host" </dev/null >>"$DIR/log/slurmd.out" 2>&1 &
  echo "slurmd $!" >>"$DIR/pids"

  local deadline=$((SECONDS + READY_DEADLINE_S)) state=""
  while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(sinfo -h -N -n "$host" -o '%t' 2>/dev/null || true)
    [ "$state" = idle ] && break
    local name pid
    while read -r name pid; do
      if ! kill -0 "$pid" 2>/dev/null; then
        log_tails "$DIR"
        for f in "$DIR"/log/*.out; do echo "--- $f ---" >&2; tail -n 15 "$f" >&2; done
        die_skip "$name exited during start-up (logs above)"
      fi
    done <"$DIR/pids"
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    log_tails "$DIR"
    die_skip "node $host not idle within ${READY_DEADLINE_S}s (sinfo state '${state:-none}')"
  fi

  # "MPI plugin types are... pmix none ... specific pmix plugin versions available: pmix_v4"
  local mpi
  mpi=$(srun --mpi=list 2>&1 | sed -e 's/.*available://' -e '/MPI plugin types/d' |
    tr -s ' \t\n' ' ' | sed -e 's/^ *//' -e 's/ *$//' || true)
  trap - EXIT
  echo "SLURM_CONF=$SLURM_CONF"
  echo "IBSCOPE_SLURM_DIR=$DIR"
  echo "IBSCOPE_SLURM_MPI=$mpi"
}

case "${1:-}" in
  start) cmd_start ;;
  stop)
    [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }
    case "$2" in
      */ibscope-slurm.*) stop_dir "$2" ;;
      *) echo "slurm.sh: refusing to remove '$2' (not a directory this script made)" >&2; exit 2 ;;
    esac
    ;;
  *) echo "usage: $0 start | stop DIR" >&2; exit 2 ;;
esac
