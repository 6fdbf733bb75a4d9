#!/usr/bin/env bash
# CLI behaviour: help, exit codes, outputs kept on errors and interrupts.
# usage: cli_test.sh PATH/TO/parbench
# Exit: 0 every check ran and passed, 1 a check failed, 77 (CTest's
# SKIP_RETURN_CODE) none failed but some could not run here; PB_REQUIRE
# (comma-separated topics: opencl, stb, xmllint) makes those checks required,
# their skip a failure (the rule is in tests/CMakeLists.txt).
set -u
pb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0 skip_topics=""

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
# skip TOPIC WHY: checks that cannot run here.
skip() {
    case ",${PB_REQUIRE:-}," in
    *",$1,"*) bad "$1 is required (PB_REQUIRE) but did not run: $2"; return ;;
    esac
    skipped=$((skipped + 1))
    case " $skip_topics " in *" $1 "*) ;; *) skip_topics="${skip_topics:+$skip_topics }$1" ;; esac
    echo "SKIP: $1 not checked here: $2"
}

# expect CODE CMD...: run CMD, check its exit code, keep stdout/stderr.
expect() {
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    # LeakSanitizer's own crash ("Tracer caught signal 11", once on a loaded CI
    # machine with PoCL's threads running) is no leak report: the run again
    # without the leak check, which the other runs keep.
    if [ "$got" -ne "$want" ] && grep -q "LeakSanitizer has encountered a fatal error" "$tmp/err"; then
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@" >"$tmp/out" 2>"$tmp/err"
        got=$?
    fi
    if [ "$got" -eq "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed 's/^/  /' "$tmp/err" | head -5; fi
}
contains() { # contains FILE TEXT
    if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2'"; fi
}
lines() { # lines FILE N
    local n; n=$(wc -l <"$1")
    if [ "$n" -eq "$2" ]; then ok; else bad "$1 has $n lines (want $2)"; fi
}

# Help for every command.
for args in "--help" "run --help" "run gemm --help" "list --help" "devices --help"; do
    expect 0 "$pb" $args
    contains "$tmp/out" "usage: parbench"
done
expect 2 "$pb"
expect 0 "$pb" version
contains "$tmp/out" "parbench 0."

# list and devices.
expect 0 "$pb" list
contains "$tmp/out" "ref/ikj"
contains "$tmp/out" "openmp/blocked"
expect 0 "$pb" devices
contains "$tmp/out" "ref device 0"
expect 0 "$pb" devices --format json
contains "$tmp/out" '"backend"'

# Usage errors: exit 2 with one line naming the problem.
expect 2 "$pb" frobnicate
expect 2 "$pb" run gemm --bogus
contains "$tmp/err" "unknown option '--bogus'"
expect 2 "$pb" run gemm --n -5
contains "$tmp/err" "at least 1"
expect 2 "$pb" run gemm --n 12x
expect 2 "$pb" run gemm --n 1000000000000
contains "$tmp/err" "overflows"
expect 2 "$pb" run gemm --reps 0
expect 2 "$pb" run gemm --backend nosuch
contains "$tmp/err" "unknown backend"
expect 2 "$pb" run gemm --variant nosuch
contains "$tmp/err" "unknown gemm variant"
if grep -q "flaky" "$tmp/err"; then bad "a test-only variant offered"; else ok; fi
# known names that select nothing together: not a header and no row with exit 0
expect 2 "$pb" run gemm --n 8 --backend ref --variant openmp/blocked
contains "$tmp/err" "no gemm variant of the selected backends matches --variant"
lines "$tmp/out" 0
expect 2 "$pb" run gemm --n 8 --backend ref --device -1
contains "$tmp/err" "--device must be between 0 and 1023"
expect 2 "$pb" run peak --backend ref # peak has no ref variant
contains "$tmp/err" "peak has no variant on the backends given to --backend"
lines "$tmp/out" 0
expect 2 "$pb" run gemm --n 8 --backend ref --no-verify --inject-fault
contains "$tmp/err" "--inject-fault needs the check"
expect 0 "$pb" run gemm --n 8 --backend ref --variant ikj --no-verify --reps 1 --quiet
if grep -q "nan" "$tmp/out"; then bad "an unchecked row shows an error of nan"; else ok; fi
contains "$tmp/out" "OK  check=none" # the table says the OK checked nothing
expect 0 "$pb" run gemm --n 8 --backend ref --variant ikj --reps 1 --quiet
if grep -q "check=none" "$tmp/out"; then bad "a checked row says check=none"; else ok; fi
# The OpenBLAS anchor's own threads are stopped before every job and start
# again at its next call: every row is verified, at 1 and 2 threads.
if "$pb" list 2>/dev/null | grep -q "openblas"; then
    expect 0 "$pb" run gemm --backend openmp --variant openblas --n 65,130 --threads 1,2 --reps 2 --quiet --format csv
    n_ok=$(grep -c ",OK," "$tmp/out")
    if [ "$n_ok" -eq 4 ]; then ok; else bad "openblas after its pool stopped: $n_ok rows OK (want 4)"; fi
    # The anchor runs the kernels the CPU can: on an AVX2 CPU whose model a VM
    # hides, OpenBLAS takes it for a Prescott unless parbench restarts it with
    # OPENBLAS_CORETYPE; a core the user names stands, without a restart.
    expect 0 env -u OPENBLAS_CORETYPE "$pb" run gemm --backend openmp --variant openblas --n 32 --reps 1
    core=$(sed -n 's/^# parbench .*; OpenBLAS \([A-Za-z0-9]*\)[ ;].*/\1/p' "$tmp/out")
    if grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo; then
        case $core in
        Haswell | Zen | SkylakeX | Cooperlake | SapphireRapids | Excavator) ok ;;
        *) bad "OpenBLAS runs '$core' kernels on an AVX2 CPU" ;;
        esac
    elif [ -n "$core" ]; then ok; else bad "the header names no OpenBLAS core"; fi
    expect 0 env OPENBLAS_CORETYPE=Nehalem "$pb" run gemm --backend openmp --variant openblas --n 32 --reps 1
    contains "$tmp/out" "; OpenBLAS Nehalem; "
else
    skip openblas "no OpenBLAS anchor in this build"
fi
expect 2 "$pb" run gemm --precision half
expect 2 "$pb" run gemm --threads 0
expect 2 "$pb" run gemm --out "$tmp/results.dat"
expect 2 "$pb" run nosuch
expect 2 "$pb" run gemm --n

# Verified rows, every output format.
expect 0 "$pb" run gemm --n 17 --m 33 --k 5 --reps 2 --quiet --backend ref,openmp --out "$tmp/r.csv"
contains "$tmp/out" "ref      ikj"
lines "$tmp/r.csv" 6 # header + 5 variants
contains "$tmp/r.csv" ",33,17,5,,0,33x17x5,OK," # m, n, k, wg (none), groups
expect 0 "$pb" run gemm --n 8 --reps 1 --backend ref --format json --out "$tmp/r.json"
contains "$tmp/out" '"results"'
contains "$tmp/r.json" '"samples"'
expect 0 "$pb" run gemm --n 8,9 --reps 1 --variant ref/ikj --format csv
lines "$tmp/out" 3
# The same precision named twice (and by its other name) runs once; the
# file's extension is read in any case.
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --precision float,fp32,double,float --quiet --out "$tmp/UP.CSV"
lines "$tmp/UP.CSV" 3 # header + float + double
# --append adds rows under the existing header.
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/r.csv" --append
lines "$tmp/r.csv" 7
# ... and refuses a file of another benchmark's columns before printing anything.
expect 2 "$pb" run reduce --n 8 --reps 1 --variant ref/pairwise --quiet --out "$tmp/r.csv" --append
contains "$tmp/err" "columns differ"
lines "$tmp/out" 0
lines "$tmp/r.csv" 7
# A last line without its newline: a header alone or a whole row is ended, not glued to the new
# rows; a row cut short (a run killed while writing it) refuses the append, the file untouched.
head -n 1 "$tmp/r.csv" | tr -d '\n' >"$tmp/head-only.csv"
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/head-only.csv" --append
lines "$tmp/head-only.csv" 2
expect 0 "$pb" report "$tmp/head-only.csv" -o "$tmp/r.html"
head -c -1 "$tmp/r.csv" >"$tmp/no-eol.csv"
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/no-eol.csv" --append
lines "$tmp/no-eol.csv" 8
expect 0 "$pb" report "$tmp/no-eol.csv" -o "$tmp/r.html"
contains "$tmp/r.html" "7 rows"
head -c -40 "$tmp/r.csv" >"$tmp/cut-row.csv" && cp "$tmp/cut-row.csv" "$tmp/cut-row-before.csv"
expect 3 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/cut-row.csv" --append
contains "$tmp/err" "cannot append to $tmp/cut-row.csv: its last line (line 7) is cut short"
cmp -s "$tmp/cut-row.csv" "$tmp/cut-row-before.csv" && ok || bad "a refused --append changed the file"
# Standard output closed (>&-): the --out file does not take its descriptor, nor the table.
for ext in csv json; do
    "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --out "$tmp/closed.$ext" >&- 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] && ok || bad "run --out $ext with standard output closed: exit $rc"
    expect 0 "$pb" report "$tmp/closed.$ext" -o "$tmp/r.html"
done
# --out through a symbolic link writes the link's target and keeps the link. A JSON run that
# cannot write (ulimit -f 0: File too large, not a kill by SIGXFSZ) leaves the old file whole.
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/keep.json"
ln -s keep.json "$tmp/link.json"
expect 0 "$pb" run gemm --n 9 --reps 1 --variant ref/ikj --quiet --out "$tmp/link.json"
[ -L "$tmp/link.json" ] && ok || bad "--out replaced the symbolic link"
contains "$tmp/keep.json" "9x9x9"
cp "$tmp/keep.json" "$tmp/keep-before.json"
# (its messages through a pipe: the limit holds for regular files, such as expect's)
expect 3 bash -c 'set -o pipefail; (ulimit -f 0 && exec "$0" run gemm --n 8 --reps 1 --variant ref/ikj --quiet \
    --out "$1") 2>&1 | cat >&2' "$pb" "$tmp/keep.json"
contains "$tmp/err" "File too large"
cmp -s "$tmp/keep.json" "$tmp/keep-before.json" && ok || bad "a JSON --out that failed emptied the old file"
# Launch shapes of the naive GPU kernels: other variants decline them, bad ones are usage errors.
expect 0 "$pb" run gemm --n 16 --reps 1 --backend ref --variant ikj --wg 8x4 --groups 2 --format csv
contains "$tmp/out" "UNSUPPORTED"
contains "$tmp/out" "naive GPU kernels only"
expect 2 "$pb" run gemm --n 16 --wg 8
contains "$tmp/err" "WIDTHxHEIGHT"
expect 2 "$pb" run gemm --n 16 --wg 0x8
expect 2 "$pb" run gemm --n 16 --groups -3
# Thread sweep on the threaded backend only.
expect 0 "$pb" run gemm --n 16 --reps 1 --backend openmp --variant blocked --threads 1,2 --format csv
lines "$tmp/out" 3

# Bandwidth: every copy verified.
expect 0 "$pb" run bandwidth --size 4K,64K --buffers 1,4 --reps 2 --backend ref --format csv
lines "$tmp/out" 41 # header + 2 sizes x 2 splits x 10 variants
contains "$tmp/out" "bidir-pinned"
expect 1 "$pb" run bandwidth --size 4K --backend ref --variant d2d --reps 1 --inject-fault --format csv
contains "$tmp/out" "bytes differ"
expect 2 "$pb" run bandwidth --size 4 --buffers 8
expect 2 "$pb" run bandwidth --precision double

# Overlap needs a backend with tiled GEMM kernels: CPU rows say so, exit 0.
expect 0 "$pb" run overlap --n 16 --lm 2 --bs 8 --reps 1 --backend ref --format csv
contains "$tmp/out" "UNSUPPORTED"
contains "$tmp/out" ",copy_s,kernel_s,bound_s,efficiency"
expect 2 "$pb" run overlap --bs 12

