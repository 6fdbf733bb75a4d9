#!/usr/bin/env bash
# parbench study: every study's quick run makes its directory, result files,
# report and comparison; the comparison holds the transcribed figures with
# their sources, and every figure measured here carries ours/theirs.
# usage: study_test.sh PATH/TO/parbench [MATRICES_DIR]
# Exit: 0 every check ran and passed, 1 a check failed, 77 none failed but
# some could not run here (topics opencl: nothing GPU-like to measure the
# studies' kernels on; matrices: study 002's files); PB_REQUIRE makes them
# required (the rule is in tests/CMakeLists.txt).
set -u
pb=$1
matrices=${PB_MATRICES_DIR:-${2:-}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0 skip_topics=""

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
skip() {
    case ",${PB_REQUIRE:-}," in
    *",$1,"*) bad "$1 is required (PB_REQUIRE) but did not run: $2"; return ;;
    esac
    skipped=$((skipped + 1))
    case " $skip_topics " in *" $1 "*) ;; *) skip_topics="${skip_topics:+$skip_topics }$1" ;; esac
    echo "SKIP: $1 not checked here: $2"
}
expect() {
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    # LeakSanitizer's own crash ("Tracer caught signal 11", once on a loaded CI
    # machine with PoCL's threads running) is no leak report: one more run.
    if [ "$got" -ne "$want" ] && grep -q "LeakSanitizer has encountered a fatal error" "$tmp/err"; then
        "$@" >"$tmp/out" 2>"$tmp/err"
        got=$?
    fi
    if [ "$got" -eq "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed 's/^/  /' "$tmp/err" | tail -5; fi
}
contains() { # contains FILE TEXT
    if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2'"; fi
}

# A CSV line split into fields, one per line (quoted fields may hold commas
# and doubled quotes; no field spans lines).
csv_fields() {
    awk '{
        n = length($0); f = ""; q = 0
        for (i = 1; i <= n; i++) {
            c = substr($0, i, 1)
            if (q) {
                if (c == "\"" && substr($0, i + 1, 1) == "\"") { f = f c; i++ }
                else if (c == "\"") q = 0
                else f = f c
            } else if (c == "\"") q = 1
            else if (c == ",") { print f; f = "" }
            else f = f c
        }
        print f
    }' <<<"$1"
}

header="study,figure,source,their_device,their_value,unit,our_backend,our_device,our_value,ratio,measured,verdict,note"
# check_comparison ID SEED_FILE: every line of DIR/comparison.csv; prints the
# number of lines measured here that carry a ratio.
check_comparison() {
    local id=$1 seed=$2 csv=$tmp/s$1/comparison.csv rows=0 with_ratio=0
    if [ "$(head -1 "$csv")" = "$header" ]; then ok; else bad "$csv: header $(head -1 "$csv")"; fi
    while IFS= read -r line; do
        rows=$((rows + 1))
        mapfile -t f < <(csv_fields "$line")
        [ "${#f[@]}" -eq 13 ] || { bad "$csv: ${#f[@]} fields in: $line"; continue; }
        [ "${f[0]}" = "$id" ] || bad "$csv: study '${f[0]}' in: $line"
        [ -n "${f[1]}" ] || bad "$csv: a figure without a name: $line"
        case ${f[2]} in "$seed, "?*) ;; *) bad "$csv: source '${f[2]}' does not cite $seed and a place in it" ;; esac
        [ -n "${f[3]}" ] || bad "$csv: no device of theirs: $line"
        if [ "${f[10]}" = yes ]; then
            [ -n "${f[8]}" ] && [ -n "${f[6]}" ] && [ -n "${f[7]}" ] || bad "$csv: measured without value, backend or device: $line"
            if [ -n "${f[4]}" ]; then
                # ours/theirs carried and right to the digits written
                if awk -v t="${f[4]}" -v o="${f[8]}" -v r="${f[9]}" \
                    'BEGIN { e = o / t - r; exit !(r != "" && (e < 0 ? -e : e) <= 1e-6 * (o / t < 0 ? -o / t : o / t)) }'; then
                    with_ratio=$((with_ratio + 1))
                else
                    bad "$csv: measured with their value but ratio '${f[9]}' is not ours/theirs: $line"
                fi
            elif [ -n "${f[9]}" ]; then
                bad "$csv: a ratio without their value: $line"
            fi
            case ${f[11]} in
            contradicts) case ${f[12]} in "contradicts the study, which concludes that "*) ;; *) bad "$csv: a contradiction without its sentence: $line" ;; esac ;;
            agrees) case ${f[12]} in "agrees: "*) ;; *) bad "$csv: agreement without its conclusion: $line" ;; esac ;;
            "") ;;
            *) bad "$csv: verdict '${f[11]}'" ;;
            esac
        elif [ "${f[10]}" = no ]; then
            [ -z "${f[8]}${f[9]}${f[11]}" ] || bad "$csv: not measured but with a value or verdict: $line"
            case ${f[12]} in "not measured here: "?*) ;; *) bad "$csv: not measured without saying why: $line" ;; esac
        else
            bad "$csv: measured '${f[10]}'"
        fi
    done < <(tail -n +2 "$csv")
    [ "$rows" -ge 8 ] || bad "$csv: only $rows figures"
    echo "$with_ratio" >"$tmp/with_ratio"
}

