// Helpers shared by the hand-written CUDA GEMM kernels (regblock, dmma, wgmma):
// the tile order, the tile-shape choice, cutting tiles along k and summing the
// pieces, and the alignment test for 16-byte accesses.
#ifndef PARBENCH_CUDA_GEMM_TILES_CUH
#define PARBENCH_CUDA_GEMM_TILES_CUH

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#include "core/gemm_plan.h"

static inline bool pb__aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

// 16-byte vector of T and conversions to/from a register array.
template <typename T> struct pb__vec16;
template <> struct pb__vec16<float> {
    using type = float4;
    static constexpr int N = 4;
    __device__ static void split(const float4 v, float *d)
    {
        d[0] = v.x;
        d[1] = v.y;
        d[2] = v.z;
        d[3] = v.w;
    }
    __device__ static float4 join(const float *s) { return make_float4(s[0], s[1], s[2], s[3]); }
};
template <> struct pb__vec16<double> {
    using type = double2;
    static constexpr int N = 2;
    __device__ static void split(const double2 v, double *d)
    {
        d[0] = v.x;
        d[1] = v.y;
    }
    __device__ static double2 join(const double *s) { return make_double2(s[0], s[1]); }
};

// Out (rows x cols, leading dimension ldo) = In (leading dimension ldi), element by
// element: any alignment of In's rows (the kernels' 16-byte loads then apply). A block
// copies 8 x 256 elements of a row, the 8 loads of a thread issued before its stores (one
// at a time left it at half the bandwidth), each of them contiguous over the warp.
// cudaMemcpy2DAsync took twice as long (H200, A and B of 456 x 778 x 15475 float, 76 MB:
// about 120 us against 60).
constexpr int PB_PACK_THREADS = 256, PB_PACK_UNROLL = 8;
template <typename T>
__global__ void __launch_bounds__(PB_PACK_THREADS)
    pb__pack_kernel(const T *__restrict__ in, size_t ldi, size_t rows, size_t cols, T *__restrict__ out, size_t ldo)
{
    const size_t c0 = (size_t)blockIdx.x * PB_PACK_THREADS * PB_PACK_UNROLL + threadIdx.x;
    for (size_t r = blockIdx.y; r < rows; r += gridDim.y) {
        T v[PB_PACK_UNROLL];
#pragma unroll
        for (int j = 0; j < PB_PACK_UNROLL; j++)
            if (c0 + (size_t)j * PB_PACK_THREADS < cols)
                v[j] = in[r * ldi + c0 + (size_t)j * PB_PACK_THREADS];
#pragma unroll
        for (int j = 0; j < PB_PACK_UNROLL; j++)
            if (c0 + (size_t)j * PB_PACK_THREADS < cols)
                out[r * ldo + c0 + (size_t)j * PB_PACK_THREADS] = v[j];
    }
}

// rows x cols of in, copied into new scratch on stream s (*out, to be freed with
// cudaFreeAsync) whose leading dimension *ldo is cols rounded up to whole vec elements.
template <typename T>
static inline cudaError_t pb__pack_scratch(const T *in, size_t ldi, size_t rows, size_t cols, size_t vec, T **out,
                                           size_t *ldo, cudaStream_t s)
{
    *ldo = (cols + vec - 1) / vec * vec;
    cudaError_t e = cudaMallocAsync(out, rows * *ldo * sizeof(T), s);
    if (e != cudaSuccess) {
        *out = nullptr;
        return e;
    }
    constexpr size_t per_block = PB_PACK_THREADS * PB_PACK_UNROLL;
    const dim3 grid((unsigned)((cols + per_block - 1) / per_block), (unsigned)std::min<size_t>(rows, 65535));
    pb__pack_kernel<T><<<grid, PB_PACK_THREADS, 0, s>>>(in, ldi, rows, cols, *out, *ldo);
    return cudaGetLastError();
}