# --device by name: backends without such a device are SKIP; a name no device
# of any backend has is a usage error, not rows that all skip.
expect 0 "$pb" run gemm --n 8 --reps 1 --backend ref --device "$("$pb" devices | sed -n 's/^openmp device 0: \(.*\) (cpu)$/\1/p')" --format csv
contains "$tmp/out" ",OK,"
expect 2 "$pb" run gemm --n 8 --reps 1 --backend ref --device no-such-device --format csv
contains "$tmp/err" "no device of any backend here matches 'no-such-device'"
expect 2 "$pb" run gemm --n 8 --reps 1 --device 7 --format csv # an index no backend has: a usage error too
contains "$tmp/err" "no backend here has a device 7"

# matinfo: a malformed file is one line on stderr and exit 3; the others are still reported.
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n3 2 -2\n' >"$tmp/good.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.5\n4 2 -2\n' >"$tmp/bad.mtx"
expect 0 "$pb" matinfo --help
contains "$tmp/out" "usage: parbench matinfo"
expect 2 "$pb" matinfo
expect 3 "$pb" matinfo "$tmp/good.mtx" "$tmp/bad.mtx" "$tmp/good.mtx" --format csv
lines "$tmp/out" 3
lines "$tmp/err" 1
contains "$tmp/err" "bad.mtx:4:"
expect 2 "$pb" matinfo rmat:0 # a generator's bad parameters are a usage error, as in run
{ printf '\357\273\277'; cat "$tmp/good.mtx"; } >"$tmp/bom.mtx" # a UTF-8 byte-order mark before the banner
expect 0 "$pb" run spmv --matrix "$tmp/bom.mtx" --backend ref --reps 1 --format csv
contains "$tmp/out" ",OK,"
: >"$tmp/empty.json"
expect 3 "$pb" report "$tmp/empty.json" -o "$tmp/e.html"
contains "$tmp/err" "empty.json is empty: no results in it"

# spmv: a file and a generated matrix, every CPU row verified; a malformed
# file is an ERROR row naming the line (exit 3); a missing file or a bad
# generator stops before measuring (exit 3 / 2); ELLPACK past its fill limit
# is UNSUPPORTED with the numbers.
expect 0 "$pb" run spmv --matrix "$tmp/good.mtx",lap2d:20 --variant ref/csr,ref/ell,openmp/csr,openmp/csr-h4,openmp/csr-v4,openmp/ell --precision float,double --reps 2 --format csv --out "$tmp/spmv.csv"
lines "$tmp/spmv.csv" 25
if grep -v '^date' "$tmp/spmv.csv" | grep -vq ',OK,'; then bad "an spmv row is not OK"; else ok; fi
contains "$tmp/spmv.csv" ",lap2d:20,"
expect 3 "$pb" run spmv --matrix "$tmp/bad.mtx" --backend ref --reps 1
contains "$tmp/out" "bad.mtx:4:"
expect 3 "$pb" run spmv --matrix "$tmp/missing.mtx"
contains "$tmp/err" "cannot read matrix file '$tmp/missing.mtx': No such file or directory"
# a mistyped generator is not only a missing file; a directory says so before any run
expect 3 "$pb" run spmv --matrix lapl2d:64 --backend ref
contains "$tmp/err" "'lapl2d:64' is no file, nor a generated matrix (lap2d:N,"
lines "$tmp/err" 1
mkdir "$tmp/dir.mtx"
expect 3 "$pb" run spmv --matrix lap2d:4,"$tmp/dir.mtx" --backend ref
contains "$tmp/err" "'$tmp/dir.mtx': Is a directory"
lines "$tmp/out" 0
# Values or products beyond float's range: float rows UNSUPPORTED (they were
# FAILED, "element 0 is Inf", blaming the kernels), double rows OK.
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e300\n2 1 3e38\n' >"$tmp/huge.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 3e38\n1 2 3e38\n' >"$tmp/sum.mtx"
expect 0 "$pb" run spmv --matrix "$tmp/huge.mtx","$tmp/sum.mtx" --variant ref/csr,openmp/csr --precision float,double --reps 1 --format csv
if grep ',float,' "$tmp/out" | grep -qv ',UNSUPPORTED,'; then bad "a float row of an out-of-range matrix is not UNSUPPORTED"; else ok; fi
if grep ',double,' "$tmp/out" | grep -qv ',OK,'; then bad "a double row of a large matrix is not OK"; else ok; fi
contains "$tmp/out" "value 1e+300 in row 1 does not fit in float"
expect 2 "$pb" run spmv --matrix lap2d:0
expect 2 "$pb" run spmv --matrix random:0
contains "$tmp/err" "ROWS must be from 1 to 2147483647"
expect 2 "$pb" run allreduce --size 1 --backend ref --precision double
contains "$tmp/err" "--size must be between one element (8 B in double) and 1 TiB (got 1)"
expect 2 "$pb" run spmv --matrix lap2d:8 --group 3
expect 0 "$pb" run spmv --matrix powerlaw:2000:8 --variant ref/ell --reps 1
contains "$tmp/out" "UNSUPPORTED: ELLPACK would store"
# 64-bit row offsets (--offsets 64; past 2^31 - 1 non-zeros by default): the
# variants that read them verify, the others refuse naming them.
expect 0 "$pb" run spmv --matrix lap2d:20,pareto:3000:8:1.2:0.1 --offsets 64 --variant ref/csr,openmp/csr,openmp/auto,openmp/csr-h4 --precision float,double --reps 1 --format csv --out "$tmp/spmv64.csv"
if [ "$(grep -c ',OK,' "$tmp/spmv64.csv")" -eq 12 ]; then ok; else bad "spmv --offsets 64: not 12 OK rows"; fi
contains "$tmp/spmv64.csv" "64-bit row offsets (beyond 2^31 - 1 non-zeros) run on csr, auto"
expect 2 "$pb" run spmv --matrix lap2d:8 --offsets 16
expect 2 "$pb" run spmv --matrix lap2d:8 --reps --warmup 3 # a value forgotten
contains "$tmp/err" "option --reps needs a value (N), got the option --warmup"
expect 2 "$pb" run spmv --matrix lap2d:8 --ell-max-fill 1.5
contains "$tmp/err" "'1.5' is not an integer"
# GB/s counts the x entries a product reads, not x's length: one entry in a
# row of 10^8 columns moves 24 bytes in float (the entry, two offsets, one x, one y).
expect 0 "$pb" run spmv --matrix rect:1:100000000:1 --variant ref/csr --reps 1 --format csv --out "$tmp/wide.csv"
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gbps") g = i; if ($i == "median_s") m = i } }
            NR == 2 { b = $g * $m * 1e9; exit !(b > 23.9 && b < 24.1) }' "$tmp/wide.csv"; then ok; else bad "spmv GB/s: bytes of a 1 x 10^8 row with one entry are not 24"; fi
# A variant with a preparation and no plain one before it: break_even is
# counted against the backend's CSR, timed on the binding after the check
# (ELLPACK's binding holds no CSR: no timing there).
expect 0 "$pb" run spmv --matrix lap2d:60 --variant openmp/auto,opencl/auto,ref/ell --reps 1 --format csv --out "$tmp/be.csv"
if [ "$(grep -c ',OK,' "$tmp/be.csv")" -ge 2 ]; then ok; else bad "spmv break_even: auto alone not OK"; fi

# A wrong result is FAILED with no speed, exit 1.
expect 1 "$pb" run gemm --n 16 --reps 1 --inject-fault --format csv --out "$tmp/f.csv"
contains "$tmp/out" "FAILED"
if grep -q ",OK," "$tmp/f.csv"; then bad "an injected fault passed"; else ok; fi

# The tensor-core types: gemm only; ref computes them, openmp and opencl
# answer UNSUPPORTED with the reason (opencl: test_gemm), a planted fault fails, the
# summary keeps each apart.
expect 0 "$pb" run gemm --n 33 --m 17 --k 45 --precision tf32,bf16,fp16 --backend ref,openmp --reps 1 --quiet --format csv --out "$tmp/lowp.csv"
for p in tf32 bf16 fp16; do
    contains "$tmp/lowp.csv" ",gemm,ref,ikj,0,"
    if grep -q ",ref,ikj,.*,$p,1,1,0,17,33,45,,0,17x33x45,OK," "$tmp/lowp.csv"; then ok; else bad "no OK ref/ikj row in $p"; fi
    if grep -q ",openmp,blocked,.*,$p,.*,UNSUPPORTED,no tensor cores: tf32/bf16/fp16 run on cuda," "$tmp/lowp.csv"; then ok
    else bad "openmp/blocked in $p is not UNSUPPORTED with the reason"; fi
done
if grep -q ",openmp,.*,OK," "$tmp/lowp.csv"; then bad "an openmp row computed a tensor-core type"; else ok; fi
expect 0 "$pb" report "$tmp/lowp.csv" -o "$tmp/lowp.html"
for p in tf32 bf16 fp16; do contains "$tmp/lowp.html" "gemm</a></td><td class=\"t\">$p</td>"; done
expect 1 "$pb" run gemm --n 40 --backend ref --precision bf16,fp16,tf32 --reps 1 --inject-fault --quiet --format csv --out "$tmp/lowp-fault.csv"
if [ "$(grep -c ",FAILED," "$tmp/lowp-fault.csv")" -eq 6 ]; then ok; else bad "a planted fault passed in a tensor-core type"; fi
expect 2 "$pb" run conv --precision bf16
contains "$tmp/err" "conv has no precision bf16: float or double"
expect 2 "$pb" run gemm-dist --precision float,tf32
contains "$tmp/err" "gemm-dist has no precision tf32: float or double"
expect 2 "$pb" run gemm --precision bf61
contains "$tmp/err" "unknown precision 'bf61' (float, double, tf32, bf16, fp16)"
expect 0 "$pb" run gemm --help
contains "$tmp/out" "Precisions (--precision): float, double, tf32, bf16 or fp16."
# A benchmark option's help is printed whole, however long: spmv's --matrix
# line names every generator and ends with its default.
expect 0 "$pb" run spmv --help
contains "$tmp/out" "one matrix of each irregular class (default lap2d:512,lap3d:48,random:64k:16,powerlaw:64k:16)"

# Unwritable output: exit 3 before measuring anything.
expect 3 "$pb" run gemm --n 16 --out "$tmp/no/such/dir/r.csv"
contains "$tmp/err" "cannot write"

# A problem too big for memory: ERROR row, exit 3, the rows before it kept.
expect 3 "$pb" run gemm --n 16,2000000 --variant ref/ikj --reps 1 --quiet --out "$tmp/big.csv" # 29 TiB: past any host
contains "$tmp/big.csv" "16x16x16,OK"
contains "$tmp/big.csv" "ERROR"
contains "$tmp/big.csv" "of host memory (inputs, reference, check vectors)"  # said before any input is made
expect 3 "$pb" run gemm --m 1 --n 1 --k 64G --variant ref/ikj --reps 1 --quiet
contains "$tmp/out" "needs 1.5 TiB of host memory"
# A 2e9 x 2e9 file with two entries: vectors of 2e9 elements, weighed before they are touched
# (the process was killed by the kernel). Only where they cannot fit (the GPU host has 128 GiB).
avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [ -n "$avail_kb" ] && [ "$avail_kb" -lt 50000000 ]; then
    printf '%%%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 2\n1 1 1\n9 9 2\n' >"$tmp/huge.mtx"
    expect 3 "$pb" run spmv --matrix "$tmp/huge.mtx" --backend ref --variant csr --reps 1 --quiet
    contains "$tmp/out" "of host memory for its offsets, x, y and reference alone"
fi

