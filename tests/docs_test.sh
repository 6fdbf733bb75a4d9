#!/usr/bin/env bash
# The manual page and the bash completion against the program they describe:
# - the man page's COMMANDS, BENCHMARKS and RUN OPTIONS items are exactly the
#   commands of `parbench --help`, the benchmarks of `parbench run --help` and
#   the common options of `parbench run gemm --help`;
# - completing command lines gives what the program lists.
# usage: docs_test.sh PARBENCH MANPAGE COMPLETION
set -uo pipefail
pb=$1 man=$2 completion=$3
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ---- the man page ----------------------------------------------------------
commands=$("$pb" --help | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' | sort)
benches=$("$pb" run --help | awk '/^benchmarks:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' | sort)
options=$("$pb" run gemm --help | awk '/^common options:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' | sort)
[ "$(wc -l <<<"$commands")" -ge 10 ] || fail "parbench --help lists too few commands: $commands"
[ "$(wc -l <<<"$benches")" -ge 10 ] || fail "parbench run --help lists too few benchmarks: $benches"
[ "$(wc -l <<<"$options")" -ge 15 ] || fail "parbench run gemm --help lists too few options: $options"

# The first word of each .TP item's tag, per section, with troff's \- as -.
man_items() {
    sed 's/\\-/-/g' "$man" | awk -v want="$1" '
        /^\.SH/ { section = $0; sub(/^\.SH +/, "", section); gsub(/"/, "", section); next }
        /^\.TP/ { tag = 1; next }
        tag && section == want { t = $2; gsub(/"/, "", t); print t }
        { tag = 0 }' | sort
}
for section in COMMANDS BENCHMARKS "RUN OPTIONS"; do
    case $section in
    COMMANDS) want=$commands ;;
    BENCHMARKS) want=$benches ;;
    *) want=$options ;;
    esac
    if ! diff -u --label "program" --label "man page $section" <(echo "$want") <(man_items "$section"); then
        fail "the man page's $section differ from what parbench lists (- missing from the page, + not in the program)"
    fi
done
if command -v groff >/dev/null; then
    warnings=$(groff -man -ww -z "$man" 2>&1)
    [ -z "$warnings" ] || fail "groff warns about the man page: $warnings"
fi

# ---- the completion ---------------------------------------------------------
# shellcheck source=/dev/null
source "$completion"
# The words offered for a command line whose last word is being typed.
offered() {
    COMP_WORDS=("$pb" "$@")
    COMP_CWORD=$#
    COMPREPLY=()
    _parbench
    printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect() { # expect WANTED -- WORDS...: exactly WANTED (one string, words sorted, newline-separated)
    local want=$1
    shift 2
    local got
    got=$(offered "$@")
    [ "$got" = "$want" ] || fail "completing '$*': got [$(echo $got)], expected [$(echo $want)]"
}
lines() { printf '%s\n' "$@" | sort; }

expect "$(lines $commands --help --version)" -- ""
expect "$(lines report run)" -- r
expect "$benches" -- run ""
expect "$(lines gemm gemm-dist)" -- run gem
expect "$(lines --precision --progress)" -- run gemm --quiet --p
expect "double" -- run gemm --precision d
expect "csv" -- run gemm --format c
expect "$(lines table json)" -- devices --format ""
expect "" -- run gemm --n ""
expect "$(lines ijk,ref/ijk ijk,ref/ikj)" -- run gemm --variant ijk,ref/i
expect "ref" -- run spmv --backend r
expect "$(lines nnz rows)" -- project spmv-dist --balance ""
# Every variant of a benchmark as NAME and BACKEND/NAME, nothing of another.
variants=$("$pb" list | awk '/^  spmv:/ { on = 1; next } /^  [^ ]/ { on = 0 } on && $1 ~ /\// { print $1 }' |
           sed 's/\*$//')
[ -n "$variants" ] || fail "parbench list shows no spmv variant"
got=$(offered run spmv --variant "")
for v in $variants; do
    grep -qx "$v" <<<"$got" || fail "completing --variant of spmv: $v missing"
    grep -qx "${v#*/}" <<<"$got" || fail "completing --variant of spmv: ${v#*/} missing"
done
grep -qx "ikj" <<<"$got" && fail "completing --variant of spmv offers gemm's ikj"
# Files where files are expected.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/parbench-docs-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/a.mtx" "$tmp/b.csv"
expect "$tmp/a.mtx" -- matinfo "$tmp/a"
expect "$tmp/b.csv" -- run gemm --out "$tmp/b"

[ "$failures" = 0 ] && echo "ok: the man page and the completion match parbench's own lists"
[ "$failures" = 0 ]
