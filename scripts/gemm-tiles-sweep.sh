#!/usr/bin/env bash
# Every regblock tile and piece count on each shape, for tuning the plan's model:
# scripts/gemm-tiles-sweep.sh PARBENCH OUT.csv PRECISION SHAPE... (SHAPE: MxNxK).
# Each row is parbench's CSV row behind four columns: shape, own or cublas, the
# tile imposed (PARBENCH_GEMM_TILE) and the pieces (PARBENCH_GEMM_PIECES), "auto"
# where the plan chose. PB_SWEEP_TILES and PB_SWEEP_PIECES override the lists.
set -uo pipefail
pb=$1 out=$2 prec=$3
shift 3
tiles=${PB_SWEEP_TILES:-auto 128x256 128x128 128x64 64x64 256x32}
pieces=${PB_SWEEP_PIECES:-auto 1 3 6 12}
for shape in "$@"; do
    IFS=x read -r m n k <<<"$shape"
    $pb run gemm --backend cuda --variant cublas --m "$m" --n "$n" --k "$k" --precision "$prec" --reps 5 --no-verify \
        --quiet --format csv 2>/dev/null | sed -n '2p' | sed "s/^/$shape,cublas,auto,auto,/" >>"$out"
    for t in $tiles; do
        for p in $pieces; do
            (
                [ "$t" != auto ] && export PARBENCH_GEMM_TILE=$t
                [ "$p" != auto ] && export PARBENCH_GEMM_PIECES=$p
                $pb run gemm --backend cuda --variant regblock,dmma --m "$m" --n "$n" --k "$k" --precision "$prec" \
                    --reps 5 --no-verify --quiet --format csv 2>/dev/null | sed -n '2,$p' | sed "s/^/$shape,own,$t,$p,/"
            ) >>"$out"
        done
    done
done
