#!/usr/bin/env bash
# Runs one command against real Soft-RoCE (rdma_rxe) devices inside a QEMU TCG guest that boots
# Debian's stock 6.1 kernel, with the host's / mounted read-only and this repository read-write
# at its host path, so host-built binaries run unchanged. See tests/rxe/README.md.
#
# Usage: tests/rxe/run_in_guest.sh [--timeout S] [--env NAME=VALUE]... [--cwd DIR]
#                                  [--share DIR]... [--verbose] -- COMMAND [ARGS...]
#   --timeout S       wall-clock limit for the whole run (boot + command), default 600
#   --env NAME=VALUE  put NAME=VALUE in the command's environment (repeatable); the host's
#                     environment does NOT reach the command otherwise
#   --cwd DIR         working directory of the command (default: the current directory)
#   --share DIR       also share host directory DIR read-write at its path (repeatable); the
#                     repository is always shared; the rest of / is read-only, and /tmp, /run,
#                     /var/tmp, /dev/shm are the guest's own (empty)
#   --verbose         also print the guest's setup log and timings (IBSCOPE_RXE_VERBOSE=1)
# The command sees: PATH, HOME=/tmp, IBSCOPE_RXE_DEVICES="rxe0 rxe1 rxe2 rxe3",
#   IBSCOPE_RXE_ADDRS="192.0.2.1 192.0.2.2 192.0.3.1 192.0.3.2",
#   IBSCOPE_RXE_NETDEVS="rxe-a rxe-b rxe-c rxe-d" (two veth pairs: rxe0-rxe1, rxe2-rxe3),
#   IBSCOPE_RXE_GID_INDEX=1, IBSCOPE_RXE_GUEST=1, plus the --env variables.
# Exit: the command's exit status; 77 when the guest cannot run here (no QEMU, no kernel
#   package...), or 1 instead when IBSCOPE_RXE_REQUIRED=1; 124 timed out; 125 the guest never
#   reported a status (boot or setup failure, or every boot stalled before guest.sh).
# Environment: IBSCOPE_RXE_CACHE (kernel/initramfs cache), IBSCOPE_RXE_REQUIRED,
#   IBSCOPE_RXE_VERBOSE, IBSCOPE_RXE_QEMU (QEMU binary, default qemu-system-x86_64),
#   IBSCOPE_RXE_KEEP=1 (keep the run's temp directory: logs, control files),
#   IBSCOPE_RXE_KERNEL_ARGS (appended to the guest kernel command line),
#   IBSCOPE_RXE_BOOT_TIMEOUT (default 60: a boot that has not started guest.sh by then is
#   killed and booted again) and IBSCOPE_RXE_BOOT_TRIES (default 2 boots in all).
set -euo pipefail

me=run_in_guest
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
src="$(cd "$here/../.." && pwd -P)"

usage() { # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}

die_usage() {
  echo "$me: $*" >&2
  echo "usage: $me [--timeout S] [--env NAME=VALUE]... [--cwd DIR] [--share DIR]... [--verbose] -- COMMAND [ARGS...]" >&2
  exit 2
}

# Cannot run here: skip (77) unless the caller requires the guest.
unavailable() {
  if [ "${IBSCOPE_RXE_REQUIRED:-0}" = 1 ]; then
    echo "$me: FAIL: cannot run the Soft-RoCE guest: $* (IBSCOPE_RXE_REQUIRED=1)" >&2
    exit 1
  fi
  echo "$me: SKIP: cannot run the Soft-RoCE guest: $*" >&2
  exit 77
}

timeout_s=600
cwd="$PWD"
verbose="${IBSCOPE_RXE_VERBOSE:-0}"
envs=()
shares=()
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout)
      [ $# -ge 2 ] || die_usage "--timeout needs a value"
      timeout_s="$2"
      shift 2
      ;;
    --timeout=*)
      timeout_s="${1#*=}"
      shift
      ;;
    --env)
      [ $# -ge 2 ] || die_usage "--env needs NAME=VALUE"
      envs+=("$2")
      shift 2
      ;;
    --env=*)
      envs+=("${1#*=}")
      shift
      ;;
    --cwd)
      [ $# -ge 2 ] || die_usage "--cwd needs a directory"
      cwd="$2"
      shift 2
      ;;
    --cwd=*)
      cwd="${1#*=}"
      shift
      ;;
    --share)
      [ $# -ge 2 ] || die_usage "--share needs a directory"
      shares+=("$2")
      shift 2
      ;;
    --share=*)
      shares+=("${1#*=}")
      shift
      ;;
    --verbose)
      verbose=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      break
      ;;
    *) die_usage "unknown option '$1' (the command goes after --)" ;;
  esac