# Ctrl-C keeps the rows already written and exits 130.
"$pb" run gemm --n 8,1500 --variant ref/ijk --reps 1000 --quiet --out "$tmp/int.csv" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
    [ -f "$tmp/int.csv" ] && [ "$(wc -l <"$tmp/int.csv")" -ge 2 ] && break
    sleep 0.1
done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 130 ]; then ok; else bad "interrupted run exited $rc (want 130)"; fi
contains "$tmp/int.csv" "8x8x8,OK"

# A device error mid-run (the hidden test-only variant ref/fault): its rows
# ERROR with the message, the other rows measured, exit 3; hidden variants
# are not listed and run only when named as BACKEND/NAME.
expect 3 "$pb" run access --backend ref --variant ref/fault,global-offset --n 1000 --step 0,1 --reps 2 --quiet --format csv
count_lines() { grep -c -- "$2" "$1"; }
if [ "$(count_lines "$tmp/out" ",ERROR,planted device fault")" -eq 2 ]; then ok; else bad "ref/fault: want 2 ERROR rows"; fi
if [ "$(count_lines "$tmp/out" ",OK,")" -eq 2 ]; then ok; else bad "ref/fault: want the 2 other rows OK"; fi
expect 0 "$pb" run access --backend ref --n 100 --reps 1 --quiet --format csv
if grep -q ",fault," "$tmp/out"; then bad "a hidden variant ran unasked"; else ok; fi
expect 0 "$pb" list
if grep -q "ref/fault" "$tmp/out"; then bad "list shows a hidden variant"; else ok; fi

# A result wrong in the first timed repetition only (hidden ref/flaky) is
# FAILED: the first and last repetitions are both checked.
expect 1 "$pb" run gemm --n 24 --variant ref/flaky --reps 3 --warmup 1 --quiet --format csv
contains "$tmp/out" "FAILED"
contains "$tmp/out" "repetition 1 of 3:"

# SIGTERM (a batch system's stop) ends the same way; a second run on the same
# output is refused while the first holds it (CSV and JSON), and an output on
# a full disk or that is not a regular file is handled in place.
for ext in csv json; do
    "$pb" run gemm --n 8,1500 --variant ref/ijk --reps 1000 --quiet --out "$tmp/term.$ext" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 600); do
        [ -f "$tmp/term.$ext" ] && grep -q "8x8x8" "$tmp/term.$ext" && break
        sleep 0.1
    done
    expect 3 "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --out "$tmp/term.$ext"
    contains "$tmp/err" "being written by another parbench run"
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 130 ]; then ok; else bad "SIGTERM: exit $rc (want 130)"; fi
    contains "$tmp/term.$ext" "8x8x8"
done
if [ -w /dev/full ] && [ -c /dev/full ]; then
    for f in csv json; do
        expect 3 "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --format $f --out /dev/full
        contains "$tmp/err" "No space left"
        if [ -c /dev/full ]; then ok; else bad "/dev/full is no longer a device"; fi
    done
fi
expect 0 "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --format json --out /dev/null
if [ -c /dev/null ]; then ok; else bad "/dev/null is no longer a device"; fi

# Memory benchmarks: bad sizes and types are usage errors with one clear
# line; awkward shapes verify on the CPU backends; a fault is caught.
expect 2 "$pb" run transpose --n 0
contains "$tmp/err" "at least 1"
lines "$tmp/err" 1
expect 2 "$pb" run reduce --type 3
contains "$tmp/err" "--type 3 is not 0, 1 or 2"
expect 2 "$pb" run reduce --precision double
contains "$tmp/err" "--precision does not apply"
expect 2 "$pb" run access --step -1
contains "$tmp/err" "--step must be between 0 and"
expect 0 "$pb" run transpose --m 1,33 --n 1,65 --precision float,double --reps 1 --quiet --format csv --out "$tmp/t.csv"
if grep -qE ',(FAILED|ERROR),' "$tmp/t.csv"; then bad "a transpose row failed"; else ok; fi
contains "$tmp/t.csv" ",33x65,OK,"
expect 0 "$pb" run reduce --n 1,257,1000 --reps 1 --quiet --format csv --out "$tmp/r.csv"
contains "$tmp/r.csv" ",257 float+double-sum,OK,"
contains "$tmp/r.csv" ",1 int32,OK,"
expect 1 "$pb" run reduce --n 1000 --type 2 --reps 1 --inject-fault --quiet
contains "$tmp/out" "FAILED"
expect 0 "$pb" run access --n 100 --step 0,3 --reps 1 --quiet --format csv --out "$tmp/a.csv"
contains "$tmp/a.csv" "global-stride"
contains "$tmp/a.csv" "UNSUPPORTED"
contains "$tmp/a.csv" ",100 step 3,OK,"
# Reports: parbench report / plot / compare / ceilings on committed sample results.
data=$(cd "$(dirname "$0")/data" && pwd)
export XDG_CACHE_HOME="$tmp/cache"
expect 0 "$pb" report "$data/results" -o "$tmp/report.html"
svgs=$(grep -c "<svg " "$tmp/report.html")
if [ "$svgs" -ge 12 ]; then ok; else bad "report has $svgs charts (want >= 12)"; fi
tables=$(grep -c "<table" "$tmp/report.html")
if [ "$tables" -ge 8 ]; then ok; else bad "report has $tables tables (want >= 8: one per file + ceilings)"; fi
contains "$tmp/report.html" "roofline: openmp"
contains "$tmp/report.html" "FAILED"     # failed rows are listed ...
contains "$tmp/report.html" "SKIP"       # ... and skipped ones
contains "$tmp/report.html" "matrix (sorted by non-zeros)"
contains "$tmp/report.html" "GPU ahead from here"  # the CPU/GPU crossover of the per-matrix chart
contains "$tmp/report.html" "each part of the time alone vs the measured time"
contains "$tmp/report.html" '<h2 id="summary">Summary</h2>'  # the summary comes first ...
contains "$tmp/report.html" "openmp/openblas"                  # ... with the anchor beside ours
contains "$tmp/report.html" "simd: "                           # devices.json gives the context
contains "$tmp/report.html" "<td>19.15</td>"                   # the copy ceiling as ceilings.json has it
contains "$tmp/report.html" "<title>gemm float, ref/ikj 32x32x32: " # a roofline dot names its variant
if grep -q "[0-9]e+0[0-9]" "$tmp/report.html"; then bad "report writes a number as 6e+04"; else ok; fi
if grep -q ">1 rows" "$tmp/report.html"; then bad "report says 1 rows"; else ok; fi
if grep -qiw -e "nan" -e "inf" "$tmp/report.html"; then bad "report holds NaN or Inf"; else ok; fi
if grep -q "<script" "$tmp/report.html"; then bad "report has a script"; else ok; fi
if command -v xmllint >/dev/null; then
    if xmllint --noout "$tmp/report.html" 2>"$tmp/xml"; then ok; else bad "report is not well-formed"; head -3 "$tmp/xml"; fi
    xmllint --noout --html "$tmp/report.html" 2>/dev/null && ok || bad "report does not parse as HTML"
else
    skip xmllint "no xmllint (libxml2-utils): the report's well-formedness is not checked"
fi
expect 2 "$pb" report "$data/results"
contains "$tmp/err" "usage: parbench report"
contains "$tmp/err" "report needs -o FILE" # what is missing, in one line
lines "$tmp/err" 1
expect 2 "$pb" report -o "$tmp/r.html"
contains "$tmp/err" "report needs result files"
lines "$tmp/err" 1
expect 2 "$pb" report "$data/results" -o "$tmp/report-out.csv" # HTML into a .csv: refused, nothing written
contains "$tmp/err" "the report is HTML"
[ -e "$tmp/report-out.csv" ] && bad "report wrote $tmp/report-out.csv" || ok
expect 2 "$pb" report
contains "$tmp/err" "usage: parbench report" # nothing given: the usage
expect 3 "$pb" report "$tmp/nosuch.json" -o "$tmp/r.html"
contains "$tmp/err" "nosuch.json"
expect 3 "$pb" report "$data/general.mtx" -o "$tmp/r.html"
contains "$tmp/err" "not a parbench results file"
expect 2 "$pb" report "$data/results" -o "$tmp/r.html" --bogus
# The output never overwrites an input; a file named twice is read once; a byte-order mark is no column.
cp "$data/results/gemm-skip.csv" "$tmp/in.csv"
expect 2 "$pb" report "$tmp/in.csv" -o "$tmp/in.csv"
contains "$tmp/err" "is one of the result files read"
[ "$(head -c 4 "$tmp/in.csv")" = "date" ] && ok || bad "report -o overwrote its input"
{ printf '\357\273\277'; cat "$data/results/gemm-skip.csv"; } >"$tmp/bom.csv"
expect 0 "$pb" report "$tmp/bom.csv" "$tmp/in.csv" "$tmp/in.csv" -o "$tmp/r.html"
contains "$tmp/r.html" "2 result files"
lacks_bom=$(grep -c "$(printf '\357\273\277')" "$tmp/r.html")
[ "$lacks_bom" -eq 0 ] && ok || bad "the byte-order mark reached the report"
mkdir -p "$tmp/cut" && cp "$data/results/gemm.json" "$tmp/cut/" && head -c 300 "$data/results/gemm.json" >"$tmp/cut/cut.json"
expect 0 "$pb" report "$tmp/cut" -o "$tmp/r.html" # a folder's results file cut short: skipped, and said
contains "$tmp/err" "skipping $tmp/cut/cut.json"
# in a folder, a CSV with rows of the wrong length keeps its good rows and counts the others; an
# empty file is skipped and said; given by name, the same CSV is an error
{ cat "$data/results/gemm-skip.csv"; echo "a,b,c"; echo "d,e"; } >"$tmp/cut/ragged.csv"
: >"$tmp/cut/empty.csv"
expect 0 "$pb" report "$tmp/cut" -o "$tmp/r.html"
contains "$tmp/err" "$tmp/cut/ragged.csv: 2 rows left out"
contains "$tmp/err" "skipping $tmp/cut/empty.csv: empty"
expect 3 "$pb" report "$tmp/cut/ragged.csv" -o "$tmp/r.html"
# a FIFO named *.csv in a folder is skipped, and said, not read forever
mkdir -p "$tmp/fifo/sub" && cp "$tmp/r.csv" "$tmp/fifo/"
if mkfifo "$tmp/fifo/sub/p.csv"; then
    expect 0 timeout 20 "$pb" report "$tmp/fifo" -o "$tmp/r.html"
    contains "$tmp/err" "skipping $tmp/fifo/sub/p.csv: not a regular file"
    expect 0 timeout 20 "$pb" compare "$tmp/fifo" "$tmp/r.csv"
