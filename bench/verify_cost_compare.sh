#!/usr/bin/env bash
# Verification cost before and after: builds bench/verify_cost.cpp twice with the same flags,
# once against the VerifiablePattern of git revision REF (default: main) and once against the
# working tree, and runs both. Nothing is written inside the repository.
#
#   bench/verify_cost_compare.sh [REF] [SIZE (256M)] [RANKS (8)] [REPEATS (5)]
set -euo pipefail
ref=${1:-main}
size=${2:-256M}
ranks=${3:-8}
repeats=${4:-5}
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d /tmp/ibscope-verify-cost-XXXX)
trap 'rm -rf "$tmp"' EXIT
hdr=include/ibscope/collectives/harness/verify.hpp
src=src/collectives/harness/verify.cpp
mkdir -p "$tmp/old/$(dirname "$hdr")"
git -C "$root" show "$ref:$hdr" >"$tmp/old/$hdr"
git -C "$root" show "$ref:$src" >"$tmp/old/verify.cpp"
common=("$root/src/core/datatype.cpp" "$root/src/core/reduce.cpp" "$root/src/core/error.cpp")
flags=(-std=c++20 -O2 -DNDEBUG)
g++ "${flags[@]}" -I"$tmp/old/include" -I"$root/include" -o "$tmp/before" \
  "$root/bench/verify_cost.cpp" "$tmp/old/verify.cpp" "${common[@]}" -lfmt
g++ "${flags[@]}" -I"$root/include" -o "$tmp/after" \
  "$root/bench/verify_cost.cpp" "$root/$src" "${common[@]}" -lfmt
echo "## before ($ref: $(git -C "$root" rev-parse --short "$ref"))"
"$tmp/before" "$size" "$ranks" "$repeats"
echo "## after (working tree)"
"$tmp/after" "$size" "$ranks" "$repeats"
