#!/usr/bin/env bash
# Fetches and caches what the Soft-RoCE guest boots: Debian's stock 6.1 kernel (uncompressed
# ELF vmlinux for a fast PVH boot, or the bzImage) and a busybox initramfs holding just the
# modules the guest loads. See tests/rxe/README.md and shared/design/SOFTROCE.md.
#
# Usage: tests/rxe/prepare.sh [--quiet] [--force]
#   cache: ${IBSCOPE_RXE_CACHE:-$HOME/.cache/ibscope/rxe}
#   prints the kernel and initramfs paths (KEY=VALUE lines, also in $cache/guest.env)
# Exit: 0 ready; 77 cannot be prepared here (missing tool, kernel package unobtainable),
#       with one line saying why; 1 unexpected failure.
# Idempotent: with a warm cache it only checks a stamp (well under a second). A change to this
# script rebuilds the initramfs from the cached .deb; the kernel ABI is resolved again only
# when the cache holds no kernel (old ABIs vanish from the mirror after security updates).
set -euo pipefail

quiet=0
force=0
for arg in "$@"; do
  case "$arg" in
    --quiet) quiet=1 ;;
    --force) force=1 ;;
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
      exit 0
      ;;
    *)
      echo "prepare.sh: unknown argument '$arg'" >&2
      exit 1
      ;;
  esac
done

cache="${IBSCOPE_RXE_CACHE:-${HOME:-/root}/.cache/ibscope/rxe}"
self="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/$(basename "${BASH_SOURCE[0]}")"

# Top-level modules, in load order; their dependencies are resolved with modprobe.
# crc32_generic: rxe fails with "failed to init crc32 algorithm" without it (not a modinfo
# dependency). rdma_ucm: rdma_create_event_channel fails without it. sch_netem: packet loss on
# a veth for the NIC counter tests (tests/rxe/test_ucx_rxe.cpp, "NIC counters").
top_modules=(crc32_generic virtio_pci virtio_console 9pnet_virtio 9p veth rdma_rxe rdma_ucm sch_netem)

log() { [ "$quiet" -eq 1 ] || echo "prepare.sh: $*" >&2; }
skip() {
  echo "prepare.sh: cannot prepare the Soft-RoCE guest: $*" >&2
  exit 77
}
trap 'echo "prepare.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

# ---- warm cache: a stamp check only -------------------------------------------------------
stamp_value() {
  local hash
  hash="$(sha256sum "$self")"
  echo "${hash%% *}"
}

print_env() { cat "$cache/guest.env"; }

if [ "$force" -eq 0 ] && [ -f "$cache/stamp" ] && [ -f "$cache/guest.env" ] &&
  [ "$(cat "$cache/stamp")" = "$(stamp_value)" ]; then
  # shellcheck source=/dev/null
  . "$cache/guest.env"
  if [ -f "${IBSCOPE_RXE_KERNEL:-}" ] && [ -f "${IBSCOPE_RXE_INITRD:-}" ]; then
    print_env
    exit 0
  fi
fi

# ---- cold path ----------------------------------------------------------------------------
for tool in apt-get apt-cache dpkg-deb depmod modprobe cpio xz busybox sha256sum flock; do
  command -v "$tool" >/dev/null 2>&1 ||
    skip "'$tool' not found (scripts/install-deps.sh installs what the guest needs)"
done
busybox_bin="$(command -v busybox)"
if ldd "$busybox_bin" >/dev/null 2>&1; then
  skip "$busybox_bin is dynamically linked (install busybox-static)"
fi

mkdir -p "$cache" || skip "cannot create the cache directory $cache"
exec 9>"$cache/.lock"
flock 9 # another prepare.sh may be filling the same cache

work="$(mktemp -d "$cache/tmp.XXXXXX")"
trap 'rm -rf "$work"' EXIT

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    return 1
  fi
}

resolve_abi_package() {
  apt-cache depends linux-image-amd64 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -n 1
}

download_kernel() { # $1 = package name; into $cache/debs once complete
  mkdir -p "$work/dl"
  (cd "$work/dl" && apt-get download -q -o APT::Sandbox::User=root "$1") >"$work/apt.log" 2>&1 &&
    mv "$work/dl/"*.deb "$cache/debs/"
}

# The kernel .deb: the cached one, else the one linux-image-amd64 names now.
mkdir -p "$cache/debs"
deb="$(find "$cache/debs" -maxdepth 1 -name 'linux-image-6.1.0-*-amd64_*_amd64.deb' |
  sort -V | tail -n 1)"
