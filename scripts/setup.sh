#!/usr/bin/env bash
# Installs what parbench needs (Debian/Ubuntu, as root or with sudo) and builds it in build/.
# usage: scripts/setup.sh [--no-install] [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git file
          libcjson-dev libcmocka-dev libopenblas-dev librsb-dev zlib1g-dev libstb-dev
          ocl-icd-opencl-dev opencl-headers pocl-opencl-icd openmpi-bin libopenmpi-dev
          chromium-headless-shell)

if [ "${1:-}" = "--no-install" ]; then
    shift
else
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${packages[@]}" >/dev/null
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build