fi
# concatenated CSVs (cat a.csv a.csv): the header repeated inside is no row
cat "$tmp/r.csv" "$tmp/r.csv" >"$tmp/twice.csv"
expect 0 "$pb" compare "$tmp/r.csv" "$tmp/twice.csv"
contains "$tmp/out" "0 only in $tmp/twice.csv"
# a CSV cut short (a run killed while writing its last row): the complete rows are read, the
# last is left out and said; a short row before the end is still malformed
{ head -n 3 "$data/results/overlap.csv"; sed -n 4p "$data/results/overlap.csv" | head -c 60; } >"$tmp/cut/cut.csv"
expect 0 "$pb" report "$tmp/cut/cut.csv" -o "$tmp/r.html"
contains "$tmp/err" "cut.csv:4: cut short"
contains "$tmp/r.html" "2 rows"
{ head -n 2 "$data/results/overlap.csv"; sed -n 4p "$data/results/overlap.csv" | head -c 60; echo; sed -n 3p "$data/results/overlap.csv"; } >"$tmp/mid.csv"
expect 3 "$pb" report "$tmp/mid.csv" -o "$tmp/r.html"
contains "$tmp/err" "mid.csv:3:"
expect 3 "$pb" report /dev/zero -o "$tmp/r.html"
contains "$tmp/err" "is not a text file"
expect 2 "$pb" matinfo "$data/general.mtx" "$tmp/in.csv" --out "$tmp/in.csv"
contains "$tmp/err" "is one of the matrices read"
expect 2 "$pb" version --bogus
expect 0 "$pb" report "$data/results/gemm.json" -o -
contains "$tmp/out" "<!DOCTYPE html>"
# Each rate against its own ceiling (an H100's, synthetic rows): transfers
# against the link, not device memory; shared memory and FP64 tensor cores
# against nothing, said in a note; SpMV drawn under the memory roof.
expect 0 "$pb" report "$data/roofs" -o "$tmp/roofs.html"
cell() { # the "of ceiling" cell of the row of variant $1 and precision $2 (after cv's)
    grep -o "<td class=\"t\">$1</td><td class=\"t\">[^<]*</td><td class=\"t\">$2.*</tr>" "$tmp/roofs.html" |
        grep -o '<td>\(-<sup>.</sup>\|[0-9.]*%\(<sup>.</sup>\)\?\)</td>' | sed -n 2p
}
for want in "h2d-pinned|-|<td>100.0%</td>" "d2h-pinned|-|<td>50.0%</td>" "shared-stride|float|<td>-<sup>b</sup></td>" \
            "dmma|double|<td>-<sup>a</sup></td>" "cublas\\*|double|<td>-<sup>a</sup></td>" \
            "regblock|double|<td>50.0%</td>" "csr-scalar|double|<td>20.0%</td>"; do
    IFS='|' read -r v p c <<<"$want"
    got=$(cell "$v" "$p")
    if [ "$got" = "$c" ]; then ok; else bad "roofs: $v $p of ceiling is '$got', want '$c'"; fi
done
contains "$tmp/roofs.html" "no tensor-core peak is measured"
spmv_chart=$(awk 'BEGIN { RS = "<svg " } /spmv: GFLOP\/s/ { sub(/<\/svg>.*/, ""); print }' "$tmp/roofs.html")
case "$spmv_chart" in
*"FMA peak"*) bad "the SpMV chart draws an FMA peak" ;;
*"memory roof (cuda)"*) ok ;;
*) bad "the SpMV chart has no memory roof" ;;
esac

# A tree of study folders (parbench study ID --out DIR, five side by side):
# folders are read recursively, each file named by its path below the
# directory given; files of study-NNN/ go under that study whatever their
# benchmark (transfers are bandwidth rows, otherwise under study 001); the
# study's comparison.csv opens its section. Hidden folders, links to folders
# and folders past the depth limit are not entered.
cp -r "$data/studies" "$tmp/tree"
cp "$data/studies/study-003/comparison.csv" "$tmp/tree/study-003-comparison.csv" # a copy beside the folder
ln -s .. "$tmp/tree/study-003/up"
mkdir -p "$tmp/tree/a/b/c/d/e"
cp "$data/studies/transfers.csv" "$tmp/tree/a/b/c/d/deep.csv"
cp "$data/studies/transfers.csv" "$tmp/tree/a/b/c/d/e/too-deep.csv"
expect 0 "$pb" report "$tmp/tree" -o "$tmp/tree.html"
section() { # section ID: the report's study section ID, up to the next h2
    awk -v id="id=\"study$1\"" 'index($0, id) { p = 1; print; next } p && /<h2/ { exit } p' "$tmp/tree.html" >"$tmp/section$1"
}
section 003
contains "$tmp/section003" "Their figures beside ours — study-003/comparison.csv</h3>"
contains "$tmp/section003" "the same figures are also in study-003-comparison.csv"
contains "$tmp/section003" ">D2H 8 MiB, pinned: GB/s</td>"                   # a quoted field with a comma, whole
contains "$tmp/section003" ">step 1, &quot;nvprof&quot; table</td>"           # the original named once, above:
contains "$tmp/section003" "original: shared/seeds/003_cacb2bad518fce8a.txt"
contains "$tmp/section003" '<td class="t">agrees</td>'
if grep -q '<tr class="FAILED"><td [^>]*>strips without' "$tmp/section003"; then ok # a contradiction shaded
else bad "the contradicted figure is not shaded"; fi
contains "$tmp/section003" '<td>4.771</td>'                                    # ours/theirs
contains "$tmp/section003" "bandwidth — study-003/transfers.csv</h3>"
section 001
contains "$tmp/section001" "bandwidth — transfers.csv</h3>"                  # by benchmark outside study folders
if grep -q "study-003" "$tmp/section001"; then bad "a file of study-003/ under study 001"; else ok; fi
contains "$tmp/tree.html" "bandwidth — a/b/c/d/deep.csv</h3>"
contains "$tmp/tree.html" "4 compared with ours in 1 comparison, 3 measured here; of the conclusions tested, 1 agrees and 1 contradicts"
n=$(grep -c '<h3 id="c[0-9]*">' "$tmp/tree.html")
if [ "$n" -eq 1 ]; then ok; else bad "the comparison and its copy make $n tables (want 1)"; fi
for not in too-deep.csv .hidden/ study-003/up/ notes.csv; do
    if grep -qF -- "$not" "$tmp/tree.html"; then bad "report of the tree shows $not"; else ok; fi
done
if command -v xmllint >/dev/null; then
    if xmllint --noout "$tmp/tree.html" 2>"$tmp/xml"; then ok; else bad "tree report is not well-formed"; head -3 "$tmp/xml"; fi
fi
# A comparison alone makes a report; one with a short line is an error naming it.
expect 0 "$pb" report "$data/studies/study-003/comparison.csv" -o "$tmp/cmp.html"
contains "$tmp/cmp.html" "Their figures beside ours — comparison.csv</h3>"
head -2 "$data/studies/study-003/comparison.csv" >"$tmp/tree/study-003/comparison.csv"
echo "003,short" >>"$tmp/tree/study-003/comparison.csv"
expect 3 "$pb" report "$tmp/tree" -o "$tmp/r.html"
contains "$tmp/err" "study-003/comparison.csv:3: 2 fields, the header has 13"

expect 0 "$pb" plot "$data/results" --list
contains "$tmp/out" "1: bandwidth"
contains "$tmp/out" "(gemm.json)" # of several files, each chart names its file
expect 0 "$pb" plot "$data/results/gemm.json" -o "$tmp/g.svg"
contains "$tmp/g.svg" "<svg xmlns"
contains "$tmp/g.svg" "GFLOP/s vs n"
expect 2 "$pb" plot "$data/results/gemm.json"
contains "$tmp/err" "plot needs -o FILE.svg or FILE.png, or --list"
lines "$tmp/err" 1
expect 2 "$pb" plot "$data/results/gemm.json" -o "$tmp/g.gif"
expect 3 "$pb" plot "$tmp/f.csv" --list # every row FAILED (--inject-fault above): nothing to draw
contains "$tmp/err" "rows, 0 of them OK"
expect 2 "$pb" plot "$data/results/gemm.json" -o "$tmp/g.svg" --chart 99
if command -v rsvg-convert >/dev/null; then
    expect 0 "$pb" plot "$data/results/gemm.json" -o "$tmp/g.png"
else
    expect 3 "$pb" plot "$data/results/gemm.json" -o "$tmp/g.png"
    contains "$tmp/err" "rsvg-convert"
fi
# a PNG that cannot be written: one line, before any converter runs
expect 3 "$pb" plot "$data/results/gemm.json" -o "$tmp/missing/g.png"
contains "$tmp/err" "cannot write $tmp/missing/g.png: No such file or directory"
lines "$tmp/err" 1

expect 0 "$pb" compare "$data/results/gemm.json" "$data/results/gemm.json"
contains "$tmp/out" "66 rows matched: 0 regressed"
expect 1 "$pb" compare "$data/results/gemm.json" "$data/compare/gemm-slower.json"
contains "$tmp/out" "REGRESSION: time +50.0%, 1.50x slower"
if grep -q "faster by\|% faster" "$tmp/out"; then bad "compare words a speed-up as a percentage"; else ok; fi
expect 0 "$pb" compare "$data/compare/gemm-slower.json" "$data/results/gemm.json" # the other way round
contains "$tmp/out" "time -33.3%, 1.50x faster"
if grep -q "REGRESSION" "$tmp/out"; then bad "compare: a faster NEW regressed"; else ok; fi
expect 0 "$pb" compare "$data/results/gemm.json" "$data/compare/gemm-slower.json" --threshold 60
expect 2 "$pb" compare "$data/results/gemm.json"
contains "$tmp/err" "compare needs two result files, BASE and NEW (got one)"
lines "$tmp/err" 1
expect 2 "$pb" compare "$data/results/gemm.json" "$data/results/gemm.json" --threshold lots
expect 3 "$pb" compare "$data/results/gemm.json" "$tmp/nosuch.json"
head -c 300 "$data/results/gemm.json" >"$tmp/cut.json" # a results file cut short
expect 3 "$pb" compare "$data/results/gemm.json" "$tmp/cut.json"
contains "$tmp/err" "cut.json is not valid JSON (near byte"
# a file written before a parameter existed matches rows that leave it at its default
expect 0 "$pb" run gemm --variant ref/ikj --n 16,32 --reps 1 --quiet --out "$tmp/cmp-new.csv"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wg" || $i == "groups") drop[i] = 1 }
    { line = ""; for (i = 1; i <= NF; i++) if (!(i in drop)) line = line (line == "" ? "" : ",") $i; print line }' \
    "$tmp/cmp-new.csv" >"$tmp/cmp-old.csv"
expect 0 "$pb" compare "$tmp/cmp-old.csv" "$tmp/cmp-new.csv"
contains "$tmp/out" "2 rows matched"
# an OK row whose median was edited to 0 is not compared, and says why; with
# no row left to compare, the gate fails (exit 3), either way round
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "median_s") c = i } NR > 1 && c { $c = 0 } { print }' \
    "$tmp/cmp-new.csv" >"$tmp/cmp-zero.csv"
expect 3 "$pb" compare "$tmp/cmp-zero.csv" "$tmp/cmp-new.csv"
contains "$tmp/out" "not compared (base has no usable median time)"
contains "$tmp/out" "2 not compared"
contains "$tmp/err" "none of the 2 matched rows could be compared"
expect 3 "$pb" compare "$tmp/cmp-new.csv" "$tmp/cmp-zero.csv"
# rows of BASE missing from NEW are named on stderr; the rows compared decide
head -2 "$tmp/cmp-new.csv" >"$tmp/cmp-part.csv"
expect 0 "$pb" compare "$tmp/cmp-new.csv" "$tmp/cmp-part.csv"
contains "$tmp/err" "1 rows of $tmp/cmp-new.csv are missing from $tmp/cmp-part.csv"
contains "$tmp/err" "  gemm ref/ikj float 32x32x32" # named
# a run appended again to NEW (the same rows, later): the later rows count, and it is said;
# here the later ones are 10x slower, a regression the first rows would have hidden
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "median_s") c = i; if ($i ~ /_s$|^cv$|^min_s$/) t[i] = 1 } }
    NR > 1 { for (i in t) if ($i != "" && i != c) $i = ""; $c = $c * 10; print }' "$tmp/cmp-new.csv" >"$tmp/cmp-slow-rows.csv"
cat "$tmp/cmp-new.csv" "$tmp/cmp-slow-rows.csv" >"$tmp/cmp-again.csv"
expect 1 "$pb" compare "$tmp/cmp-new.csv" "$tmp/cmp-again.csv"
contains "$tmp/err" "holds 2 rows measured again later in it: the latest of each taken"
contains "$tmp/out" "2 rows matched: 2 regressed"
# a run that verified before and ERRORs now is a regression, not "nothing compared"
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i } NR > 1 && c { $c = "ERROR" } { print }' \
    "$tmp/cmp-new.csv" >"$tmp/cmp-error.csv"
expect 1 "$pb" compare "$tmp/cmp-new.csv" "$tmp/cmp-error.csv"
contains "$tmp/out" "REGRESSION: ERROR (was OK)"

