/* The five source studies (see study.h): experiments and published figures.
 *
 * Every number below is copied from the original named in the study's
 * `original` (shared/seeds/), at the table, figure, slide or section named in
 * the figure's `source`; a ratio is written as the two numbers it divides.
 * Where the original draws a conclusion, `claim` and `limit` state it so that
 * our measurement can be held against it. */
#include <math.h>
#include <string.h>

#include "report/study.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define NONE {NULL, NULL, NULL, NULL, NULL, NULL}

/* ---- 000: hiding transfers behind GEMM (Polish lab report, GTX 260) ------------ */

static const struct pb_study_exp exps_000[] = {
    {"overlap", "versions 3 and 5 of the report, and the control run it asked for (v3 with pinned memory)",
     "overlap --backend cuda --n 224,864,1120,1728,4096 --lm 1,5,10 --bs 8,16,32 --reps 10",
     "overlap --backend cuda,opencl --n 64,128 --lm 1,5 --bs 8,16 --reps 3",
     "n = 4096 and BS 32 added to the study's n = 224-1728 and BS 8, 16: today's GPUs finish the study's "
     "products in milliseconds, and the GTX 260 could not run 32 x 32 blocks (512 threads at most)"},
};

#define OV(variant, params, quick) {"overlap", "cuda,opencl", variant, params, quick, "gflops"}
#define OV_T(variant, params, quick) {"overlap", "cuda,opencl", variant, params, quick, "median_s"}

