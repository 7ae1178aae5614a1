#!/usr/bin/env bash
# ctest entry browser/report: runs the browser test executable where a headless Chromium runs
# (Debian package 'chromium'), else exits 77 (skipped), or 1 when IBSCOPE_BROWSER_REQUIRED=1
# (CI: the test must run there). The executable finds Chromium through IBSCOPE_CHROMIUM.
# usage: run_browser.sh TEST_EXECUTABLE [CATCH_ARGS...]
set -uo pipefail

unavailable() {
  if [[ "${IBSCOPE_BROWSER_REQUIRED:-0}" == 1 ]]; then
    echo "browser test: required (IBSCOPE_BROWSER_REQUIRED=1) but unavailable: $*" >&2
    exit 1
  fi
  echo "browser test skipped: $*" >&2
  exit 77
}

chromium="${IBSCOPE_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[[ -n "$chromium" && -x "$chromium" ]] || unavailable "no 'chromium' (apt-get install chromium)"
# A real probe: an empty page through the same flags the test uses.
probe_dir="$(mktemp -d)"
trap 'rm -rf "$probe_dir"' EXIT
if ! timeout 60 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$probe_dir" --dump-dom about:blank >"$probe_dir/out" 2>"$probe_dir/err"; then
  unavailable "chromium --headless=new --dump-dom about:blank failed: $(tail -n 3 "$probe_dir/err")"
fi
export IBSCOPE_CHROMIUM="$chromium"
"$@"
