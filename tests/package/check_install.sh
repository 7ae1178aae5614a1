#!/usr/bin/env bash
# The install tree, the CMake package config and the .deb, from a built tree:
#   check_install.sh BUILD_DIR CONSUMER_SOURCE_DIR CXX_COMPILER
# 1. cmake --install into a temp prefix: the binary runs, headers, libibscope.a, the package
#    config and the man page are there;
# 2. a tiny project (tests/package/consumer) finds it with find_package(ibscope), links
#    ibscope::lib and runs;
# 3. cpack -G DEB into a temp folder: the package's metadata (Depends from dpkg-shlibdeps) and
#    its contents (bin/ibscope, the man page, the config). The .deb is never installed.
# Writes only under a temp folder (removed at exit). Exit 77 (skipped) without cpack, dpkg-deb
# or dpkg-shlibdeps (scripts/install-deps.sh installs them), or 1 instead when
# IBSCOPE_PACKAGE_REQUIRED=1 (CI: .ci/run).
set -euo pipefail
build=$(realpath "$1")
consumer_src=$(realpath "$2")
cxx=$3

for tool in cmake cpack dpkg-deb dpkg-shlibdeps; do
  if ! command -v "$tool" >/dev/null; then
    if [ "${IBSCOPE_PACKAGE_REQUIRED:-0}" = 1 ]; then
      echo "check_install: FAIL: $tool not found (IBSCOPE_PACKAGE_REQUIRED=1: failing instead of skipping)" >&2
      exit 1
    fi
    echo "check_install: $tool not found: skipped"
    exit 77
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibscope-package-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "check_install: FAIL: $*" >&2; exit 1; }
step() { echo "== $* ($(date +%T))"; }

step "cmake --install $build --prefix $prefix --strip"
cmake --install "$build" --prefix "$prefix" --strip >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
"$prefix/bin/ibscope" --version | grep -q '^ibscope [0-9]' || fail "bin/ibscope --version"
libdir=$(cd "$prefix" && ls -d lib*/cmake/ibscope | head -n1)
[ -n "$libdir" ] || fail "no lib*/cmake/ibscope under $prefix"
for f in include/ibscope/core/units.hpp include/ibscope/output/prometheus.hpp \
         "$libdir/ibscopeConfig.cmake" "$libdir/ibscopeConfigVersion.cmake" \
         "$libdir/ibscopeTargets.cmake" share/man/man1/ibscope.1 share/doc/ibscope/README.md \
         share/doc/ibscope/docs/acceptance.md share/doc/ibscope/results/README.md; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
ls "$prefix"/lib*/libibscope.a >/dev/null || fail "libibscope.a not installed"
[ ! -e "$prefix/include/ibscope/build_info.hpp" ] || fail "the generated build_info.hpp is private"
grep -q '^\.TH IBSCOPE 1' "$prefix/share/man/man1/ibscope.1" || fail "man page header"
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"

step "consumer: find_package(ibscope) + ibscope::lib"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$consumer_src" -B "$tmp/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/consumer.log" 2>&1 \
  || { cat "$tmp/consumer.log"; fail "consumer configure"; }
cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "consumer build"; }
"$tmp/consumer/consumer" || fail "consumer run"

step "cpack -G DEB"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/deb" >"$tmp/cpack.log" 2>&1 \
  || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/deb/*.deb | head -n1)
[ -f "$deb" ] || fail "no .deb in $tmp/deb"
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb --info "$deb" | tee "$tmp/info"
grep -q '^ Package: ibscope$' "$tmp/info" || fail "package name"
grep -q '^ Maintainer: ' "$tmp/info" || fail "maintainer"
grep -q '^ Depends: .*libucx0' "$tmp/info" || fail "Depends lacks libucx0 (dpkg-shlibdeps)"
grep -q '^ Depends: .*libibverbs1' "$tmp/info" || fail "Depends lacks libibverbs1"
dpkg-deb --contents "$deb" >"$tmp/contents"
for f in ./usr/bin/ibscope ./usr/share/man/man1/ibscope.1 ./usr/include/ibscope/core/units.hpp \
         /cmake/ibscope/ibscopeConfig.cmake ./usr/share/doc/ibscope/README.md; do
  grep -q -- "$f\$" "$tmp/contents" || { cat "$tmp/contents"; fail "$f not in the package"; }
done
grep -E 'usr/bin/ibscope$|man1/ibscope.1$' "$tmp/contents"
echo "check_install: OK"
