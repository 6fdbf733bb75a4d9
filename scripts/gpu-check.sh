#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build for the GPU present, run the test suite
# with CUDA enabled, run the CUDA variants under compute-sanitizer (memcheck and
# racecheck), then the benchmarks. Results and logs go to $OUT (default
# bench/results/<date>-<gpu>/).
#
# usage: scripts/gpu-check.sh [build|quick|full|SECTION...] (SECTION: tests|zoo_check|spmv|zoo|zoo_cpu|memlab|conv|limits|stream|tensor|shapes|shapes_random|ceilings|opencl|opencl_copies|opencl_kernels|mpi|devpath|multi|multi_*|trust|studies|sweep|unseen|thin)
#   several SECTIONs run in turn on one build. build: only the build (build-gpu/); tests: the
#   test suite with CUDA required; zoo_check: the sparse variants under compute-sanitizer; quick: tests, sanitizers and a GEMM whose rows must carry NVML's energy columns; spmv, memlab, conv, ceilings, opencl: build, then only
#   that section (ceilings also renders the report of everything in $OUT; opencl, the OpenCL
#   twins, runs as its two halves opencl_copies and opencl_kernels within 10 minutes each). spmv
#   (matrices from $PB_MATRICES, default ../shared/data/matrices or .data/matrices); mpi: the
#   MPI tests, a multi-rank run under compute-sanitizer, 1/2/4 ranks sharing the GPU
#   ("every rank at once"), allreduce (MPI and NCCL), spmv-dist, gemm-dist, p2p, the other
#   collectives and pingpong; its parts mpi_ep, mpi_dist and mpi_coll also run alone, within
#   10 minutes each; devpath: spmv-dist's halos and gemm-dist's panels through NCCL
#   (1 rank) and what 2 ranks sharing the GPU fall back to; multi (machines with several
#   GPUs, one rank each): p2p and pingpong, every benchmark on every GPU at once,
#   spmv-dist and gemm-dist strong and weak scaling over 1, 2, 4, 8 GPUs with staged and
#   NCCL paths, allreduce, memcheck; its parts multi_p2p, multi_ep, multi_coll (its memcheck: multi_check), multi_spmv,
#   multi_gemm (each as _strong and _weak too; PB_GEMM_DIST_N="16384 32768" the strong sizes; multi_gemm_panel: n = 16384 by
#   panel width) also run alone (PB_STEP_TIMEOUT=S bounds each
#   step; PB_SPMV_DIST, PB_SPMV_DIST_FILES, PB_SPMV_DIST_LOCAL, _HALO, _SPLIT, _PATH and _BATCH choose spmv-dist's matrices,
#   PB_EP_BENCHES=gemm,spmv,... multi_ep's benchmarks); limits: conv at R = 1..128 beside cuDNN, conv-stream's strips and
#   streams, copies both ways at once; stream: conv-stream at its defaults staged and pinned in place, copies both
#   ways, conv at R = 32 and 80; tensor: gemm in tf32/bf16/fp16, tc and wgmma beside cuBLAS; shapes: regblock, dmma
#   and wgmma beside cuBLAS on square and awkward shapes (tiles cut along k under memcheck first; its part
#   shapes_random, 40 random shapes verified, also runs alone); trust: a GPU fault mid-run, a problem too big for the device, 10,000
#   library turns; studies: parbench study 000..004 --quick (PB_STUDY_FULL=1: the full
#   studies; PB_STUDIES="003 004": only those), each in its folder, and one report; sweep: odd sizes
#   and inputs as a new user would give them, planted faults, memcheck (summary in sweep.txt); unseen:
#   random GEMM shapes, conv sizes and radii and sparse classes beside the anchors (unseen.md; PB_UNSEEN_KINDS="gemm"
#   only those); thin: GEMM with a C of at most 32 columns, its kernels under the sanitizers, with and without them
# PB_GIT_COMMIT=HASH names the commit measured in every row (set it where the
# tree is a copy whose .git may be stale or absent).
# Missing cJSON/cmocka development files are taken from .deps/*.deb when present
# (apt-get download libcjson1 libcjson-dev libcmocka0 libcmocka-dev, and for the
# librsb anchor librsb0 librsb-dev libhwloc15 libgfortran5), and Open MPI where
# there is no mpirun (openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev and
# the libraries they need: libpmix2 libevent-*, libfabric1 libucx0 ...). Where the CUDA toolkit lacks nvml.h (energy and
# clocks of CUDA rows), PyPI's wheel in .deps is unpacked for the build
# (python3 -m pip download nvidia-nvml-dev --no-deps -d .deps).
set -uo pipefail
cd "$(dirname "$0")/.."
modes=("${@:-full}") # several sections run in turn: scripts/gpu-check.sh tests multi_spmv
mode=${modes[0]}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-')
out=${OUT:-bench/results/$(date -u +%Y-%m-%d)-$gpu}
mkdir -p "$out"
log="$out/gpu-check.log"
status=0
step() { echo "== $*" | tee -a "$log"; }
run() { # run CMD...: log it, remember a failure, go on (PB_STEP_TIMEOUT=S: stop it after S seconds)
    local limit=()
    [ -n "${PB_STEP_TIMEOUT:-}" ] && limit=(timeout -k 10 "$PB_STEP_TIMEOUT")
    "${limit[@]}" "$@" >>"$log" 2>&1 || { echo "FAILED ($?): $*" | tee -a "$log"; status=1; }
}

