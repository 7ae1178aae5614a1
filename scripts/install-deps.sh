#!/usr/bin/env bash
# Installs ibscope's build and test dependencies from Debian 12 packages (idempotent).
# Usage: scripts/install-deps.sh            (build + test dependencies)
#        IBSCOPE_DEPS_QUIET=1 scripts/...   (less apt output)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git ccache
  libibverbs-dev ibverbs-providers librdmacm-dev
  libucx-dev ucx-utils
  libhwloc-dev hwloc
  libfmt-dev catch2 nlohmann-json3-dev libcli11-dev
  libpmix-dev openmpi-bin libopenmpi-dev
  qemu-system-x86 busybox-static kmod cpio xz-utils rdma-core ibverbs-utils perftest iproute2
  # Throw-away single-node Slurm for the launcher tests (tests/launchers/slurm.sh): srun with
  # mpi/pmix_v4, slurmctld, slurmd, munged. The tests never use the system's services (their
  # own munge key/socket, slurm.conf and ports in a temp dir); Debian's slurmd/slurmctld units
  # do not start without /etc/slurm/slurm.conf, and a running system munged is harmless.
  slurm-client slurmctld slurmd munge
  # The .deb's Depends (cpack runs dpkg-shlibdeps) and the man page rendered (tests/package,
  # tests/mp/test_cli_help_mp.cpp).
  dpkg-dev groff-base
  chromium  # headless browser for the HTML report test (tests/browser/)
  # clang with libFuzzer and the sanitizer runtimes for the fuzz targets (tests/fuzz/,
  # docs/fuzzing.md); the replay tests need only the normal build.
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
