#!/usr/bin/env bash
# CLI behaviour: help, exit codes, outputs kept on errors and interrupts.
# usage: cli_test.sh PATH/TO/parbench
set -u
pb=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect CODE CMD...: run CMD, check its exit code, keep stdout/stderr.
expect() {
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
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
expect 2 "$pb" run gemm --precision half
expect 2 "$pb" run gemm --threads 0
expect 2 "$pb" run gemm --out "$tmp/results.dat"
expect 2 "$pb" run nosuch
expect 2 "$pb" run gemm --n

# Verified rows, every output format.
expect 0 "$pb" run gemm --n 17 --m 33 --k 5 --reps 2 --quiet --backend ref,openmp --out "$tmp/r.csv"
contains "$tmp/out" "ref      ikj"
lines "$tmp/r.csv" 6 # header + 5 variants
contains "$tmp/r.csv" ",33,17,5,33x17x5,OK,"
expect 0 "$pb" run gemm --n 8 --reps 1 --backend ref --format json --out "$tmp/r.json"
contains "$tmp/out" '"results"'
contains "$tmp/r.json" '"samples"'
expect 0 "$pb" run gemm --n 8,9 --reps 1 --variant ref/ikj --format csv
lines "$tmp/out" 3
# --append adds rows under the existing header.
expect 0 "$pb" run gemm --n 8 --reps 1 --variant ref/ikj --quiet --out "$tmp/r.csv" --append
lines "$tmp/r.csv" 7
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

# --device by name: backends without such a device are SKIP.
expect 0 "$pb" run gemm --n 8 --reps 1 --backend ref --device no-such-device --format csv
contains "$tmp/out" "SKIP,no ref device matches 'no-such-device'"

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

# A wrong result is FAILED with no speed, exit 1.
expect 1 "$pb" run gemm --n 16 --reps 1 --inject-fault --format csv --out "$tmp/f.csv"
contains "$tmp/out" "FAILED"
if grep -q ",OK," "$tmp/f.csv"; then bad "an injected fault passed"; else ok; fi

# Unwritable output: exit 3 before measuring anything.
expect 3 "$pb" run gemm --n 16 --out "$tmp/no/such/dir/r.csv"
contains "$tmp/err" "cannot write"

# A problem too big for memory: ERROR row, exit 3, the rows before it kept.
expect 3 "$pb" run gemm --n 16,200000 --variant ref/ikj --reps 1 --quiet --out "$tmp/big.csv"
contains "$tmp/big.csv" "16x16x16,OK"
contains "$tmp/big.csv" "ERROR"
contains "$tmp/big.csv" "cannot allocate"

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

# conv: benchmarks with text parameters, the strip path under a memory cap,
# and the image command with its bad inputs.
expect 0 "$pb" run conv --width 45 --height 31 --radius 1,9 --border zero,clamp --filter gauss,box --reps 2 --quiet --format csv --out "$tmp/conv.csv"
contains "$tmp/conv.csv" ",zero,gauss,"
contains "$tmp/conv.csv" ",clamp,box,"
contains "$tmp/conv.csv" "trimmed_mean_s"
contains "$tmp/conv.csv" "d2d_bound_s"
if grep -q "FAILED" "$tmp/conv.csv"; then bad "a conv row failed"; else ok; fi
expect 0 "$pb" run conv-stream --width 200 --height 150 --radius 4 --device-mem 64K --streams 2 --backend ref,openmp,opencl --reps 2 --quiet --format csv --out "$tmp/cs.csv"
contains "$tmp/cs.csv" "efficiency"
contains "$tmp/cs.csv" ",streams,"
if grep -q "FAILED\|ERROR" "$tmp/cs.csv"; then bad "a conv-stream row failed"; else ok; fi
expect 1 "$pb" run conv --width 40 --radius 3 --variant ref/rowcol --reps 1 --inject-fault --quiet
expect 2 "$pb" run conv --width 40 --radius 0
contains "$tmp/err" "radius must be between"
expect 2 "$pb" run conv --width 40 --border wrap
contains "$tmp/err" "unknown border"
expect 3 "$pb" run conv --width 40 --radius 2 --filter "$tmp/no-taps.txt" --quiet
expect 3 "$pb" run conv-stream --width 1000 --radius 40 --device-mem 4K --variant ref/strips --quiet
contains "$tmp/out" "too small"
printf 'P5\n40 30\n255\n' >"$tmp/g.pgm"
head -c 1200 /dev/urandom >>"$tmp/g.pgm"
expect 0 "$pb" conv --help
contains "$tmp/out" "usage: parbench conv"
expect 0 "$pb" conv --image "$tmp/g.pgm" --radius 3 --sigma 1.2 --save "$tmp/o.pgm" --backend openmp --device-mem 12K
contains "$tmp/out" "40x30, 1 channel"
if [ "$(head -c 2 "$tmp/o.pgm")" = "P5" ]; then ok; else bad "conv wrote no PGM"; fi
if "$pb" conv --help | grep -q png && "$pb" conv --image "$tmp/g.pgm" --radius 2 --save "$tmp/o.png" --quiet 2>/dev/null; then
    expect 0 "$pb" conv --image "$tmp/o.png" --radius 2 --filter box --save "$tmp/o2.jpg" --backend ref
fi
head -c $((64 * 48 * 4)) /dev/urandom >"$tmp/r.f32"
expect 0 "$pb" conv --image "$tmp/r.f32" --width 64 --height 48 --radius 5 --save "$tmp/o.f32" --backend ref --quiet
if [ "$(wc -c <"$tmp/o.f32")" -eq $((64 * 48 * 4)) ]; then ok; else bad "raw output has the wrong size"; fi
expect 3 "$pb" conv --image "$tmp/nope.png" --radius 3
contains "$tmp/err" "cannot read image"
printf 'not an image' >"$tmp/bad.png"
expect 3 "$pb" conv --image "$tmp/bad.png" --radius 3
lines "$tmp/err" 1
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 0
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius -4
expect 2 "$pb" conv --image "$tmp/g.pgm"
expect 2 "$pb" conv --image "$tmp/r.f32" --width 100000000 --height 100000000 --radius 3
contains "$tmp/err" "image sides"
expect 3 "$pb" conv --image "$tmp/r.f32" --width 64 --height 49 --radius 3
contains "$tmp/err" "needs"
expect 2 "$pb" conv --image "$tmp/g.pgm" --radius 3 --bogus
expect 3 "$pb" conv --image "$tmp/g.pgm" --radius 3 --save "$tmp/no/dir/o.pgm"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