done
[ $# -gt 0 ] || die_usage "no command given"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout wants whole seconds, got '$timeout_s'"
for e in "${envs[@]}"; do
  [[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die_usage "--env wants NAME=VALUE, got '$e'"
done
cwd="$(cd "$cwd" 2>/dev/null && pwd)" || die_usage "--cwd: no such directory"
for i in "${!shares[@]}"; do
  d="$(cd "${shares[$i]}" 2>/dev/null && pwd -P)" || die_usage "--share: no such directory '${shares[$i]}'"
  [[ "$d" != *$'\n'* ]] || die_usage "--share: a path with a newline cannot be shared"
  [ "$d" != / ] || die_usage "--share: not the whole root"
  shares[i]="$d"
done

# ---- can the guest run here? ---------------------------------------------------------------
qemu="${IBSCOPE_RXE_QEMU:-qemu-system-x86_64}"
command -v "$qemu" >/dev/null 2>&1 || unavailable "$qemu not found (install qemu-system-x86)"
"$qemu" -version >/dev/null 2>&1 || unavailable "$qemu does not start"
for tool in timeout tail sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || unavailable "'$tool' not found"
done

# ---- the run's temp directory: control directory, logs ------------------------------------
tmp="$(mktemp -d "${TMPDIR:-/tmp}/ibscope-rxe.XXXXXX")"
qemu_pid=
tail_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
  if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
    kill -TERM "$qemu_pid" 2>/dev/null || true # timeout(1) passes it on to QEMU
    wait "$qemu_pid" 2>/dev/null || true
  fi
  if [ -n "$tail_pid" ]; then
    kill "$tail_pid" 2>/dev/null || true
    wait "$tail_pid" 2>/dev/null || true
  fi
  if [ "${IBSCOPE_RXE_KEEP:-0}" = 1 ]; then
    echo "$me: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT
trap 'echo "$me: terminated" >&2; exit 143' TERM

prep_rc=0
prep_start="$SECONDS"
"$here/prepare.sh" >"$tmp/guest.env" 2>"$tmp/prepare.log" || prep_rc=$?
case "$prep_rc" in
  0)
    if [ -s "$tmp/prepare.log" ]; then # it did work: a cold or outdated cache
      echo "$me: prepared the guest kernel and initramfs in $((SECONDS - prep_start)) s" >&2
    fi
    ;;
  77)
    unavailable "$(sed -n 's/^prepare.sh: cannot prepare the Soft-RoCE guest: //p' "$tmp/prepare.log" |
      tail -n 1)"
    ;;
  *)
    cat "$tmp/prepare.log" >&2
    echo "$me: tests/rxe/prepare.sh failed (exit $prep_rc)" >&2
    exit 125
    ;;
esac
IBSCOPE_RXE_KERNEL=
IBSCOPE_RXE_INITRD=
# shellcheck source=/dev/null # KEY=VALUE lines quoted with printf %q by prepare.sh
. "$tmp/guest.env"

mkdir "$tmp/ctl"
cp "$here/guest.sh" "$tmp/ctl/guest.sh"
virtfs=()
n=0
for dir in "$src" "${shares[@]}"; do
  tag="share$n"
  n=$((n + 1))
  printf '%s %s\n' "$tag" "$dir" >>"$tmp/ctl/shares"
  virtfs+=(-virtfs "local,path=${dir//,/,,},mount_tag=$tag,security_model=none,multidevs=remap")
