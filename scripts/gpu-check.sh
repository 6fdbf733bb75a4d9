#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build for the GPU present, run the test suite
# with CUDA enabled, run the CUDA variants under compute-sanitizer (memcheck and
# racecheck), then the benchmarks. Results and logs go to $OUT (default
# bench/results/<date>-<gpu>/).
#
# usage: scripts/gpu-check.sh [quick|full]   (quick: tests and sanitizers only)
# Missing cJSON/cmocka development files are taken from .deps/*.deb when present
# (apt-get download libcjson1 libcjson-dev libcmocka0 libcmocka-dev).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-full}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-$gpu}
mkdir -p "$out"
log="$out/gpu-check.log"
status=0
step() { echo "== $*" | tee -a "$log"; }
run() { # run CMD...: log it, remember a failure, go on
    "$@" >>"$log" 2>&1 || { echo "FAILED ($?): $*" | tee -a "$log"; status=1; }
}

if ! pkg-config --exists libcjson cmocka 2>/dev/null && ls .deps/*.deb >/dev/null 2>&1; then
    for f in .deps/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi

arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
step "build for sm_$arch"
run cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPB_CUDA=ON -DPB_CUDA_ARCHS="$arch" -DPB_WERROR=ON
run cmake --build build-gpu -j "$(nproc)"
pb=build-gpu/parbench
[ -x "$pb" ] || { echo "build failed; see $log"; tail -30 "$log"; exit 1; }

step "devices"
$pb devices | tee -a "$log"
$pb devices --format json >"$out/devices.json"

step "tests"
run ctest --test-dir build-gpu --output-on-failure -j 4

step "compute-sanitizer on every CUDA gemm variant (awkward shapes)"
for tool in memcheck racecheck; do
    run compute-sanitizer --tool "$tool" --error-exitcode 9 \
        $pb run gemm --backend cuda --m 33,1 --n 17,130 --k 5,67 --precision float,double --reps 1 --warmup 0 --quiet
done
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run bandwidth --backend cuda --size 4K,1M --buffers 1,4 --reps 1 --warmup 0 --quiet
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run overlap --backend cuda --n 67 --lm 3 --bs 8,0 --reps 1 --warmup 0 --quiet
[ "$mode" = quick ] && { echo "status $status"; exit $status; }

step "benchmarks (CUDA and its OpenCL twins on the NVIDIA platform)"
twins="--backend cuda,opencl --device nvidia"
run $pb run bandwidth $twins --size 1K:1G:x4 --reps 10 --quiet --out "$out/bandwidth.csv"
run $pb run bandwidth --backend cuda --size 256M --buffers 1,16,256,4096 --reps 10 --quiet --out "$out/bandwidth-buffers.csv"
run $pb run gemm $twins --n 1024,4096,8192 --precision float,double --reps 10 --quiet --out "$out/gemm.csv"
run $pb run overlap $twins --n 864,1728,4096 --lm 5,10 --bs 16,0 --reps 5 --quiet --out "$out/overlap.csv"
run $pb run overlap --backend cuda --n 8192 --lm 5,10 --bs 0,16 --reps 3 --quiet --out "$out/overlap.csv" --append
python3 scripts/twins.py "$out"/bandwidth.csv "$out"/gemm.csv "$out"/overlap.csv >"$out/twins.md" 2>>"$log"
step "conv (study 003): sanitizer, in-core radii, strips with and without streams"
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run conv --backend cuda --width 33,300 --height 17,70 --radius 1,8,17,128 --border zero,clamp --precision float,double --reps 1 --warmup 0 --quiet
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run conv-stream --backend cuda --width 300 --height 211 --radius 5 --device-mem 256K --reps 1 --warmup 0 --quiet
run $pb run conv $twins --width 8192 --radius 2,4,8,16,32,64,80 --reps 12 --quiet --out "$out/conv.csv"
run $pb run conv-stream --backend cuda --width 16384 --radius 32 --streams 3 --reps 12 --quiet --out "$out/conv-stream.csv"
tail -n 60 "$log"
echo "status $status"
exit $status
