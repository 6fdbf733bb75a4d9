#!/usr/bin/env bash
# parbench under an MPI launcher: rows from every rank and their aggregate,
# only rank 0 writing, one rank's failure reported in its rows without a
# hang, an interrupt on one rank stopping all, ranks given different
# arguments refused. Every launch is bounded by `timeout`.
# usage: mpi_test.sh PATH/TO/parbench PATH/TO/mpiexec
set -u
pb=$(realpath "$1")
mpiexec=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
# Open MPI in containers: root, more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
expect() { # expect CODE CMD...
    local want=$1; shift
    timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    # LeakSanitizer's own crash ("Tracer caught signal 11", seen on a loaded machine with PoCL's
    # threads running in several ranks at once, twice in a row on one CI run) is no leak report:
    # the run again without the leak check, which the other runs keep.
    if [ "$got" -ne "$want" ] && grep -q "LeakSanitizer has encountered a fatal error" "$tmp/err"; then
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
        got=$?
    fi
    if [ "$got" -eq "$want" ]; then ok; else bad "exit $got (want $want): $*"; sed 's/^/  /' "$tmp/err" | head -8; fi
}
contains() { if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2'"; sed 's/^/  /' "$1" | head -20; fi; }
lacks() { if grep -qF -- "$2" "$1"; then bad "$1 has '$2'"; else ok; fi; }
json_has() { # json_has FILE '"key":value' (whitespace ignored)
    if tr -d ' \t\n' <"$1" | grep -qF -- "$2"; then ok; else bad "$1 lacks $2"; fi
}
count() { # count FILE TEXT N: lines holding TEXT
    local n; n=$(grep -cF -- "$2" "$1")
    if [ "$n" -eq "$3" ]; then ok; else bad "$1: $n lines with '$2' (want $3)"; fi
}

run="run gemm --n 40 --reps 2 --backend ref,opencl --variant ikj,tiled16 --quiet"

# Three ranks: a row per rank and job, one aggregate per job, printed once.
expect 0 "$mpiexec" -n 3 "$pb" $run --out "$tmp/ep.json"
count "$tmp/out" "# parbench" 1
count "$tmp/out" "ikj@" 4
count "$tmp/out" "tiled16@all" 1
count "$tmp/out" " OK" 8
contains "$tmp/out" "3 ranks on 1 node"
json_has "$tmp/ep.json" '"ranks":3'
json_has "$tmp/ep.json" '"rank":"all"'
json_has "$tmp/ep.json" '"rank_rates":{"min":'
# Ranks on one CPU share its ceiling: the aggregate's fraction is of one ceiling, not of one per rank.
expect 0 "$pb" ceilings --quick --backend openmp --reps 1 --ceilings "$tmp/ceil.json"
expect 0 "$mpiexec" -n 2 "$pb" run spmv --matrix lap2d:100 --backend openmp --variant csr --reps 2 --quiet \
    --ceilings "$tmp/ceil.json" --format csv --out "$tmp/shared.csv"
if awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gbps") g = i; if ($i == "ceiling_fraction") f = i; if ($i == "rank") k = i } }
            NR > 1 && $f > 0 { c[$k] = $g / $f } END { r = c["all"] / c["0"]; exit !(r > 0.999 && r < 1.001) }' "$tmp/shared.csv"; then
    ok
else
    bad "2 ranks on one CPU: the aggregate's ceiling is not the CPU's"
fi
# Only rank 0 wrote: the file is one complete document.
count "$tmp/ep.json" '"context"' 1

# One rank without an OpenCL driver: its rows and the aggregate say SKIP,
# naming the rank; the other rows are measured; exit 0 (a skip is no error).
expect 0 "$mpiexec" -n 2 "$pb" $run : -n 1 env OCL_ICD_VENDORS="$tmp/none" OCL_ICD_FILENAMES= "$pb" $run
count "$tmp/out" "tiled16@2 " 1
contains "$tmp/out" "SKIP: rank 2: "
count "$tmp/out" "ikj@all" 1
count "$tmp/out" " OK" 6

# A distributed benchmark: one row for all ranks; a rank without OpenCL
# means no rank runs OpenCL (SKIP naming it); exit 0; inject-fault FAILED (1).
ar="run allreduce --size 8,40000 --reps 2 --backend ref,opencl --quiet"
expect 0 "$mpiexec" -n 2 "$pb" $ar : -n 1 env OCL_ICD_VENDORS="$tmp/none" OCL_ICD_FILENAMES= "$pb" $ar
count "$tmp/out" "mpi-staged@all" 4
count "$tmp/out" " OK" 4
count "$tmp/out" "SKIP: rank 2: " 4
expect 1 "$mpiexec" -n 3 "$pb" run allreduce --size 1K --reps 2 --backend ref --variant mpi --inject-fault
count "$tmp/out" "FAILED" 1

# The other collectives on the CPU paths at 2 and 3 ranks: every row OK and
# verified, GB/s positive, busbw_gbps positive where the benchmark has it;
# allgather and alltoall sizes are whole elements per rank (8 B of floats
# over 3 ranks is one each: 12 B); the reason names the path. A planted fault FAILED naming the element
# (exit 1). pingpong: other ranks idle, SKIP on one rank (exit 0).
rows_ok() { # rows_ok FILE N: N rows, each OK, gbps > 0 and busbw_gbps > 0 if that column is there
    local n
    n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["status"] == "OK" && $col["gbps"] > 0 && (!col["busbw_gbps"] || $col["busbw_gbps"] > 0) { n++ }
        END { print n + 0 }' "$1")
    if [ "$n" -eq "$2" ]; then ok; else bad "$1: $n verified rows with positive rates (want $2)"; head -5 "$1"; fi
}
for coll in allgather alltoall broadcast pingpong; do
    for np in 2 3; do
        expect 0 "$mpiexec" -n $np "$pb" run $coll --size 8,40000 --precision float,double --reps 2 \
            --backend ref,openmp --quiet --format csv --out "$tmp/$coll$np.csv"
        rows_ok "$tmp/$coll$np.csv" 16
        lacks "$tmp/$coll$np.csv" "FAILED"
        if [ $np = 3 ] && [ $coll = allgather -o $coll = alltoall ]; then # whole elements per rank, as measured
            count "$tmp/$coll$np.csv" ",all,39996," 4                   # float: 3333 a rank
            count "$tmp/$coll$np.csv" ",all,39984," 4                   # double: 1666
        else
            count "$tmp/$coll$np.csv" ",all,40000," 8
        fi
        count "$tmp/$coll$np.csv" ",OK,path: host," 8 # mpi on host memory
        count "$tmp/$coll$np.csv" ",OK,path: staged," 8
    done
    expect 1 "$mpiexec" -n 3 "$pb" run $coll --size 1K --reps 2 --backend ref --inject-fault --quiet
    count "$tmp/out" "FAILED: rank 0: element " 2
done
for coll in allgather alltoall broadcast; do
    head -1 "$tmp/${coll}2.csv" >"$tmp/header"
    contains "$tmp/header" ",busbw_gbps"
done
# The row for all ranks states busbw over its own time, as its GB/s: for a
# broadcast (factor 1) the two are equal.
for np in 2 3; do
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             $col["rank"] == "all" { n++; g = $col["gbps"]; b = $col["busbw_gbps"]
                                     if ((g - b) ^ 2 > (1e-9 * g) ^ 2) { print "gbps " g ", busbw " b; bad = 1 } }
             END { exit bad || n != 16 }' "$tmp/broadcast$np.csv" && ok || bad "broadcast$np: busbw_gbps of the all row is not its GB/s"
done
count "$tmp/allgather3.csv" ",12,12 B," 4
count "$tmp/alltoall3.csv" ",12,12 B," 4
count "$tmp/alltoall3.csv" ",24,24 B," 4
count "$tmp/broadcast3.csv" ",8,8 B," 8
# sizes that round to one size run once: 8, 12 and 16 B of floats over 3 ranks are all 12 B
expect 0 "$mpiexec" -n 3 "$pb" run allgather --size 8,12,16,24 --backend ref --variant mpi --reps 1 --quiet \
    --format csv
count "$tmp/out" ",12 B," 1 # once, not three times (stdout: the row for all ranks)
count "$tmp/out" ",24,24 B," 1 # the size column is the size measured
expect 0 "$mpiexec" -n 1 "$pb" run pingpong --size 8 --backend ref --quiet
count "$tmp/out" "SKIP: pingpong needs two ranks" 2

# spmv-dist with every rank reading its own rows: every row verified as with
# rank 0 reading them all (files of every kind, a generator); a planted fault
# FAILED; a malformed file one clear error on every rank, no hang. (The
# partition itself is compared in test_mmio: the row lengths counted.)
data=$(cd "$(dirname "$0")/data" && pwd)
mats="$data/general.mtx,$data/symmetric_crlf.mtx,$data/skew_integer.mtx,$data/array_general.mtx,powerlaw:3000:8"
for reader in one each; do
    expect 0 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix "$mats" --reader $reader --backend ref,openmp --reps 2 \
        --precision double --quiet --out "$tmp/sd-$reader.csv"
    count "$tmp/sd-$reader.csv" ",OK," 20
done
count "$tmp/sd-each.csv" "(read by each)" 20
expect 1 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix "$data/symmetric_crlf.mtx,lap2d:30" --reader each --backend ref \
    --reps 2 --quiet --inject-fault
count "$tmp/out" " FAILED" 4
# x gathered whole (--halo allgather) gives the same verified rows as the p2p halos, on stencils,
# power-law rows, a wide rectangle and a file; auto gathers where a rank needs half the others'
# x or more (power-law rows), not on the stencil; a planted fault in a gathered row FAILED.
expect 0 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix "lap2d:30,powerlaw:3000:8,rect:300:5000:7,$data/general.mtx" \
    --halo p2p,allgather,auto --backend ref,openmp --reps 2 --quiet --format csv --out "$tmp/halo.csv"
count "$tmp/halo.csv" ",OK," 48
count "$tmp/halo.csv" " halo allgather,OK,x gathered whole" 16
count "$tmp/halo.csv" ",powerlaw:3000:8 by nnz,OK,x gathered whole" 4 # auto, the default: no halo in the label
count "$tmp/halo.csv" ",lap2d:30 by nnz,OK,halo staged" 4
count "$tmp/halo.csv" ",lap2d:30 by nnz halo p2p,OK,halo staged" 4
# Where the boundary rows hold most of the non-zeros (power-law rows, the wide rectangle) and the
# backend queues work (OpenCL here, not the synchronous ref and OpenMP), overlap runs their own
# columns ahead of the halo, verified as the rest; not on the stencil (a few boundary rows) nor
# with --split off. A planted fault in a split row FAILED.
lacks "$tmp/halo.csv" "own columns ahead of it"
sp="run spmv-dist --matrix powerlaw:3000:8,lap2d:30,rect:300:5000:7 --variant overlap --backend opencl --reps 2 --quiet"
expect 0 "$mpiexec" -n 3 "$pb" $sp --halo p2p,allgather --split auto,off --format csv --out "$tmp/split.csv"
count "$tmp/split.csv" ",OK," 12
count "$tmp/split.csv" "own columns ahead of it" 4
count "$tmp/split.csv" "powerlaw:3000:8 by nnz halo p2p,OK,halo staged through pinned host memory; boundary rows' own" 1
lacks "$tmp/split.csv" "split off,OK,halo staged through pinned host memory;"
expect 1 "$mpiexec" -n 2 "$pb" $sp --inject-fault
count "$tmp/out" " FAILED" 3
expect 1 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix powerlaw:3000:8 --halo allgather --backend ref --reps 2 \
    --quiet --inject-fault
count "$tmp/out" " FAILED" 2
# Gathered x with every rank's part padded to the largest (NCCL's layout, forced here on the
# staged path): the same verified rows, blocking and split, and a planted fault FAILED.
# rect:5:2:1 leaves a rank no column (its empty part still has its place).
expect 0 env PARBENCH_GATHER_PAD=1 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix lap2d:31,powerlaw:3001:8,rect:301:5000:7,rect:5:2:1 \
    --halo allgather --backend ref,opencl --reps 2 --quiet --format csv --out "$tmp/pad.csv"
count "$tmp/pad.csv" ",OK," 16
count "$tmp/pad.csv" "x gathered whole (parts padded to " 16
count "$tmp/pad.csv" "own columns ahead of it" 2
expect 1 env PARBENCH_GATHER_PAD=1 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix powerlaw:3001:8 --halo allgather \
    --backend opencl --reps 2 --quiet --inject-fault
count "$tmp/out" " FAILED" 2
# ... and in pieces, each stage of the split boundary rows behind its own piece of x (OpenCL's
# rows; a part of one column stays whole), batched; a planted fault FAILED.
expect 0 env PARBENCH_GATHER_PAD=1 PARBENCH_GATHER_CHUNKS=3 "$mpiexec" -n 3 "$pb" run spmv-dist \
    --matrix powerlaw:3001:8,rect:301:5000:7,rect:5:2:1 --halo allgather --backend ref,opencl --reps 2 --batch 3 \
    --quiet --format csv --out "$tmp/pieces.csv"
count "$tmp/pieces.csv" ",OK," 12
count "$tmp/pieces.csv" ", in 3 pieces) staged through pinned host memory; boundary rows' own columns ahead" 2
expect 1 env PARBENCH_GATHER_PAD=1 PARBENCH_GATHER_CHUNKS=2 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix powerlaw:3001:8 \
    --halo allgather --backend opencl --reps 2 --quiet --inject-fault
count "$tmp/out" " FAILED" 2
# --batch K: K products a repetition, each queued behind the last (OpenCL queues them; ref and
# OpenMP run them in turn), verified as one, labelled, times per product; a planted fault FAILED.
bt="run spmv-dist --matrix lap2d:31,powerlaw:3001:8 --backend ref,opencl --reps 2 --quiet"
expect 0 "$mpiexec" -n 2 "$pb" $bt --batch 7 --format csv --out "$tmp/batch.csv"
count "$tmp/batch.csv" ",OK," 8
count "$tmp/batch.csv" ",lap2d:31 by nnz batch 7,OK," 4
expect 1 "$mpiexec" -n 2 "$pb" $bt --batch 3 --inject-fault
count "$tmp/out" " FAILED" 8
# scaling keeps the batches apart and names the batch of 1 on every curve (powerlaw:3001:8's
# label holding a 1 does not count)
for np in 1 2; do
    for b in 1 7; do
        expect 0 "$mpiexec" -n $np "$pb" run spmv-dist --matrix lap2d:31,powerlaw:3001:8 --backend ref --variant overlap \
            --batch $b --reps 2 --quiet --out "$tmp/bs.csv" $([ -f "$tmp/bs.csv" ] && echo --append)
    done
done
expect 0 "$pb" scaling "$tmp/bs.csv"
count "$tmp/out" "(strong scaling)" 4
count "$tmp/out" " batch=1 (strong scaling)" 2
count "$tmp/out" " batch 7 (strong scaling)" 2
expect 0 "$pb" scaling --format csv "$tmp/bs.csv" # the curves told apart in CSV too: numbered, and why
count "$tmp/out" ',"batch=1",' 4 # 2 curves x 2 rank counts
contains "$tmp/out" "4,spmv-dist,ref,overlap,"
# the same rows appended again to the file: each rank count once a curve (the later rows), no
# file named (one file)
cat "$tmp/bs.csv" >"$tmp/bs2.csv"
tail -n +2 "$tmp/bs.csv" >>"$tmp/bs2.csv"
expect 0 "$pb" scaling --format csv "$tmp/bs2.csv"
count "$tmp/out" ',"batch=1",' 4
lacks "$tmp/out" "(bs2.csv)"
expect 2 "$pb" run spmv-dist --matrix lap2d:4 --batch 0 --backend ref
contains "$tmp/err" "--batch takes one value, 1 to 10000"
expect 2 "$pb" run spmv-dist --matrix lap2d:4 --batch 2,3 --backend ref
expect 2 "$pb" run spmv-dist --matrix lap2d:4 --halo broadcast --backend ref
contains "$tmp/err" "--halo 'broadcast' is none of p2p, allgather or auto"
# --reader one: only rank 0 needs the file (rank 1 runs in a folder without it).
mkdir -p "$tmp/with" "$tmp/without"
cp "$data/general.mtx" "$tmp/with/m.mtx"
rd="run spmv-dist --matrix m.mtx --reader one --backend ref --reps 2 --quiet"
expect 0 "$mpiexec" -n 1 -wdir "$tmp/with" "$pb" $rd : -n 1 -wdir "$tmp/without" "$pb" $rd
count "$tmp/out" " OK" 2
# A local kernel that refuses the rows (bcsr, no blocks in lap2d), or that one backend lacks
# (csr on ref and OpenMP, not OpenCL): UNSUPPORTED rows, found at bind, exit 0.
expect 0 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix lap2d:40 --local bcsr --backend openmp --reps 2 --quiet
count "$tmp/out" "UNSUPPORTED: rank 0: no block structure" 2
expect 0 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix lap2d:40 --local csr-v4 --backend ref,openmp --reps 2 --quiet
count "$tmp/out" "UNSUPPORTED: rank 0: spmv-dist: --local csr-v4: ref has no such spmv kernel" 2
count "$tmp/out" " OK" 2
# A value past float's range held by one rank: every rank refuses float (UNSUPPORTED, the value
# named), double runs; exit 0.
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 4\n1 1 1\n2 2 1e300\n3 3 2\n4 4 3\n' >"$tmp/ext.mtx"
expect 0 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix "$tmp/ext.mtx" --reader each --backend ref --reps 2 --quiet \
    --precision float,double
count "$tmp/out" "UNSUPPORTED: rank 0: value 1e+300 in row 2 does not fit in float" 2
count "$tmp/out" " OK" 2
# A header declaring 2e9 x 2e9: refused on every rank before any of it is allocated (the readers of
# one host together), not the OOM killer.
printf '%%%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 2\n1 1 1\n2000000000 2000000000 1\n' \
    >"$tmp/huge.mtx"
expect 3 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix "$tmp/huge.mtx" --reader each --backend ref --reps 1 --quiet
contains "$tmp/out" "3 reader(s) on this host need"
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 3\n1 1 1\n2 2 2\n4 4 x\n' >"$tmp/bad.mtx"
expect 3 "$mpiexec" -n 3 "$pb" run spmv-dist --matrix "$tmp/bad.mtx" --reader each --backend ref --quiet
contains "$tmp/out" "bad.mtx:5: value"
# What the ranks of one node hold together is weighed before any of them allocates (every buffer
# alone passes the per-buffer check), here on a pretend host of a few MiB (PB_TEST_MEM_AVAILABLE):
# a row ERROR on every rank with the one reason, exit 3, the rows measured before it kept.
# allreduce 1 MiB on 2 ranks: mpi has no staging buffers (5.5 MiB in all), mpi-staged does (9.5).
fit="run allreduce --size 1M --backend ref --reps 2 --quiet"
expect 3 "$mpiexec" -n 2 env PB_TEST_MEM_AVAILABLE=6M "$pb" $fit --format csv --out "$tmp/fit.csv"
count "$tmp/fit.csv" ",OK,path: host," 1
count "$tmp/fit.csv" ",ERROR," 1
contains "$tmp/fit.csv" ",ERROR,\"rank 0: allreduce 1.0 MiB on 2 rank(s) of this node needs 9.5 MiB of host memory for their buffers, pinned staging included, 6.0 MiB is available\""
expect 3 "$mpiexec" -n 2 env PB_TEST_MEM_AVAILABLE=4M "$pb" $fit --variant mpi
contains "$tmp/out" "ERROR: rank 0: allreduce 1.0 MiB on 2 rank(s) of this node needs 5.5 MiB of host memory for their buffers, 4.0 MiB is available"
lacks "$tmp/out" " OK"
expect 0 "$mpiexec" -n 2 "$pb" $fit # the same on this host: measured
count "$tmp/out" " OK" 2
# gemm-dist 256 on 2 ranks (1 x 2): the check's copies and the input block (1.1 MiB) weighed
# before prepare makes them, the blocks and panels (1.8 MiB more) before bind allocates them.
gf="run gemm-dist --n 256 --backend ref --variant summa --reps 2 --quiet"
expect 3 "$mpiexec" -n 2 env PB_TEST_MEM_AVAILABLE=1M "$pb" $gf
contains "$tmp/out" "ERROR: rank 0: gemm-dist 256x256x256 on 2 rank(s) of this node needs 1.1 MiB of host memory (the check's copies of A's rows and B's columns, the input block), 1.0 MiB is available"
expect 3 "$mpiexec" -n 2 env PB_TEST_MEM_AVAILABLE=1536k "$pb" $gf
contains "$tmp/out" "ERROR: rank 0: gemm-dist 256x256x256 on 2 rank(s) of this node needs 1.8 MiB of host memory (blocks of A, B and C, panels, the input block), 1.5 MiB is available"
expect 0 "$mpiexec" -n 2 "$pb" $gf
count "$tmp/out" "summa@all" 1
count "$tmp/out" " OK" 1
# --reader each where the ranks' file systems hold different files under one name: refused with
# both sizes (or the row lengths) named, not a partition that disagrees between ranks.
mkdir -p "$tmp/rk0" "$tmp/rk1"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n' >"$tmp/rk0/d.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n4 3 3\n1 1 1\n2 2 2\n3 3 3\n' >"$tmp/rk1/d.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n1 2 2\n3 3 3\n' >"$tmp/rk0/l.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n3 3 3\n' >"$tmp/rk1/l.mtx"
in_rank_dir='cd "$0${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" && exec "$@"'
expect 3 "$mpiexec" -n 2 sh -c "$in_rank_dir" "$tmp/rk" "$pb" run spmv-dist --matrix d.mtx,l.mtx --reader each \
    --backend ref --reps 1 --quiet
count "$tmp/out" "rank 1 read d.mtx as 4 x 3 with 3 entries, rank 0 as 3 x 3 with 3: every rank must read the same" 2
count "$tmp/out" "rank 1 read l.mtx with other row lengths than rank 0" 2
# The layout knobs of gathered x set on one rank only: agreed (the largest), not a broadcast that
# truncates.
pad_on_rank1='[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 1 ] && export PARBENCH_GATHER_PAD=1 PARBENCH_GATHER_CHUNKS=3; exec "$@"'
expect 0 "$mpiexec" -n 3 sh -c "$pad_on_rank1" sh "$pb" run spmv-dist --matrix powerlaw:1000:8,lap2d:20 \
    --halo allgather --backend ref,opencl --reps 2 --quiet
count "$tmp/out" " OK" 8

# Scaling tables from runs at 1, 2 and 3 ranks appended to one file, and the
# projection beside them.
sd="run spmv-dist --matrix lap2d:40 --backend ref --reps 2 --quiet --out $tmp/sd.csv"
expect 0 "$mpiexec" -n 1 "$pb" $sd
for n in 2 3; do expect 0 "$mpiexec" -n $n "$pb" $sd --append; done
expect 0 "$pb" scaling "$tmp/sd.csv"
count "$tmp/out" "(strong scaling)" 2
expect 0 "$mpiexec" -n 1 "$pb" run spmv-dist --matrix lap2d:40 --backend ref --reps 2 --quiet --out "$tmp/sd1.csv"
expect 3 "$pb" scaling "$tmp/sd1.csv" "$tmp/sd1.csv"  # one rank count, twice: no curve
contains "$tmp/err" "no run in these files at two or more rank counts"
expect 0 "$pb" scaling "$tmp/sd.csv"
count "$tmp/out" "(strong scaling)" 2
count "$tmp/out" "     3 " 2
contains "$tmp/out" "1.00"
cp "$tmp/sd.csv" "$tmp/sd-again.csv" # the same runs in two files: a curve each, named by file
expect 0 "$pb" scaling "$tmp/sd.csv" "$tmp/sd-again.csv"
count "$tmp/out" "(strong scaling)" 4
count "$tmp/out" "(sd-again.csv) (strong scaling)" 2
expect 0 "$pb" scaling --weak --format csv "$tmp/sd.csv"
count "$tmp/out" "spmv-dist,ref," 6
expect 2 "$pb" scaling --format xml "$tmp/sd.csv"
# "Every rank at once" at 1 and 2 ranks, two problems each: a weak curve per
# problem (not the two problems' rows in one curve against the first).
ep="run gemm --n 24,40 --backend ref --variant ikj --reps 2 --quiet --out $tmp/ep.csv"
expect 0 "$mpiexec" -n 1 "$pb" $ep
expect 0 "$mpiexec" -n 2 "$pb" $ep --append
expect 0 "$pb" scaling --weak "$tmp/ep.csv"
count "$tmp/out" "(weak scaling)" 2
count "$tmp/out" "gemm ref/ikj float, 24x24x24 (weak scaling)" 1
count "$tmp/out" "     2 " 2
# The 2-rank run again, appended: a re-run whose later rows count, not two problems at one count.
expect 0 "$mpiexec" -n 2 "$pb" $ep --append
expect 0 "$pb" scaling --weak "$tmp/ep.csv"
count "$tmp/out" "(weak scaling)" 2
lacks "$tmp/err" "several problems ran at one rank count"
expect 0 "$pb" scaling "$tmp/ep.csv" # without --weak: said
contains "$tmp/err" "some rows ran every rank at once, each rank its own problem"
expect 0 "$pb" scaling "$tmp/sd.csv" # spmv-dist: one problem shared, nothing to say
lacks "$tmp/err" "every rank at once"
# Weak scaling keeps the rate per rank: gemm-dist at n = 40 on one rank and 64 on two (twice
# the flops per rank) reads speed-up = the ratio of the rows' GFLOP/s, not of their times.
wk="run gemm-dist --backend ref --variant summa --reps 2 --quiet --out $tmp/wk.csv"
expect 0 "$mpiexec" -n 1 "$pb" $wk --n 40
expect 0 "$mpiexec" -n 2 "$pb" $wk --n 64 --append
want=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gflops") g = i; if ($i == "ranks") n = i }; next }
    $n == 1 { base = $g } $n == 2 { top = $g } END { if (base > 0) printf "%.3g", top / base }' "$tmp/wk.csv")
expect 0 "$pb" scaling --weak --format csv "$tmp/wk.csv"
contains "$tmp/out" ",2,"
got=$(awk -F, '$(NF - 6) == 2 { print $(NF - 4) }' "$tmp/out")
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else bad "weak speed-up $got, want the GFLOP/s ratio $want"; fi
# A strong series given with the weak one: its rank counts repeat, so each problem is its own
# curve, said on stderr, and a fixed problem of a distributed benchmark is strong scaling.
expect 0 "$mpiexec" -n 1 "$pb" $wk --n 64 --append
expect 0 "$pb" scaling --weak "$tmp/wk.csv"
contains "$tmp/err" "several problems ran at one rank count"
count "$tmp/out" "(strong scaling)" 1
contains "$tmp/out" "gemm-dist ref/summa float, 64x64x64 on 1x1 panel"
lacks "$tmp/out" "(weak scaling)"
# Curves that differ only in a parameter the problem does not name: it is in the title.
lo="run spmv-dist --matrix lap2d:40 --backend ref --local default,csr --reps 2 --quiet --out $tmp/lo.csv"
expect 0 "$mpiexec" -n 1 "$pb" $lo
expect 0 "$mpiexec" -n 2 "$pb" $lo --append
expect 0 "$pb" scaling "$tmp/lo.csv"
count "$tmp/out" "local=csr (strong scaling)" 2
count "$tmp/out" "local=default (strong scaling)" 2
expect 0 "$pb" report "$tmp/ep.csv" --out "$tmp/ep.html"
contains "$tmp/ep.html" "gemm: every rank at once"
lacks "$tmp/ep.html" "gemm: strong scaling"
expect 0 "$pb" report "$tmp/sd.csv" --out "$tmp/sd.html"
contains "$tmp/sd.html" 'id="scaling"'
contains "$tmp/sd.html" "spmv-dist: strong scaling"
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:8 --latency 1e-6 --bandwidth 1e10 --from "$tmp/sd.csv"
count "$tmp/out" "non-zeros/s (a one-rank spmv-dist row" 1
contains "$tmp/out" "communication"
contains "$tmp/out" "non-zeros, float)" # without --precision: the rows' (sd.csv holds float only)
# The rate comes only from rows of the precision and balance asked for (sd.csv: float, by nnz).
for other in "--precision double" "--balance rows"; do
    expect 2 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:8 --latency 1e-6 --bandwidth 1e10 $other --from "$tmp/sd.csv"
    contains "$tmp/err" "no rate"
done
# Rows of two backends: one backend's are taken (rate and step from one kernel), and said.
expect 0 "$mpiexec" -n 1 "$pb" run spmv-dist --matrix lap2d:40 --backend ref,openmp --reps 2 --quiet --out "$tmp/two.csv"
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --latency 1e-6 --bandwidth 1e10 --from "$tmp/two.csv"
contains "$tmp/err" "--from has spmv-dist rows of ref and openmp: ref's taken (--backend chooses)"
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --latency 1e-6 --bandwidth 1e10 --from "$tmp/two.csv" \
    --backend openmp
lacks "$tmp/err" "taken"
# --batch: the rows run with that batch, and only those (sd.csv has batch 1 only).
expect 0 "$mpiexec" -n 1 "$pb" run spmv-dist --matrix lap2d:40 --backend ref --batch 4 --reps 2 --quiet --out "$tmp/b4.csv"
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --latency 1e-6 --bandwidth 1e10 --batch 4 \
    --from "$tmp/b4.csv" "$tmp/sd.csv"
count "$tmp/out" "non-zeros/s (a one-rank spmv-dist row" 1
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --latency 1e-6 --bandwidth 1e10 --batch 4 --from "$tmp/sd.csv"
contains "$tmp/err" "no rate"
contains "$tmp/err" "(the rate: a one-rank spmv-dist row of lap2d:40 by nnz, double, --batch 4)"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --latency 1e-6 --bandwidth 1e10 --batch 0
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --rate 1e9 --latency 1e-6 --bandwidth 1e10 --batch 4
contains "$tmp/err" "without --from it has nothing to choose"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:2 --rate 1e9 --latency 1e-6 --bandwidth 1e10 --batch abc
expect 2 "$pb" project spmv-dist --matrix lap3d:abc --ranks 1:2 --rate 1e9 --latency 1e-6 --bandwidth 1e10
# The most ranks it takes: the pairs of ranks are listed, not a ranks x ranks table (2^40 bits).
expect 0 "$pb" project spmv-dist --matrix lap2d:10 --rate 1e9 --latency 1e-6 --bandwidth 1e10 --ranks 1048576
contains "$tmp/out" "1048576 "
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --rate inf --latency 1e-6 --bandwidth 1e10
contains "$tmp/err" "'inf' is not a positive number"
expect 0 "$mpiexec" -n 2 "$pb" run pingpong --size 8,64K --backend ref --reps 2 --quiet --out "$tmp/pp.csv"
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1:8 --from "$tmp/sd.csv" "$tmp/pp.csv"
contains "$tmp/out" "the fastest two-rank pingpong"  # point to point, as a halo travels
# --path: the link figures and measured rows of one halo path only (these
# files have no NCCL rows: nothing to take them from)
expect 0 "$pb" project spmv-dist --matrix lap2d:40 --ranks 1,2,3,4 --path staged --from "$tmp/sd.csv" "$tmp/pp.csv"
contains "$tmp/out" "halos via staged"
# ranks 1-3 measured (overlap and blocking), 4 not
if [ "$(grep -cE '^ +[123] .* [0-9.e-]+ +[0-9.e-]+$' "$tmp/out")" -eq 3 ] && grep -qE '^ +4 .* - +-$' "$tmp/out"; then ok
else bad "project --path staged: the measured rows are not beside ranks 1-3"; fi
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --path nccl --from "$tmp/sd.csv" "$tmp/pp.csv"
contains "$tmp/err" "project: no rate, latency or bandwidth: give --rate"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --path ucx --rate 1e9 --latency 1e-6 --bandwidth 1e10
contains "$tmp/err" "project: --path 'ucx' is none of staged, mpi or nccl"
expect 2 "$pb" project spmv-dist --matrix lap2d:40
contains "$tmp/err" "project: no rate, latency or bandwidth: give --rate"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --rate 1e9 --bandwidth 1e10
contains "$tmp/err" "project: no latency: give --rate"
# x moves as spmv-dist's --halo would move it: gathered whole for power-law rows under auto,
# point to point on the stencil or when asked; the measured gathered rows sit beside it.
lk="--rate 1e9 --latency 1e-6 --bandwidth 1e10 --ranks 1,2,4"
expect 0 "$pb" project spmv-dist --matrix powerlaw:3000:8 $lk
count "$tmp/out" " whole " 2
contains "$tmp/out" "--halo auto --split auto"
expect 0 "$pb" project spmv-dist --matrix powerlaw:3000:8 $lk --halo p2p --split off
count "$tmp/out" " whole " 0
expect 0 "$pb" project spmv-dist --matrix lap2d:40 $lk
count "$tmp/out" " whole " 0
pw="run spmv-dist --matrix powerlaw:3000:8 --backend ref --reps 2 --quiet --out $tmp/pw.csv"
expect 0 "$mpiexec" -n 1 "$pb" $pw
expect 0 "$mpiexec" -n 2 "$pb" $pw --append
expect 0 "$pb" project spmv-dist --matrix powerlaw:3000:8 --ranks 1,2 --latency 1e-6 --bandwidth 1e10 --precision float \
    --from "$tmp/pw.csv"
if grep -qE '^ +2 .* whole .* [0-9.e-]+ +[0-9.e-]+$' "$tmp/out"; then ok; else bad "project: the gathered 2-rank row is not beside its projection"; fi
# Products alone that cost more per entry on two ranks than on one (compute_s set to 1 and
# 0.6 ms here): the rate and a cost per product are fitted through both, and the two-rank
# projection's compute is the measured 0.6 ms.
awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "compute_s") c = i; if ($i == "ranks") n = i; if ($i == "rank") k = i } }
    NR > 1 && $n == 1 { $c = "0.001" } NR > 1 && $n == 2 && $k == "all" { $c = "0.0006" } { print }' "$tmp/pw.csv" >"$tmp/pw-step.csv"