done
guest_env_vars=(
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  HOME=/tmp
  IBSCOPE_RXE_GUEST=1
  "IBSCOPE_RXE_DEVICES=rxe0 rxe1 rxe2 rxe3"
  "IBSCOPE_RXE_ADDRS=192.0.2.1 192.0.2.2 192.0.3.1 192.0.3.2"
  "IBSCOPE_RXE_NETDEVS=rxe-a rxe-b rxe-c rxe-d"
  IBSCOPE_RXE_GID_INDEX=1
)
{
  echo "# generated by run_in_guest.sh"
  printf 'cd -- %q 2>/dev/null || {\n' "$cwd"
  printf '  echo %q >&2\n' "$me: the working directory $cwd does not exist in the guest (/tmp, /run, /var/tmp and /dev/shm are the guest's own: --share DIR brings a host directory in)"
  printf '  exit 125\n}\n'
  printf 'exec env -i'
  printf ' %q' "${guest_env_vars[@]}" "${envs[@]}" "$@"
  printf '\n'
} >"$tmp/ctl/cmd.sh"
show_tail() { # $1 = title, $2 = file
  if [ -s "$2" ]; then
    echo "--- $1 (last 40 lines)" >&2
    tail -n 40 "$2" | tr -d '\r' >&2
    [ -z "$(tail -c 1 "$2")" ] || echo >&2 # the console may end mid-line
  fi
}

# ---- boot ----------------------------------------------------------------------------------
# 2 vCPUs: with 1, busy-polling peers take ~4 ms per ping-pong. -cpu max has AVX2 but no
# AVX-512 (never build guest code with -march=native). Output through virtio-serial ports
# into regular files: the UART and hvc are far too slow, a pipe loses data.
cmdline="console=ttyS0 quiet loglevel=4 panic=-1 8250.nr_uarts=1 i8042.noaux i8042.nokbd"
cmdline+=" i8042.nopnp i8042.dumbkbd tsc=reliable no_timer_check lpj=10000000 pci=noacpi"
cmdline+="${IBSCOPE_RXE_KERNEL_ARGS:+ $IBSCOPE_RXE_KERNEL_ARGS}"

# Boot watchdog: guest.sh normally starts 3-8 s after QEMU. A TCG guest has (rarely, once on
# CI) hung silently before that; a boot that has not reached guest.sh within boot_timeout_s is
# killed and started again, up to boot_tries boots, all within --timeout. The command has not
# started in a killed boot, so a new boot runs it exactly once.
boot_timeout_s="${IBSCOPE_RXE_BOOT_TIMEOUT:-60}"
boot_tries="${IBSCOPE_RXE_BOOT_TRIES:-2}"
[[ "$boot_timeout_s" =~ ^[1-9][0-9]*$ ]] ||
  die_usage "IBSCOPE_RXE_BOOT_TIMEOUT wants whole seconds, got '$boot_timeout_s'"
[[ "$boot_tries" =~ ^[1-9][0-9]*$ ]] ||
  die_usage "IBSCOPE_RXE_BOOT_TRIES wants a positive count, got '$boot_tries'"

guest_started() { [ -f "$tmp/ctl/times" ] && grep -q '^guest.sh ' "$tmp/ctl/times"; }

boot_stage() { # how far a boot got, from the control directory's times file
  if [ ! -f "$tmp/ctl/times" ]; then
    echo "before /init finished its mounts (kernel boot, module loading or the 9p mounts)"
  elif ! guest_started; then
    echo "after /init's mounts, before guest.sh started (chroot, bash)"
  else
    echo "after guest.sh started"
  fi
}

