#!/usr/bin/env bash
# Our kernels on inputs from no fixed list, as a new user's would be: seeded
# random GEMM shapes (CUDA: also in tf32, bf16 and fp16 beside cublasGemmEx),
# convolution sizes and radii (CUDA: cuDNN is the anchor),
# and sparse matrices of every generated class with random parameters, each run
# beside its vendor anchor (cuBLAS, cuDNN, cuSPARSE; OpenBLAS and librsb on the
# CPU). A class the kernels were not tuned for shows in OUT/unseen.md.
#
# usage: scripts/unseen.sh PARBENCH OUT BACKEND [SEED]
#   BACKEND: cuda (sizes up to 12000, matrices of 0.5-4M rows) or openmp (up to
#   3000, 50k-1M rows: a few minutes on 2 cores). SEED (default 7) draws the set;
#   OUT/unseen-draws.txt lists it (all of it; PB_UNSEEN_KINDS="gemm spmv" runs only
#   those kinds: gemm, tensor, conv, spmv). Exit status 1 when a row FAILED or a run erred.
set -uo pipefail
pb=$1 out=$2 backend=$3 seed=${4:-7}
case $backend in
cuda) gemm_v=regblock,dmma,cublas tensor_v=wgmma,tc,cublas spmv_v=auto,csr-split,cusparse conv_v=regs,fused,cudnn ;;
openmp) gemm_v=blocked,openblas tensor_v= spmv_v=auto,csr,librsb-tuned conv_v= ;;
*) echo "unseen.sh: backend cuda or openmp, not '$backend'" >&2; exit 2 ;;
esac
mkdir -p "$out"
python3 - "$seed" "$backend" >"$out/unseen-draws.txt" <<'PY'
import math, random, sys
rnd = random.Random(int(sys.argv[1]))
small = sys.argv[2] != "cuda"
def logu(lo, hi): return int(round(math.exp(rnd.uniform(math.log(lo), math.log(hi)))))
big, deep, rows_lo, rows_hi = (3000, 4000, 50, 1000) if small else (12000, 16000, 500, 4000)
for i in range(14): # square-ish, then one thin side
    m, n, k = logu(300, big), logu(300, big), logu(300, deep)
    if i >= 10:
        m, n, k = [(logu(16, 256) if j == i % 3 else logu(big // 3, big * 5)) for j in range(3)]
    print("gemm", m, n, k)
for i in range(10):
    print("conv", logu(600, big), logu(600, big), logu(1, 128))
rows = lambda: "%dk" % logu(rows_lo, rows_hi)
for c in ("pareto", "pareto", "dense", "blocks", "band", "rmat", "rect", "gaps", "powerlaw", "random", "plap2d", "lap3d"):
    spec = {"pareto": lambda: "pareto:%s:%d:%.2f:%.2f" % (rows(), logu(4, 32), rnd.uniform(1.1, 3.0), rnd.uniform(0, 0.3)),
            "dense": lambda: "dense:%s:%d:%d:%d" % (rows(), logu(3, 12), logu(2, 200), logu(1000, 200000)),
            "blocks": lambda: "blocks:%s:%d:%d" % (rows(), rnd.randint(2, 6), logu(3, 16)),
            "band": lambda: "band:%s:%d:%d" % (rows(), logu(3, 60), rnd.randint(0, 8)),
            "rmat": lambda: "rmat:%d:%d" % (rnd.randint(15, 19) if small else rnd.randint(18, 22), logu(4, 32)),
            "rect": lambda: rnd.choice(["rect:%s:%dk:%d" % (rows(), logu(20, 200), logu(8, 64)),
                                        "rect:%dk:%dk:%d" % (logu(rows_lo // 10, rows_hi // 10), logu(rows_hi // 4, rows_hi),
                                                             logu(8, 40))]),
            "gaps": lambda: "gaps:%s:%d" % (rows(), logu(4, 32)),
            "powerlaw": lambda: "powerlaw:%s:%d" % (rows(), logu(4, 32)),
            "random": lambda: "random:%s:%d" % (rows(), logu(4, 64)),
            "plap2d": lambda: "plap2d:%d" % logu(rows_lo * 1.4, rows_hi * 0.5),
            "lap3d": lambda: "lap3d:%d" % logu(rows_lo * 0.16, rows_hi * 0.05)}[c]()
    print("spmv", spec)
PY
status=0
rm -f "$out/unseen.failed"
kinds=" ${PB_UNSEEN_KINDS:-gemm tensor conv spmv} "
while read -r kind a b c; do
    # the GEMM shapes serve both GEMM kinds: the tensor-core types run each one again
    [ "$kind" = gemm ] && [ -n "$tensor_v" ] && [[ $kinds == *" tensor "* ]] && echo "tensor $a $b $c"
    echo "$kind $a $b $c"
done <"$out/unseen-draws.txt" | while read -r kind a b c; do
    [[ $kinds == *" $kind "* ]] || continue
    case $kind in
    gemm) set -- gemm --variant "$gemm_v" --m "$a" --n "$b" --k "$c" --precision float,double --reps 5 ;;
    tensor) set -- gemm --variant "$tensor_v" --m "$a" --n "$b" --k "$c" --precision tf32,bf16,fp16 --reps 5 ;;
    conv) [ -n "$conv_v" ] || continue
        set -- conv --variant "$conv_v" --width "$a" --height "$b" --radius "$c" --precision float,double --reps 5 ;;
    spmv) set -- spmv --variant "$spmv_v" --matrix "$a" --precision double,float --reps 10 ;;
    esac
    echo "unseen: $*" >&2
    "$pb" run "$@" --backend "$backend" --quiet --out "$out/unseen-$kind.csv" --append >>"$out/unseen.log" 2>&1 ||
        { echo "unseen: FAILED ($?): $*" | tee -a "$out/unseen.log" >&2; touch "$out/unseen.failed"; }
done
[ -e "$out/unseen.failed" ] && status=1 && rm -f "$out/unseen.failed"
python3 "$(dirname "$0")/vs-anchor.py" "$out"/unseen-*.csv >"$out/unseen.md" || status=1
tail -n 8 "$out/unseen.md"
exit $status
