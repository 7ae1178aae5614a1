#!/bin/bash
# Runs INSIDE the Soft-RoCE guest, started by the initramfs /init in the chroot of the host's
# root (read-only 9p), with the run's control directory at /run/ibscope. run_in_guest.sh copies
# this file there. Never run it on the host: it creates network devices and rules.
#
# Control directory (written by run_in_guest.sh): shares (what /init mounted read-write),
# cmd.sh (cd + env + the command); written here: status (the command's exit status),
# setup_failed (why the setup failed), times (guest uptimes, /init's first).
# Output: the setup log goes to the virtio port ibscope.log, the command's stdout+stderr to
# ibscope.out (both are regular files on the host).
set -uo pipefail

ctl=/run/ibscope

# Builtins where a loop or a hot path would otherwise exec: every exec costs ~0.1 s under TCG.
port() { # the /dev node of the virtio-serial port named $1
  local d name
  for d in /sys/class/virtio-ports/*; do
    name=
    read -r name <"$d/name" 2>/dev/null || true
    if [ "$name" = "$1" ]; then
      echo "/dev/${d##*/}"
      return 0
    fi
  done
  return 1
}

uptime_s() {
  local up _
  read -r up _ </proc/uptime
  echo "$up"
}

out_port="$(port ibscope.out)" || out_port=/dev/console
log_port="$(port ibscope.log)" || log_port=/dev/console
exec >"$log_port" 2>&1 </dev/null

fail() {
  echo "guest: setup failed: $*"
  echo "--- dmesg (tail)"
  dmesg | tail -n 40
  echo "$*" >"$ctl/setup_failed"
  sync
  exit 1
}
run() {
  echo "guest: [$(uptime_s)] $*"
  "$@" || fail "$*"
}

read -r kernel_release </proc/sys/kernel/osrelease
echo "guest: up at $(uptime_s) s, kernel $kernel_release"
echo "guest.sh $(uptime_s)" >>"$ctl/times"

# A hostname (the kernel's default is "(none)"): UCX and the results files record it.
echo ibscope-rxe >/proc/sys/kernel/hostname

# Four rxe devices on the ends of two veth pairs (two rails): rxe0 on rxe-a and rxe1 on rxe-b
# (192.0.2.0/24), rxe2 on rxe-c and rxe3 on rxe-d (192.0.3.0/24). All addresses are local, so
# without the rules below traffic between them would go through lo, where rxe drops it: the
# local table moves from pref 0 to 100, and locally generated packets (iif lo) to an address
# are routed out of the veth end facing it (SOFTROCE.md step 7). rxe in 6.1 is not
# namespace-aware. One `ip -batch` and one `rdma -b` rather than one exec per command.
addr_a=192.0.2.1
addr_b=192.0.2.2
addr_c=192.0.3.1
addr_d=192.0.3.2
for conf in all default lo; do
  echo 1 >"/proc/sys/net/ipv4/conf/$conf/accept_local"
  echo 0 >"/proc/sys/net/ipv4/conf/$conf/rp_filter"
done
run ip -batch - <<EOF
link set lo up
link add rxe-a type veth peer name rxe-b
link add rxe-c type veth peer name rxe-d
addr add $addr_a/24 dev rxe-a
addr add $addr_b/24 dev rxe-b
addr add $addr_c/24 dev rxe-c
addr add $addr_d/24 dev rxe-d
rule add pref 100 lookup local
rule del pref 0 lookup local
rule add pref 10 iif lo to $addr_b lookup 100
rule add pref 11 iif lo to $addr_a lookup 101
rule add pref 12 iif lo to $addr_d lookup 102
rule add pref 13 iif lo to $addr_c lookup 103
link set rxe-a up
link set rxe-b up
link set rxe-c up
link set rxe-d up
route add $addr_b dev rxe-a src $addr_a table 100
route add $addr_a dev rxe-b src $addr_b table 101
route add $addr_d dev rxe-c src $addr_c table 102
route add $addr_c dev rxe-d src $addr_d table 103
EOF
for conf in rxe-a rxe-b rxe-c rxe-d; do
  echo 1 >"/proc/sys/net/ipv4/conf/$conf/accept_local"
  echo 0 >"/proc/sys/net/ipv4/conf/$conf/rp_filter"
done
run rdma -b - <<EOF
link add rxe0 type rxe netdev rxe-a
link add rxe1 type rxe netdev rxe-b
link add rxe2 type rxe netdev rxe-c
link add rxe3 type rxe netdev rxe-d
EOF

# Ready = port 1 ACTIVE and GID index 1 (the IPv4-mapped RoCE v2 GID) filled in, per device.
# Builtins only (read, and read -t on a pipe nobody writes to as the sleep).
ready() {
  local dev p state gid type
  for dev in rxe0 rxe1 rxe2 rxe3; do
    p=/sys/class/infiniband/$dev/ports/1
    read -r state <"$p/state" 2>/dev/null || return 1
    read -r gid <"$p/gids/1" 2>/dev/null || return 1
    read -r type <"$p/gid_attrs/types/1" 2>/dev/null || return 1
    [ "$state" = "4: ACTIVE" ] && [ "$type" = "RoCE v2" ] || return 1
    [[ "$gid" == 0000:0000:0000:0000:0000:ffff:* ]] || return 1
  done
}
exec {sleep_fd}<> <(:)
deadline=$((SECONDS + 60))
until ready; do
  [ "$SECONDS" -lt "$deadline" ] || fail "rxe0..rxe3 not ACTIVE with a RoCE v2 GID at index 1 after 60 s"
  read -rt 0.02 -u "$sleep_fd" _ || true
done
exec {sleep_fd}<&-
echo "guest: rxe0 (rxe-a $addr_a), rxe1 (rxe-b $addr_b), rxe2 (rxe-c $addr_c), rxe3 (rxe-d $addr_d) ready at $(uptime_s) s"
echo "ready $(uptime_s)" >>"$ctl/times"

# Registered memory is pinned: no limit, as on an RDMA host.
ulimit -l unlimited || fail "cannot raise RLIMIT_MEMLOCK"

bash "$ctl/cmd.sh" >"$out_port" 2>&1 </dev/null
status=$?
echo "done $(uptime_s)" >>"$ctl/times"
echo "guest: command exited with $status at $(uptime_s) s"
echo "$status" >"$ctl/status.tmp"
mv "$ctl/status.tmp" "$ctl/status"
sync
exit 0
