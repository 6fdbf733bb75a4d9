#!/usr/bin/env bash
# Installs what parbench needs (Debian/Ubuntu, as root or with sudo) and builds it in build/.
# usage: scripts/setup.sh [--no-install] [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# What the build needs, then what it uses where present (each backend and
# anchor is built when found): a distribution without one of the latter
# (chromium-headless-shell is Debian's, librsb is not everywhere) still builds.
required=(build-essential cmake ninja-build pkg-config git file libcjson-dev libcmocka-dev zlib1g-dev)
optional=(libopenblas-dev librsb-dev libstb-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
          openmpi-bin libopenmpi-dev chromium-headless-shell)

if [ "${1:-}" = "--no-install" ]; then
    shift
else
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${required[@]}" >/dev/null
    if ! $sudo apt-get install -y -qq "${optional[@]}" >/dev/null 2>&1; then
        for p in "${optional[@]}"; do
            $sudo apt-get install -y -qq "$p" >/dev/null 2>&1 ||
                echo "setup: optional package $p not installed; parbench builds without what it brings" >&2
        done
    fi
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build