# Ceilings: measured, saved, then read by runs for the fraction-of-ceiling column.
expect 0 "$pb" run gemm --n 16 --variant ref/ikj --reps 1 --quiet
contains "$tmp/err" "no ceilings file"
# quick figures are no ceilings: never saved over the default file, only where asked
expect 0 "$pb" ceilings --quick --backend openmp --reps 1
[ ! -e "$tmp/cache/parbench/ceilings.json" ] && ok || bad "ceilings --quick saved over the default file"
contains "$tmp/out" "nothing saved"
expect 0 "$pb" ceilings --quick --backend openmp --reps 1 --ceilings "$tmp/cache/parbench/ceilings.json"
contains "$tmp/cache/parbench/ceilings.json" '"fp32_gflops"'
contains "$tmp/out" "saved to"
# ref measures copies only: the rest is "-", never nan
expect 0 "$pb" ceilings --quick --backend ref --reps 1 --ceilings "$tmp/ref-only.json"
if grep -qiw nan "$tmp/out"; then bad "ceilings prints nan for what it did not measure"; else ok; fi
# a matrix without non-zeros projects to nothing, said as "-", not nan
printf '%%%%MatrixMarket matrix coordinate real general\n0 0 0\n' >"$tmp/zerodim.mtx"
expect 0 "$pb" project spmv-dist --matrix "$tmp/zerodim.mtx" --ranks 1:4 --rate 1e9 --latency 1e-6 --bandwidth 1e10
if grep -qiw -e nan -e nanx -e -nan "$tmp/out"; then bad "project prints nan"; else ok; fi
expect 0 "$pb" project spmv-dist --matrix "$tmp/zerodim.mtx" --ranks 1:4 --rate 1e9 --latency 1e-6 --bandwidth 1e10 \
    --partition 2d
if grep -qiw -e nan -e nanx -e -nan "$tmp/out"; then bad "project --partition 2d prints nan"; else ok; fi
# 2d: a row per count with its grid; one rank moves nothing at full efficiency; a prime count is 1 x P
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1,7,8 --rate 1e9 --latency 1e-6 --bandwidth 1e10 \
    --partition 2d
if grep -qE '^ +1 +1x1 +7840 +0 +0 .* 1\.00 +1\.00$' "$tmp/out" && grep -qE '^ +7 +1x7 ' "$tmp/out" &&
    grep -qE '^ +8 +2x4 ' "$tmp/out"; then ok; else bad "project --partition 2d: rows for 1, 7 and 8 ranks"; fi
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --rate 1e9 --latency 1e-6 --bandwidth 1e10 --partition 3d
contains "$tmp/err" "project: --partition '3d' is neither 1d nor 2d"
expect 0 "$pb" run peak --n 4096 --iters 4 --backend openmp --reps 1 --quiet --out "$tmp/peak.csv"
if grep -q "no ceilings file" "$tmp/err"; then bad "ceilings file not found after parbench ceilings"; else ok; fi
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ceiling_fraction") c = i } NR > 1 && $c == "" { bad = 1 }
         END { exit bad || !c }' "$tmp/peak.csv" && ok || bad "peak rows lack ceiling_fraction"
expect 3 "$pb" run gemm --n 16 --ceilings "$tmp/nosuch.json"
# A run holds each row against its own ceiling: a transfer against the
# link (here 1000 GB/s), the device copy against memory (10^6 GB/s).
ref_dev=$("$pb" devices --backend ref | sed -n 's/^ref device 0: \(.*\) ([a-z]*)$/\1/p')
printf '{"parbench_ceilings": 1, "devices": [{"backend": "ref", "device": "%s", "copy_gbps": 1e6, "read_gbps": 1,
         "h2d_gbps": 1000, "d2h_gbps": 2000, "fp32_gflops": 1, "fp64_gflops": 1}]}\n' "$ref_dev" >"$tmp/ref-ceil.json"
expect 0 "$pb" run bandwidth --backend ref --variant h2d-pinned,d2h-pinned,d2d --size 64K --reps 1 --quiet \
    --ceilings "$tmp/ref-ceil.json" --format csv
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "ceiling_fraction") c = i; if ($i == "gbps") g = i; if ($i == "variant") v = i } }
         NR > 1 { want = $v == "h2d-pinned" ? 1000 : $v == "d2h-pinned" ? 2000 : 1e6; n++
                  if (!($c > 0) || ($g / $c - want) ^ 2 > (1e-6 * want) ^ 2) { print $v ": " $g " GB/s, fraction " $c; bad = 1 } }
         END { exit bad || n != 3 }' "$tmp/out" && ok || bad "bandwidth rows held against the wrong ceiling"
# A ceiling that is no plausible number (a damaged or hand-edited file) is refused, naming it.
for v in 1e-300 1e999 0 -3 2e7 '"fast"'; do
    sed "s/\"copy_gbps\": 1e6/\"copy_gbps\": $v/" "$tmp/ref-ceil.json" >"$tmp/bad-ceil.json"
    expect 2 "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --ceilings "$tmp/bad-ceil.json"
    contains "$tmp/err" "devices[0]: copy_gbps is"
    lines "$tmp/err" 1
done
sed 's/"fp32_gflops": 1,/"fp32_gflops": 1e10,/' "$tmp/ref-ceil.json" >"$tmp/bad-ceil.json"
expect 3 "$pb" report "$data/results/gemm-skip.csv" --ceilings "$tmp/bad-ceil.json" -o "$tmp/r.html"
contains "$tmp/err" "fp32_gflops is 1e+10, not a plausible ceiling"
# A damaged file at the default path: a warning, and runs go on without fractions; `ceilings`
# replaces it. Given by --ceilings, it stays an error. A destination that cannot be written fails
# before anything is measured.
mkdir -p "$tmp/home/.cache/parbench"
printf '{"parbench_ceilings": 1, "devi' >"$tmp/home/.cache/parbench/ceilings.json"
expect 0 env -u XDG_CACHE_HOME HOME="$tmp/home" "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --no-energy
contains "$tmp/err" "warning: $tmp/home/.cache/parbench/ceilings.json is not a parbench ceilings file"
lines "$tmp/err" 1
expect 2 "$pb" run gemm --n 8 --variant ref/ikj --reps 1 --quiet --ceilings "$tmp/home/.cache/parbench/ceilings.json"
if [ -d /proc/self ]; then # no file can be created in /proc, root or not
    expect 3 "$pb" ceilings --quick --backend openmp --reps 1 --ceilings /proc/parbench-test.json
    contains "$tmp/err" "cannot write /proc/parbench-test.json"
    lines "$tmp/out" 0
fi
expect 1 "$pb" run peak --n 4096 --iters 4 --backend openmp,opencl --precision float,double --reps 1 --inject-fault --quiet
expect 2 "$pb" ceilings --backend nosuch
expect 3 "$pb" ceilings --quick --backend openmp --reps 1 --device 7 --ceilings "$tmp/c7.json"
contains "$tmp/err" "openmp has no device 7"
if "$pb" list | grep -q '^  opencl .* available$'; then
    # every device of every backend asked for, each saved under its own name
    expect 0 "$pb" ceilings --quick --backend openmp,opencl --reps 1 --ceilings "$tmp/call.json"
    contains "$tmp/call.json" '"backend":	"openmp"'
    contains "$tmp/call.json" '"backend":	"opencl"'
    n_cl=$("$pb" devices --backend opencl | grep -c '^opencl device')
    n_saved=$(grep -c '"backend":	"opencl"' "$tmp/call.json")
    n_models=$("$pb" devices --backend opencl | sed -n 's/^opencl device [0-9]*: //p' | sort -u | wc -l)
    if [ "$n_saved" -eq "$n_models" ] && [ "$n_cl" -ge 1 ]; then ok; else bad "ceilings saved $n_saved OpenCL devices of $n_models models"; fi
fi
unset XDG_CACHE_HOME
# conv: benchmarks with text parameters, the strip path under a memory cap,
# and the image command with its bad inputs.
expect 0 "$pb" run conv --width 45 --height 31 --radius 1,9 --border zero,clamp --filter gauss,box --reps 2 --quiet --format csv --out "$tmp/conv.csv"
contains "$tmp/conv.csv" ",zero,gauss,"
contains "$tmp/conv.csv" ",clamp,box,"
contains "$tmp/conv.csv" "trimmed_mean_s"
contains "$tmp/conv.csv" "d2d_bound_s"
if grep -q "FAILED" "$tmp/conv.csv"; then bad "a conv row failed"; else ok; fi
# The FMA bound from the ceilings file (1 GFLOP/s here): 4 (2R+1) w h flops,
# and bound_frac held against the higher of the two bounds.
expect 0 "$pb" run conv --backend ref --width 45 --height 31 --radius 1 --reps 1 --quiet --format csv \
    --ceilings "$tmp/ref-ceil.json"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "fma_bound_s") f = i; if ($i == "d2d_bound_s") d = i
                                              if ($i == "kernel_s") k = i; if ($i == "bound_frac") b = i } }
         NR > 1 { n++; want = 4 * 3 * 45 * 31 / 1e9; hi = $f > $d ? $f : $d
                  if (($f - want) ^ 2 > (1e-9 * want) ^ 2 || ($b - hi / $k) ^ 2 > (1e-6 * $b) ^ 2) {
                      print "fma_bound_s " $f " (want " want "), bound_frac " $b; bad = 1 } }
         END { exit bad || n != 1 || !f }' "$tmp/out" && ok || bad "conv's FMA bound or bound_frac is wrong"
expect 0 "$pb" run conv-stream --width 200 --height 150 --radius 4 --device-mem 64K --streams 2 --backend ref,openmp,opencl --reps 2 --quiet --format csv --out "$tmp/cs.csv"
contains "$tmp/cs.csv" "efficiency"
contains "$tmp/cs.csv" ",streams,"
if grep -q "FAILED\|ERROR" "$tmp/cs.csv"; then bad "a conv-stream row failed"; else ok; fi
# Staged and pinned strips give the same verified image; OpenCL cannot pin in place and says so.
expect 0 "$pb" run conv-stream --width 90 --height 70 --radius 3 --host-mem staged,pinned --backend openmp,opencl --reps 1 --quiet --format csv
if grep -q "FAILED\|ERROR" "$tmp/out"; then bad "a staged or pinned conv-stream row failed"; else ok; fi
contains "$tmp/out" "images page-locked in place"
contains "$tmp/out" "UNSUPPORTED,backend opencl cannot page-lock"
# Whatever the command, output that cannot be written is an error (exit 3), not a silent success.
for c in list version devices; do
    if [ -w /dev/full ]; then "$pb" $c >/dev/full 2>"$tmp/err"; rc=$?; [ $rc -eq 3 ] && ok || bad "$c to a full disk: exit $rc"; fi
