#!/usr/bin/env bash
# The HTML report's layout in a real browser. Headless Chromium lays out each
# report with tests/report_layout.js injected into a copy (the report itself
# stays script-free); the checker lists, one line each, texts of a chart that
# overlap one another or run outside it, charts with no measured mark
# (class pb-data), and page text that overlaps other text or a chart. A
# full-page screenshot of each report is kept for a person to look at.
#
# usage: report_layout_test.sh --selftest
#          the checker on tests/data/layout: clean.html must pass, overlap.html
#          must show each kind of problem it holds
#        report_layout_test.sh PATH/TO/parbench SCREENSHOT_DIR [DIR...]
#          the selftest first, then the reports of tests/data/results,
#          tests/data/studies (a tree of study folders with a comparison), each
#          folder under bench/results and each DIR given (e.g. the results of
#          a GPU run); SCREENSHOT_DIR/NAME.png each
# Exit: 0 no problem, 1 problems, 77 (CTest's SKIP_RETURN_CODE) no Chromium
# here; PB_REQUIRE naming chromium makes that a failure (the rule is in
# tests/CMakeLists.txt). Needs chromium-headless-shell (Debian) or chromium.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
checker=$here/report_layout.js
if browser=$(command -v chromium-headless-shell); then
    flags=()
elif browser=$(command -v chromium); then
    flags=(--headless)
else
    case ",${PB_REQUIRE:-}," in
    *",chromium,"*) echo "FAIL: chromium is required (PB_REQUIRE) but not installed (apt-get install chromium-headless-shell)"; exit 1 ;;
    esac
    echo "SKIPPED: no chromium-headless-shell or chromium here; PB_REQUIRE=chromium makes this a failure"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start;
# --disable-dev-shm-usage: containers' small /dev/shm crashes it on tall pages.
# The virtual time budget lets the load event and the fonts settle before the
# DOM is dumped or the screenshot taken.
flags+=(--no-sandbox --disable-dev-shm-usage --disable-gpu --hide-scrollbars --run-all-compositor-stages-before-draw
        --virtual-time-budget=10000 --user-data-dir="$tmp/profile")

# browse ARGS... URL: one Chromium run, its noise (D-Bus, GPU probing) kept
# in $tmp/browser.err for when it fails.
browse() { timeout 120 "$browser" "${flags[@]}" "$@" 2>"$tmp/browser.err"; }

# check HTML NAME: lays out HTML with the checker and leaves its findings in
# $tmp/NAME.found (the first line the summary, then one problem a line).
# Fails when the checker could not run or report.
check() {
    local html=$1 name=$2 page=$tmp/$2.check.html
    if [ "$(grep -c '</body>' "$html")" -ne 1 ]; then bad "$name: no single </body> to put the checker before"; return 1; fi
    if grep -qi '<script' "$html"; then bad "$name: the report carries a script"; fi
    awk -v js="$checker" '
        i = index($0, "</body>") {
            printf "%s<script>\n", substr($0, 1, i - 1)
            while ((getline line < js) > 0) print line
            print "</script>" substr($0, i)
            next
        }
        { print }' "$html" >"$page"
    if ! browse --window-size=1400,1000 --dump-dom "file://$page" >"$tmp/$name.dom"; then
        bad "$name: chromium failed ($browser)"; sed 's/^/  /' "$tmp/browser.err" | tail -5; return 1
    fi
    # The findings between <pre id="layout-check"> and </pre>, unescaped.
    awk '!p && i = index($0, "<pre id=\"layout-check\">") { p = 1; $0 = substr($0, i + 23) }
         p { if (j = index($0, "</pre>")) { print substr($0, 1, j - 1); exit } print }' "$tmp/$name.dom" |
        sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' >"$tmp/$name.found"
    if ! head -1 "$tmp/$name.found" | grep -q '^layout-check: '; then
        bad "$name: the checker wrote no findings (did its script run?)"; return 1
    fi
}

# The summary's counts: problems, and the page's height for the screenshot.
problems() { sed -n '1s/.* \([0-9]*\) problems.*/\1/p' "$tmp/$1.found"; }
height() { sed -n '1s/.* page [0-9]*x\([0-9]*\).*/\1/p' "$tmp/$1.found"; }

selftest() {
    local before=$failed
    check "$here/data/layout/clean.html" clean || return 1
    if [ "$(problems clean)" != 0 ]; then bad "selftest: clean.html has problems:"; sed '1d; s/^/  /' "$tmp/clean.found"; fi
    check "$here/data/layout/overlap.html" overlap || return 1
    # Each problem overlap.html holds is found, and nothing else.
    local want=('px): "cuda/naive" and "cuda/tiled"'
                'px): "slanted label number one" and "slanted label number two"'
                'text "a label past the right edge" runs outside the chart'
                'chart 2 "empty: GB/s vs size": no data plotted ("no measured values to plot")'
                'chart 3 "no marks: GB/s vs size": no data plotted (no pb-data mark)'
                'px): "Heading text" and "Text laid over the heading"')
    local line
    for line in "${want[@]}"; do
        grep -qF -- "$line" "$tmp/overlap.found" || bad "selftest: overlap.html: not found: $line"
    done
    local n; n=$(problems overlap)
    [ "$n" = "${#want[@]}" ] || { bad "selftest: overlap.html has $n problems (want ${#want[@]}):"; sed '1d; s/^/  /' "$tmp/overlap.found"; }
    [ "$failed" -eq "$before" ] && echo "selftest: clean.html passes, overlap.html shows its ${#want[@]} problems"
    [ "$failed" -eq "$before" ]
}

if [ "${1:-}" = "--selftest" ]; then
    selftest
    exit $((failed > 0))
fi
[ $# -ge 2 ] || { echo "usage: $0 --selftest | $0 PATH/TO/parbench SCREENSHOT_DIR [DIR...]" >&2; exit 2; }
pb=$1 shots=$2
shift 2
# A checker that cannot tell a clean page from a bad one says nothing about the reports.
selftest || exit 1

mkdir -p "$shots"
rm -f "$shots"/*.png
reports=0 screenshots=0
for dir in "$src/tests/data/results" "$src/tests/data/studies" "$src"/bench/results/*/ "$@"; do
    dir=${dir%/}
    name=$(basename "$dir")
    [ "$dir" = "$src/tests/data/results" ] && name=tests-data-results
    html=$tmp/$name.html
    start=$SECONDS
    if ! "$pb" report "$dir" -o "$html" >"$tmp/report.out" 2>&1; then
        bad "$name: parbench report failed"; sed 's/^/  /' "$tmp/report.out" | tail -5; continue
    fi
    reports=$((reports + 1))
    check "$html" "$name" || continue
    # The original report, script-free, as tall as its page.
    if browse --window-size=1400,"$(height "$name")" --screenshot="$shots/$name.png" "file://$html" >/dev/null &&
       [ -s "$shots/$name.png" ]; then
        screenshots=$((screenshots + 1))
    else
        echo "note: no screenshot of $name"; sed 's/^/  /' "$tmp/browser.err" | tail -3
    fi
    echo "$name: $(head -1 "$tmp/$name.found" | sed 's/^layout-check: //') ($((SECONDS - start)) s)"
    n=$(problems "$name")
    [ "$n" -eq 0 ] || bad "$name: $n layout problems:"
    awk -v report="$name" 'NR > 1 { print "  " report ": " $0 }' "$tmp/$name.found"
done
[ "$screenshots" -gt 0 ] || bad "no screenshot could be taken"
echo "$reports reports checked, $screenshots screenshots in $shots; $failed failed"
[ "$failed" -eq 0 ]