# Open MPI's packages (and what they need) only where the machine has no MPI of
# its own: unpacked over one, they would mix two builds' libraries.
if ls .deps/*.deb >/dev/null 2>&1; then
    libs=no mpi=no
    pkg-config --exists libcjson cmocka 2>/dev/null || libs=yes
    command -v mpirun >/dev/null || mpi=yes
    for f in .deps/*.deb; do
        case $(basename "$f") in
        libhwloc*) [ $libs = yes ] || [ $mpi = yes ] ;;
        libcjson* | libcmocka* | librsb* | libgfortran*) [ $libs = yes ] ;;
        *) [ $mpi = yes ] ;;
        esac && dpkg -x "$f" /
    done
    ldconfig
fi

if ls .deps/nvidia_nvml_dev-*.whl >/dev/null 2>&1 && [ ! -d .deps/nvml ]; then
    python3 -m zipfile -e "$(ls .deps/nvidia_nvml_dev-*.whl | tail -1)" .deps/nvml
fi

arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
step "build for sm_$arch"
run cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DPB_CUDA=ON -DPB_CUDA_ARCHS="$arch" -DPB_WERROR=ON
targets=(--target parbench) # the multi-GPU runs need only the command
for m in "${modes[@]}"; do case $m in multi*) ;; *) targets=() ;; esac; done
run cmake --build build-gpu -j "$(nproc)" "${targets[@]}"
pb=build-gpu/parbench
[ -x "$pb" ] || { echo "build failed; see $log"; tail -30 "$log"; exit 1; }
[ "$mode" = build ] && exit $status

spmv_section() {
    local dir=${PB_MATRICES:-}
    [ -z "$dir" ] && for d in ../shared/data/matrices .data/matrices; do [ -d "$d" ] && dir=$d && break; done
    local big="lap2d:2048,lap3d:160,random:1M:16,powerlaw:1M:16" files="" all=""
    if [ -n "$dir" ]; then
        for m in af23560 bcsstk33 luxembourg_osm mhd4800a; do files+="$dir/$m.mtx,"; done
        all=$(ls "$dir"/*.mtx | paste -sd,)
    fi
    step "spmv: compute-sanitizer"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --matrix lap2d:30,powerlaw:3000:8,random:2000:5 --group 0,4,32 --precision float,double --reps 1 --warmup 0 --quiet
    step "spmv: every CUDA variant, the shared matrices with NZ >= 100k and generated ones of >= 10M NZ"
    run $pb run spmv --backend cuda --matrix "$files$big" --precision double,float --reps 20 --quiet --out "$out/spmv-cuda.csv"
    step "spmv: group and block sweep of csr-vector"
    run $pb run spmv --backend cuda --variant csr-vector,csr-adaptive --matrix "$files$big" --group 1,2,4,8,16,32 --block 64,256 --precision double --reps 10 --quiet --out "$out/spmv-vector-sweep.csv"
    step "spmv: OpenCL twins on the NVIDIA platform"
    run $pb run spmv --backend cuda,opencl --device nvidia --variant csr-scalar,csr-vector,ellt --matrix "$files$big" --precision double,float --reps 20 --quiet --out "$out/spmv-twins.csv"
    if [ -n "$all" ]; then
        step "spmv: OpenMP vs CUDA over every shared matrix (the study's crossover)"
        local variants=csr,csr-h2,csr-scalar,csr-vector,csr-adaptive,ell,ellt,cusparse
        # grep reads all of the list: -q would stop early and fail the pipe (pipefail)
        $pb list | grep 'openmp/librsb' >/dev/null && variants+=,librsb
        run $pb run spmv --backend openmp,cuda --variant "$variants" --matrix "$all,$big" --complex-real 1 --precision double --reps 10 --quiet --out "$out/spmv-crossover.csv"
    fi
}

# The sparse variants that analyse or convert the matrix, under compute-sanitizer
# on the zoo's awkward cases.
zoo_check_section() {
    step "zoo: compute-sanitizer on csr-balanced, csr-split and auto (small zoo, long rows cut into pieces, rows across blocks)"
    for tool in memcheck racecheck; do
        run compute-sanitizer --tool "$tool" --error-exitcode 9 \
            $pb run spmv --backend cuda --variant csr-balanced,csr-split,auto --matrix zoo:3000,dense:20000:3:3:9000,pareto:5000:8:1.1:0.3,gaps:3000:2 --precision float,double --reps 2 --warmup 1 --quiet
    done
    step "zoo: compute-sanitizer on dia and auto's dia (stencils, bands, rectangles whose diagonals leave them; refused on the rest)"
    local diags=lap2d:30,lap3d:9,band:5000:3:2,band:4001:5:0,powerlaw:3000:8,rect:1000:1003:1
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant dia,auto --matrix $diags --precision float,double --reps 2 --warmup 1 --quiet
    run env PARBENCH_DIA_ANY=1 PARBENCH_AUTO_PICK=dia compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant dia,auto --matrix zoo:3000 --precision float,double --reps 2 --warmup 1 --quiet
    step "zoo: compute-sanitizer on csr-panels and auto's csr-panels (3 and 7 panels imposed on the small zoo; x past L2 on a rectangle)"
    local n
    for n in 3 7; do
        run env PARBENCH_PANELS=$n PARBENCH_AUTO_PICK=csr-panels compute-sanitizer --tool memcheck --error-exitcode 9 \
            $pb run spmv --backend cuda --variant csr-panels,auto --matrix zoo:3000,dense:20000:3:3:9000,gaps:3000:2 --precision float,double --reps 2 --warmup 1 --quiet
    done
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant csr-panels --matrix rect:20000:8000000:4 --precision double --reps 2 --warmup 1 --quiet
    step "zoo: compute-sanitizer on csr-hubs and auto's csr-hubs and csr-vector (Kronecker graphs; any matrix with PARBENCH_HUBS_ANY)"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant csr-hubs,auto --matrix rmat:12:16,rmat:14:4,rect:300:20000:1024 --precision float,double --reps 2 --warmup 1 --quiet
    run env PARBENCH_HUBS_ANY=1 PARBENCH_AUTO_PICK=csr-hubs compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant csr-hubs,auto --matrix zoo:3000,gaps:3000:2 --precision float,double --reps 2 --warmup 1 --quiet
    run env PARBENCH_AUTO_PICK=csr-vector compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv --backend cuda --variant auto --matrix zoo:3000 --precision float,double --reps 2 --warmup 1 --quiet
    step "zoo: compute-sanitizer on bcsr and auto in both layouts (blocks of 2..8, rows and columns no multiple of them; b = 3 imposed on matrices without blocks)"
    local ell blocks=zoo:3000,blocks:5000:2:3,blocks:7001:5:3,blocks:4000:8:2,blocks:3001:7:4,blocks:999:4:40
    for ell in 1 0; do
        run env PARBENCH_BCSR_ELL=$ell compute-sanitizer --tool memcheck --error-exitcode 9 \
            $pb run spmv --backend cuda --variant bcsr,auto --matrix $blocks --precision float,double --reps 2 --warmup 1 --quiet
        run env PARBENCH_BCSR_ELL=$ell PARBENCH_BCSR_B=3 compute-sanitizer --tool memcheck --error-exitcode 9 \
            $pb run spmv --backend cuda --variant bcsr --matrix lap2d:30,powerlaw:3000:8,gaps:3000:2,rect:1000:5000:7,rect:5000:1001:7 \
            --precision float,double --reps 2 --warmup 1 --quiet
    done
}

zoo_section() {
    # Issue classes of matrices (sparse.h's zoo) against cuSPARSE in the same run.
    zoo_check_section
    step "zoo: every CUDA variant and cuSPARSE, zoo:1M and zoo:4M"
    run $pb run spmv --backend cuda --matrix zoo:1M,zoo:4M --precision double,float --reps 20 --quiet --out "$out/spmv-zoo-cuda.csv"
    step "zoo: OpenCL on the NVIDIA platform, zoo:1M"
    run $pb run spmv --backend opencl --device nvidia --matrix zoo:1M --precision double,float --reps 10 --quiet --out "$out/spmv-zoo-opencl.csv"
}

zoo_cpu_section() {
    step "zoo: OpenMP on every core against librsb and tuned librsb, zoo:1M"
    local variants=csr,csr-v2,csr-h2,ell,bcsr,dia,csr-panels,csr-hubs,auto
    $pb list | grep 'openmp/librsb' >/dev/null && variants+=,librsb,librsb-tuned
    run $pb run spmv --backend openmp --variant "$variants" --matrix zoo:1M --precision float,double --reps 10 --quiet --out "$out/spmv-zoo-openmp.csv"
}

memlab_section() {
    # Memory lab (study 004): sanitizers on awkward shapes, then the curves and the targets.
    step "memory lab: compute-sanitizer on transpose, reduce, access (awkward shapes)"
    for tool in memcheck racecheck; do
        run compute-sanitizer --tool "$tool" --error-exitcode 9 \
            $pb run transpose --backend cuda --m 1,33,100 --n 1,31,130 --precision float,double --reps 1 --warmup 0 --quiet
        run compute-sanitizer --tool "$tool" --error-exitcode 9 \
            $pb run reduce --backend cuda --n 1,3,255,257,1000,100003 --reps 1 --warmup 0 --quiet
    done
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run access --backend cuda --n 1,300,1025 --step 0,1,7,32 --precision float,double --reps 1 --warmup 0 --quiet
    step "memory lab: transpose, reduce, access"
    run $pb run transpose $twins --n 16384 --reps 10 --warmup 2 --quiet --out "$out/transpose.csv"
    run $pb run transpose $twins --n 8192 --precision double --reps 10 --warmup 2 --quiet --out "$out/transpose.csv" --append
    run $pb run reduce $twins --n 256M --reps 10 --warmup 2 --quiet --out "$out/reduce.csv"
    run $pb run access --backend cuda --variant global-offset --n 32M --step 0:32:1 --reps 10 --quiet --out "$out/access-offset.csv"
    run $pb run access --backend cuda --variant global-stride --n 8M --step 1:32:1 --reps 10 --quiet --out "$out/access-stride.csv"
    run $pb run access --backend cuda --variant shared-stride --n 4M --step 0:32:1 --reps 10 --quiet --out "$out/access-shared.csv"
}

conv_section() {
    step "conv (study 003): sanitizer, in-core radii, strips with and without streams"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run conv --backend cuda --width 33,300 --height 17,70 --radius 1,8,17,128 --border zero,clamp --precision float,double --reps 1 --warmup 0 --quiet
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run conv-stream --backend cuda --width 300 --height 211 --radius 5 --device-mem 256K --reps 1 --warmup 0 --quiet
    run $pb run conv $twins --width 8192 --radius 2,4,8,16,32,64,80 --reps 12 --quiet --out "$out/conv.csv"
    run $pb run conv-stream --backend cuda --width 16384 --radius 32 --streams 3 --reps 12 --quiet --out "$out/conv-stream.csv"
}

# Kernels against their bounds (conv at every radius beside cuDNN, conv-stream's
# strips and streams, both copy directions at once), after the ceilings that
# give conv its FMA bound.
limits_section() {
    step "limits: ceilings (FMA peak for conv's fma_bound_s)"
    run $pb ceilings --backend cuda --reps 5 --ceilings "$out/ceilings.json"
    local c="--ceilings $out/ceilings.json" anchor=""
    $pb list | grep 'cuda/cudnn' >/dev/null && anchor=,cudnn
    step "limits: compute-sanitizer on regs (awkward shapes, every tail of the tap loop) and cudnn"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run conv --backend cuda --variant regs --width 33,1001,1002 --height 17,530 --radius 1,3,5,17,33,63,128 \
        --border zero,clamp --precision float,double --reps 1 --warmup 0 --quiet
    run compute-sanitizer --tool racecheck --error-exitcode 9 \
        $pb run conv --backend cuda --variant regs --width 300,1024 --height 70 --radius 1,9,64 --precision float,double \
        --reps 1 --warmup 0 --quiet
    [ -n "$anchor" ] && run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run conv --backend cuda --variant cudnn --width 33,1001 --height 17 --radius 1,17 --precision float,double \
        --reps 1 --warmup 1 --quiet
    step "limits: conv 8192^2, R = 1..128, float and double, beside ${anchor:-no cuDNN (not built)}"
    run $pb run conv --backend cuda --variant "regs,fused$anchor" --width 8192 --radius 1,2,4,8,16,32,64,80,128 \
        --precision float,double --reps 10 --quiet $c --out "$out/conv-limits.csv"
    run $pb run conv --backend cuda --variant "regs,fused$anchor" --width 5000 --height 7001 --radius 3,32,100 \
        --precision float,double --reps 10 --quiet $c --out "$out/conv-limits.csv" --append
    step "limits: conv-stream 16384^2, R = 32: strips and streams"
    run $pb run conv-stream --backend cuda --variant streams --width 16384 --radius 32 --streams 2,3,4 \
        --strip 0,128,512,2048 --reps 5 --quiet $c --out "$out/conv-stream-limits.csv"
    step "limits: copies both ways at once"
    run $pb run bandwidth --backend cuda --variant h2d-pinned,d2h-pinned,bidir-pinned --size 256M,1G --buffers 1,4,16 \
        --reps 20 --quiet $c --out "$out/bidir-limits.csv"
}

# conv-stream at its default strips and streams, staged against pinned in place
# (the host images page-locked once), beside the copies both ways that bound it.
stream_section() {
    step "stream: compute-sanitizer on conv-stream, staged and pinned, blocking and on streams"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run conv-stream --backend cuda --width 300 --height 211 --radius 5 --device-mem 256K --host-mem staged,pinned \
        --reps 1 --warmup 0 --quiet
    step "stream: conv-stream 16384^2, R = 32, default strips and streams, staged and pinned, float and double"
    run $pb run conv-stream --backend cuda --width 16384 --radius 32 --host-mem staged,pinned --precision float,double \
        --reps 12 --quiet --out "$out/conv-stream-default.csv"
    step "stream: conv-stream pinned, streams 2..4 by strip height"
    run $pb run conv-stream --backend cuda --variant streams --width 16384 --radius 32 --host-mem pinned --streams 2,3,4 \
        --strip 0,128,512,2048 --reps 8 --quiet --out "$out/conv-stream-sweep.csv"
    step "stream: copies one way and both ways at once"
    run $pb run bandwidth --backend cuda --variant h2d-pinned,d2h-pinned,bidir-pinned --size 256M,1G --reps 20 --quiet \
        --out "$out/bidir.csv"
    step "stream: conv 8192^2 at R = 32 and 80 beside cuDNN"
    local anchor=""
    $pb list | grep 'cuda/cudnn' >/dev/null && anchor=,cudnn
    run $pb run conv --backend cuda --variant "regs,fused$anchor" --width 8192 --radius 32,80 --precision float,double \
        --reps 20 --quiet --out "$out/conv-r32-r80.csv"
}

# Tensor-core precisions: our tc (WMMA) and wgmma (Hopper) kernels beside cuBLAS
# (cublasGemmEx), verified on awkward shapes under memcheck, then measured.
tensor_section() {
    step "tensor: compute-sanitizer on tc, wgmma and cublas, tf32/bf16/fp16 (awkward shapes)"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant tc,wgmma,cublas --m 33,1,130 --n 17,129,300 --k 5,67,1,200,4500 \
        --precision tf32,bf16,fp16 --reps 1 --warmup 0 --quiet
    local bn
    for bn in 128 256; do # small shapes pick wgmma's 64-wide tile: the others too
        step "tensor: wgmma with its $bn-wide tile (memcheck, awkward shapes) and test_gemm"
        run env PARBENCH_WGMMA_BN=$bn compute-sanitizer --tool memcheck --error-exitcode 9 \
            $pb run gemm --backend cuda --variant wgmma --m 33,130,300 --n 17,300,520 --k 5,200,4500 \
            --precision tf32,bf16,fp16 --reps 1 --warmup 0 --quiet
        run env PARBENCH_WGMMA_BN=$bn PB_REQUIRE=cuda ctest --test-dir build-gpu -R '^gemm$' --output-on-failure
    done
    step "tensor: tc, wgmma and cublas at n = 2048..8192, and awkward shapes"
    run $pb run gemm --backend cuda --variant tc,wgmma,cublas --n 2048,4096,8192 --precision tf32,bf16,fp16 --reps 10 \
        --quiet --out "$out/gemm-tensor.csv"
    gemm_on_shapes "$out/gemm-tensor-shapes.csv" wgmma,cublas tf32,bf16 \
        8191x8191x8191 3000x5000x7000 4097x4097x4097 65536x64x4096 1024x1024x65536
}

# gemm_on_shapes FILE VARIANTS PRECISIONS MxNxK...: the CUDA variants on each shape, appended to FILE
gemm_on_shapes() {
    local file=$1 variants=$2 precisions=$3 shape m n k
    shift 3
    for shape in "$@"; do
        IFS=x read -r m n k <<<"$shape"
        run $pb run gemm --backend cuda --variant "$variants" --m "$m" --n "$n" --k "$k" --precision "$precisions" \
            --reps 10 --quiet --out "$file" --append
    done
}

# GEMM where whole tiles leave the last wave part-empty (3000 x 5000 x 7000) or a
# tile part-used (65536 x 64 x 4096): the tiles cut along k and the narrow FP32
# tile under memcheck, then regblock, dmma and wgmma beside cuBLAS.
shapes_section() {
    step "shapes: compute-sanitizer on regblock, dmma and wgmma with tiles cut along k"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant regblock,dmma --m 1700,130 --n 2600,64 --k 2100,4500 \
        --precision float,double --reps 1 --warmup 0 --quiet
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant wgmma --m 1700 --n 2600 --k 2100 --precision tf32,bf16 --reps 1 \
        --warmup 0 --quiet
    run env PB_REQUIRE=cuda ctest --test-dir build-gpu -R '^gemm$' --output-on-failure -V # -V: test_cut_tiles' notes
    step "shapes: regblock, dmma, wgmma and cuBLAS, square and awkward"
    local shapes=(2048x2048x2048 4096x4096x4096 8192x8192x8192 8191x8191x8191 3000x5000x7000 4097x4097x4097
        5000x5000x5000 1000x1000x1000 65536x64x4096 1024x1024x65536 256x256x262144)
    gemm_on_shapes "$out/gemm-shapes.csv" regblock,dmma,cublas float,double "${shapes[@]}"
    gemm_on_shapes "$out/gemm-tensor-shapes.csv" wgmma,cublas tf32,bf16 "${shapes[@]}"
    shapes_random_section
}

# 40 shapes drawn at random (seeded), planned for 8 SMs so that most cut their
# tiles along k, every row verified (a wrong sum is FAILED, exit 1).
shapes_random_section() {
    step "shapes: 40 random shapes up to 3000 x 3000 x 9000 planned for 8 SMs, verified"
    local i m n k
    RANDOM=42
    for i in $(seq 40); do
        m=$((RANDOM % 3000 + 1)) n=$((RANDOM % 3000 + 1)) k=$((RANDOM % 9000 + 1))
        run env PARBENCH_GEMM_SMS=8 $pb run gemm --backend cuda --variant regblock,dmma,wgmma --m $m --n $n --k $k \
            --precision float,double,tf32,bf16 --reps 1 --warmup 0 --quiet --out "$out/gemm-random-shapes.csv" --append
    done
}

# A thin C (n <= 32 columns, regblock's gemm_thin.cu): memcheck and racecheck
# on awkward thin shapes and test_gemm, then thin shapes beside cuBLAS, with
# the thin kernels (gemm-thin.csv) and with regblock's tiles instead
# (PARBENCH_GEMM_THIN=0, gemm-thin-off.csv); n = 51 is a control.
thin_section() {
    step "thin: compute-sanitizer on regblock's thin kernels (n <= 32) and test_gemm"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant regblock --m 1,33,700 --n 1,8,19,32 --k 5,300,2000 \
        --precision float,double --reps 1 --warmup 0 --quiet
    run compute-sanitizer --tool racecheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant regblock --m 700 --n 19 --k 300 --precision float,double --reps 1 \
        --warmup 0 --quiet
    run env PB_REQUIRE=cuda ctest --test-dir build-gpu -R '^gemm$' --output-on-failure
    step "thin: thin shapes beside cuBLAS, with the thin kernels and with regblock's tiles"
    local shapes=(${PB_THIN_SHAPES:-4741x19x6987 1185x19x1747 50000x8x8000 20000x24x20000 65536x32x8192
        1000x16x100000 200000x1x2000 2000x32x2000 10000x12x500 1377x51x7771})
    gemm_on_shapes "$out/gemm-thin.csv" regblock,dmma,cublas float,double "${shapes[@]}"
    export PARBENCH_GEMM_THIN=0
    gemm_on_shapes "$out/gemm-thin-off.csv" regblock float,double "${shapes[@]}"
    unset PARBENCH_GEMM_THIN
}

# Inputs from no fixed list, as the users' will be (scripts/unseen.sh): seeded
# random GEMM shapes, conv sizes and radii, sparse classes with random
# parameters, each beside its vendor anchor (PB_UNSEEN_SEED=N draws another set).
unseen_section() {
    step "unseen: random GEMM shapes, conv sizes and radii, sparse classes beside the anchors"
    run scripts/unseen.sh "$pb" "$out" cuda "${PB_UNSEEN_SEED:-7}"
    tail -n 8 "$out/unseen.md" >>"$log"
}

ceilings_section() {
    step "ceilings (peak FMA, read-only, copies) and the report"
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run peak --backend cuda --n 1,257,20000 --iters 3 --precision float,double --reps 1 --warmup 0 --quiet
    run $pb ceilings $twins --reps 10 --ceilings "$out/ceilings.json"
    run $pb report "$out" -o "$out/report.html" --title "parbench on $gpu"
}

# The five studies as a user runs them (parbench study ID --quick), each into its folder with
# its comparison and report, then one report over all their results and the ceilings.
studies_section() {
    local size=--quick dir=${PB_MATRICES:-}
    [ "${PB_STUDY_FULL:-0}" = 1 ] && size=""
    [ -z "$dir" ] && for d in ../shared/data/matrices .data/matrices; do [ -d "$d" ] && dir=$d && break; done
    step "studies 000-004 (${size:-full}): results, comparison with the published figures, report"
    for id in ${PB_STUDIES:-000 001 002 003 004}; do
        run $pb study "$id" $size --out "$out/study-$id" --matrices "${dir:-../shared/data/matrices}"
        cp "$out/study-$id/comparison.csv" "$out/study-$id-comparison.csv" 2>/dev/null
    done
    run $pb report "$out"/study-0*/ "$out/devices.json" -o "$out/studies-report.html" --title "parbench studies on $gpu"
}