done
# Taps whose sums leave the type's range: UNSUPPORTED with the reason, not a kernel's FAILED; a
# sigma whose square underflows is the identity filter, not NaN taps.
printf '1e300 1e300 1e300\n' >"$tmp/huge-taps.txt"
expect 0 "$pb" run conv --width 9 --height 5 --radius 1 --filter "$tmp/huge-taps.txt" --backend ref,openmp --precision float,double --reps 1 --format csv
[ "$(grep -c 'UNSUPPORTED,"filter' "$tmp/out")" -eq 4 ] && ok || bad "huge taps: not 4 UNSUPPORTED rows"
expect 0 "$pb" run conv --width 9 --height 5 --radius 1 --filter gauss:1e-170 --backend ref,openmp --reps 1 --format csv
[ "$(grep -c ",OK," "$tmp/out")" -eq 2 ] && ok || bad "gauss:1e-170: not 2 OK rows"
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e308\n1 2 1e308\n' >"$tmp/dbig.mtx"
expect 0 "$pb" run spmv --matrix "$tmp/dbig.mtx" --variant ref/csr,openmp/csr --precision double --reps 1 --format csv
[ "$(grep -c "does not fit in double" "$tmp/out")" -eq 2 ] && ok || bad "an overflowing product: not 2 UNSUPPORTED rows"
expect 2 "$pb" run conv-stream --width 40 --radius 2 --host-mem swapped --backend ref
contains "$tmp/err" "--host-mem: pinned, staged or auto"
expect 1 "$pb" run conv --width 40 --radius 3 --variant ref/rowcol --reps 1 --inject-fault --quiet
# --inject-fault fails every computed row, also where the right answer is all
# zeros (zero taps, a matrix without non-zeros) or has no element at all.
printf '0\n0\n0\n' >"$tmp/zero-taps.txt"
expect 1 "$pb" run conv --width 17 --radius 1 --filter "$tmp/zero-taps.txt" --backend ref,openmp --reps 1 --inject-fault --format csv
if grep -q ",OK," "$tmp/out"; then bad "an injected fault passed with zero taps"; else ok; fi
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 0\n' >"$tmp/nnz0.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n0 0 0\n' >"$tmp/rows0.mtx"
expect 1 "$pb" run spmv --matrix "$tmp/nnz0.mtx","$tmp/rows0.mtx",gaps:1 --variant ref/csr,openmp/csr --reps 1 --inject-fault --format csv
if grep -q ",OK," "$tmp/out"; then bad "an injected fault passed on an empty matrix"; else ok; fi
expect 0 "$pb" run spmv --matrix "$tmp/nnz0.mtx","$tmp/rows0.mtx" --variant ref/csr,openmp/csr --reps 1 --format csv
if grep -q ",FAILED," "$tmp/out"; then bad "an empty matrix failed"; else ok; fi
if "$pb" list | grep -q "openmp/librsb-tuned"; then # its autotuner called a 0 x 0 matrix corrupt
    expect 0 "$pb" run spmv --matrix "$tmp/rows0.mtx" --variant openmp/librsb-tuned --reps 1 --format csv
    contains "$tmp/out" ",OK,"
    # More threads than librsb takes spun forever in its locks: it runs with its most, and says so.
    expect 0 timeout -k 5 120 "$pb" run spmv --matrix lap2d:4 --variant openmp/librsb --threads 600 --reps 1 --format csv
    contains "$tmp/out" "the most librsb takes"
    # Its tuner takes no more threads than librsb started with (here OpenMP's 1): tuned for 1,
    # not refused as "corrupt or inconsistent data".
    expect 0 env OMP_NUM_THREADS=1 "$pb" run spmv --matrix lap2d:8 --variant openmp/librsb-tuned --threads 2 \
        --reps 1 --format csv
    contains "$tmp/out" "leaf blocks for 1 thread"
fi
expect 2 "$pb" run conv --width 40 --radius 0
contains "$tmp/err" "radius must be between"
# A filter file without --radius runs at the file's radius (5 taps: 2), once;
# named filters beside it at the default radii.
printf '1 2 3 2 1\n' >"$tmp/taps5.txt"
expect 0 "$pb" run conv --width 33 --filter "$tmp/taps5.txt",box --backend ref --reps 1 --warmup 0 --format csv
if [ "$(grep -c ',OK,' "$tmp/out")" -eq 3 ] && grep -q "r2 zero $tmp/taps5.txt" "$tmp/out" && ! grep -q "r8 zero $tmp/taps5.txt" "$tmp/out"; then
    ok
else
    bad "run conv --filter FILE without --radius: not one row at the file's radius and two box rows"
fi
# ... and with a --radius it does not fit, no row runs: a usage error, before any row.
expect 2 "$pb" run conv --width 33 --radius 2,3 --filter "$tmp/taps5.txt" --backend ref --reps 1 --warmup 0
contains "$tmp/err" "has 5 taps; radius 3 needs 7"
! grep -q " OK" "$tmp/out" && ok || bad "run conv --radius 2,3 with a 5-tap file ran rows"
expect 2 "$pb" run conv --width 40 --border wrap
contains "$tmp/err" "unknown border"
expect 2 "$pb" run conv --width 40 --radius 2 --filter gauss:0 --backend ref
contains "$tmp/err" "sigma must be a positive number"
expect 2 "$pb" run conv-stream --width 40 --radius 2 --filter gauss:-1 --backend ref
expect 2 "$pb" run conv-stream --width 40 --radius 2 --kernel no-such-kernel --backend ref
contains "$tmp/err" "no backend has a conv kernel 'no-such-kernel'"
expect 2 "$pb" run spmv-dist --matrix lap2d:4 --local no-such-kernel --backend ref
contains "$tmp/err" "no backend has an spmv kernel 'no-such-kernel'"
expect 3 "$pb" run conv --width 40 --radius 2 --filter "$tmp/no-taps.txt" --quiet
# --device-mem too small for one strip is a usage error, as for parbench conv; one that holds a strip
# but not --streams of them leaves the streams rows UNSUPPORTED
expect 2 "$pb" run conv-stream --width 1000 --radius 40 --device-mem 4K --variant ref/strips --quiet
contains "$tmp/err" "--device-mem 4.0 KiB is too small for 1 strip(s)"
expect 0 "$pb" run conv-stream --width 64 --height 64 --radius 3 --device-mem 6K --streams 4 --backend openmp \
    --reps 1 --warmup 0 --quiet
contains "$tmp/out" "UNSUPPORTED: --device-mem 6.0 KiB is too small for 4 strip(s)"
printf 'P5\n40 30\n255\n' >"$tmp/g.pgm"
head -c 1200 /dev/urandom >>"$tmp/g.pgm"
expect 0 "$pb" conv --help
contains "$tmp/out" "usage: parbench conv"
# PNG/JPEG/PGM through stb_image when this build has it (the GPU machine may not).
have_stb=1
"$pb" conv --help | grep -q "built without stb_image" && have_stb=0
if [ "$have_stb" -eq 0 ]; then
    skip stb "built without stb_image: no image-file checks"
else
    expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 3 --sigma 1.2 --save "$tmp/o.pgm" --backend openmp --device-mem 12K
    contains "$tmp/out" "40x30, 1 channel"
    if [ "$(head -c 2 "$tmp/o.pgm")" = "P5" ]; then ok; else bad "conv wrote no PGM"; fi
    expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 2 --save "$tmp/o.png"
    if [ "$(head -c 4 "$tmp/o.png" | tail -c 3)" = "PNG" ]; then ok; else bad "conv wrote no PNG"; fi
    # by default OpenMP goes before OpenCL on a CPU (PoCL)
    if "$pb" list 2>/dev/null | grep -q "openmp" && grep -q "Portable Computing Language" "$tmp/out"; then
        bad "conv chose OpenCL on a CPU over OpenMP: $(cat "$tmp/out")"
    else
        ok
    fi
    # Taps that carry a real image past float's range: an error, and nothing saved.
    printf '1e30 1e30 1e30\n' >"$tmp/big-taps.txt"
    expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 1 --filter "$tmp/big-taps.txt" --save "$tmp/big.pgm" --backend ref
    contains "$tmp/err" "past float's range; nothing saved"
    [ ! -e "$tmp/big.pgm" ] && ok || bad "conv saved an image of Inf"
    expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 2 --sigma 1e-200 --save "$tmp/delta.pgm" --backend ref --quiet
    cmp -s <(tail -c 1200 "$tmp/g.pgm") <(tail -c 1200 "$tmp/delta.pgm") && ok || bad "a vanishing sigma is not the identity filter"
    expect 0 "$pb" conv --image "$tmp/o.png" --radius 2 --filter box --save "$tmp/o2.jpg" --backend ref
    contains "$tmp/out" "40x30, 1 channel"
    # That JPEG with its scan pointed at Huffman tables, then its frame at a quantization
    # table, that it never defines, then a component sampled 0 x 0: refused (stb_image read
    # its uninitialised tables, or freed uninitialised pointers).
    python3 - "$tmp/o2.jpg" "$tmp" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
sos, sof = data.index(b"\xff\xda"), data.index(b"\xff\xc0")
huff, quant = bytearray(data), bytearray(data)
for k in range(data[sos + 4]):
    huff[sos + 6 + 2 * k] = 0x33
for k in range(data[sof + 9]):
    quant[sof + 12 + 3 * k] = 3
open(sys.argv[2] + "/huff.jpg", "wb").write(huff)
open(sys.argv[2] + "/quant.jpg", "wb").write(quant)
frame = bytearray(data)
frame[sof + 11] = 0x00  # the first component sampled 0 x 0
open(sys.argv[2] + "/frame.jpg", "wb").write(frame)
PY
    expect 3 "$pb" conv --image "$tmp/huff.jpg" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt JPEG (a scan decoded with a Huffman table the file has not defined)"
    expect 3 "$pb" conv --image "$tmp/quant.jpg" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt JPEG (a component whose quantization table the file has not defined)"
    expect 3 "$pb" conv --image "$tmp/frame.jpg" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt JPEG (an invalid frame header)"
    # That JPEG with an Exif block saying "turned 90 degrees": read upright, 30x40 (a big-endian
    # TIFF header, as cameras write)
    python3 - "$tmp/o2.jpg" "$tmp/turned.jpg" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
tiff = b"MM" + struct.pack(">HIH", 42, 8, 1) + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + b"\0\0\0\0"
app1 = b"Exif\0\0" + tiff
open(sys.argv[2], "wb").write(data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:])
PY
    expect 0 "$pb" conv --image "$tmp/turned.jpg" --radius 1 --backend ref
    contains "$tmp/out" "parbench conv: 30x40 (turned upright as its Exif orientation says)"
    # A radius past a device's local memory (PoCL's 1 MiB): without --backend the next
    # backend of the default order filters it.
    expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 4096 --save "$tmp/o4096.pgm"
    contains "$tmp/out" "radius 4096"
    # Refused before decoding: a 334-byte BMP declaring 13 x 16,252,935 pixels
    # (24-bit, uncompressed: 650 MB), a truncated PGM, more than --max-pixels;
    # each one line, exit 3 (timeout: a guard against decoding it, not a timing).
    printf 'BM\x4e\x01\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0\x0d\0\0\0\x07\0\xf8\0\x01\0\x18\0' >"$tmp/bomb.bmp"
    head -c 304 /dev/zero >>"$tmp/bomb.bmp"
    if [ "$(wc -c <"$tmp/bomb.bmp")" -eq 334 ]; then ok; else bad "bomb.bmp is not 334 bytes"; fi
    expect 3 timeout 60 "$pb" conv --image "$tmp/bomb.bmp" --radius 3 --save "$tmp/bomb.png"
    contains "$tmp/err" "declares 13x16252935 pixels"
    contains "$tmp/err" "decompression bomb"
    lines "$tmp/err" 1
    if [ -e "$tmp/bomb.png" ]; then bad "a refused conv left its output"; else ok; fi
    head -c 1000 "$tmp/g.pgm" >"$tmp/short.pgm"
    expect 3 "$pb" conv --image "$tmp/short.pgm" --radius 3
    contains "$tmp/err" "need at least 1213 bytes; it has 1000" # 13 of header, 40 x 30 pixels
    expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 3 --max-pixels 1199
    contains "$tmp/err" "--max-pixels raises it"
    lines "$tmp/err" 1
    expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 3 --max-pixels 1200 --quiet
    # The output is checked before decoding: unknown format, too large, not writable.
    expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 3 --save "$tmp/o.gif"
    contains "$tmp/err" "unknown image format '.gif'"
    expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 3 --save "$tmp/o.ppm"  # grey is not a PPM
    contains "$tmp/err" "a PPM holds three channels, the image has 1"
    mkdir "$tmp/dir.png"
    expect 3 timeout 60 "$pb" conv --image "$tmp/bomb.bmp" --radius 3 --save "$tmp/no/dir/o.png" --max-pixels 2G
    contains "$tmp/err" "decompression bomb" # the input's own check comes first
    expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 3 --save "$tmp/dir.png"
    contains "$tmp/err" "cannot write '$tmp/dir.png': Is a directory"
    lines "$tmp/err" 1
    # A write that fails (a full disk) is an error, not "saved".
    if [ -w /dev/full ] && [ -c /dev/full ]; then
        for e in png jpg bmp tga; do
            ln -s /dev/full "$tmp/full.$e"
            expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 2 --save "$tmp/full.$e" --quiet
            contains "$tmp/err" "cannot write '$tmp/full.$e': No space left on device"
            lines "$tmp/err" 1
        done
        [ -c /dev/full ] && ok || bad "/dev/full is no longer a device"
    fi
