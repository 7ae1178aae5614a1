#!/usr/bin/env bash
# Emulates several hosts on one machine with network namespaces (see tests/netns/README.md).
#
#   hosts.sh up N [--rate RATE] [--prefix P] [--dev NAME] [--subnet A.B.C] [--burst B]
#                 [--latency L] [--tcp-retries2 K]
#   hosts.sh down [--prefix P]             remove everything (idempotent, also after a crash)
#   hosts.sh exec I CMD...  [--prefix P before I]   run CMD inside host I
#   hosts.sh rate I RATE                   change host I's rate live (both link directions)
#   hosts.sh link I up|down                plug / unplug host I's cable (switch port)
#   hosts.sh addr I                        print host I's IPv4 address
#   hosts.sh info                          print the layout as shell assignments (NS_*, DEV, ...)
#   hosts.sh status                        human-readable layout, qdiscs and counters
#
# Layout for prefix P (default "ibs"), all of it inside namespaces this script creates:
#   P-sw          the "switch": bridge "br0", one port "pI" per host, each shaped (to host I)
#   P-hI          host I: lo up, device DEV (default "P-eth", the SAME name on every host),
#                 address SUBNET.(I+1)/24 (default subnet 10.213.0), shaped (from host I)
# Nothing is created or changed in the namespace this script is started from.
# The state (N, dev, subnet, rate) is kept in /run/ibscope-netns/P.state.
set -euo pipefail

readonly SELF=${0##*/}
PREFIX=${IBSCOPE_NETNS_PREFIX:-ibs}
STATE_DIR=/run/ibscope-netns

die() { echo "$SELF: error: $*" >&2; exit 2; }
warn() { echo "$SELF: $*" >&2; }

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit "${1:-2}"
}

need_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces, veth, tc need CAP_NET_ADMIN and CAP_SYS_ADMIN); try: sudo $0 $*"
  command -v ip >/dev/null || die "'ip' not found: install iproute2"
  command -v tc >/dev/null || die "'tc' not found: install iproute2"
}

check_prefix() {
  [[ $PREFIX =~ ^[a-z][a-z0-9]{0,7}$ ]] \
    || die "--prefix '$PREFIX': use 1-8 lower-case letters/digits, starting with a letter"
}

sw_ns() { echo "$PREFIX-sw"; }
host_ns() { echo "$PREFIX-h$1"; }
state_file() { echo "$STATE_DIR/$PREFIX.state"; }

ns_exists() { [[ -e /run/netns/$1 ]]; }