# Study 001 on every benchmark: the OpenCL variants on NVIDIA's platform, verified on awkward
# shapes (cl_verify; the measured runs verify too), then measured next to their CUDA twins
# (scripts/twins.py pairs the rows).
cl_verify="--backend opencl --device nvidia --reps 1 --warmup 0 --quiet"

opencl_copies_section() {
    step "opencl: gemm, copies, overlap on the NVIDIA platform, awkward shapes (verified)"
    run $pb run gemm $cl_verify --m 33,1,130 --n 17,129 --k 5,67,1 --precision float,double
    run env PARBENCH_CL_REGBLOCK_TILE=large $pb run gemm $cl_verify --variant regblock --m 33,1,130 --n 17,129 --k 5,67,1 --precision float,double
    run $pb run bandwidth $cl_verify --size 4K,1M --buffers 1,4
    run $pb run overlap $cl_verify --n 67 --lm 3 --bs 8,0
    step "opencl twins: copies, GEMM, overlap"
    run $pb run bandwidth $twins --size 1K:1G:x4 --reps 10 --quiet --out "$out/opencl-twins-bandwidth.csv"
    run $pb run bandwidth $twins --variant bidir-pinned --size 16M,256M --buffers 1,4,16 --reps 10 --quiet --out "$out/opencl-twins-bidir.csv"
    run $pb run gemm $twins --n 1024,4096,8192 --precision float,double --reps 10 --quiet --out "$out/opencl-twins-gemm.csv"
    run $pb run overlap $twins --n 864,1728,4096 --lm 5,10 --bs 16,0 --reps 5 --quiet --out "$out/opencl-twins-overlap.csv"
}

