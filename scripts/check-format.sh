#!/usr/bin/env bash
# Checks that every tracked C++/CUDA source is formatted as .clang-format says (CI runs this).
# Usage: scripts/check-format.sh         list the files that differ, exit 1 if any
#        scripts/check-format.sh --fix   format them in place
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || {
  echo "check-format: clang-format not found (Debian package 'clang-format')" >&2
  exit 2
}
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# One clang-format process for all files: --dry-run -Werror reports each difference as
# "FILE:LINE:COL: error: code should be clang-formatted".
mapfile -t bad < <(clang-format --dry-run -Werror "${files[@]}" 2>&1 |
                   sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' |
                   sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($(clang-format --version | head -1)):"
  printf '  %s\n' "${bad[@]}"
  echo "check-format: run scripts/check-format.sh --fix"
  exit 1
fi
echo "check-format: all ${#files[@]} files match .clang-format"
