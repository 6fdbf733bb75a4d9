#!/usr/bin/env bash
# Fuzzes one reader: builds the clang libFuzzer targets (build-fuzz/), runs
# fuzz_NAME for RUNS inputs (default 1000000) from its committed corpus, then
# merges what added coverage back into tests/fuzz/corpus/NAME. One process;
# the log is build-fuzz/fuzz_NAME.log, crashes land in $build/crash-*.
# Prints the final stats for RUNS.md. SANITIZER=memory builds and runs under
# MemorySanitizer instead (build-fuzz-msan/; image and mmio only: RUNS.md).
#   [SANITIZER=memory] scripts/fuzz.sh image [RUNS] [MAX_LEN]
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/fuzz.sh NAME [RUNS] [MAX_LEN]}
runs=${2:-1000000}
max_len=${3:-4096}
sanitizer=${SANITIZER:-address}
build=build-fuzz
[ "$sanitizer" = address ] || build=build-fuzz-msan
if [ ! -x $build/fuzz_$name ]; then
    CC=clang cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPB_FUZZ=ON -DPB_FUZZ_SANITIZER="$sanitizer" \
        -DPB_CUDA=OFF -DPB_OPENCL=OFF -DPB_MPI=OFF -DPB_OPENMP=OFF >/dev/null
    cmake --build $build --target fuzz_$name
fi
corpus=tests/fuzz/corpus/$name
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new" "$work/tmp"
dict=()
case $name in results | ceilings) dict=(-dict=../tests/fuzz/json.dict) ;; esac
start=$(date +%s)
(cd $build && TMPDIR="$work/tmp" ./fuzz_$name -runs="$runs" -max_len="$max_len" -timeout=10 \
    -rss_limit_mb=6000 -print_final_stats=1 "${dict[@]}" "$work/new" "../$corpus") >$build/fuzz_$name.log 2>&1 || true
grep -E '^#[0-9]+\s+(INITED|DONE)|ERROR|Done [0-9]+ runs|stat::number_of_executed_units' $build/fuzz_$name.log
echo "wall: $(( $(date +%s) - start )) s, $(date -u +%F)"
grep -q 'Done [0-9]* runs' $build/fuzz_$name.log ||
    { echo "fuzz_$name stopped early: $build/fuzz_$name.log, $build/crash-*"; exit 1; }
TMPDIR="$work/tmp" $build/fuzz_$name -merge=1 -max_len="$max_len" "$corpus" "$work/new" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true