// An operand (rows x cols, leading dimension *ld) whose rows rule out 16-byte copies
// (*vec false) is packed into new scratch (*scratch, freed by the caller with
// cudaFreeAsync) where that saves more than the copy costs: gain_s, the caller's
// estimate of what the narrow copies add to the product. *op, *ld and *vec then
// describe the packed copy. Without the memory for it the operand stays as it is.
template <typename T>
static inline cudaError_t pb__pack_if_repays(const T **op, size_t *ld, size_t rows, size_t cols, bool *vec,
                                             double gain_s, T **scratch, cudaStream_t s)
{
    const double copy_s = 2.0 * (double)(rows * cols * sizeof(T)) / 2.5e12 + 5e-6; // read + write, one launch
    if (*vec || rows == 0 || cols == 0)
        return cudaSuccess;
    const char *forced = getenv("PARBENCH_GEMM_PACK"); // always|never: tuning runs
    const bool wanted = forced && strcmp(forced, "always") == 0   ? true
                        : forced && strcmp(forced, "never") == 0 ? false
                                                                 : gain_s > copy_s;
    if (!wanted)
        return cudaSuccess;
    size_t ld_packed = 0;
    const cudaError_t e = pb__pack_scratch(*op, *ld, rows, cols, 16 / sizeof(T), scratch, &ld_packed, s);
    if (e == cudaErrorMemoryAllocation && *scratch == nullptr) { // the allocation, not the copy, failed
        (void)cudaGetLastError(); // slower, not wrong: the narrow copies remain
        return cudaSuccess;
    }
    if (e == cudaSuccess)
        *op = *scratch, *ld = ld_packed, *vec = true;
    return e;
}

// The argument checks of the hand-written GEMMs (BLAS semantics): k == 0 or
// alpha == 0 become C = beta*C (k and alpha zeroed: A and B are never read).
// False where a leading dimension is too small, a matrix that would be
// touched is NULL, or a size is past what 64-bit index products hold.
template <typename T>
static inline bool pb__gemm_args_ok(size_t m, size_t n, size_t *k, T *alpha, const void *a, size_t lda, const void *b,
                                    size_t ldb, const void *c, size_t ldc)
{
    if (*k == 0 || *alpha == T(0)) {
        *k = 0;
        *alpha = T(0);
    }
    const size_t big = (size_t)LLONG_MAX / 2;
    return lda >= *k && ldb >= n && ldc >= n && c != nullptr && (*k == 0 || (a != nullptr && b != nullptr)) &&
           m <= big && n <= big && *k <= big && lda <= big && ldb <= big && ldc <= big;
}

// A block-tile shape, its relative efficiency (measured on an H100 with
// per_sm blocks resident on every SM) and that number of blocks.
using pb__tile_choice = pb__fill_tile;

// The current device's SM count (132 where it cannot be read), or
// PARBENCH_GEMM_SMS (pb__plan_units).
static inline int pb__sm_count()
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms <= 0)
        sms = 132;
    return pb__plan_units(sms);
}

// The grouped tile order every kernel walks: GROUP_M tile rows at a time, column
// by column inside a group, so that co-resident blocks share A and B panels in L2.
// Tile pid's first row and column of C.
constexpr int PB_GEMM_GROUP_M = 8;
__host__ __device__ inline void pb__tile_origin(long long pid, long long tiles_m, long long tiles_n, int bm, int bn,
                                                long long *m0, long long *n0)
{
    const long long per_group = PB_GEMM_GROUP_M * tiles_n;
    const long long first_m = pid / per_group * PB_GEMM_GROUP_M;
    const long long rows_here = tiles_m - first_m < PB_GEMM_GROUP_M ? tiles_m - first_m : PB_GEMM_GROUP_M;
    const long long in_group = pid % per_group;
    *m0 = (first_m + in_group % rows_here) * bm;
    *n0 = in_group / rows_here * bn;
}

// The workspace for a plan's pieces (null where nothing is cut). Where it
// cannot be had, the plan becomes whole tiles: slower, never a failure.
template <typename T>
static inline T *pb__plan_workspace(pb__split_plan *plan, size_t tiles, int bm, int bn, cudaStream_t s)
{
    T *ws = nullptr;
    if (plan->slabs > 1 &&
        cudaMallocAsync(&ws, (tiles - plan->first) * plan->slabs * bm * bn * sizeof(T), s) != cudaSuccess) {
        (void)cudaGetLastError(); // the failed allocation's error, not left for the next check
        *plan = pb__plan_whole(tiles, pb__sm_count());
        ws = nullptr;
    }
    return ws;
}

// C = alpha * (the sum of the pieces, in piece order) + beta * C over the cut
// tiles of a plan (count of them, from tile first).
template <typename T>
__global__ void pb__tile_reduce_kernel(long long m, long long n, long long tiles_m, long long tiles_n, int bm, int bn,
                                       long long first, long long count, int slabs, const T *__restrict__ ws, T alpha,
                                       T beta, T *__restrict__ c, long long ldc)
{
    const long long per_tile = (long long)bm * bn, total = count * per_tile;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long t = i / per_tile, e = i % per_tile;
        long long m0, n0;
        pb__tile_origin(first + t, tiles_m, tiles_n, bm, bn, &m0, &n0);
        const long long row = m0 + e / bn, col = n0 + e % bn;
        if (row >= m || col >= n)
            continue;
        T sum = 0;
        for (int z = 0; z < slabs; ++z)
            sum += ws[(z * count + t) * per_tile + e];
        T *dst = c + row * ldc + col;
        *dst = beta == T(0) ? alpha * sum : fma(alpha, sum, beta * *dst);
    }
}