opencl_kernels_section() {
    step "opencl: reduce, transpose, conv, spmv on the NVIDIA platform, awkward shapes (verified)"
    run $pb run reduce $cl_verify --n 1,3,255,257,1000,100003 --type 0,1,2
    run $pb run transpose $cl_verify --m 1,33,100 --n 1,31,130 --precision float,double
    run $pb run conv $cl_verify --width 33,300 --height 17,70 --radius 1,8,17,64,65 --border zero,clamp --precision float,double
    run $pb run spmv $cl_verify --matrix lap2d:30,powerlaw:3000:8,random:2000:5 --group 0,4,32 --precision float,double
    step "opencl twins: reduce, transpose, conv, spmv"
    run $pb run reduce $twins --n 256M --type 0,1,2 --reps 10 --warmup 2 --quiet --out "$out/opencl-twins-reduce.csv"
    run $pb run transpose $twins --n 16384 --reps 10 --warmup 2 --quiet --out "$out/opencl-twins-transpose.csv"
    run $pb run conv $twins --width 8192 --radius 2,4,8,16,32,64 --reps 12 --quiet --out "$out/opencl-twins-conv.csv"
    run $pb run spmv $twins --variant csr-scalar,csr-vector,ellt --matrix lap2d:2048,lap3d:160,random:1M:16,powerlaw:1M:16 --precision double,float --reps 20 --quiet --out "$out/opencl-twins-spmv.csv"
}

