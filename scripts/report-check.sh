#!/usr/bin/env bash
# Renders a report and looks at it as a person would: headless Chromium loads
# the page, its rendered DOM must hold the charts and tables, and its
# screenshot must not be an empty page. Needs chromium (Debian: apt-get
# install chromium).
#
# usage: scripts/report-check.sh [PARBENCH [RESULTS...]]
#   PARBENCH defaults to build/parbench; RESULTS to tests/data/results.
#   The page and its screenshot are left in $OUT (default: a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
pb=${1:-build/parbench}
shift || true
[ $# -gt 0 ] || set -- tests/data/results
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "report-check: chromium not found (apt-get install chromium)" >&2; exit 3; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
html="$out/report.html" png="$out/report.png"

"$pb" report "$@" -o "$html"
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$out/profile")
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$(realpath "$html")" >"$out/dom.html" 2>/dev/null
timeout 120 "$browser" "${flags[@]}" --window-size=1400,3000 --screenshot="$png" \
    "file://$(realpath "$html")" >/dev/null 2>&1

fail() { echo "report-check: $*" >&2; exit 1; }
svgs=$(grep -o "<svg " "$out/dom.html" | wc -l)
tables=$(grep -o "<table" "$out/dom.html" | wc -l)
[ "$svgs" -ge 1 ] || fail "the rendered page has no chart"
[ "$tables" -ge 1 ] || fail "the rendered page has no table"
[ -s "$png" ] || fail "no screenshot"
# A blank 1400x3000 page compresses to a few KB; charts and tables take far more.
size=$(stat -c %s "$png")
[ "$size" -ge 50000 ] || fail "the screenshot looks empty ($size bytes)"
echo "report-check: $svgs charts, $tables tables, screenshot $png ($size bytes)"