template <typename T>
static inline cudaError_t pb__tile_reduce(const pb__split_plan &plan, size_t m, size_t n, int bm, int bn,
                                          const T *ws, T alpha, T beta, T *c, size_t ldc, cudaStream_t s)
{
    const long long tiles_m = (long long)((m + bm - 1) / bm), tiles_n = (long long)((n + bn - 1) / bn);
    const long long count = tiles_m * tiles_n - (long long)plan.first;
    const long long blocks = (count * bm * bn + 255) / 256;
    pb__tile_reduce_kernel<T><<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, s>>>(
        (long long)m, (long long)n, tiles_m, tiles_n, bm, bn, (long long)plan.first, count, plan.slabs, ws, alpha,
        beta, c, (long long)ldc);
    return cudaGetLastError();
}

// The index of the BMxBN that PARBENCH_GEMM_TILE names (tuning runs), or else
// of the choice of least cost(choice), a later one winning only below margin
// times the best before it.
template <class Cost>
static inline int pb__pick_by(const pb__tile_choice *choices, int count, double margin, Cost cost)
{
    const char *forced = getenv("PARBENCH_GEMM_TILE");
    size_t bm = 0, bn = 0;
    if (forced && sscanf(forced, "%zux%zu", &bm, &bn) == 2)
        for (int i = 0; i < count; ++i)
            if (choices[i].bm == bm && choices[i].bn == bn)
                return i;
    int best = 0;
    double best_cost = 0;
    for (int i = 0; i < count; ++i) {
        const double c = cost(choices[i]);
        if (i == 0 || c < margin * best_cost)
            best = i, best_cost = c;
    }
    return best;
}

// The run time of a shape is about its waves (pb__plan_split) x (work of one
// tile) / (efficiency of the tile). Large tiles win whenever they fill the
// machine; smaller ones recover the parallelism of small or skinny products.
// A tile made to share its SM runs slower alone: where a product has fewer
// blocks than the SMs hold, the efficiency drops by 0.24 x the share of the
// blocks missing (H200, 256 x 256 x 262144 in 33 pieces of 128 x 128, one
// block an SM of two: 0.87 of the 128 x 256 tile's rate). wgmma's choice
// (its tiles are one block an SM).
static inline int pb__pick_tile(size_t m, size_t n, size_t k, bool splits_k, size_t elem_bytes, double sm_rate,
                                const pb__tile_choice *choices, int count)
{
    const int sms = pb__sm_count();
    return pb__pick_by(choices, count, 1.0, [&](const pb__tile_choice &t) {
        const size_t tiles = ((m + t.bm - 1) / t.bm) * ((n + t.bn - 1) / t.bn);
        const pb__split_plan plan =
            splits_k ? pb__plan_split(tiles, k, sms, elem_bytes, sm_rate) : pb__plan_whole(tiles, sms);
        const double blocks = (double)plan.first + (double)(tiles - plan.first) * plan.slabs;
        const double resident = std::min((double)t.per_sm, std::ceil(blocks / sms));
        const double eff = t.eff * (1.0 - 0.24 * (1.0 - resident / t.per_sm));
        return plan.waves * t.bm * t.bn / eff;
    });
}

// regblock's and dmma's choice: the tile whose plan (pb__plan_fill) is estimated
// fastest (a smaller tile must be 5% faster: the estimates of the large tiles
// are the better measured). c_vec: C takes 16-byte stores; scalar ones make
// each block's fixed cost larger.
static inline double pb__fill_block_s(bool c_vec) { return c_vec ? 1e-10 : 3.2e-10; }

static inline int pb__pick_fill_tile(size_t m, size_t n, size_t k, bool c_vec, size_t elem_bytes, double sm_rate,
                                     const pb__tile_choice *choices, int count)
{
    const int sms = pb__sm_count();
    return pb__pick_by(choices, count, 0.95, [&](const pb__tile_choice &t) {
        return pb__plan_fill(&t, m, n, k, sms, elem_bytes, sm_rate, pb__fill_block_s(c_vec)).waves;
    });
}

#endif
