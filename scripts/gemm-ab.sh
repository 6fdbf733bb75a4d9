#!/usr/bin/env bash
# A/B of two parbench builds on GEMM shapes, run alternately in one call so
# that both see the same machine: OUT/ab-base.csv and OUT/ab-new.csv.
# usage: scripts/gemm-ab.sh BASE_PARBENCH NEW_PARBENCH OUT VARIANTS PRECISIONS SHAPE...
#   SHAPE: MxNxK. Every row is verified, as in any parbench run.
set -uo pipefail
base=$1 new=$2 out=$3 variants=$4 precisions=$5
shift 5
mkdir -p "$out"
status=0
for shape in "$@"; do
    IFS=x read -r m n k <<<"$shape"
    for which in base new; do
        pb=$base
        [ "$which" = new ] && pb=$new
        "$pb" run gemm --backend cuda --variant "$variants" --m "$m" --n "$n" --k "$k" --precision "$precisions" \
            --reps 5 --quiet --out "$out/ab-$which.csv" --append >>"$out/ab.log" 2>&1 ||
            { echo "gemm-ab: FAILED ($which): $shape" | tee -a "$out/ab.log"; status=1; }
    done
done
exit $status