# ---- usage -----------------------------------------------------------------------
expect 2 "$pb" study 999
contains "$tmp/err" "unknown study '999' (000, 001, 002, 003, 004)"
expect 2 "$pb" study
expect 2 "$pb" study 000 001
expect 2 "$pb" study 000 --bogus
expect 0 "$pb" study --help
contains "$tmp/out" "004  optimisation for GPU hardware"
expect 0 "$pb" study 001 --quick --dry-run --out "$tmp/dry"
contains "$tmp/out" "--variant naive --n 96 --wg 8x8,16x16,32x8,64x1 --reps 3 --out $tmp/dry/gemm-wg.csv"
if [ -e "$tmp/dry" ]; then bad "--dry-run made its directory"; else ok; fi
touch "$tmp/file"
expect 3 "$pb" study 004 --quick --out "$tmp/file"
contains "$tmp/err" "cannot make the directory"
# --matrices that is not a directory: refused before any run, one line
expect 3 "$pb" study 002 --quick --dry-run --matrices "$tmp/nosuch"
contains "$tmp/err" "--matrices $tmp/nosuch: No such file or directory"
if [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok; else bad "--matrices: more than one line on stderr"; fi
expect 2 "$pb" study 002 --quick --dry-run --matrices "$tmp/file"
contains "$tmp/err" "not a directory"

opencl=0
"$pb" list | grep -q '^  opencl .* available$' && opencl=1
have_matrices=0
[ -n "$matrices" ] && [ -f "$matrices/rdist2.mtx" ] && [ -f "$matrices/cavity10.mtx" ] && have_matrices=1

# ---- every study, quick ------------------------------------------------------------
declare -A seed=([000]=000_01a8005019905cc0.txt [001]=001_dc55fe2ff6af8801.txt [002]=002_662cee75b62d7bd0.txt
                 [003]=003_cacb2bad518fce8a.txt [004]=004_9bc74ba49387fe95.txt)
declare -A files=([000]="overlap" [001]="bandwidth bandwidth-buffers gemm-wg gemm-groups gemm-k gemm-local"
                  [002]="crossover" [003]="radius transfers strips" [004]="transpose reduce access")
for id in 000 001 002 003 004; do
    args=(study "$id" --quick --out "$tmp/s$id")
    if [ "$id" = 002 ] && [ "$have_matrices" = 1 ]; then
        args+=(--matrices "$matrices")
        files[002]="matrices crossover"
    fi
    expect 0 env -u PB_MATRICES_DIR "$pb" "${args[@]}"
    for f in ${files[$id]} comparison; do
        if [ -s "$tmp/s$id/$f.csv" ]; then ok; else bad "study $id wrote no $f.csv"; fi
    done
    contains "$tmp/s$id/report.html" "<h2 id=\"study\">Study $id"
    contains "$tmp/s$id/report.html" "Their figures beside ours"
    if command -v xmllint >/dev/null; then
        if xmllint --noout "$tmp/s$id/report.html" 2>"$tmp/xml"; then ok; else bad "study $id: report is not well-formed"; head -3 "$tmp/xml"; fi
    fi
    contains "$tmp/out" "their figures (shared/seeds/${seed[$id]}) beside ours"
    check_comparison "$id" "${seed[$id]}"
    measured=$(cat "$tmp/with_ratio")
    if [ "$opencl" = 1 ] && [ "$id" != 002 ] && [ "$id" != 001 ]; then
        # OpenCL (PoCL on a CPU) stands in for the GPU: some figures are measured.
        if [ "$measured" -ge 3 ]; then ok; else bad "study $id: only $measured figures measured with a ratio"; fi
    fi
done

# The five folders side by side, read back by parbench report: each study's
# section opens with its comparison, every figure of the five counted.
expect 0 "$pb" report "$tmp" -o "$tmp/all.html"
figures=0
for id in 000 001 002 003 004; do
    figures=$((figures + $(wc -l <"$tmp/s$id/comparison.csv") - 1))
    if awk -v id="id=\"study$id\"" 'index($0, id) { p = 1 } p && /<h3/ { print; exit }' "$tmp/all.html" |
        grep -qF "<h3 id=\"c${id#00}\">Their figures beside ours — s$id/comparison.csv</h3>"; then ok
    else bad "combined report: study $id does not open with s$id/comparison.csv"; fi
done
contains "$tmp/all.html" "The studies' published figures: $figures compared with ours in 5 comparisons"
if command -v xmllint >/dev/null; then
    if xmllint --noout "$tmp/all.html" 2>"$tmp/xml"; then ok; else bad "combined report is not well-formed"; head -3 "$tmp/xml"; fi
fi

# Transcribed figures, each with its source and device, as the originals print them.
c=$tmp/s000/comparison.csv
contains "$c" '"000_01a8005019905cc0.txt, Tablica 1",GeForce GTX 260,651.5,GFLOP/s,'
contains "$c" '"000_01a8005019905cc0.txt, Tablica 1 (538.58 / 721.525 ms)",GeForce GTX 260,0.746446762,ratio,'
c=$tmp/s001/comparison.csv
contains "$c" '"001_dc55fe2ff6af8801.txt, section 2.4.3 (no number)",not in the copy,,ratio,'
c=$tmp/s002/comparison.csv
contains "$c" '002,rdist2: non-zeros,"002_662cee75b62d7bd0.txt, Table 1",-,56934,NZ,'
contains "$c" '"002_662cee75b62d7bd0.txt, Table 4",Tesla K40m,4.95,GFLOP/s,'
contains "$c" '"002_662cee75b62d7bd0.txt, Table 4",Crescent cluster CPU (not named),13.93,GFLOP/s,'
c=$tmp/s003/comparison.csv
contains "$c" '"003_cacb2bad518fce8a.txt, step 2, kernel times table",Tesla K80 (one of its two GPUs),0.024236,s,'
contains "$c" '"003_cacb2bad518fce8a.txt, step 4 table",Tesla K80 (one of its two GPUs),1.194021,s,'
c=$tmp/s004/comparison.csv
contains "$c" '"004_9bc74ba49387fe95.txt, slide 23",GeForce GTX 280,5.3,GB/s,'
contains "$c" '"004_9bc74ba49387fe95.txt, slide 50",GeForce GTX 280,77.21,GB/s,'
# No GPU here: the CUDA-only figures say so rather than fail.
if "$pb" list | grep -q '^  cuda .* unavailable: '; then
    contains "$tmp/s003/comparison.csv" "not measured here: cuda/naive SKIP"
elif ! "$pb" list | grep -q '^  cuda '; then
    contains "$tmp/s003/comparison.csv" "not measured here: this build has no cuda backend"
fi

if [ "$have_matrices" = 1 ]; then
    # Table 1's counts against the files: ours/theirs exactly 1.
    contains "$tmp/s002/comparison.csv" '002,rdist2: non-zeros,"002_662cee75b62d7bd0.txt, Table 1",-,56934,NZ,openmp,'
    contains "$tmp/s002/comparison.csv" ',76367,NZ,openmp,'
    if grep -q ',NZ,openmp,[^,]*,\(56934\|76367\|62\),1,yes,' "$tmp/s002/comparison.csv"; then ok; else bad "Table 1's counts do not match the matrices"; fi
else
    contains "$tmp/s002/comparison.csv" "not measured here: none of its matrices found"
    skip matrices "no shared matrices at '${matrices:-}' (set PB_MATRICES_DIR): study 002's Table 1 and 4 not compared"
fi
command -v xmllint >/dev/null || skip xmllint "no xmllint (libxml2-utils): the reports' well-formedness is not checked"
[ "$opencl" = 1 ] || skip opencl "no usable opencl backend: the quick studies measured nothing GPU-like"

echo "$passed passed, $failed failed, $skipped skipped${skip_topics:+ ($skip_topics)}"
[ "$failed" -eq 0 ] || exit 1
if [ "$skipped" -gt 0 ]; then
    echo "SKIPPED: some checks did not run here; PB_REQUIRE=<topic> makes them required"
    exit 77
fi