opencl_section() {
    opencl_copies_section
    opencl_kernels_section
    python3 scripts/twins.py "$out"/opencl-twins-*.csv >"$out/opencl-twins.md" 2>>"$log"
}

mpi_section() {
    # Several ranks sharing the one GPU (the multi-GPU runs need a machine with several).
    mpi_env
    grep -q "mpi=TRUE" "$log" || { echo "FAILED: built without MPI" | tee -a "$log"; status=1; return; }
    step "mpi: the MPI tests with CUDA built in"
    run ctest --test-dir build-gpu --output-on-failure -R "comm|mpi"
    step "mpi: compute-sanitizer memcheck on a short 2-rank run"
    run $mpi 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run allreduce --backend cuda --size 8,4100,1M --precision float,double --reps 2 --warmup 1 --quiet
    run $mpi 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm --backend cuda --variant regblock,cublas --m 33 --n 130 --k 67 --reps 1 --warmup 0 --quiet
    mpi_ep_section
    mpi_dist_section
    mpi_coll_section
}

mpi_env() {
    mpi="mpirun --bind-to none -np"
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
}

mpi_ep_section() {
    mpi_env
    step "mpi: every rank at once on one GPU (1, 2, 4 ranks)"
    local more=""
    for np in 1 2 4; do
        run $mpi $np $pb run gemm --backend cuda --variant regblock,cublas --n 4096 --precision float,double \
            --reps 10 --quiet --out "$out/mpi-ep-gemm.csv" $more
        run $mpi $np $pb run bandwidth --backend cuda --variant h2d-pinned,d2h-pinned,d2d --size 256M \
            --reps 10 --quiet --out "$out/mpi-ep-bandwidth.csv" $more
        run $mpi $np $pb run spmv --backend cuda --variant csr-vector,cusparse --matrix lap3d:160,powerlaw:1M:16 \
            --precision double --reps 10 --quiet --out "$out/mpi-ep-spmv.csv" $more
        more=--append
    done
}

mpi_dist_section() {
    mpi_env
    step "mpi: is the MPI CUDA-aware?"
    ompi_info --parsable --all 2>/dev/null | grep -i "cuda_support" | tee -a "$log"
    step "mpi: compute-sanitizer memcheck on spmv-dist over 2 ranks"
    run $mpi 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run spmv-dist --backend cuda --matrix lap2d:40,powerlaw:3000:8 --precision float,double --reps 2 --warmup 1 --quiet
    step "mpi: allreduce, MPI (direct if CUDA-aware, staged) and NCCL, 1 and 2 ranks"
    local more=""
    for np in 1 2; do
        run $mpi $np $pb run allreduce --backend cuda --size 8:1G:x8 --precision float --reps 10 --quiet \
            --out "$out/mpi-allreduce.csv" $more
        more=--append
    done
    step "mpi: compute-sanitizer memcheck on gemm-dist over 2 ranks"
    run $mpi 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run gemm-dist --backend cuda --m 67 --n 130 --k 45 --panel 16 --precision float,double --reps 2 --warmup 1 --quiet
    step "mpi: gemm-dist (SUMMA), 1, 2, 4 ranks on the one GPU"
    more=""
    for np in 1 2 4; do
        run $mpi $np $pb run gemm-dist --backend cuda --n 8192 --precision float,double --reps 5 --quiet \
            --out "$out/mpi-gemm-dist.csv" $more
        more=--append
    done
    step "mpi: spmv-dist's local product, auto (the default) against csr-vector, 1 and 2 ranks"
    more=""
    for np in 1 2; do
        run $mpi $np $pb run spmv-dist --backend cuda --variant overlap --local auto,csr-vector \
            --matrix powerlaw:4M:16,lap3d:200,pareto:4M:8:1.3:0.1 --reader each --precision double --reps 10 --quiet \
            --out "$out/mpi-spmv-dist-local.csv" $more
        more=--append
    done
    if $pb list | grep spmv-dist >/dev/null; then
        step "mpi: spmv-dist, 1, 2, 4 ranks"
        more=""
        for np in 1 2 4; do
            run $mpi $np $pb run spmv-dist --backend cuda --matrix lap3d:160,powerlaw:1M:16 --precision double \
                --reps 10 --quiet --out "$out/mpi-spmv-dist.csv" $more
            more=--append
        done
    fi
    step "p2p: every ordered pair of GPUs (SKIP where there is only one)"
    run $pb run p2p --backend cuda --reps 10 --quiet
    # Sizes no multiple of 16: the copy kernel's byte tail, under memcheck.
    run compute-sanitizer --tool memcheck --error-exitcode 9 \
        $pb run p2p --backend cuda --size 4,17,1000003 --copies 2 --reps 1 --warmup 0 --quiet
}

mpi_coll_section() {
    # One GPU: two ranks share it and NCCL declines them (one rank per GPU), so
    # NCCL's rows come from one rank; its pingpong rows say why they decline.
    mpi_env
    step "mpi: compute-sanitizer memcheck on allgather, alltoall, broadcast (1 rank, NCCL too), pingpong (2 ranks)"
    local np
    for coll in allgather alltoall broadcast pingpong; do
        np=1
        [ $coll = pingpong ] && np=2
        # NCCL's set-up probes kernels built for other GPUs and is told "no kernel
        # image" (an API error it handles): API errors are not reported here,
        # memory errors in kernels are
        run $mpi $np compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
            $pb run $coll --backend cuda --size 8,4100,1M --precision float,double --reps 2 --warmup 1 --quiet
    done
    step "mpi: allgather, alltoall, broadcast (1 rank: NCCL; 2 ranks: MPI direct if CUDA-aware, staged)"
    local more=""
    for np in 1 2; do
        for coll in allgather alltoall broadcast; do
            run $mpi $np $pb run $coll --backend cuda --size 8:1G:x8 --precision float --reps 10 --quiet \
                --out "$out/mpi-$coll.csv" $more
        done
        more=--append
    done
    step "mpi: pingpong between 2 ranks, host (ref) and GPU buffers"
    run $mpi 2 $pb run pingpong --backend ref,cuda --size 8:1G:x8 --precision float --reps 10 --quiet \
        --out "$out/mpi-pingpong.csv"
}

