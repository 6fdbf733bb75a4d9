#!/usr/bin/env bash
# Builds and runs the test suite twice: a warnings-as-errors release build with
# every backend whose toolkit is here (CUDA code is compiled and linked even
# without a GPU; its tests then skip), then the CPU paths under
# AddressSanitizer + UndefinedBehaviorSanitizer.
# Needs the packages scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="$PATH:/usr/local/cuda/bin"
fi
cuda=OFF
command -v nvcc >/dev/null && cuda=ON

cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release -DPB_WERROR=ON -DPB_CUDA=$cuda
cmake --build build-test -j "$jobs"
ctest --test-dir build-test --output-on-failure -j "$jobs"

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPB_WERROR=ON -DPB_SANITIZE=ON -DPB_CUDA=OFF
cmake --build build-asan -j "$jobs"
# use_sigaltstack=0: with PoCL, ASan fails to unmap a thread's signal stack at
# its exit (an ASan CHECK, not a finding; most likely PoCL's LLVM installs a
# stack of its own: google/sanitizers#1152, llvm-project#179000).
ASAN_OPTIONS=detect_leaks=1:use_sigaltstack=0 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS=suppressions="$PWD/tests/lsan.supp" \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