if [ -z "$deb" ]; then
  pkg="$(resolve_abi_package)"
  if [ -z "$pkg" ] || ! download_kernel "$pkg"; then
    log "refreshing the apt lists (${pkg:-linux-image-amd64 unknown} not downloadable)"
    as_root apt-get update -q >"$work/update.log" 2>&1 ||
      skip "apt-get update failed (not root and no passwordless sudo, or no network)"
    pkg="$(resolve_abi_package)"
    [ -n "$pkg" ] || skip "apt-cache does not know linux-image-amd64 (not Debian 12?)"
    download_kernel "$pkg" ||
      skip "apt-get download $pkg failed: $(tail -n 1 "$work/apt.log")"
  fi
  deb="$(find "$cache/debs" -maxdepth 1 -name "${pkg}_*_amd64.deb" | sort -V | tail -n 1)"
  [ -n "$deb" ] || skip "apt-get download $pkg left no .deb in $cache/debs"
  log "downloaded $(basename "$deb")"
fi
# Older kernels are of no further use once a newer one is cached.
find "$cache/debs" -maxdepth 1 -name 'linux-image-*.deb' ! -path "$deb" -delete

log "extracting $(basename "$deb")"
if ! dpkg-deb -x "$deb" "$work/root" 2>"$work/dpkg.log"; then
  rm -f "$deb" # damaged: the next run downloads it again
  echo "prepare.sh: $(basename "$deb") is damaged, removed it: $(tail -n 1 "$work/dpkg.log")" >&2
  exit 1
fi
abi="$(basename "$(find "$work/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")"
[ -n "$abi" ] || skip "$(basename "$deb") holds no /lib/modules/<abi>"
depmod -b "$work/root" "$abi"

# ---- kernel image: ELF vmlinux cut out of the bzImage's xz payload, else the bzImage ------
bzimage="$work/root/boot/vmlinuz-$abi"
[ -f "$bzimage" ] || skip "$(basename "$deb") holds no /boot/vmlinuz-$abi"
kernel="$work/out/bzImage"
mkdir -p "$work/out"
# (xz stops after the stream: the payload is read through a process substitution, since in a
# pipeline the writer's SIGPIPE would fail it under pipefail.)
offset="$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$bzimage" | head -n 1 | cut -d: -f1 || true)"
if [ -n "$offset" ] &&
  xz -dc --single-stream <(tail -c "+$((offset + 1))" "$bzimage") >"$work/out/vmlinux" 2>/dev/null &&
  [ "$(head -c 4 "$work/out/vmlinux" | od -An -tx1 | tr -d ' \n')" = "7f454c46" ]; then
  kernel="$work/out/vmlinux"
  # PVH entry = Xen ELF note type 0x12; without it QEMU cannot boot the ELF directly.
  # (grep reads all of readelf's output: with -q, SIGPIPE would fail the pipeline.)
  if command -v readelf >/dev/null 2>&1 &&
    ! readelf -n "$kernel" 2>/dev/null | grep 'Xen.*0x00000012' >/dev/null; then
    log "vmlinux has no PVH note: booting the bzImage instead (slower)"
    kernel="$work/out/bzImage"
  fi
fi
if [ "$kernel" = "$work/out/bzImage" ]; then
  rm -f "$work/out/vmlinux"
  cp "$bzimage" "$kernel"
fi
log "kernel: $(basename "$kernel") ($abi)"

# ---- initramfs: static busybox, /init, the modules in insmod order ------------------------
ird="$work/initramfs"
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,ctl,modules}
cp "$busybox_bin" "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"

# Drops a module's appended signature: checking it (RSA under TCG) is a good part of insmod's
# time, and the Debian kernel does not enforce signatures (it only notes a taint).
strip_signature() {
  local f="$1" size a b c d
  [ "$(tail -c 28 "$f" | head -c 27)" = "~Module signature appended~" ] || return 0
  size="$(stat -c %s "$f")"
  # struct module_signature (12 bytes, sig_len big-endian at offset 8), then the 28-byte magic.
  read -r a b c d < <(tail -c 32 "$f" | head -c 4 | od -An -tu1)
  truncate -s "$((size - 40 - ((a << 24) | (b << 16) | (c << 8) | d)))" "$f"
}