devpath_section() {
    # Halos and panels on the device paths (--path): NCCL over one rank (a
    # communicator of one), and two ranks sharing the GPU, where NCCL declines
    # and auto falls back to staging, saying why.
    mpi_env
    step "devpath: is the MPI CUDA-aware?"
    ompi_info --parsable --all 2>/dev/null | grep -i "cuda_support" | tee -a "$log"
    step "devpath: compute-sanitizer memcheck, spmv-dist and gemm-dist through NCCL on 1 rank"
    run $mpi 1 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        $pb run spmv-dist --backend cuda --matrix lap2d:40,powerlaw:3000:8 --path nccl --precision float,double --reps 2 --warmup 1 --quiet
    run $mpi 1 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        $pb run gemm-dist --backend cuda --m 67 --n 130 --k 45 --panel 16 --path nccl --precision float,double --reps 2 --warmup 1 --quiet
    step "devpath: 2 ranks on one GPU: auto stages (NCCL declines), nccl UNSUPPORTED with the reason"
    run $mpi 2 $pb run spmv-dist --backend cuda --matrix lap2d:300 --path auto,staged,nccl,mpi --reps 5 --quiet \
        --out "$out/devpath-spmv-dist.csv"
    run $mpi 2 $pb run gemm-dist --backend cuda --n 2048 --path auto,nccl --reps 3 --quiet --out "$out/devpath-gemm-dist.csv"
    step "devpath: 1 rank, staged against NCCL (a communicator of one)"
    run $mpi 1 $pb run spmv-dist --backend cuda --matrix lap3d:160,powerlaw:1M:16 --path staged,nccl --precision double \
        --reps 10 --quiet --out "$out/devpath-spmv-dist.csv" --append
    run $mpi 1 $pb run gemm-dist --backend cuda --n 8192 --path staged,nccl --precision float,double --reps 5 --quiet \
        --out "$out/devpath-gemm-dist.csv" --append
}

multi_section() {
    # Several GPUs in one machine: one rank per GPU. Its parts run alone too,
    # each within 10 minutes: multi_p2p (p2p, pingpong), multi_ep (every
    # single-GPU benchmark on every GPU at once), multi_coll (multi_check: memcheck
    # over a short multi-rank run; allreduce), multi_spmv and multi_gemm (strong and
    # weak scaling). PB_STEP_TIMEOUT=S bounds each step.
    multi_p2p_section
    multi_ep_section
    multi_coll_section
    multi_spmv_section
    multi_gemm_section
}

gpus_env() {
    mpi_env
    gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
    counts=1
    for n in 2 4 8; do [ "$n" -le "$gpus" ] && counts+=" $n"; done
    nvidia-smi topo -m >"$out/topology.txt" 2>&1
}

multi_p2p_section() {
    gpus_env
    step "multi: p2p, every ordered pair of the $gpus GPUs (bandwidth at 256 MiB and 1 GiB, latency at 4 B)"
    run $pb run p2p --backend cuda --size 4,256M,1G --reps 10 --quiet --out "$out/p2p.csv"
    step "multi: pingpong between 2 GPUs (the projection's latency and bandwidth)"
    run $mpi 2 $pb run pingpong --backend cuda --size 8:1G:x8 --reps 10 --quiet --out "$out/pingpong.csv"
}

# Every single-GPU benchmark on 1, 2, 4, 8 GPUs at once, one rank each: the
# rows "all" against ranks x the one-GPU figure show the contention.
multi_ep_section() {
    gpus_env
    step "multi: every rank at once, one per GPU ($counts)"
    local np
    ep() { # ep NP BENCH ARGS...: one benchmark's rows into ep-BENCH.csv
        local np=$1 bench=$2 more=""
        shift 2
        [ -n "${PB_EP_BENCHES:-}" ] && [[ ",$PB_EP_BENCHES," != *",$bench,"* ]] && return
        [ -f "$out/ep-$bench.csv" ] && more=--append
        run $mpi $np $pb run $bench --backend cuda "$@" --quiet --out "$out/ep-$bench.csv" $more
    }
    for np in $counts; do
        ep $np gemm --variant regblock,dmma,cublas --n 8192 --precision float,double --reps 10
        ep $np bandwidth --variant h2d-pinned,d2h-pinned,bidir-pinned,h2d-pageable,d2d --size 256M --reps 10
        ep $np spmv --variant auto,cusparse --matrix lap3d:160,powerlaw:1M:16 --precision double --reps 10
        ep $np conv --variant regs,fused --width 8192 --radius 8,32 --reps 10
        ep $np conv-stream --variant streams --width 16384 --radius 32 --streams 3 --reps 3
        ep $np transpose --variant vec64 --n 16384 --reps 10
        ep $np reduce --variant last-block,cub --n 256M --reps 10
        ep $np overlap --variant streams-breadth --n 4096 --lm 5 --bs 0 --reps 5
        ep $np access --variant global-offset --n 32M --step 0,1 --reps 10
        ep $np peak --reps 5
    done
}

multi_coll_section() {
    multi_check_section
    step "multi: allreduce, MPI and NCCL ($counts GPUs)"
    local np more=""
    for np in $counts; do
        run $mpi $np $pb run allreduce --backend cuda --size 8:1G:x8 --precision float --reps 10 --quiet \
            --out "$out/allreduce.csv" $more
        more=--append
    done
}

multi_check_section() {
    gpus_env
    step "multi: compute-sanitizer memcheck over 2 ranks: spmv-dist (both halos) and gemm-dist through NCCL, allreduce"
    run $mpi 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        $pb run spmv-dist --backend cuda --matrix lap2d:40,powerlaw:3000:8 --path nccl,staged --halo p2p,allgather \
        --reps 2 --warmup 1 --quiet
    run $mpi 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        $pb run gemm-dist --backend cuda --m 67 --n 130 --k 45 --panel 16 --path nccl,staged --reps 2 --warmup 1 --quiet
    run $mpi 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
        $pb run allreduce --backend cuda --size 8,4100,1M --precision float,double --reps 2 --warmup 1 --quiet
}

# spmv-dist strong scaling (the same matrix on 1, 2, 4, 8 GPUs) and weak
# scaling (lap3d growing with the GPUs: about 8M rows per GPU).
multi_spmv_section() {
    multi_spmv_strong_section
    multi_spmv_weak_section
}

multi_spmv_strong_section() {
    gpus_env
    local dir=${PB_MATRICES:-} files="" m f
    [ -z "$dir" ] && for d in ../shared/data/matrices .data/matrices; do [ -d "$d" ] && dir=$d && break; done
    for m in ${PB_SPMV_DIST_FILES-af23560 bcsstk33}; do
        for f in "$dir/$m.mtx" "$dir/$m.mtx.gz"; do [ -f "$f" ] && files+=",$f" && break; done
    done
    step "multi: spmv-dist strong scaling ($counts GPUs), staged and NCCL halos"
    local np more=""
    [ -f "$out/spmv-dist.csv" ] && more=--append # a second series (another --batch) joins the first
    for np in $counts; do
        run $mpi $np $pb run spmv-dist --backend cuda --variant overlap --matrix "${PB_SPMV_DIST:-lap3d:320,powerlaw:4M:16}$files" \
            --local "${PB_SPMV_DIST_LOCAL:-auto}" --halo "${PB_SPMV_DIST_HALO:-auto}" --split "${PB_SPMV_DIST_SPLIT:-auto}" --reader each \
            --path "${PB_SPMV_DIST_PATH:-staged,nccl}" --batch "${PB_SPMV_DIST_BATCH:-1}" --precision double --reps 20 --quiet \
            --out "$out/spmv-dist.csv" $more
        more=--append
    done
}

multi_spmv_weak_section() {
    gpus_env
    step "multi: spmv-dist weak scaling, lap3d with about 8M rows per GPU"
    local np more="" side
    for np in $counts; do
        case $np in 1) side=200 ;; 2) side=252 ;; 4) side=317 ;; 8) side=400 ;; esac
        run $mpi $np $pb run spmv-dist --backend cuda --variant overlap --matrix lap3d:$side --reader each --path nccl \
            --precision double --reps 20 --quiet --out "$out/spmv-dist-weak.csv" $more
        more=--append
    done
}