expect 0 "$pb" project spmv-dist --matrix powerlaw:3000:8 --ranks 1,2 --latency 1e-6 --bandwidth 1e10 --precision float \
    --from "$tmp/pw-step.csv"
contains "$tmp/out" "# products: "
if grep -qE '^ +2 +[0-9]+ +[0-9]+ +[0-9]+ +[a-z]+ +0.0006 ' "$tmp/out"; then ok; else bad "project: the fitted 2-rank compute is not the measured 0.0006 s"; sed 's/^/  /' "$tmp/out"; fi
# a padded gather's row (NCCL's layout, forced here) counts as gathered too
pw="run spmv-dist --matrix powerlaw:3001:8 --backend ref --reps 2 --quiet --out $tmp/pad2.csv"
expect 0 "$mpiexec" -n 1 "$pb" $pw
expect 0 env PARBENCH_GATHER_PAD=1 "$mpiexec" -n 2 "$pb" $pw --append
contains "$tmp/pad2.csv" "x gathered whole (parts padded to "
expect 0 "$pb" project spmv-dist --matrix powerlaw:3001:8 --ranks 1,2 --latency 1e-6 --bandwidth 1e10 --precision float \
    --path staged --from "$tmp/pad2.csv"
if grep -qE '^ +2 .* whole .* [0-9.e-]+ +[0-9.e-]+$' "$tmp/out"; then ok; else bad "project: the padded 2-rank row is not beside its projection"; fi
# --split off takes the rows that did not split: ref's, whatever they were asked
expect 0 "$pb" project spmv-dist --matrix powerlaw:3000:8 --ranks 1,2 --latency 1e-6 --bandwidth 1e10 --precision float \
    --split off --from "$tmp/pw.csv"