: >"$ird/modules/order"
declare -A seen=()
for m in "${top_modules[@]}"; do
  deps="$(modprobe -d "$work/root" -S "$abi" --show-depends "$m" 2>"$work/modprobe.err")" ||
    skip "module $m not found in $abi: $(head -n 1 "$work/modprobe.err")"
  while read -r kind path _; do
    [ "$kind" = insmod ] || continue # "builtin X" lines: nothing to load
    name="$(basename "$path")"
    name="${name%%.ko*}"
    [ -z "${seen[$name]:-}" ] || continue
    seen[$name]=1
    case "$path" in
      *.ko) cp "$path" "$ird/modules/$name.ko" ;;
      *.ko.xz) xz -dc "$path" >"$ird/modules/$name.ko" ;;
      *.ko.zst) zstd -qdc "$path" >"$ird/modules/$name.ko" ;;
      *) skip "unexpected module file $path" ;;
    esac
    strip_signature "$ird/modules/$name.ko"
    echo "$name" >>"$ird/modules/order"
  done <<<"$deps"
done

# /init: busybox only. Loads the modules, mounts the host root (9p, read-only) with proc, sys,
# dev, devpts and tmpfs on top, the control directory at /run/ibscope and the directories
# listed in its "shares" read-write at their host paths; then runs the harness's guest script
# (tests/rxe/guest.sh, copied into the control directory) in the chroot, and ends the VM.
cat >"$ird/init" <<'EOF'
#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
up() { read -r u _ </proc/uptime && echo "$u"; }
t_init=$(up)
say() { echo "ibscope-init: $*" >/dev/console; }
die() {
  say "$*"
  dmesg | tail -n 30 >/dev/console
  reboot -f
}
while read -r m; do
  insmod "/modules/$m.ko" || die "insmod $m failed"
done </modules/order
t_modules=$(up)
# hostroot: the host's / (read-only); ctl: the run's control directory (read-write).
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none ctl /ctl ||
  die "cannot mount the control directory (9p tag ctl)"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=loose,ro hostroot /newroot ||
  die "cannot mount the host root (9p tag hostroot)"
r=/newroot
mount -t proc proc $r/proc
mount -t sysfs sysfs $r/sys
mount -t devtmpfs devtmpfs $r/dev
mkdir -p $r/dev/pts $r/dev/shm
# What udev would add: /dev/fd (bash process substitution), std streams, ptmx of this devpts.
ln -s /proc/self/fd $r/dev/fd
ln -s /proc/self/fd/0 $r/dev/stdin
ln -s /proc/self/fd/1 $r/dev/stdout
ln -s /proc/self/fd/2 $r/dev/stderr
rm -f $r/dev/ptmx && ln -s pts/ptmx $r/dev/ptmx
mount -t devpts -o newinstance,ptmxmode=0666 devpts $r/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $r/dev/shm
for d in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs $r$d || die "cannot mount $d"; done
mount -t tmpfs -o mode=0755 tmpfs $r/run
mkdir -p $r/run/ibscope
mount --move /ctl $r/run/ibscope || die "cannot move the control directory"
[ -f $r/run/ibscope/guest.sh ] || die "no guest.sh in the control directory"
# The shared directories ("TAG PATH" lines: the project, then any --share), read-write at
# their host paths, so absolute build paths keep working.
while read -r tag dir; do
  mkdir -p "$r$dir" 2>/dev/null # exists already, unless under a tmpfs such as /tmp
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=mmap "$tag" "$r$dir" ||
    die "cannot mount $dir (9p tag $tag)"
done <$r/run/ibscope/shares
echo "init $t_init modules $t_modules mounts $(up)" >$r/run/ibscope/times
chroot $r /bin/bash /run/ibscope/guest.sh || say "guest.sh exited with $?"
sync
reboot -f # QEMU runs with -no-reboot: a reboot ends it (works with acpi=off too)
EOF
chmod 0755 "$ird/init"
(cd "$ird" && find . -print0 | LC_ALL=C sort -z | cpio -o -H newc --null --quiet) \
  >"$work/out/initramfs.cpio"
log "initramfs: $(wc -l <"$ird/modules/order") modules, $(($(stat -c %s "$work/out/initramfs.cpio") / 1024)) KiB"

# ---- publish atomically -------------------------------------------------------------------
rm -rf "$cache/guest"
mv "$work/out" "$cache/guest"
printf 'IBSCOPE_RXE_ABI=%q\nIBSCOPE_RXE_KERNEL=%q\nIBSCOPE_RXE_INITRD=%q\n' "$abi" \
  "$cache/guest/$(basename "$kernel")" "$cache/guest/initramfs.cpio" >"$cache/guest.env"
stamp_value >"$cache/stamp"
print_env