# gemm-dist strong scaling at n = 16384 and 32768, weak scaling with n^2 per GPU
# held (16384 on 1 GPU, 23168 on 2, 32768 on 4, 46336 on 8).
multi_gemm_section() {
    multi_gemm_strong_section
    multi_gemm_weak_section
}

multi_gemm_strong_section() {
    gpus_env
    local sizes=${PB_GEMM_DIST_N:-16384 32768}
    step "multi: gemm-dist strong scaling ($counts GPUs), n = $sizes: 16384 with staged and NCCL panels, larger with NCCL"
    local np n path more=""
    for np in $counts; do
        for n in $sizes; do
            path=nccl
            [ "$n" -le 16384 ] && path=staged,nccl
            run $mpi $np $pb run gemm-dist --backend cuda --n "$n" --path $path \
                --precision float,double --reps 3 --quiet --out "$out/gemm-dist.csv" $more
            more=--append
        done
    done
}

# SUMMA's step width: wider panels mean fewer passes over C in each local
# product, narrower ones a finer lookahead.
multi_gemm_panel_section() {
    gpus_env
    step "multi: gemm-dist n = 16384 by panel width ($counts GPUs), NCCL"
    local np more=""
    for np in $counts; do
        run $mpi $np $pb run gemm-dist --backend cuda --n 16384 --panel 256,512,1024,2048 --path nccl \
            --precision float,double --reps 3 --quiet --out "$out/gemm-dist-panel.csv" $more
        more=--append
    done
}

multi_gemm_weak_section() {
    gpus_env
    step "multi: gemm-dist weak scaling, n^2 per GPU held (parbench scaling --weak: the GFLOP/s per GPU kept)"
    local np n more=""
    for np in $counts; do
        case $np in 1) n=16384 ;; 2) n=23168 ;; 4) n=32768 ;; 8) n=46336 ;; esac
        run $mpi $np $pb run gemm-dist --backend cuda --n $n --path nccl --precision float,double --reps 3 --quiet \
            --out "$out/gemm-dist-weak.csv" $more
        more=--append
    done
}

trust_section() {
    step "trust: a GPU fault mid-run (cuda/fault): the later CUDA rows ERROR with the driver's message, ref goes on, exit 3"
    $pb run access --backend ref,cuda --variant ref/global-offset,cuda/global-offset,cuda/fault --n 4096 --step 0,1 \
        --reps 2 --quiet --format csv >>"$log" 2>&1
    echo "exit $? (want 3)" | tee -a "$log"
    step "trust: a problem too big for the device but not the host: ERROR, the next row runs"
    $pb run bandwidth --backend cuda --variant d2d --size 96G,1M --buffers 96 --reps 2 --quiet --format csv \
        >>"$log" 2>&1
    echo "exit $? (want 3)" | tee -a "$log"
    step "trust: 10,000 library turns (open, allocate, run, free, close) on CUDA grow no memory"
    PB_LIFECYCLE_TURNS=10000 PB_LIFECYCLE_BACKENDS=cuda run build-gpu/tests/test_lifecycle
    grep -E "turns|free memory" "$log" | tail -6
}

# As a new user would: odd and tiny sizes, awkward shapes, hand-made and
# generated matrices, planted faults, each on CUDA and NVIDIA's OpenCL. Each
# command's exit status and row statuses go to sweep.txt (rows FAILED or ERROR
# named, each command's rows in sweep/NAME.csv); only --inject-fault runs may
# fail (exit 1), nothing may crash or hang. The small ones also run under
# compute-sanitizer memcheck.
sweep_section() {
    step "sweep: as a new user, odd sizes and inputs (summary in sweep.txt)"
    local m="$out/sweep/matrices" gpu="--backend cuda,opencl --device nvidia" mc
    mc="compute-sanitizer --tool memcheck --error-exitcode 9"
    mkdir -p "$m"
    printf '%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.5\n' >"$m/one.mtx"
    printf '%%%%MatrixMarket matrix coordinate real general\n5 5 0\n' >"$m/zero.mtx"
    printf '%%%%MatrixMarket matrix coordinate real general\n3 7 4\n1 7 1\n3 1 2\n3 2 -1\n1 1 4\n' >"$m/rect.mtx"
    printf '%%%%MatrixMarket matrix coordinate pattern symmetric\n6 6 5\n1 1\n6 1\n4 2\n5 5\n6 6\n' >"$m/patsym.mtx"
    python3 - "$m" <<'PY'
import random, sys
random.seed(3)
d, n = sys.argv[1], 200003
rows = [(1000, c) for c in range(1, n + 1)] + [(r, r) for r in range(1, n, 7)] # one full row, most rows empty
with open(d + "/denserow.mtx", "w") as f:
    f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (n, n, len(rows)))
    f.writelines("%d %d %.3f\n" % (r, c, random.uniform(-1, 1)) for r, c in rows)
with open(d + "/densecol.mtx", "w") as f: # one full column of 9
    f.write("%%%%MatrixMarket matrix coordinate integer general\n%d 9 %d\n" % (n, n))
    f.writelines("%d 5 %d\n" % (r, random.randint(-9, 9)) for r in range(1, n + 1))