if grep -qE '^ +2 .* whole .* [0-9.e-]+ +[0-9.e-]+$' "$tmp/out"; then ok; else bad "project --split off: ref's 2-rank row is not beside it"; fi
expect 2 "$pb" project spmv-dist --matrix lap2d:40 $lk --halo ring
contains "$tmp/err" "project: --halo 'ring' is none of p2p, allgather or auto"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 $lk --split on
contains "$tmp/err" "project: --split 'on' is neither auto nor off"
expect 2 "$pb" project spmv-dist --matrix lap2d:40 --rate 1e9
contains "$tmp/err" "project: no latency or bandwidth: give --rate"

# gemm-dist: SUMMA on a 1x3 grid (OpenMP in place, OpenCL through host
# buffers), verified on every rank; a planted fault FAILED (exit 1) on 2x2.
gd="run gemm-dist --m 7 --n 40 --k 33 --panel 8 --reps 2 --backend openmp,opencl --variant summa --quiet"
expect 0 "$mpiexec" -n 3 "$pb" $gd
count "$tmp/out" "7x40x33 on 1x3 panel 8" 2
count "$tmp/out" " OK" 2
expect 1 "$mpiexec" -n 4 "$pb" $gd --inject-fault
count "$tmp/out" "on 2x2 panel 8" 2
count "$tmp/out" "FAILED: rank " 2
# panels past k are k wide, and named so: 0 (auto: k here), 33 and 1000 are one problem, 8 another
expect 0 "$mpiexec" -n 2 "$pb" run gemm-dist --m 7 --n 40 --k 33 --panel 0,8,33,1000 --reps 2 --backend openmp \
    --variant summa --quiet
