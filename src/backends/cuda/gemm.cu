// GEMM on CUDA: the teaching kernels of the studies (naive, shared-memory
// tiles of 8, 16, 32), the register-blocked fast kernel (gemm_regblock.cu) and
// cuBLAS as the anchor, also of the tensor-core types (tf32, bf16, fp16; their
// own kernel is gemm_tc.cu). Row-major throughout; beta == 0 never reads C.
#include <limits.h>
#include <stdio.h>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "backends/cuda/gemm_dmma.cuh"
#include "backends/cuda/gemm_regblock.cuh"
#include "core/precision.h"

template <typename T> __device__ __forceinline__ void store_c(T *c, T acc, T alpha, T beta)
{
    *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

// One thread per element of C; threadIdx.x runs along a row so reads of B and
// writes of C are coalesced. STRIDED (a capped grid, study 001's number of
// work-groups): each thread loops over the elements a whole grid apart.
template <typename T>
__device__ __forceinline__ void naive_element(size_t row, size_t col, size_t k, T alpha, const T *__restrict__ a,
                                              size_t lda, const T *__restrict__ b, size_t ldb, T beta,
                                              T *__restrict__ c, size_t ldc)
{
    T acc = 0;
    for (size_t p = 0; p < k; p++)
        acc += a[row * lda + p] * b[p * ldb + col];
    store_c(&c[row * ldc + col], acc, alpha, beta);
}

template <typename T, bool STRIDED>
__global__ void gemm_naive(size_t m, size_t n, size_t k, T alpha, const T *__restrict__ a, size_t lda,
                           const T *__restrict__ b, size_t ldb, T beta, T *__restrict__ c, size_t ldc)
{
    size_t col = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t row = blockIdx.y * (size_t)blockDim.y + threadIdx.y;
    if (!STRIDED) {
        if (row < m && col < n)
            naive_element(row, col, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    const size_t step_x = gridDim.x * (size_t)blockDim.x, step_y = gridDim.y * (size_t)blockDim.y;
    for (size_t i = row; i < m; i += step_y)
        for (size_t j = col; j < n; j += step_x)
            naive_element(i, j, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The classic tiled kernel: a BS x BS block computes a BS x BS tile of C,
// walking k in BS-wide steps through shared-memory copies of one tile of A
// and one of B. Out-of-range elements load as 0 so any m, n, k works.
template <typename T, int BS>
__global__ void __launch_bounds__(BS *BS)
    gemm_tiled(size_t m, size_t n, size_t k, T alpha, const T *__restrict__ a, size_t lda,
               const T *__restrict__ b, size_t ldb, T beta, T *__restrict__ c, size_t ldc)
{
    __shared__ T as[BS][BS];
    __shared__ T bs[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t row = blockIdx.y * (size_t)BS + ty, col = blockIdx.x * (size_t)BS + tx;
    T acc = 0;
    for (size_t t = 0; t < k; t += BS) {
        as[ty][tx] = row < m && t + tx < k ? a[row * lda + t + tx] : T(0);
        bs[ty][tx] = t + ty < k && col < n ? b[(t + ty) * ldb + col] : T(0);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < BS; p++)
            acc += as[ty][p] * bs[p][tx];
        __syncthreads();
    }
    if (row < m && col < n)
        store_c(&c[row * ldc + col], acc, alpha, beta);
}

static const pb_gemm_args *gemm_args(const void *args) { return static_cast<const pb_gemm_args *>(args); }

// Grid of (n / bx) x (m / by) blocks must fit the hardware's grid limits.
static bool grid_fits(const pb_gemm_args *g, unsigned bx, unsigned by, const char **why)
{
    size_t gx = (g->n + bx - 1) / bx, gy = (g->m + by - 1) / by;
    if (gx > INT_MAX || gy > 65535) {
        *why = "matrix too large for a one-thread-per-element grid";
        return false;
    }
    return true;
}

bool pb__cuda_gemm_supports(const pb_device *dev, const void *args, const char **why)
{
    (void)dev;
    return grid_fits(gemm_args(args), 8, 8, why);
}

// The naive kernel's launch: the arguments' shape or 16 x 16 blocks, and a
// grid covering C, or capped at g->groups blocks (then strided).
struct naive_launch {
    dim3 block, grid;
    bool strided;
};

static thread_local char naive_why[192];

static bool naive_shape(const pb_gemm_args *g, const cudaDeviceProp &prop, naive_launch *out, const char **why)
{
    unsigned bx = g->block_x ? g->block_x : 16, by = g->block_y ? g->block_y : 16;
    if ((size_t)bx * by > (size_t)prop.maxThreadsPerBlock || bx > (unsigned)prop.maxThreadsDim[0] ||
        by > (unsigned)prop.maxThreadsDim[1]) {
        snprintf(naive_why, sizeof naive_why,
                 "block of %u x %u exceeds the device's maximum (%d threads, %d x %d)", bx, by,
                 prop.maxThreadsPerBlock, prop.maxThreadsDim[0], prop.maxThreadsDim[1]);
        *why = naive_why;
        return false;
    }
    size_t gx = (g->n + bx - 1) / bx, gy = (g->m + by - 1) / by;
    bool strided = g->groups && gy && gx > g->groups / gy; // gx * gy > groups, without overflow
    if (strided) {
        gx = gx < g->groups ? gx : g->groups;
        size_t rows = g->groups / gx;
        gy = gy < rows ? gy : rows;
    }
    size_t max_x = (size_t)prop.maxGridSize[0], max_y = (size_t)prop.maxGridSize[1];
    if (!strided && (gx > max_x || gy > max_y)) {
        snprintf(naive_why, sizeof naive_why,
                 "a grid of %zu x %zu blocks exceeds the device's %zu x %zu (cap it with groups)", gx, gy, max_x,
                 max_y);
        *why = naive_why;
        return false;
    }
    // A strided grid may shrink to the device's limits: the threads loop.
    out->block = dim3(bx, by);
    out->grid = dim3((unsigned)(gx < max_x ? gx : max_x), (unsigned)(gy < max_y ? gy : max_y));
    out->strided = strided;
    return true;
}

bool pb__cuda_gemm_naive_supports(const pb_device *dev, const void *args, const char **why)
{
    naive_launch l;
    return naive_shape(gemm_args(args), pb__cuda(const_cast<pb_device *>(dev))->prop, &l, why);
}

template <typename T> static pb_status launch_naive(const pb_gemm_args *g, const cudaDeviceProp &prop, cudaStream_t s)
{
    naive_launch l;
    const char *why = NULL;
    if (!naive_shape(g, prop, &l, &why))
        return pb__fail(PB_ERR_UNSUPPORTED, "gemm naive: %s", why);
    if (l.strided)
        gemm_naive<T, true><<<l.grid, l.block, 0, s>>>(g->m, g->n, g->k, (T)g->alpha, pb__cuda_ptr<const T>(g->a),
                                                        g->lda, pb__cuda_ptr<const T>(g->b), g->ldb, (T)g->beta,
                                                        pb__cuda_ptr<T>(g->c), g->ldc);
    else
        gemm_naive<T, false><<<l.grid, l.block, 0, s>>>(g->m, g->n, g->k, (T)g->alpha, pb__cuda_ptr<const T>(g->a),
                                                         g->lda, pb__cuda_ptr<const T>(g->b), g->ldb, (T)g->beta,
                                                         pb__cuda_ptr<T>(g->c), g->ldc);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

template <typename T, int BS> static pb_status launch_tiled(const pb_gemm_args *g, cudaStream_t s)
{
    dim3 block(BS, BS), grid((unsigned)((g->n + BS - 1) / BS), (unsigned)((g->m + BS - 1) / BS));
    gemm_tiled<T, BS><<<grid, block, 0, s>>>(g->m, g->n, g->k, (T)g->alpha, pb__cuda_ptr<const T>(g->a), g->lda,
                                             pb__cuda_ptr<const T>(g->b), g->ldb, (T)g->beta,
                                             pb__cuda_ptr<T>(g->c), g->ldc);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

// Dispatch on precision; empty products launch nothing.
#define PB_GEMM_DISPATCH(launch_f32, launch_f64)                                         \
    const pb_gemm_args *g = gemm_args(args);                                            \
    (void)dev;                                                                           \
    if (g->m == 0 || g->n == 0)                                                          \
        return PB_OK;                                                                    \
    return g->prec == PB_DOUBLE ? launch_f64(g, pb__cuda_stream(s)) : launch_f32(g, pb__cuda_stream(s))

pb_status pb__cuda_gemm_naive(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_gemm_args *g = gemm_args(args);
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    const cudaDeviceProp &prop = pb__cuda(dev)->prop;
    return g->prec == PB_DOUBLE ? launch_naive<double>(g, prop, pb__cuda_stream(s))
                                : launch_naive<float>(g, prop, pb__cuda_stream(s));
}

pb_status pb__cuda_gemm_tiled8(pb_device *dev, const void *args, pb_stream *s)
{
    PB_GEMM_DISPATCH((launch_tiled<float, 8>), (launch_tiled<double, 8>));
}

pb_status pb__cuda_gemm_tiled16(pb_device *dev, const void *args, pb_stream *s)
{
    PB_GEMM_DISPATCH((launch_tiled<float, 16>), (launch_tiled<double, 16>));
}

pb_status pb__cuda_gemm_tiled32(pb_device *dev, const void *args, pb_stream *s)
{
    PB_GEMM_DISPATCH((launch_tiled<float, 32>), (launch_tiled<double, 32>));
}

static pb_status regblock_f32(const pb_gemm_args *g, cudaStream_t s)
{
    PB_CUDA_CHECK(pb__cuda_gemm_regblock_f32(g->m, g->n, g->k, (float)g->alpha, pb__cuda_ptr<const float>(g->a),
                                             g->lda, pb__cuda_ptr<const float>(g->b), g->ldb, (float)g->beta,
                                             pb__cuda_ptr<float>(g->c), g->ldc, s));
    return PB_OK;
}

static pb_status regblock_f64(const pb_gemm_args *g, cudaStream_t s)
{
    PB_CUDA_CHECK(pb__cuda_gemm_regblock_f64(g->m, g->n, g->k, g->alpha, pb__cuda_ptr<const double>(g->a), g->lda,
                                             pb__cuda_ptr<const double>(g->b), g->ldb, g->beta,
                                             pb__cuda_ptr<double>(g->c), g->ldc, s));
    return PB_OK;
}

pb_status pb__cuda_gemm_regblock(pb_device *dev, const void *args, pb_stream *s)
{
    PB_GEMM_DISPATCH(regblock_f32, regblock_f64);
}

// FP64 tensor cores (DMMA): exact double FMAs, compute capability 8.0 and up.
bool pb__cuda_gemm_dmma_supports(const pb_device *dev, const void *args, const char **why)
{
    const cudaDeviceProp &p = static_cast<const pb_cuda_device *>(dev->impl)->prop;
    if (gemm_args(args)->prec != PB_DOUBLE) {
        *why = "FP64 tensor-core kernel: double precision only";
        return false;
    }
    if (p.major < 8) {
        *why = "FP64 tensor cores need compute capability 8.0 or newer";
        return false;
    }
    return true;
}

pb_status pb__cuda_gemm_dmma(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev;
    const pb_gemm_args *g = gemm_args(args);
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    PB_CUDA_CHECK(pb__cuda_gemm_dmma_f64(g->m, g->n, g->k, g->alpha, pb__cuda_ptr<const double>(g->a), g->lda,
                                         pb__cuda_ptr<const double>(g->b), g->ldb, g->beta, pb__cuda_ptr<double>(g->c),
                                         g->ldc, pb__cuda_stream(s)));
    return PB_OK;
}

// ---- cuBLAS -------------------------------------------------------------------

bool pb__cuda_gemm_cublas_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_gemm_args *g = gemm_args(args);
    if ((g->prec == PB_TF32 || g->prec == PB_BF16) && static_cast<const pb_cuda_device *>(dev->impl)->prop.major < 8) {
        *why = "TF32 and BF16 tensor cores need compute capability 8.0 or newer";
        return false;
    }
    if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX || g->lda > INT_MAX || g->ldb > INT_MAX ||
        g->ldc > INT_MAX) {
        *why = "dimension exceeds the int range of the cuBLAS interface";
        return false;
    }
    return true;
}

pb_status pb__cuda_gemm_cublas(pb_device *dev, const void *args, pb_stream *s)
{
    const pb_gemm_args *g = gemm_args(args);
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    cublasHandle_t h;
    pb_status st = pb__cuda_blas(dev, s, &h);
    if (st != PB_OK)
        return st;
    // cuBLAS is column-major: row-major C = A*B is column-major C^T = B^T * A^T.
    // Leading dimensions must be >= 1 even when nothing is read (k == 0).
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    int lda = g->lda ? (int)g->lda : 1, ldb = g->ldb ? (int)g->ldb : 1, ldc = (int)g->ldc;
    if (pb__precision_lowp(g->prec)) {
        // Tensor-core types through cublasGemmEx, fp32 C: bf16/fp16 inputs with
        // fp32 accumulation; tf32 = fp32 inputs that FAST_TF32 rounds to TF32.
        cudaDataType_t in = g->prec == PB_BF16 ? CUDA_R_16BF : g->prec == PB_FP16 ? CUDA_R_16F : CUDA_R_32F;
        cublasComputeType_t compute = g->prec == PB_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        float alpha = (float)g->alpha, beta = (float)g->beta;
        PB_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, pb__cuda_ptr<const void>(g->b), in,
                                     ldb, pb__cuda_ptr<const void>(g->a), in, lda, &beta, pb__cuda_ptr<void>(g->c),
                                     CUDA_R_32F, ldc, compute, CUBLAS_GEMM_DEFAULT));
    } else if (g->prec == PB_DOUBLE) {
        double alpha = g->alpha, beta = g->beta;
        PB_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, pb__cuda_ptr<const double>(g->b),
                                    ldb, pb__cuda_ptr<const double>(g->a), lda, &beta, pb__cuda_ptr<double>(g->c),
                                    ldc));
    } else {
        float alpha = (float)g->alpha, beta = (float)g->beta;
        PB_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, pb__cuda_ptr<const float>(g->b),
                                    ldb, pb__cuda_ptr<const float>(g->a), lda, &beta, pb__cuda_ptr<float>(g->c),
                                    ldc));
    }
    return PB_OK;
}