fi
head -c $((64 * 48 * 4)) /dev/urandom >"$tmp/r.f32"
expect 0 "$pb" conv --image "$tmp/r.f32" --width 64 --height 48 --radius 5 --save "$tmp/o.f32" --backend ref --quiet
if [ "$(wc -c <"$tmp/o.f32")" -eq $((64 * 48 * 4)) ]; then ok; else bad "raw output has the wrong size"; fi
{ printf '\000\000\300\177'; head -c $((64 * 48 * 4 - 4)) /dev/zero; } >"$tmp/nan.f32" # a NaN, then zeros
expect 0 "$pb" conv --image "$tmp/nan.f32" --width 64 --height 48 --radius 2 --save "$tmp/o.f32" --backend ref --quiet
contains "$tmp/err" "the input holds non-finite values (the first, value 0, is nan)"
expect 3 "$pb" conv --image "$tmp/nope.png" --radius 3
[ "$have_stb" -eq 1 ] && contains "$tmp/err" "cannot read image"
printf 'not an image' >"$tmp/bad.png"
expect 3 "$pb" conv --image "$tmp/bad.png" --radius 3
lines "$tmp/err" 1
if [ "$have_stb" -eq 1 ]; then
    contains "$tmp/err" "not an image file parbench reads"
    # A binary PGM whose pixels end early: stb_image would hand out the
    # missing ones uninitialised; the header counts toward what it needs.
    printf 'P5\n# short\n3 2\n255\nab' >"$tmp/cut.pgm"
    expect 3 "$pb" conv --image "$tmp/cut.pgm" --radius 1 --save "$tmp/cut-out.pgm" --backend ref
    contains "$tmp/err" "a truncated file"
    printf 'P5\n3 2\n255\nabcdef' >"$tmp/whole.pgm"
    expect 0 "$pb" conv --image "$tmp/whole.pgm" --radius 1 --save "$tmp/whole-out.pgm" --backend ref --quiet
    # two-byte samples are big-endian: 0xFF00 of 65535 is 254 of 255, not 0
    { printf 'P5\n3 2\n65535\n'; printf '\377\000%.0s' 1 2 3 4 5 6; } >"$tmp/w16.pgm"
    expect 0 "$pb" conv --image "$tmp/w16.pgm" --radius 1 --sigma 1e-200 --save "$tmp/w16-out.pgm" --backend ref --quiet
    [ "$(tail -c 6 "$tmp/w16-out.pgm" | od -An -tu1 | tr -s ' ')" = " 254 254 254 254 254 254" ] && ok ||
        bad "a 16-bit PGM's samples read in the wrong byte order"
    # maxval 0 (stb_image would read every pixel as white) and past 65535: refused, named
    for maxval in 0 70000; do
        printf 'P5\n# m\n3 2\n%s\nabcdef' $maxval >"$tmp/maxval.pgm"
        expect 3 "$pb" conv --image "$tmp/maxval.pgm" --radius 1 --backend ref
        contains "$tmp/err" "a PGM/PPM whose maxval is $maxval (1 to 65535)"
    done
    # numbers of 10 digits and more: read whole, not cut into the next field
    for case in '3 2\n2000000000|a PGM/PPM whose maxval is above 65535' \
        '2000000000 2000000000\n255|declares 2000000000x2000000000 pixels, which need at least' \
        '70000000000000000000 2\n255|declares a side of 2^31 pixels or more'; do
        printf "P5\\n${case%%|*}\\nabcdef" >"$tmp/huge.pgm"
        expect 3 "$pb" conv --image "$tmp/huge.pgm" --radius 1 --backend ref
        contains "$tmp/err" "${case#*|}"
    done
    # a header of long comments: read whole (a 16-bit file's samples in order, a short file
    # refused), and past 4096 bytes refused, not handed on with its maxval unread
    { printf 'P5\n# %0300d\n3 2\n65535\n' 0; printf '\377\000%.0s' 1 2 3 4 5 6; } >"$tmp/w16c.pgm"
    expect 0 "$pb" conv --image "$tmp/w16c.pgm" --radius 1 --sigma 1e-200 --save "$tmp/w16c-out.pgm" --backend ref --quiet
    [ "$(tail -c 6 "$tmp/w16c-out.pgm" | od -An -tu1 | tr -s ' ')" = " 254 254 254 254 254 254" ] && ok ||
        bad "a 16-bit PGM after 300 bytes of comments read in the wrong byte order"
    printf 'P5\n# %0300d\n3 2\n255\nab' 0 >"$tmp/cutc.pgm"
    expect 3 "$pb" conv --image "$tmp/cutc.pgm" --radius 1 --backend ref
    contains "$tmp/err" "a truncated file"
    printf 'P5\n# %05000d\n3 2\n255\nabcdef' 0 >"$tmp/longc.pgm"
    expect 3 "$pb" conv --image "$tmp/longc.pgm" --radius 1 --backend ref
    contains "$tmp/err" "a PGM/PPM header (comments) longer than 4096 bytes"
    # maxval under 255 scaled to 0..255 as 16-bit ones are: 15 of 15 is 255
    printf 'P5\n3 2\n15\n\017\017\017\017\017\017' >"$tmp/m15.pgm"
    expect 0 "$pb" conv --image "$tmp/m15.pgm" --radius 1 --sigma 1e-200 --save "$tmp/m15-out.pgm" --backend ref --quiet
    [ "$(tail -c 6 "$tmp/m15-out.pgm" | od -An -tu1 | tr -s ' ')" = " 255 255 255 255 255 255" ] && ok ||
        bad "a PGM of maxval 15 not scaled to 0..255"
    # a BMP stored top-down (negative height), 2x2 of 24 bits: read as 2x2, rows in order
    { printf 'BM\106\0\0\0\0\0\0\0\066\0\0\0\050\0\0\0\002\0\0\0\376\377\377\377\001\0\030\0'
      printf '\0\0\0\0\020\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
      printf '\001\001\001\002\002\002\0\0\003\003\003\004\004\004\0\0'; } >"$tmp/topdown.bmp"
    expect 0 "$pb" conv --image "$tmp/topdown.bmp" --radius 1 --sigma 1e-200 --save "$tmp/topdown.ppm" --backend ref --quiet
    [ "$(tail -c 12 "$tmp/topdown.ppm" | od -An -tu1 | tr -s ' ')" = " 1 1 1 2 2 2 3 3 3 4 4 4" ] && ok ||
        bad "a top-down BMP not read as stored"
    # grey + alpha saved as JPEG: said, once, and saved (without its alpha)
    printf '\0\0\003\0\0\0\0\0\0\0\0\0\002\0\002\0\020\010\001\002\003\004\005\006\007\010' >"$tmp/ga.tga"
    expect 0 "$pb" conv --image "$tmp/ga.tga" --radius 1 --save "$tmp/ga.jpg" --backend ref
    contains "$tmp/err" "this .jpg file holds no alpha: the image's alpha channel is filtered but not saved"
    [ -s "$tmp/ga.jpg" ] && ok || bad "grey + alpha not saved as JPEG"
    # a run-length coded TGA (3x2 grey, one packet of 6): whole, read; cut before its packet's value,
    # refused (stb_image would read the missing pixels as black)
    printf '\0\0\013\0\0\0\0\0\0\0\0\0\003\0\002\0\010\0\205\177' >"$tmp/rle.tga"
    expect 0 "$pb" conv --image "$tmp/rle.tga" --radius 1 --sigma 1e-200 --save "$tmp/rle.pgm" --backend ref --quiet
    [ "$(tail -c 6 "$tmp/rle.pgm" | od -An -tu1 | tr -s ' ')" = " 127 127 127 127 127 127" ] && ok ||
        bad "a run-length coded TGA not read"
    # an 8-bit BMP of 2x1 whose second pixel is colour 1 of a palette of one: refused (stb_image
    # gave it the colour its stack held); colour 0 there, read
    bmp_palette() {
        printf 'BM\076\0\0\0\0\0\0\0\072\0\0\0\050\0\0\0\002\0\0\0\001\0\0\0\001\0\010\0'
        printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\001\0\0\0\0\0\0\0\020\040\060\0\0'"$1"'\0\0'
    }
    bmp_palette '\001' >"$tmp/pal1.bmp"
    expect 3 "$pb" conv --image "$tmp/pal1.bmp" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt BMP (a pixel of colour 1, past its palette of 1)"
    bmp_palette '\0' >"$tmp/pal0.bmp"
    expect 0 "$pb" conv --image "$tmp/pal0.bmp" --radius 1 --sigma 1e-200 --save "$tmp/pal0.ppm" --backend ref --quiet
    [ "$(tail -c 6 "$tmp/pal0.ppm" | od -An -tu1 | tr -s ' ')" = " 48 32 16 48 32 16" ] && ok ||
        bad "a palette BMP not read"
    # a 3x2 PNG whose deflate stream holds an invalid distance code: refused (stb_image copied
    # pixels it never wrote)
    printf '\211\120\116\107\015\012\032\012\000\000\000\015\111\110\104\122\000\000\000\003\000\000\000\002\010\002\000\000\000\022\026\361\115\000\000\000\034\111\104\101\124\170\136\143\340\065\010\255\232\176\033\343\045\104\242\103\061\237\355\157\004\315\242\033\000\113\021\007\344\137\153\306\374\000\000\000\000\111\105\116\104\256\102\140\202' >"$tmp/baddist.png"
    expect 3 "$pb" conv --image "$tmp/baddist.png" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt PNG (its compressed pixels: invalid distance code)"
    # a 2x1 PNG whose deflate stream is cut short: refused (stb_image decoded zeros past its end
    # until its output reached 2 GiB)
    printf '\211\120\116\107\015\012\032\012\000\000\000\015\111\110\104\122\000\000\000\002\000\000\000\001\010\004\000\000\000\000\001\003\174\174\000\000\015\111\104\101\124\170\136\044\000\000' >"$tmp/cutstream.png"
    expect 3 "$pb" conv --image "$tmp/cutstream.png" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt PNG (its compressed pixels: they end before their stream does)"
    # a PGM whose maxval is not a number: refused (stb_image read it as 0 and went on)
    printf 'P5\n3 2\nx\001\002\003\004\005\006' >"$tmp/nomax.pgm"
    expect 3 "$pb" conv --image "$tmp/nomax.pgm" --radius 1 --backend ref
    contains "$tmp/err" "a PGM/PPM whose header is not width, height and maxval"
    # a PGM of maxval 252 holding a 255: refused (scaled it would pass 255)
    printf 'P5\n3 1\n252\n\001\002\377' >"$tmp/over.pgm"
    expect 3 "$pb" conv --image "$tmp/over.pgm" --radius 1 --backend ref
    contains "$tmp/err" "a PGM/PPM with a sample of 255, above its maxval 252"
    # a run-length coded Radiance HDR cut inside its first scanline: refused (stb_image looped
    # forever on it; timeout: a guard against the hang, not a timing)
    printf '#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2 +X 8\n\002\002\000\010\210\100' >"$tmp/cut.hdr"
    expect 3 timeout 60 "$pb" conv --image "$tmp/cut.hdr" --radius 1 --backend ref
    contains "$tmp/err" "a Radiance HDR file whose pixels end before its 8 x 2 (a truncated file)"
    head -c 19 "$tmp/rle.tga" >"$tmp/rle-cut.tga"
    expect 3 "$pb" conv --image "$tmp/rle-cut.tga" --radius 1 --backend ref
    contains "$tmp/err" "a run-length coded TGA whose packets end before its 6 pixels"
    # what decoding and filtering need, weighed before a pixel is decoded (a pretend small host)
    expect 3 env PB_TEST_MEM_AVAILABLE=1k "$pb" conv --image "$tmp/g.pgm" --radius 1 --backend ref
    contains "$tmp/err" "conv: a 40x30 image of 1 channel(s) needs 10.5 KiB of host memory to decode and filter it"
    printf 'P2\n3 2\n255\n1 2 3\n4 5 6\n' >"$tmp/plain.pgm"
    expect 3 "$pb" conv --image "$tmp/plain.pgm" --radius 1 --backend ref
    contains "$tmp/err" "only binary ones (P5, P6) are read"
    printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10\x08\0\0\0\0' >"$tmp/cut.png"
    expect 3 "$pb" conv --image "$tmp/cut.png" --radius 1 --backend ref
    contains "$tmp/err" "a corrupt or truncated PNG file"
    # A valid PNG too large for stb_image (20000 x 20000 RGB: more than 2^30
    # bytes of samples, under --max-pixels) is named so, not called corrupt;
    # its header alone decides (stb_image stops there), the rest is padding.
    png_ihdr() { printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR%b\x08\x02\0\0\0\0\0\0\0' "$1"; }
    { png_ihdr '\0\0\x4e\x20\0\0\x4e\x20'; head -c 60000 /dev/zero; } >"$tmp/large.png"
    expect 3 "$pb" conv --image "$tmp/large.png" --radius 1 --backend ref
    contains "$tmp/err" "has 20000x20000 pixels of 3 channels, more than stb_image decodes"
    lines "$tmp/err" 1
    # one declaring 100000 x 100000: over --max-pixels, said before anything else
    { png_ihdr '\0\x01\x86\xa0\0\x01\x86\xa0'; head -c 100 /dev/zero; } >"$tmp/huge.png"
    expect 3 "$pb" conv --image "$tmp/huge.png" --radius 1 --backend ref
    contains "$tmp/err" "--max-pixels raises it"
    # a directory is not an empty file
    expect 3 "$pb" conv --image "$tmp/dir.png" --radius 1 --backend ref
    contains "$tmp/err" "cannot read image '$tmp/dir.png': Is a directory"
fi
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 0
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius -4
expect 2 "$pb" conv --image "$tmp/g.pgm"
expect 2 "$pb" conv --image "$tmp/r.f32" --width 100000000 --height 100000000 --radius 3
contains "$tmp/err" "image sides"
expect 2 "$pb" conv --image "$tmp/g.pgm" --width 64 --radius 3 # a PGM carries its size
contains "$tmp/err" "--width and --height apply to raw float32 images only"
expect 3 "$pb" conv --image "$tmp/r.f32" --width 64 --height 49 --radius 3
contains "$tmp/err" "needs"
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 3 --bogus
expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 3 --save "$tmp/no/dir/o.pgm"
[ "$have_stb" -eq 1 ] && contains "$tmp/err" "cannot write '$tmp/no/dir/o.pgm': No such file or directory"
# An output that cannot be written or cannot hold the image is refused
# before the filter runs: one line, no summary, exit 3 / 2.
expect 3 timeout 60 "$pb" conv --image "$tmp/r.f32" --width 64 --height 48 --radius 5 --save "$tmp/no/dir/o.f32"
contains "$tmp/err" "cannot write '$tmp/no/dir/o.f32'"
lines "$tmp/err" 1
lines "$tmp/out" 0
# A sparse 7 GB raw input: refused on its output before a byte of it is read.
truncate -s $((70000 * 25000 * 4)) "$tmp/huge.f32"
if [ "$have_stb" -eq 1 ]; then # without stb a PNG output is refused as such (exit 3)
    expect 2 timeout 60 "$pb" conv --image "$tmp/huge.f32" --width 70000 --height 25000 --radius 1 --save "$tmp/huge.png" --max-pixels 2G
    contains "$tmp/err" "70000x25000 is too large for an 8-bit image file"
    lines "$tmp/err" 1
fi
expect 3 timeout 60 "$pb" conv --image "$tmp/huge.f32" --width 70000 --height 25000 --radius 1 --save "$tmp/no/dir/o.f32" --max-pixels 2G
contains "$tmp/err" "cannot write '$tmp/no/dir/o.f32'"
lines "$tmp/err" 1
expect 3 "$pb" conv --image "$tmp/huge.f32" --width 70000 --height 25000 --radius 1 --save "$tmp/o.f32"
contains "$tmp/err" "1750000000 pixels, more than the limit of 1073741824 (--max-pixels raises it)"
rm -f "$tmp/huge.f32"
expect 3 "$pb" conv --image "$tmp/r.f32" --width 64 --height 48 --radius 5 --max-pixels 3000
contains "$tmp/err" "--max-pixels"

# p2p: one row per ordered pair of GPUs (src, dst columns). CI has fewer than
# two GPUs: every row is SKIP with the reason, and the run exits 0. Sizes that
# are no multiple of 16 take the copy kernel's byte tail (on a GPU machine).
expect 0 "$pb" run p2p --help
contains "$tmp/out" "pivot of"
contains "$tmp/out" "latency matrix"
expect 2 "$pb" run p2p --src 0 --dst 0
contains "$tmp/err" "p2p copies between two GPUs"
expect 2 "$pb" run p2p --src 1,1 --dst 1
expect 2 "$pb" run p2p --src -1
expect 2 "$pb" run p2p --copies 0
contains "$tmp/err" "--copies must be between 1 and 256"
expect 2 "$pb" run p2p --size 0
if "$pb" list | grep -q "cuda/ce "; then
    gpus=$("$pb" devices --backend cuda 2>/dev/null | grep -c "^cuda device")
    expect 0 "$pb" run p2p --size 4,17,1000003 --reps 2 --format csv --quiet
    contains "$tmp/out" ",src,dst,size,copies,"
    contains "$tmp/out" ",latency_us,peer"
    if [ "$gpus" -lt 2 ]; then
        lines "$tmp/out" $((1 + 3 * 6)) # one pair (0, 1), three sizes, six variants
        if grep -v '^date' "$tmp/out" | grep -qv ',SKIP,'; then bad "p2p with $gpus GPUs: a row is not SKIP"; else ok; fi
        [ "$gpus" -eq 1 ] && contains "$tmp/out" "p2p needs two GPUs: this machine has 1"
        expect 0 "$pb" run p2p --src 0 --dst 1,7 --size 4 --reps 1 --variant ce --format csv --quiet
        lines "$tmp/out" 3
    else
        if grep -q ',FAILED,\|,ERROR,' "$tmp/out"; then bad "p2p on $gpus GPUs: a row FAILED or ERROR"; else ok; fi
    fi
else
    expect 0 "$pb" run p2p --reps 1 --quiet # no backend has p2p variants: nothing to run
fi

# A new user's slips: every command has --help; a variant as list prints an
# anchor ("openblas*"); an option of one value says N, not LIST; a matrix named
# twice runs once; blocks:ROWS has ROWS rows; a one-tap filter file says so;
# conv-stream rows of two kernels named apart.
expect 0 "$pb" version --help
contains "$tmp/out" "usage: parbench version"
expect 2 "$pb" run gemm --n 7 --n 9 --backend ref
contains "$tmp/err" "--n is given twice ('7', then '9'): one list takes several values, --n 7,9"
expect 0 "$pb" run spmv --help
contains "$tmp/out" "--offsets N "
expect 0 "$pb" run gemm --n 8 --variant 'ref/ikj*' --reps 1 --warmup 0 --quiet --format csv
contains "$tmp/out" ",ref,ikj,"
expect 0 "$pb" run spmv --matrix lap2d:10,blocks:7:3,lap2d:10 --backend ref --variant csr --reps 1 --warmup 0 --quiet
lines_with() { grep -c -- "$2" "$1" || true; }
[ "$(lines_with "$tmp/out" '^ref .* lap2d:10 ')" -eq 1 ] && ok || bad "lap2d:10 named twice ran twice"
contains "$tmp/out" "rows=7 "
printf '1\n' >"$tmp/one-tap.txt"
expect 3 "$pb" run conv --filter "$tmp/one-tap.txt" --width 33 --height 7 --backend ref --reps 1 --warmup 0 --quiet
contains "$tmp/err" "has 1 tap; a filter needs at least 3"
expect 0 "$pb" run conv-stream --width 64 --height 64 --radius 3 --kernel rowcol,ring --backend ref,openmp --reps 1 \
    --warmup 0 --quiet
contains "$tmp/out" "kernel rowcol"
contains "$tmp/out" "kernel ring"

# OpenCL development hooks: PARBENCH_CL_DUMP writes the built programs,
# PARBENCH_CL_OPTIONS reaches the compiler (a bad option is an ERROR row that names it).
if "$pb" list | grep -q '^  opencl .* available$'; then
    mkdir "$tmp/cldump"
    expect 0 env PARBENCH_CL_DUMP="$tmp/cldump" "$pb" run reduce --backend opencl --n 1000 --reps 1 --quiet
    if [ -s "$tmp/cldump/reduce-float.bin" ]; then ok; else bad "PARBENCH_CL_DUMP wrote no reduce-float.bin"; fi
    expect 3 env PARBENCH_CL_OPTIONS=-cl-no-such-option "$pb" run reduce --backend opencl --n 1000 --reps 1 --quiet
    contains "$tmp/out" "-cl-no-such-option"
    # PoCL is found by --device pocl (its vendor's name), wherever it is in the order.
    if "$pb" devices --backend opencl --format json | grep -q '"The pocl project"'; then
        expect 0 "$pb" run gemm --n 16 --variant naive --backend opencl --device pocl --reps 1 --quiet --format csv
        contains "$tmp/out" "Portable Computing Language"
        expect 0 "$pb" run gemm --n 8 --reps 1 --backend ref --device pocl --format csv # ref has none: SKIP
        contains "$tmp/out" "SKIP,no ref device matches 'pocl'"
    fi
    # Strips of one kernel at several grid widths on several queues made PoCL
    # (3.1) abort about 1 run in 7; its kernels now wait for each other.
    # parbench conv takes --device NAME as run does.
    printf '\x00\x00\x80\x3f%.0s' $(seq 1 6963) >"$tmp/ones.f32" # 33 x 211 floats of 1
    conv_ones=("$pb" conv --image "$tmp/ones.f32" --width 33 --height 211 --radius 129 --strip 3 --device pocl
        --save "$tmp/ones-out.f32")
    if "$pb" devices --backend opencl --format json | grep -q '"The pocl project"'; then
        expect 0 "${conv_ones[@]}"
        contains "$tmp/out" "Portable Computing Language"
        aborts=0
        for _ in $(seq 1 20); do "${conv_ones[@]}" --quiet 2>/dev/null || aborts=$((aborts + 1)); done
        if [ "$aborts" -eq 0 ]; then ok; else bad "conv through PoCL's queues failed $aborts of 20 runs"; fi
    fi
    expect 2 "${conv_ones[@]/pocl/no-such-device}"
    contains "$tmp/err" "no usable backend here has a device matching 'no-such-device'"
    expect 2 "${conv_ones[@]/pocl/97}"
    contains "$tmp/err" "no usable backend here has a device 97"
else
    skip opencl "no usable opencl backend: $("$pb" list | grep '^  opencl ' || echo 'not in this build')"
fi

echo "$passed passed, $failed failed, $skipped skipped${skip_topics:+ ($skip_topics)}"
[ "$failed" -eq 0 ] || exit 1
if [ "$skipped" -gt 0 ]; then
    echo "SKIPPED: some checks did not run here; PB_REQUIRE=<topic> makes them required"
    exit 77
fi