count "$tmp/out" "7x40x33 on 1x2 panel 33 " 1
count "$tmp/out" "7x40x33 on 1x2 panel 8 " 1
count "$tmp/out" " OK" 2

# --path: how panels and halos move. Host backends broadcast in place or
# stage; a device path asked for by name is UNSUPPORTED there, with the
# reason; a path nobody has is a usage error. Each row names its path.
expect 0 "$mpiexec" -n 3 "$pb" $gd --path auto,staged,nccl
count "$tmp/out" "on 1x3 panel 8 via staged" 2
count "$tmp/out" "panels broadcast in place (host memory)" 2
count "$tmp/out" "panels staged through pinned host memory" 2
count "$tmp/out" "UNSUPPORTED: rank 0: --path nccl: the openmp backend has no device path" 1
count "$tmp/out" "UNSUPPORTED: rank 0: --path nccl: the opencl backend has no device path" 1
expect 0 "$mpiexec" -n 2 "$pb" run spmv-dist --matrix lap2d:20 --backend ref --variant overlap --path staged,mpi \
    --reps 2 --quiet
count "$tmp/out" "halo staged through host memory" 1 # ref's memory is the host's: no pinned copy
count "$tmp/out" "UNSUPPORTED: rank 0: --path mpi: the ref backend has no device path" 1
expect 2 "$pb" run spmv-dist --matrix lap2d:20 --backend ref --path carrier-pigeon
contains "$tmp/err" "--path 'carrier-pigeon' is none of auto, staged, mpi or nccl"