PY
    local files="$m/one.mtx,$m/zero.mtx,$m/rect.mtx,$m/patsym.mtx,$m/denserow.mtx,$m/densecol.mtx"
    : >"$out/sweep.txt"
    sw() { # sw NAME CMD...: its exit status and row statuses
        local name=$1 csv="$out/sweep/$1.csv"
        shift
        timeout -k 5 240 "$@" --quiet --out "$csv" >>"$log" 2>&1
        local rc=$?
        echo "$name exit $rc: $(python3 -c '
import collections, csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError:
    rows = []
print(" ".join("%s=%d" % kv for kv in sorted(collections.Counter(r["status"] for r in rows).items())))
for r in rows:
    if r["status"] in ("FAILED", "ERROR"):
        print("   ", r["status"], r["backend"], r["variant"], r["precision"], r["problem"], r["reason"][:120])
' "$csv" | head -4)" | tee -a "$out/sweep.txt"
    }
    sw gemm-tiny $pb run gemm $gpu --m 1 --n 1 --k 1 --precision float,double --reps 2
    sw gemm-odd $pb run gemm $gpu --m 1,33 --n 1023,1 --k 4097 --precision float,double --reps 2
    sw gemm-tc-odd $pb run gemm --backend cuda --m 129,1 --n 67 --k 1000 --precision tf32,bf16,fp16 --reps 2
    sw gemm-skinny $pb run gemm --backend cuda --m 65536 --n 64 --k 4096 --precision float,double --reps 3
    sw gemm-longk $pb run gemm --backend cuda --m 256 --n 192 --k 262147 --precision float,double --reps 3
    sw spmv-files $pb run spmv $gpu --matrix "$files" --precision float,double --reps 2
    sw spmv-gen $pb run spmv $gpu --matrix rect:1:100000000:1,dense:100000:3:2:50000,pareto:300000:8:1.1:0.5,band:1000001:5:3,blocks:99999:6:4,powerlaw:7:3,random:1:1,gaps:100003:4,lap2d:1,lap3d:2,rect:3000000:7:2 \
        --precision float,double --reps 2
    sw spmv-zoo-opencl $pb run spmv --backend opencl --device nvidia --matrix zoo:200000 --precision float,double --reps 2
    sw spmv-offsets64 $pb run spmv --backend cuda --matrix zoo:100000 --offsets 64 --reps 2
    sw spmv-fault $pb run spmv $gpu --matrix zoo:30000 --inject-fault --reps 1
    sw conv-tiny $pb run conv $gpu --width 1 --height 1 --radius 1,2 --precision float,double --reps 2
    sw conv-odd $pb run conv $gpu --width 8191 --height 37 --radius 1,32,128 --precision float,double --reps 2
    sw conv-narrow $pb run conv $gpu --width 100 --height 5000 --radius 128 --border zero,clamp --reps 2
    sw conv-clamp $pb run conv $gpu --width 4097 --height 3001 --radius 3,64 --border clamp --precision float,double --reps 2
    sw conv-fault $pb run conv $gpu --width 999 --height 777 --radius 5 --inject-fault --reps 1
    sw conv-stream-cap $pb run conv-stream --backend cuda --width 5000 --height 7001 --radius 32 --device-mem 64M --streams 1,2,3 --reps 2
    sw conv-stream-tiny $pb run conv-stream $gpu --width 30 --height 30 --radius 40 --reps 2
    sw conv-stream-strip $pb run conv-stream --backend cuda --host-mem pinned,staged --width 8191 --height 8193 --radius 5 --strip 7 --reps 2
    sw transpose-odd $pb run transpose $gpu --m 1,4097,65537 --n 1,33,3 --reps 2
    sw reduce-odd $pb run reduce $gpu --n 1,2,31,1025,100000007 --type 0,1,2 --reps 2
    sw access-odd $pb run access $gpu --n 1,33 --step 0:32:7 --reps 2
    sw bandwidth-odd $pb run bandwidth $gpu --size 1,7,1000001 --reps 2
    sw overlap-odd $pb run overlap --backend cuda --n 1,3,1001 --lm 1,2 --bs 8,0 --reps 2
    sw p2p-one $pb run p2p --reps 2
    sw memcheck-spmv $mc $pb run spmv --backend cuda --matrix "zoo:5000,$m/one.mtx,$m/zero.mtx,$m/rect.mtx,$m/patsym.mtx,rect:3:70000:2,dense:3000:3:2:2000" \
        --precision float,double --reps 1 --warmup 0
    sw memcheck-conv $mc $pb run conv --backend cuda --width 1,37,333 --height 5,129 --radius 1,7,70 --border zero,clamp --reps 1 --warmup 0
    sw memcheck-conv-stream $mc $pb run conv-stream --backend cuda --width 333 --height 517 --radius 9 --strip 8,100 --streams 1,3 --reps 1 --warmup 0
    sw memcheck-transpose $mc $pb run transpose --backend cuda --m 1,33,1001 --n 1,65,7 --reps 1 --warmup 0
    sw memcheck-reduce $mc $pb run reduce --backend cuda --n 1,31,1025,100003 --type 0,1,2 --reps 1 --warmup 0
    sw memcheck-gemm-tc $mc $pb run gemm --backend cuda --m 1,129 --n 67 --k 33 --precision tf32,bf16,fp16 --reps 1 --warmup 0
    rm -rf "$m"
}

# The test suite with CUDA required (a CUDA skip is a failure here).
tests_section() {
    step "devices"
    $pb devices | tee -a "$log"
    $pb devices --format json >"$out/devices.json"
    step "tests"
    # the GPU's tests are short; the long ones (spmv, cli, the MPI ones) run on the host
    local jobs=$(($(nproc) / 4))
    [ "$jobs" -lt 4 ] && jobs=4
    [ "$jobs" -gt 8 ] && jobs=8
    run env PB_REQUIRE=cuda${PB_REQUIRE:+,$PB_REQUIRE} ctest --test-dir build-gpu --output-on-failure -j "$jobs"
}

twins="--backend cuda,opencl --device nvidia"
sections="tests zoo_check spmv zoo zoo_cpu memlab conv limits stream tensor shapes shapes_random ceilings opencl opencl_copies opencl_kernels mpi mpi_ep"
sections+=" mpi_dist mpi_coll devpath multi multi_p2p multi_ep multi_coll multi_check multi_spmv multi_spmv_strong multi_spmv_weak"
sections+=" multi_gemm multi_gemm_strong multi_gemm_weak multi_gemm_panel trust studies sweep unseen thin"
if [ "$mode" != full ] && [ "$mode" != quick ]; then
    for m in "${modes[@]}"; do
        [[ " $sections " == *" $m "* ]] || { echo "unknown section '$m' (sections: $sections)" >&2; exit 2; }
    done
    for m in "${modes[@]}"; do
        [ "$m" = studies ] && $pb devices --format json >"$out/devices.json"
        ${m}_section
    done
    tail -n 30 "$log"
    echo "status $status"
    exit $status
fi

tests_section

step "compute-sanitizer on every CUDA gemm variant (awkward shapes)"
for tool in memcheck racecheck; do
    run compute-sanitizer --tool "$tool" --error-exitcode 9 \
        $pb run gemm --backend cuda --m 33,1 --n 17,130 --k 5,67 --precision float,double --reps 1 --warmup 0 --quiet
    # split-K (few tiles, long k; regblock and dmma) and packed inputs (leading dimensions no multiple of 4)
    run compute-sanitizer --tool "$tool" --error-exitcode 9 \
        $pb run gemm --backend cuda --variant regblock,dmma --m 100,301 --n 130,257 --k 5003 --precision float,double --reps 1 --warmup 0 --quiet
done
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run bandwidth --backend cuda --size 4K,1M --buffers 1,4 --reps 1 --warmup 0 --quiet
run compute-sanitizer --tool memcheck --error-exitcode 9 \
    $pb run overlap --backend cuda --n 67 --lm 3 --bs 8,0 --reps 1 --warmup 0 --quiet
step "energy: GEMM rows with NVML's energy, power, clocks and throttling filled"
run $pb run gemm --backend cuda --variant regblock,cublas --n 8192 --reps 40 --quiet --out "$out/energy-gemm.csv"
run python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["backend"] == "cuda" and r["status"] == "OK"]
cols = ("energy_source", "power_w", "energy_j", "gflops_per_w", "sm_mhz", "mem_mhz", "throttle")
for r in rows:
    print(r["variant"], " ".join(c + "=" + r[c] for c in cols))
empty = [r["variant"] + ":" + c for r in rows for c in cols if not r[c]]
print("empty:", empty or "none")
sys.exit(1 if empty or not rows else 0)' "$out/energy-gemm.csv"
tail -n 4 "$log"
[ "$mode" = quick ] && { echo "status $status"; exit $status; }

step "benchmarks (CUDA and its OpenCL twins on the NVIDIA platform)"
run $pb run bandwidth $twins --size 1K:1G:x4 --reps 10 --quiet --out "$out/bandwidth.csv"
run $pb run bandwidth --backend cuda --size 256M --buffers 1,16,256,4096 --reps 10 --quiet --out "$out/bandwidth-buffers.csv"
run $pb run gemm $twins --n 1024,4096,8192 --precision float,double --reps 10 --quiet --out "$out/gemm.csv"
run $pb run overlap $twins --n 864,1728,4096 --lm 5,10 --bs 16,0 --reps 5 --quiet --out "$out/overlap.csv"
run $pb run overlap --backend cuda --n 8192 --lm 5,10 --bs 0,16 --reps 3 --quiet --out "$out/overlap.csv" --append
spmv_section
memlab_section
conv_section
python3 scripts/twins.py "$out"/bandwidth.csv "$out"/gemm.csv "$out"/overlap.csv >"$out/twins.md" 2>>"$log"
ceilings_section
tail -n 60 "$log"
echo "status $status"
exit $status