# One boot with at most $1 s of wall time; sets qemu_rc, and boot_stalled=1 when the watchdog
# killed it before guest.sh started.
boot_guest() {
  local limit_s="$1" watch_until
  : >"$tmp/out.log"
  : >"$tmp/setup.log"
  : >"$tmp/boot.log"
  rm -f "$tmp/ctl/times" "$tmp/ctl/status" "$tmp/ctl/status.tmp" "$tmp/ctl/setup_failed"
  boot_stalled=0
  timeout -k 10 "$limit_s" "$qemu" \
    -nodefaults -no-user-config -nographic -no-reboot \
    -machine pc -accel tcg -cpu max -smp 2 -m 2G -nic none \
    -kernel "$IBSCOPE_RXE_KERNEL" -initrd "$IBSCOPE_RXE_INITRD" -append "$cmdline" \
    -chardev "file,id=boot,path=${tmp//,/,,}/boot.log" -serial chardev:boot \
    -virtfs "local,path=/,mount_tag=hostroot,readonly=on,security_model=none,multidevs=remap" \
    -virtfs "local,path=${tmp//,/,,}/ctl,mount_tag=ctl,security_model=none,multidevs=remap" \
    "${virtfs[@]}" \
    -device virtio-serial-pci \
    -chardev "file,id=out,path=${tmp//,/,,}/out.log,append=on" \
    -device virtserialport,chardev=out,name=ibscope.out \
    -chardev "file,id=setup,path=${tmp//,/,,}/setup.log,append=on" \
    -device virtserialport,chardev=setup,name=ibscope.log \
    </dev/null >"$tmp/qemu.log" 2>&1 &
  qemu_pid=$!
  tail -n +1 -s 0.1 -F --pid="$qemu_pid" "$tmp/out.log" 2>/dev/null &
  tail_pid=$!

  watch_until=$((SECONDS + boot_timeout_s))
  while kill -0 "$qemu_pid" 2>/dev/null && ! guest_started; do
    if [ "$SECONDS" -ge "$watch_until" ]; then
      boot_stalled=1
      kill -TERM "$qemu_pid" 2>/dev/null || true # timeout(1) passes it on to QEMU
      break
    fi
    sleep 0.2
  done
  qemu_rc=0
  wait "$qemu_pid" || qemu_rc=$?
  qemu_pid=
  wait "$tail_pid" || true
  tail_pid=
}

start_ns="$(date +%s%N)"
run_start="$SECONDS"
boot=1
while :; do
  boot_guest "$((timeout_s - (SECONDS - run_start)))"
  [ "$boot_stalled" = 1 ] || break
  stage="$(boot_stage)"
  echo "$me: boot $boot of $boot_tries: the guest had not started guest.sh after" \
    "$boot_timeout_s s (IBSCOPE_RXE_BOOT_TIMEOUT); it stalled $stage" >&2
  show_tail "guest kernel console of boot $boot" "$tmp/boot.log"
  remaining_s=$((timeout_s - (SECONDS - run_start)))
  if [ "$boot" -ge "$boot_tries" ] || [ "$remaining_s" -le "$boot_timeout_s" ]; then
    echo "$me: FAIL: the guest never started guest.sh in $boot boot(s); it stalled $stage" >&2
    exit 125
  fi
  boot=$((boot + 1))
  echo "$me: booting the guest again (boot $boot of $boot_tries, ${remaining_s} s left)" >&2
done
elapsed="$(($(date +%s%N) - start_ns))"
elapsed="$((elapsed / 1000000000)).$(printf '%02d' $((elapsed / 10000000 % 100)))"


if [ "$verbose" = 1 ]; then
  show_tail "guest setup log" "$tmp/setup.log"
  if [ -f "$tmp/ctl/times" ]; then
    # shellcheck disable=SC2046 # "init X modules Y ... done Z" -> words
    set -- $(tr '\n' ' ' <"$tmp/ctl/times")
    echo "$me: guest uptime: $*; host wall time: $elapsed s (QEMU start to power-off)" >&2
  fi
fi

if [ -f "$tmp/ctl/status" ]; then
  status="$(cat "$tmp/ctl/status")"
  if [[ "$status" =~ ^[0-9]+$ ]]; then
    exit "$status"
  fi
fi

if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
  reason="timed out after $timeout_s s (--timeout) before the command finished; the guest got $(boot_stage)"
  rc=124
elif [ -f "$tmp/ctl/setup_failed" ]; then
  reason="guest setup failed: $(head -n 1 "$tmp/ctl/setup_failed")"
  rc=125
elif [ "$qemu_rc" -ne 0 ]; then
  reason="QEMU failed (exit $qemu_rc after $elapsed s) before the guest reported the command's exit status"
  rc=125
else
  reason="the guest ended without reporting the command's exit status (after $elapsed s)"
  rc=125
fi
show_tail "QEMU" "$tmp/qemu.log"
show_tail "guest kernel console" "$tmp/boot.log"
[ "$verbose" = 1 ] || show_tail "guest setup log" "$tmp/setup.log"
echo "$me: $reason" >&2
exit "$rc"