# One rank reads a malformed file of the same name: ERROR rows naming the
# rank and the line, exit 3, no hang.
mkdir -p "$tmp/good" "$tmp/bad"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 3 2.0\n' >"$tmp/good/m.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 3 x\n' >"$tmp/bad/m.mtx"
spmv="run spmv --matrix m.mtx --backend ref --variant csr --reps 2 --quiet"
expect 3 "$mpiexec" -n 1 -wdir "$tmp/good" "$pb" $spmv : -n 1 -wdir "$tmp/bad" "$pb" $spmv
contains "$tmp/out" "csr@0"
contains "$tmp/out" "ERROR: rank 1: m.mtx:4:"

# An output rank 0 cannot write: one line, exit 3, nothing run.
expect 3 "$mpiexec" -n 2 "$pb" $run --out "$tmp/missing/x.csv"
count "$tmp/err" "cannot write" 1
lacks "$tmp/out" "ikj@"

# Usage errors are said once, by rank 0.
expect 2 "$mpiexec" -n 3 "$pb" run gemm --bogus
count "$tmp/err" "unknown option '--bogus'" 1
expect 2 "$mpiexec" -n 2 "$pb" $run --rank-device nearest
count "$tmp/err" "--rank-device" 1

# Ranks started with different arguments are refused before anything runs.
expect 2 "$mpiexec" -n 1 "$pb" run gemm --n 32 --backend ref : -n 1 "$pb" run gemm --n 64 --backend ref
contains "$tmp/err" "different arguments"

# An interrupt on one rank stops every rank after the current repetition;
# the rows already written stay, exit 130.
slow="run gemm --n 8,160 --backend ref --variant ijk --reps 20000 --quiet --out $tmp/int.csv"
timeout 120 "$mpiexec" -n 2 "$pb" $slow >"$tmp/out" 2>"$tmp/err" &
launcher=$!
for _ in $(seq 600); do # n = 8 is written, n = 160 runs
    [ -f "$tmp/int.csv" ] && [ "$(wc -l <"$tmp/int.csv")" -ge 4 ] && break
    sleep 0.1
done
victim=$(pgrep -f -n -- "$pb run gemm --n 8,160")
[ -n "$victim" ] && kill -INT "$victim"
wait "$launcher"
got=$?
if [ "$got" -eq 130 ]; then ok; else bad "interrupted run: exit $got (want 130)"; sed 's/^/  /' "$tmp/err" | head; fi
count "$tmp/int.csv" ",8x8x8," 3
count "$tmp/int.csv" ",160x160x160," 0

echo "mpi_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