static const struct pb_study_fig figs_000[] = {
    {"v5 (a stream per matrix) GFLOP/s, n = 864, BS 16, Lm 5", "Tablica 1", "GeForce GTX 260", 651.5, 0,
     "GFLOP/s", OV("streams-breadth", "n=864 bs=16 lm=5", "n=128 bs=16 lm=5"), NONE, 0, 0, NULL,
     "the report's best figure; its n = 864 rows disagree across Lm (Lm 1 takes 69.9 ms, Lm 5 9.9 ms)"},
    {"v3 (blocking, pageable) GFLOP/s, n = 864, BS 16, Lm 5", "Tablica 1", "GeForce GTX 260", 536.01, 0,
     "GFLOP/s", OV("v3-pageable", "n=864 bs=16 lm=5", "n=128 bs=16 lm=5"), NONE, 0, 0, NULL, NULL},
    {"v5 GFLOP/s, n = 1728, BS 16, Lm 10", "Tablica 1", "GeForce GTX 260", 191.61, 0, "GFLOP/s",
     OV("streams-breadth", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"), NONE, 0, 0, NULL, NULL},
    {"v3 GFLOP/s, n = 1728, BS 16, Lm 10", "Tablica 1", "GeForce GTX 260", 143.02, 0, "GFLOP/s",
     OV("v3-pageable", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"), NONE, 0, 0, NULL, NULL},
    {"v5 GFLOP/s, n = 1728, BS 8, Lm 10", "Tablica 1", "GeForce GTX 260", 55.07, 0, "GFLOP/s",
     OV("streams-breadth", "n=1728 bs=8 lm=10", "n=128 bs=8 lm=5"), NONE, 0, 0, NULL, NULL},
    {"v5 GFLOP/s, n = 224, BS 16, Lm 10", "Tablica 1", "GeForce GTX 260", 49.96, 0, "GFLOP/s",
     OV("streams-breadth", "n=224 bs=16 lm=10", "n=64 bs=16 lm=5"), NONE, 0, 0, NULL, NULL},
    {"time v5 / v3, n = 1728, BS 16, Lm 10", "Tablica 1 (538.58 / 721.525 ms)", "GeForce GTX 260", 538.58,
     721.525, "ratio", OV_T("streams-breadth", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"),
     OV_T("v3-pageable", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"), '<', 1,
     "version 5 hides the transfers behind the kernels: faster than version 3 for several matrices", NULL},
    {"time v5 / v3, n = 864, BS 16, Lm 10", "Tablica 1 (36.3386 / 59.0637 ms)", "GeForce GTX 260", 36.3386,
     59.0637, "ratio", OV_T("streams-breadth", "n=864 bs=16 lm=10", "n=128 bs=16 lm=5"),
     OV_T("v3-pageable", "n=864 bs=16 lm=10", "n=128 bs=16 lm=5"), '<', 1,
     "version 5 hides the transfers behind the kernels: faster than version 3 for several matrices", NULL},
    {"time v5 / v3, n = 224, BS 16, Lm 1", "Tablica 1 (1.72758 / 0.820768 ms), section 4.4", "GeForce GTX 260",
     1.72758, 0.820768, "ratio", OV_T("streams-breadth", "n=224 bs=16 lm=1", "n=64 bs=16 lm=1"),
     OV_T("v3-pageable", "n=224 bs=16 lm=1", "n=64 bs=16 lm=1"), '>', 1,
     "with one small matrix version 5 is slower than version 3 (nothing to overlap, and the report found "
     "pinned copies slower at this size)",
     NULL},
    {"time v3 pinned / v3 pageable, n = 1728, BS 16, Lm 10: the control run", "section 4.4 (no number)",
     "GeForce GTX 260", NAN, 0, "ratio", OV_T("v3-pinned", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"),
     OV_T("v3-pageable", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"), '<', 1,
     "part of version 5's gain is pinned memory alone: copies from it are a little faster (they asked for "
     "this control run)",
     NULL},
    {"time v5 / v3 pinned, n = 1728, BS 16, Lm 10: the gain of overlap alone", "section 4.4 (no number)",
     "GeForce GTX 260", NAN, 0, "ratio", OV_T("streams-breadth", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"),
     OV_T("v3-pinned", "n=1728 bs=16 lm=10", "n=128 bs=16 lm=5"), 0, 0, NULL, NULL},
};

/* ---- 001: CUDA vs OpenCL (Czech bachelor thesis, 2011) -------------------------- */

static const struct pb_study_exp exps_001[] = {
    {"bandwidth", "transfers in every direction, pageable and page-locked, blocking and asynchronous; host "
                  "clock (host_median_s) and device events (median_s) side by side",
     "bandwidth --backend cuda,opencl --device nvidia --size 1K:1G --variant h2d-pageable,h2d-pinned,"
     "h2d-pinned-async,d2h-pageable,d2h-pinned,d2h-pinned-async,d2d",
     "bandwidth --backend cuda,opencl --size 1M,16M --variant h2d-pageable,h2d-pinned,d2h-pageable,d2h-pinned,d2d "
     "--reps 3",
     NULL},
    {"bandwidth-buffers", "many small buffers against one large",
     "bandwidth --backend cuda,opencl --device nvidia --size 64M --buffers 1,16,256 --variant h2d-pinned,d2h-pinned",
     "bandwidth --backend cuda,opencl --size 4M --buffers 1,64 --variant h2d-pinned,d2h-pinned --reps 3", NULL},
    {"gemm-wg", "the naive kernel: work-group size and shape",
     "gemm --backend cuda,opencl --device nvidia --variant naive --n 2048 "
     "--wg 8x8,16x16,32x8,32x16,32x32,64x4,64x8,128x1,128x2,256x1,512x1,1024x1",
     "gemm --backend cuda,opencl --variant naive --n 96 --wg 8x8,16x16,32x8,64x1 --reps 3", NULL},
    {"gemm-groups", "the naive kernel: number of work-groups (fewer than C needs: each work-item loops)",
     "gemm --backend cuda,opencl --device nvidia --variant naive --n 2048 --wg 16x16 "
     "--groups 0,1,4,16,64,256,1024,4096",
     "gemm --backend cuda,opencl --variant naive --n 96 --wg 16x16 --groups 0,4 --reps 3", NULL},
    {"gemm-k", "operations per work-item: the inner dimension, with and without local memory",
     "gemm --backend cuda,opencl --device nvidia --variant naive,tiled16,onerow --m 1024 --n 1024 --k 16:8192",
     "gemm --backend cuda,opencl --variant naive,tiled16,onerow --m 64 --n 64 --k 16,256 --reps 3", NULL},
    {"gemm-local", "with and without local memory: the naive kernel, the tiled ones and the thesis's one-row "
                   "work-groups",
     "gemm --backend cuda,opencl --device nvidia --variant naive,tiled8,tiled16,tiled32,onerow --n 1024:8192",
     "gemm --backend cuda,opencl --variant naive,tiled8,tiled16,tiled32,onerow --n 64,128 --reps 3",
     "n up to 8192: the thesis sized its tests for 2011's local memory (16 kB); its sizes are not in the copy"},
};

static const struct pb_study_fig figs_001[] = {
    {"H2D pinned GB/s, one 64 MiB buffer / 256 buffers of 256 KiB", "section 2.4.3 (no number)",
     "not in the copy", NAN, 0, "ratio",
     {"bandwidth-buffers", "cuda,opencl", "h2d-pinned", "size=64M buffers=1", "size=4M buffers=1", "gbps"},
     {"bandwidth-buffers", NULL, "h2d-pinned", "size=64M buffers=256", "size=4M buffers=64", "gbps"}, '>', 1,
     "large buffers are better than many small ones (latency, DMA set-up, call overhead per copy)", NULL},
    {"H2D GB/s, page-locked / pageable, 64 MiB", "section 2.4.4 (no number)", "not in the copy",
     NAN, 0, "ratio", {"bandwidth", "cuda,opencl", "h2d-pinned", "size=64M", "size=16M", "gbps"},
     {"bandwidth", NULL, "h2d-pageable", "size=64M", "size=16M", "gbps"}, 0, 0, NULL, NULL},
    {"naive GEMM time, work-group 8x8 / 16x16, n = 2048", "section 2.4.1 (no number)",
     "not in the copy", NAN, 0, "ratio",
     {"gemm-wg", "cuda,opencl", "naive", "n=2048 wg=8x8", "n=96 wg=8x8", "median_s"},
     {"gemm-wg", NULL, "naive", "n=2048 wg=16x16", "n=96 wg=16x16", "median_s"}, '>', 1,
     "larger work-groups hide global-memory latency better", NULL},
    {"naive GEMM time, 64 work-groups / as many as C needs, n = 2048", "section 2.4.1 (no number)",
     "not in the copy", NAN, 0, "ratio",
     {"gemm-groups", "cuda,opencl", "naive", "n=2048 groups=64", "n=96 groups=4", "median_s"},
     {"gemm-groups", NULL, "naive", "n=2048 groups=0", "n=96 groups=0", "median_s"}, '>', 1,
     "use as many work-groups as possible: with few, multiprocessors that finish early wait for the rest", NULL},
    {"GEMM time, naive / local-memory tiles 16x16, n = 2048", "section 2.4.2 (no time)", "not in the copy", NAN, 0,
     "ratio",
     {"gemm-local", "cuda,opencl", "naive", "n=2048", "n=128", "median_s"},
     {"gemm-local", NULL, "tiled16", "n=2048", "n=128", "median_s"}, '>', 1,
     "local (shared) memory speeds the product up, as each element is read once per work-group",
     "their analysis: 5376 global reads without local memory against 576 with, for a 16 x 16 work-group and k = 10"},
    {"GEMM time, one-row work-groups / naive, n = 2048", "section 4.2 (the design; no number)",
     "not in the copy", NAN, 0, "ratio",
     {"gemm-local", "opencl", "onerow", "n=2048", "n=128", "median_s"},
     {"gemm-local", NULL, "naive", "n=2048", "n=128", "median_s"}, 0, 0, NULL, NULL},
    {"naive GEMM GFLOP/s, OpenCL / CUDA, n = 2048, work-group 16x16", "chapter 6 (not in the copy)",
     "not in the copy", NAN, 0, "ratio",
     {"gemm-wg", "opencl", "naive", "n=2048 wg=16x16", "n=96 wg=16x16", "gflops"},
     {"gemm-wg", "cuda", "naive", "n=2048 wg=16x16", "n=96 wg=16x16", "gflops"}, 0, 0, NULL, NULL},
    {"H2D pinned GB/s, OpenCL / CUDA, 64 MiB", "chapter 6 (not in the copy)", "not in the copy",
     NAN, 0, "ratio", {"bandwidth", "opencl", "h2d-pinned", "size=64M", "size=16M", "gbps"},
     {"bandwidth", "cuda", "h2d-pinned", "size=64M", "size=16M", "gbps"}, 0, 0, NULL, NULL},
};

/* ---- 002: SpMV, OpenMP vs CUDA (Russian translation of a Cranfield report) ------- */

/* Table 1's matrices, smallest first; those in --matrices DIR are run. */
#define TABLE1                                                                                                 \
    "@cage4,@lpi_itest6,@can_24,@olm1000,@west2021,@mhda416,@adder_dcop_32,@mcfe,@rdist2,@cavity10,"          \
    "@mhd4800a,@bcsstk17,@raefsky2,@FEM_3D_thermal1,@af23560,@lung2,@thermal1,@thermomech_TK,@dc1,"            \
    "@olafu,@amazon0302,@mac_econ_fwd500,@rma10,@cop20k_A,@roadNet-PA,@webbase-1M,@cant,@PR02R,@thermal2,"     \
    "@af_1_k101,@ML_Laplace,@nlpkkt80,@Cube_Coup_dt0"
#define SPMV_VARIANTS "csr,csr-h2,csr-h4,csr-h8,csr-h16,csr-v2,csr-v4,csr-v8,csr-v16,ell,csr-scalar,csr-vector,ellt"

static const struct pb_study_exp exps_002[] = {
    {"matrices", "Table 1's matrices found in --matrices DIR: CSR and ELLPACK, OpenMP at 1-16 threads with "
                 "horizontal and vertical unrolling, CUDA with 1D and 2D blocks and (transposed) ELLPACK",
     "spmv --backend openmp,cuda --precision double --variant " SPMV_VARIANTS " --threads 1,2,4,8,16 --matrix "
     TABLE1 " --reps 10",
     "spmv --backend openmp,cuda --precision double --variant csr,csr-h2,csr-v2,ell,csr-scalar,csr-vector,ellt "
     "--threads 1,2 --matrix @rdist2,@cavity10 --reps 3",
     NULL},
    {"crossover", "generated 2D and 3D Laplacians from 50 thousand to 55 million non-zeros around the "
                  "report's crossover (2.5 million)",
     "spmv --backend openmp,cuda --precision double --variant " SPMV_VARIANTS
     " --matrix lap2d:100,lap2d:300,lap2d:700,lap2d:1300,lap3d:200 --reps 10",
     "spmv --backend openmp,cuda --precision double --variant csr,csr-h2,ell,csr-scalar,csr-vector,ellt "
     "--matrix lap2d:100,lap2d:300 --reps 3",
     "generated matrices stand in for Table 4's larger ones (not among the shared matrices)"},
};

#define SP(backend, variant, params, quick, column) {"matrices", backend, variant, params, quick, column}
#define K40 "Tesla K40m"
#define CRESCENT "Crescent cluster CPU (not named)"

static const struct pb_study_fig figs_002[] = {
    {"rdist2: non-zeros", "Table 1", "-", 56934, 0, "NZ",
     SP("openmp,cuda", NULL, "matrix=rdist2", NULL, "nnz"), NONE, 0, 0, NULL, NULL},
    {"cavity10: non-zeros", "Table 1", "-", 76367, 0, "NZ",
     SP("openmp,cuda", NULL, "matrix=cavity10", NULL, "nnz"), NONE, 0, 0, NULL, NULL},
    {"cavity10: longest row", "Table 1 (Max_NZ)", "-", 62, 0, "NZ",
     SP("openmp,cuda", NULL, "matrix=cavity10", NULL, "max_row"), NONE, 0, 0, NULL, NULL},
    {"rdist2: CUDA GFLOP/s, best kernel, double", "Table 4", K40, 4.95, 0, "GFLOP/s",
     SP("cuda", NULL, "matrix=rdist2", NULL, "gflops"), NONE, 0, 0, NULL, NULL},
    {"rdist2: OpenMP GFLOP/s, best kernel and threads, double", "Table 4", CRESCENT, 11.37, 0, "GFLOP/s",
     SP("openmp", NULL, "matrix=rdist2", NULL, "gflops"), NONE, 0, 0, NULL, NULL},
    {"cavity10: CUDA GFLOP/s, best kernel, double", "Table 4", K40, 6.36, 0, "GFLOP/s",
     SP("cuda", NULL, "matrix=cavity10", NULL, "gflops"), NONE, 0, 0, NULL, NULL},
    {"cavity10: OpenMP GFLOP/s, best kernel and threads, double", "Table 4", CRESCENT, 13.93, 0, "GFLOP/s",
     SP("openmp", NULL, "matrix=cavity10", NULL, "gflops"), NONE, 0, 0, NULL, NULL},
    {"rdist2 (57 thousand NZ): CUDA / OpenMP GFLOP/s", "Table 4 (4.95 / 11.37)", K40 " / " CRESCENT, 4.95, 11.37,
     "ratio", SP("cuda", NULL, "matrix=rdist2", NULL, "gflops"), SP("openmp", NULL, "matrix=rdist2", NULL, "gflops"),
     '<', 1, "OpenMP wins below about 2.5 million non-zeros, CUDA above", NULL},
    {"cavity10 (76 thousand NZ): CUDA / OpenMP GFLOP/s", "Table 4 (6.36 / 13.93)", K40 " / " CRESCENT, 6.36, 13.93,
     "ratio", SP("cuda", NULL, "matrix=cavity10", NULL, "gflops"),
     SP("openmp", NULL, "matrix=cavity10", NULL, "gflops"), '<', 1,
     "OpenMP wins below about 2.5 million non-zeros, CUDA above", NULL},
    {"rdist2: ELLPACK transposed, one thread per row, GFLOP/s", "Table 3 (1Thread T)", K40, 1.39, 0, "GFLOP/s",
     SP("cuda", "ellt", "matrix=rdist2", NULL, "gflops"), NONE, 0, 0, NULL, NULL},
    {"cavity10: ELLPACK transposed / row-major, one thread per row", "Table 3 (1.84 / 0.71)", K40, 1.84, 0.71,
     "ratio", SP("cuda", "ellt", "matrix=cavity10", NULL, "gflops"), SP("cuda", "ell", "matrix=cavity10", NULL, "gflops"),
     '>', 1, "transposing ELLPACK's arrays makes one thread per row efficient (coalesced reads)", NULL},
    {"cavity10: OpenMP speed-up, 16 threads over 1, CSR unrolled x2", "text under Table 2 (figure 17: about 5)",
     CRESCENT, 5, 0, "x", SP("openmp", "csr-h2", "matrix=cavity10 threads=1", NULL, "median_s"),
     SP("openmp", "csr-h2", "matrix=cavity10 threads=16", "matrix=cavity10 threads=2", "median_s"), 0, 0, NULL,
     "the report says 'about 5' for cavity10, Cube_Coup_dt0, ML_Laplace and af_1_k101"},
    {"2D Laplacian, 0.45 million NZ: CUDA / OpenMP GFLOP/s (best of each)", "Table 4 and its text (no number)",
     K40 " / " CRESCENT, NAN, 0, "ratio", {"crossover", "cuda", NULL, "matrix=lap2d:300", NULL, "gflops"},
     {"crossover", "openmp", NULL, "matrix=lap2d:300", NULL, "gflops"}, '<', 1,
     "OpenMP wins below about 2.5 million non-zeros", NULL},
    {"2D Laplacian, 8.4 million NZ: CUDA / OpenMP GFLOP/s (best of each)", "Table 4 and its text (no number)",
     K40 " / " CRESCENT, NAN, 0, "ratio", {"crossover", "cuda", NULL, "matrix=lap2d:1300", "matrix=lap2d:300", "gflops"},
     {"crossover", "openmp", NULL, "matrix=lap2d:1300", "matrix=lap2d:300", "gflops"}, '>', 1,
     "CUDA wins above about 2.5 million non-zeros", NULL},
};

/* ---- 003: separable convolution with streams (Greek HPC course lab, Tesla K80) --- */

static const struct pb_study_exp exps_003[] = {
    {"radius", "step 2: 8192 x 8192 doubles, R = 2-80, 12 runs without the fastest and slowest (kernel_s, "
               "transfer_s, ratio, total_s); step 1's initial (naive) and optimised (tiled) kernels",
     "conv --backend cuda,opencl --device nvidia --precision double --width 8192 --radius 2,4,8,16,32,64,80 --reps 12",
     "conv --backend cuda,opencl --precision double --width 512 --radius 2,32 --reps 3", NULL},
    {"transfers", "step 1: the image's copies from pageable and from pinned memory (512 MiB)",
     "bandwidth --backend cuda --size 512M --variant h2d-pageable,h2d-pinned,d2h-pageable,d2h-pinned --reps 12",
     "bandwidth --backend cuda,opencl --size 8M --variant h2d-pageable,h2d-pinned,d2h-pageable,d2h-pinned --reps 3",
     NULL},
    {"strips", "steps 3 and 4: 16384 x 16384 doubles, R = 32, in strips of 4096 rows (the report's tile of "
               "67108864 elements), without and with 2 streams",
     "conv-stream --backend cuda --precision double --width 16384 --radius 32 --strip 4096 --streams 2 --reps 12",
     "conv-stream --backend cuda,opencl --precision double --width 1024 --radius 8 --strip 128 --streams 2 --reps 3",
     NULL},
};

#define K80 "Tesla K80 (one of its two GPUs)"
#define CV(variant, column, params, quick) {"radius", "cuda,opencl", variant, params, quick, column}

static const struct pb_study_fig figs_003[] = {
    {"kernel time, both passes, 8192 x 8192, R = 2", "step 2, kernel times table", K80, 0.024236, 0, "s",
     CV("tiled", "kernel_s", "width=8192 radius=2", "width=512 radius=2"), NONE, 0, 0, NULL, NULL},
    {"kernel time, R = 32", "step 2, kernel times table", K80, 0.08215, 0, "s",
     CV("tiled", "kernel_s", "width=8192 radius=32", "width=512 radius=32"), NONE, 0, 0, NULL, NULL},
    {"kernel time, R = 80", "step 2, kernel times table", K80, 0.199368, 0, "s",
     CV("tiled", "kernel_s", "width=8192 radius=80", NULL), NONE, 0, 0, NULL, NULL},
    {"transfers, image in and out (pinned), R = 32", "step 2, memory copy times table", K80, 0.175547, 0, "s",
     CV("tiled", "transfer_s", "width=8192 radius=32", "width=512 radius=32"), NONE, 0, 0, NULL, NULL},
    {"kernels / transfers, R = 2", "step 2, ratio table", K80, 0.139956574, 0, "ratio",
     CV("tiled", "ratio", "width=8192 radius=2", "width=512 radius=2"), NONE, 0, 0, NULL, NULL},
    {"kernels / transfers, R = 80", "step 2, ratio table", K80, 1.102479595, 0, "ratio",
     CV("tiled", "ratio", "width=8192 radius=80", NULL), NONE, '>', 1,
     "at the largest radius the kernels take longer than the transfers", NULL},
    {"total time, R = 32", "step 2, total time table", K80, 0.257884, 0, "s",
     CV("tiled", "total_s", "width=8192 radius=32", "width=512 radius=32"), NONE, 0, 0, NULL, NULL},
    {"kernel time, initial / optimised (tiles, constant-memory taps), R = 32",
     "step 1, profiler (Εικόνα 1: 197.789 + 203.042 / 42.81735 + 54.7238 ms)", K80, 197.789 + 203.042,
     42.81735 + 54.7238, "ratio", {"radius", "cuda", "naive", "width=8192 radius=32", "width=512 radius=32", "kernel_s"},
     {"radius", NULL, "tiled", "width=8192 radius=32", "width=512 radius=32", "kernel_s"}, '>', 1,
     "shared-memory tiles and taps in constant memory make the kernels faster (4.1x on their K80)", NULL},
    {"H2D 512 MiB, pageable / pinned time", "step 1, nvprof (163.73 / 95.362 ms)", K80, 163.73, 95.362, "ratio",
     {"transfers", "cuda,opencl", "h2d-pageable", "size=512M", "size=8M", "median_s"},
     {"transfers", NULL, "h2d-pinned", "size=512M", "size=8M", "median_s"}, '>', 1,
     "copies from pinned memory are faster (1.7x on their K80)", NULL},
    {"D2H 512 MiB, pageable / pinned time", "step 1, nvprof (149.06 / 82.840 ms)", K80, 149.06, 82.840, "ratio",
     {"transfers", "cuda,opencl", "d2h-pageable", "size=512M", "size=8M", "median_s"},
     {"transfers", NULL, "d2h-pinned", "size=512M", "size=8M", "median_s"}, '>', 1,
     "copies to pinned memory are faster (1.8x on their K80)", NULL},
    {"16384 x 16384, R = 32, strips without streams: time", "step 3 table", K80, 1.706560, 0, "s",
     {"strips", "cuda,opencl", "strips", "width=16384 radius=32", "width=1024 radius=8", "median_s"}, NONE, 0, 0,
     NULL, NULL},
    {"16384 x 16384, R = 32, strips on 2 streams: time", "step 4 table", K80, 1.194021, 0, "s",
     {"strips", "cuda,opencl", "streams", "width=16384 radius=32", "width=1024 radius=8", "median_s"}, NONE, 0, 0,
     NULL, NULL},
    {"strips without / with 2 streams", "steps 3 and 4 (1.706560 / 1.194021 s)", K80, 1.706560, 1.194021, "ratio",
     {"strips", "cuda,opencl", "strips", "width=16384 radius=32", "width=1024 radius=8", "median_s"},
     {"strips", NULL, "streams", "width=16384 radius=32", "width=1024 radius=8", "median_s"}, '>', 1,
     "two streams overlapping one strip's copies with another's kernels are faster (1.43x on their K80)", NULL},
};

/* ---- 004: optimisation for GPU hardware (Czech lecture slides, GTX 280) ---------- */

static const struct pb_study_exp exps_004[] = {
    {"transpose", "naive (strided writes), tiled through shared memory, padded tile, and a copy",
     "transpose --backend cuda,opencl --device nvidia --n 4000,16384 --reps 10",
     "transpose --backend cuda,opencl --n 256 --reps 3", "n = 16384 added to the slides' 4000 x 4000"},
    {"reduce", "the seven reduction steps on int32 (the slides' int), and today's one-pass kernels",
     "reduce --backend cuda,opencl --device nvidia --type 2 --n 16M,256M --reps 10",
     "reduce --backend cuda,opencl --type 2 --n 1M --reps 3",
     "the slides give no vector length: 16M and 256M elements"},
    {"access", "coalescing: offset and stride of global accesses, shared-memory bank conflicts",
     "access --backend cuda --n 16M --step 0:32:1", "access --backend cuda,ref --n 1M --step 0,1,2,32 --reps 3",
     NULL},
};

#define GTX280 "GeForce GTX 280"
#define TR(variant, params, quick) {"transpose", "cuda,opencl", variant, params, quick, "gbps"}
#define RED(variant) {"reduce", "cuda,opencl", variant, "n=256M type=2", "n=1M type=2", "gbps"}

static const struct pb_study_fig figs_004[] = {
    {"transpose 4000 x 4000 float, naive: GB/s", "slide 23", GTX280, 5.3, 0, "GB/s",
     TR("naive", "n=4000", "n=256"), NONE, 0, 0, NULL, NULL},
    {"copy of the same matrix: GB/s", "slide 23", GTX280, 112.4, 0, "GB/s", TR("copy", "n=4000", "n=256"), NONE, 0,
     0, NULL, "theirs is a plain element-per-thread copy; our copy variant moves the same bytes in tiles"},
    {"tiled through shared memory (32 x 32 tile, 32 x 8 threads): GB/s", "slide 26", GTX280, 75.1, 0, "GB/s",
     TR("coalesced", "n=4000", "n=256"), NONE, 0, 0, NULL, NULL},
    {"the tile padded by a column (no bank conflicts): GB/s", "slide 29", GTX280, 93.4, 0, "GB/s",
     TR("padded", "n=4000", "n=256"), NONE, 0, 0, NULL, NULL},
    {"padded / naive", "slide 30 (17.6x)", GTX280, 17.6, 0, "x", TR("padded", "n=4000", "n=256"),
     TR("naive", "n=4000", "n=256"), '>', 1, "fitting the accesses to the hardware makes the transpose faster (17.6x on their GTX 280)",
     NULL},
    {"padded / copy", "slides 27 and 29 (93.4 / 94.9 GB/s)", GTX280, 93.4, 94.9, "ratio", TR("padded", "n=4000", "n=256"),
     TR("copy", "n=4000", "n=256"), '>', 0.9, "the padded transpose runs about as fast as a copy", NULL},
    {"reduction step 1, interleaved addressing, divergent: GB/s", "slide 39", GTX280, 3.77, 0, "GB/s",
     RED("interleaved-divergent"), NONE, 0, 0, NULL, NULL},
    {"step 2, strided index (bank conflicts): GB/s", "slide 40", GTX280, 8.33, 0, "GB/s", RED("interleaved"), NONE,
     0, 0, NULL, NULL},
    {"step 3, sequential addressing: GB/s", "slide 41", GTX280, 16.34, 0, "GB/s", RED("sequential"), NONE, 0, 0,
     NULL, NULL},
    {"step 4, first add during the load: GB/s", "slide 42", GTX280, 27.16, 0, "GB/s", RED("first-add-on-load"),
     NONE, 0, 0, NULL, NULL},
    {"step 5, last warp unrolled: GB/s", "slide 44", GTX280, 37.68, 0, "GB/s", RED("unroll-last-warp"), NONE, 0, 0,
     NULL, NULL},
    {"step 6, completely unrolled: GB/s", "slide 47", GTX280, 50.64, 0, "GB/s", RED("unroll-all"), NONE, 0, 0, NULL,
     NULL},
    {"step 7, many elements per thread: GB/s", "slide 50", GTX280, 77.21, 0, "GB/s", RED("multiple-per-thread"),
     NONE, 0, 0, NULL, NULL},
    {"reduction step 7 / step 1", "slides 39 and 50 (77.21 / 3.77 GB/s)", GTX280, 77.21, 3.77, "ratio",
     RED("multiple-per-thread"), RED("interleaved-divergent"), '>', 1,
     "each step is faster than the one before (the last 20x the first on their GTX 280)", NULL},
};

/* ---- the table ------------------------------------------------------------------ */

static const struct pb_study studies[] = {
    {"000", "hiding transfer cost behind computation (dense GEMM)", "shared/seeds/000_01a8005019905cc0.txt",
     "Polish lab report (Poznan): Lm square float products with the shared-memory tiled kernel (BS 8 and 16) on a "
     "GeForce GTX 260; version 3 copies and computes one matrix after another from pageable memory, version 5 "
     "uses pinned memory and a stream per matrix. Time measured with events, GFLOP/s = 2 n^3 Lm / T.",
     "Their v5 is our streams-breadth (all copies in, all kernels, all copies out), v3 our v3-pageable; "
     "v3-pinned is the control run the report asked for in section 4.4.",
     exps_000, N_OF(exps_000), figs_000, N_OF(figs_000)},
    {"001", "benchmark of GPU compute libraries: CUDA vs OpenCL", "shared/seeds/001_dc55fe2ff6af8801.txt",
     "Czech bachelor thesis (Brno, 2011): transfers timed on the host and with device events, pageable and "
     "page-locked, many small buffers against one large; matrix products varying the work-group size and "
     "shape, the number of work-groups and the inner dimension, with and without local memory.",
     "The copy of the thesis ends at page 22, before chapter 6 (results, pages 24-33): it holds no measured "
     "number and does not name the test machine. The comparison therefore tests the conclusions the thesis "
     "states in sections 2.4 and 4.2, with no published value beside ours.",
     exps_001, N_OF(exps_001), figs_001, N_OF(figs_001)},
    {"002", "sparse matrix-vector product, OpenMP vs CUDA", "shared/seeds/002_662cee75b62d7bd0.txt",
     "Russian translation of a Cranfield report: y = Ax in double, CSR and ELLPACK, SuiteSparse matrices; "
     "OpenMP on 1-16 threads with horizontal and vertical unrolling, CUDA on a Tesla K40m with 1D and 2D blocks "
     "and transposed ELLPACK. GFLOP/s = 2 NZ / T.",
     "Their 2D blocks are our csr-vector (a group of threads per row), their 1D blocks our csr-scalar, their "
     "'1Thread' and '1Thread T' our ell and ellt; csr-hU and csr-vU are their horizontal and vertical "
     "unrollings. Table 4's matrices above 100 thousand non-zeros are not among the shared matrices: give "
     "--matrices DIR with them, and generated Laplacians test the crossover meanwhile.",
     exps_002, N_OF(exps_002), figs_002, N_OF(figs_002)},
    {"003", "separable 2D convolution with streams", "shared/seeds/003_cacb2bad518fce8a.txt",
     "Greek course lab (Thessaly): double-precision separable convolution on a Tesla K80, shared-memory tiles "
     "with the halo and taps in constant memory; each experiment run 12 times without the fastest and slowest; "
     "images larger than the GPU in strips of rows, without and with two streams.",
     "Step 5 (65536 x 65536, 32 GiB of doubles, bounded by host memory) is not run: conv-stream takes it "
     "with --width 65536 on a host that holds the image.",
     exps_003, N_OF(exps_003), figs_003, N_OF(figs_003)},
    {"004", "optimisation for GPU hardware: transpose, reduction, coalescing",
     "shared/seeds/004_9bc74ba49387fe95.txt",
     "Czech lecture slides (Masaryk University, 2017): a 4000 x 4000 float transpose naive, tiled and padded "
     "against a copy, and the seven steps of the CUDA SDK reduction, on a GeForce GTX 280.",
     "Our naive, coalesced and padded transposes are the slides' kernels; the seven reduce variants are its "
     "seven steps, run on int32 as the slides' int.",
     exps_004, N_OF(exps_004), figs_004, N_OF(figs_004)},
};

size_t pb__study_count(void) { return N_OF(studies); }

const struct pb_study *pb__study_at(size_t i) { return i < N_OF(studies) ? &studies[i] : NULL; }

const struct pb_study *pb__study_find(const char *id)
{
    for (size_t i = 0; i < N_OF(studies); i++)
        if (strcmp(studies[i].id, id) == 0)
            return &studies[i];
    return NULL;
}
