#!/usr/bin/env bash
# Installs ibscope's dependencies from Debian 12 packages (idempotent).
# Usage: scripts/install-deps.sh run     what building and running ibscope needs (README's
#                                        main-job command): compiler, UCX, libibverbs, hwloc,
#                                        PMIx, fmt, nlohmann-json, valijson, CLI11
#        scripts/install-deps.sh [test]  that, plus everything the tests need (default):
#                                        Catch2, Open MPI, Slurm, QEMU, Chromium, clang, ...
#        IBSCOPE_DEPS_QUIET=1 scripts/...   (less apt output)
set -euo pipefail

what=${1:-test}
case "$what" in
  run|test) ;;
  *) echo "install-deps: unknown set '$what': use 'run' (build and run) or 'test' (also the tests)" >&2
     exit 2 ;;
esac

# Building and running: the library, the binary and `ibscope run` on the embedded default.
packages=(
  cmake ninja-build g++ pkg-config git ccache
  libibverbs-dev ibverbs-providers librdmacm-dev
  libucx-dev
  libhwloc-dev
  libsqlite3-dev
  libfmt-dev nlohmann-json3-dev libvalijson-dev libcli11-dev
  libpmix-dev
)
if [ "$what" = test ]; then
  packages+=(
    catch2 ucx-utils hwloc
    openmpi-bin libopenmpi-dev
    # MPICH's MPI_Alltoall beside Open MPI's and ibscope's (bench/alltoall_vs_mpi.sh).
    mpich libmpich-dev
    qemu-system-x86 busybox-static kmod cpio xz-utils rdma-core ibverbs-utils perftest iproute2
    # Packet loss inside one emulated host's namespace (tests/netns/test_netns_counters.cpp):
    # this kernel has no netem, nftables' numgen drops instead.
    nftables
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
    # docs/fuzzing.md) and the format check (scripts/check-format.sh); the replay tests need
    # only the normal build.
    clang libclang-rt-14-dev clang-format
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages for '$what' already installed"
  exit 0
fi

echo "install-deps ($what): installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