# All namespaces belonging to this prefix (also leftovers of an aborted 'up').
our_namespaces() {
  local n
  for n in /run/netns/"$PREFIX"-sw /run/netns/"$PREFIX"-h*; do
    [[ -e $n ]] || continue
    n=${n##*/}
    [[ $n == "$PREFIX-sw" || $n =~ ^$PREFIX-h[0-9]+$ ]] && echo "$n"
  done
  return 0
}

load_state() {
  local f
  f=$(state_file)
  [[ -r $f ]] || die "no hosts with prefix '$PREFIX' (missing $f): run '$SELF up N' first"
  # shellcheck disable=SC1090
  source "$f"
  ns_exists "$(sw_ns)" || die "state file $f exists but namespace $(sw_ns) does not: run '$SELF down --prefix $PREFIX' and 'up' again"
}

check_index() {
  [[ $1 =~ ^[0-9]+$ ]] || die "host index '$1' is not a number"
  (( $1 < N )) || die "host index $1 out of range: there are $N hosts (0..$((N - 1)))"
}

check_rate() {
  [[ $1 =~ ^[0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] \
    || die "rate '$1': expected a tc rate such as 200mbit, 1gbit, 500kbit (note: 'mbps' means megabytes/s)"
}

# Serialise up/down/rate/link of one prefix (two test scripts starting at once).
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/$PREFIX.lock"
  flock -w 60 9 || die "another $SELF holds $STATE_DIR/$PREFIX.lock for over 60 s"
}

tbf() {  # tbf NS DEV RATE [replace|change]
  local ns=$1 dev=$2 rate=$3 verb=${4:-replace}
  ip netns exec "$ns" tc qdisc "$verb" dev "$dev" root tbf rate "$rate" burst "$BURST" latency "$LATENCY"
}

# ---------------------------------------------------------------------------------------------
cmd_down() {
  local namespaces n pids p quiet=${1:-}
  mapfile -t namespaces < <(our_namespaces)
  for n in "${namespaces[@]}"; do
    # A namespace lives on while a process is inside it; these processes can only have been
    # started by this harness (the namespaces are ours), so end them first.
    pids=$(ip netns pids "$n" 2>/dev/null || true)
    if [[ -n $pids ]]; then
      [[ -n $quiet ]] || warn "ending processes left in $n: $(echo $pids)"
      for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    fi
  done
  if [[ ${#namespaces[@]} -gt 0 ]]; then
    local i
    for i in 1 2 3 4 5 6 7 8 9 10; do
      pids=""
      for n in "${namespaces[@]}"; do pids+=$(ip netns pids "$n" 2>/dev/null || true); done
      [[ -z $pids ]] && break
      sleep 0.2
    done
    for n in "${namespaces[@]}"; do
      for p in $(ip netns pids "$n" 2>/dev/null || true); do kill -KILL "$p" 2>/dev/null || true; done
    done
  fi
  # Deleting a namespace destroys its veth ends, and with them the peers in the switch.
  for n in "${namespaces[@]}"; do
    ip netns delete "$n" 2>/dev/null || { ns_exists "$n" && warn "could not delete namespace $n"; }
  done
  rm -f "$(state_file)"
  [[ -n $quiet ]] || echo "$SELF: prefix '$PREFIX': removed ${#namespaces[@]} namespace(s)"
  return 0
}

cmd_up() {
  local n="" rate=1gbit dev="" subnet=10.213.0 retries2=""
  BURST=256kb LATENCY=50ms
  while [[ $# -gt 0 ]]; do
    case $1 in
      --rate) rate=${2:?--rate needs a value}; shift 2 ;;
      --dev) dev=${2:?--dev needs a value}; shift 2 ;;
      --subnet) subnet=${2:?--subnet needs a value}; shift 2 ;;
      --burst) BURST=${2:?--burst needs a value}; shift 2 ;;
      --latency) LATENCY=${2:?--latency needs a value}; shift 2 ;;
      --tcp-retries2) retries2=${2:?--tcp-retries2 needs a value}; shift 2 ;;
      -h|--help) usage 0 ;;
      -*) die "up: unknown option '$1'" ;;
      *) [[ -z $n ]] || die "up: unexpected argument '$1'"; n=$1; shift ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] && (( n >= 1 && n <= 250 )) || die "up: N must be 1..250 (got '${n:-nothing}')"
  [[ $rate == none ]] || check_rate "$rate"
  dev=${dev:-$PREFIX-eth}
  [[ $dev =~ ^[a-zA-Z][a-zA-Z0-9_.-]{0,14}$ && $dev != lo ]] || die "--dev '$dev': 1-15 characters, a letter first, not 'lo'"
  [[ $subnet =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] \
    && (( BASH_REMATCH[1] <= 255 && BASH_REMATCH[2] <= 255 && BASH_REMATCH[3] <= 255 )) \
    || die "--subnet '$subnet': expected three octets such as 10.213.0 (a /24)"
  [[ -z $retries2 || $retries2 =~ ^[0-9]+$ ]] || die "--tcp-retries2 '$retries2': expected a number"

  local existing
  existing=$(our_namespaces | tr '\n' ' ')
  [[ -z $existing ]] || die "namespaces with prefix '$PREFIX' exist already ($existing): run '$SELF down --prefix $PREFIX' first, or use another --prefix"

  # Any failure from here on leaves nothing behind.
  trap 'rc=$?; if [[ $rc -ne 0 ]]; then warn "up failed: removing what was created"; cmd_down quiet; fi' EXIT

  local sw i h
  sw=$(sw_ns)
  ip netns add "$sw" 2>/dev/null \
    || die "cannot create network namespace $sw (kernel without CONFIG_NET_NS, or not allowed here)"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge 2>/dev/null \
    || die "cannot create a bridge (kernel without CONFIG_BRIDGE / module 'bridge' not loadable)"
  ip -n "$sw" link set br0 type bridge stp_state 0 forward_delay 0 2>/dev/null || true
  ip -n "$sw" link set br0 up
  ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true

  for ((i = 0; i < n; i++)); do
    h=$(host_ns "$i")
    ip netns add "$h" || die "cannot create network namespace $h"
    ip -n "$h" link set lo up
    # Created directly inside the switch namespace, the peer directly inside the host:
    # no device ever appears in the namespace this script runs in.
    ip -n "$sw" link add "p$i" type veth peer name "$dev" netns "$h" 2>/dev/null \
      || die "cannot create a veth pair (kernel without CONFIG_VETH / module 'veth' not loadable)"
    ip -n "$sw" link set "p$i" master br0
    ip netns exec "$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
    if [[ -n $retries2 ]]; then
      ip netns exec "$h" sysctl -qw net.ipv4.tcp_retries2="$retries2" \
        || die "cannot set net.ipv4.tcp_retries2 in $h"
    fi
    ip -n "$h" addr add "$subnet.$((i + 1))/24" dev "$dev"
    ip -n "$h" link set "$dev" up
    ip -n "$sw" link set "p$i" up
    if [[ $rate != none ]]; then
      tbf "$sw" "p$i" "$rate" 2>/dev/null && tbf "$h" "$dev" "$rate" 2>/dev/null \
        || die "cannot attach a tbf qdisc (kernel without CONFIG_NET_SCH_TBF / module 'sch_tbf'); try '$SELF up $n --rate none' for unshaped links"
    fi
  done

  mkdir -p "$STATE_DIR"
  {
    echo "N=$n"
    echo "DEV=$dev"
    echo "SUBNET=$subnet"
    echo "RATE=$rate"
    echo "BURST=$BURST"
    echo "LATENCY=$LATENCY"
  } > "$(state_file)"
  trap - EXIT

  # Wait until the bridge forwards (ports come up asynchronously): host 0 pings the last host.
  # Without ping (iputils-ping), wait for every bridge port to be forwarding instead.
  if (( n > 1 )); then
    local ok=""
    for i in $(seq 1 50); do
      if command -v ping >/dev/null; then
        ip netns exec "$(host_ns 0)" ping -c1 -W1 "$subnet.$n" >/dev/null 2>&1 && { ok=1; break; }
      else
        [[ $(bridge -n "$sw" link show | grep -c 'state forwarding') -eq $n ]] && { ok=1; break; }
      fi
      sleep 0.1
    done
    [[ -n $ok ]] || warn "warning: host 0 cannot reach host $((n - 1)) ($subnet.$n) yet"
  fi
  echo "$SELF: $n host(s) up, prefix '$PREFIX', device '$dev', $subnet.1-$subnet.$n/24, rate $rate (tbf burst $BURST latency $LATENCY, both directions)"
}

cmd_exec() {
  [[ $# -ge 2 ]] || die "exec: usage: $SELF exec I CMD..."
  load_state
  check_index "$1"
  local h
  h=$(host_ns "$1")
  shift
  exec ip netns exec "$h" "$@"
}

cmd_rate() {
  [[ $# -eq 2 ]] || die "rate: usage: $SELF rate I RATE"
  load_state
  check_index "$1"
  check_rate "$2"
  local verb=change
  # 'change' needs an existing tbf; after 'up --rate none' there is none yet.
  ip netns exec "$(host_ns "$1")" tc qdisc show dev "$DEV" root | grep -q '^qdisc tbf' || verb=replace
  tbf "$(sw_ns)" "p$1" "$2" "$verb" && tbf "$(host_ns "$1")" "$DEV" "$2" "$verb" \
    || die "rate: tc qdisc $verb failed for host $1"
  echo "$SELF: host $1 rate $2"
}

cmd_link() {
  [[ $# -eq 2 && ( $2 == up || $2 == down ) ]] || die "link: usage: $SELF link I up|down"
  load_state
  check_index "$1"
  # The switch port: host I keeps its address and routes but loses carrier, like a pulled
  # cable; TCP on both sides only sees silence (see README: tcp_retries2).
  ip -n "$(sw_ns)" link set "p$1" "$2"
  echo "$SELF: host $1 link $2"
}

cmd_addr() {
  [[ $# -eq 1 ]] || die "addr: usage: $SELF addr I"
  load_state
  check_index "$1"
  echo "$SUBNET.$(($1 + 1))"
}

cmd_info() {
  load_state
  local i
  echo "PREFIX=$PREFIX"
  echo "N=$N"
  echo "DEV=$DEV"
  echo "SUBNET=$SUBNET"
  echo "RATE=$RATE"
  echo "BURST=$BURST"
  echo "LATENCY=$LATENCY"
  echo "SWITCH_NS=$(sw_ns)"
  for ((i = 0; i < N; i++)); do
    echo "NS_$i=$(host_ns "$i")"
    echo "ADDR_$i=$SUBNET.$((i + 1))"
  done
}

cmd_status() {
  load_state
  local i
  echo "prefix $PREFIX: $N host(s), device $DEV, subnet $SUBNET.0/24, rate at up: $RATE"
  for ((i = 0; i < N; i++)); do
    local h q1 q2 st
    h=$(host_ns "$i")
    st=$(ip -n "$(sw_ns)" -br link show "p$i" | awk '{print $2}')
    q1=$(ip netns exec "$h" tc qdisc show dev "$DEV" root | head -1)
    q2=$(ip netns exec "$(sw_ns)" tc qdisc show dev "p$i" root | head -1)
    printf '  host %d  %-10s %-12s port %-5s\n    egress : %s\n    ingress: %s\n' \
      "$i" "$h" "$SUBNET.$((i + 1))" "$st" "$q1" "$q2"
  done
}

# ---------------------------------------------------------------------------------------------
main() {
  local args=() cmd
  # --prefix may appear anywhere before the command's own free arguments (not after 'exec I').
  while [[ $# -gt 0 ]]; do
    case $1 in
      --prefix) PREFIX=${2:?--prefix needs a value}; shift 2 ;;
      --prefix=*) PREFIX=${1#--prefix=}; shift ;;
      exec) args+=("$@"); break ;;
      *) args+=("$1"); shift ;;
    esac
  done
  [[ ${#args[@]} -gt 0 ]] || usage
  cmd=${args[0]}
  args=("${args[@]:1}")
  case $cmd in
    -h|--help|help) usage 0 ;;
  esac
  check_prefix
  need_root "$cmd"
  case $cmd in
    up) take_lock; cmd_up "${args[@]}" ;;
    down) take_lock; cmd_down ;;
    exec) cmd_exec "${args[@]}" ;;
    rate) take_lock; cmd_rate "${args[@]}" ;;
    link) take_lock; cmd_link "${args[@]}" ;;
    addr) cmd_addr "${args[@]}" ;;
    info) cmd_info ;;
    status) cmd_status ;;
    *) die "unknown command '$cmd' (up, down, exec, rate, link, addr, info, status; --help)" ;;
  esac
}

main "$@"
