// gemm_tc.cu: GEMM on the tensor cores in the reduced input types, variant `tc`.
//
// Row-major C = alpha*A*B + beta*C with A and B in TF32 (fp32 storage), BF16 or FP16,
// fp32 accumulation and an fp32 C (pb_kernels.h). Correctness first: the warp-level
// WMMA API (nvcuda::wmma, mma.sync underneath), which runs on sm_80 and newer.
//
//  * Fragments: m16n16k16 for half and bfloat16, m16n16k8 with precision::tf32 for TF32
//    (fp32 values are converted with __float_to_tf32 after the load, as the API asks;
//    values already TF32, as the benchmark's are, pass unchanged). Accumulators fp32.
//  * Block tile 128x128, 4 warps of 64x64 (4x4 fragments, 128 accumulator registers a
//    lane); K in slices of 64 bytes a row (32 half/bf16 or 16 fp32 elements).
//  * Shared memory: two stages of A [128][BK+pad] and B [BK][128+pad], pad 16 bytes
//    (fragment pointers stay 32-byte aligned as load_matrix_sync requires). The next
//    slice is read into registers while the tensor cores work on the current one, then
//    stored into the other stage: one barrier per slice.
//  * Edges: any m, n, k. Copies are 16-byte vectors where the chunk lies inside the
//    matrix and the pointer and leading dimension are 16-byte aligned; otherwise element
//    by element, with zeros past the edges (zeros add nothing to the products).
//  * Epilogue: each 16x16 accumulator goes through a warp-private 1 KiB of shared memory,
//    then lanes write it with alpha, beta and the edge checks; beta == 0 never reads C.
//
// The portable tensor-core kernel (sm_80 and newer). On Hopper, gemm_wgmma.cu's
// warpgroup-MMA kernel is 3.5-6x faster and is the library's default for these types.

#include <mma.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "backends/cuda/gemm_tiles.cuh"
#include "core/precision.h"

// bf16 and tf32 fragments exist in the host pass and for sm_80 and newer (mma.h's own
// test, whose macro it undefines at its end).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define PB_TC_WMMA 1
#endif

namespace {

namespace wmma_kernel {

constexpr int BM = 128, BN = 128, WM = 64, WN = 64;
constexpr int WARPS_N = BN / WN, WARPS = (BM / WM) * WARPS_N, THREADS = WARPS * 32;

// Per element type: bytes, K slice and padding in elements; raw bits for the copies.
template <typename T> struct shape {
    static constexpr int VEC = 16 / (int)sizeof(T);     // elements in a 16-byte chunk
    static constexpr int BK = 64 / (int)sizeof(T);      // K slice
    static constexpr int LDA = BK + VEC, LDB = BN + VEC; // shared-memory row lengths
    static constexpr int A_CHUNKS = BM * BK / VEC, B_CHUNKS = BK * BN / VEC;
    static constexpr int A_PER = A_CHUNKS / THREADS, B_PER = B_CHUNKS / THREADS;
    using raw = typename std::conditional<sizeof(T) == 2, unsigned short, unsigned>::type;
};

template <typename T> struct smem {
    T a[2][BM][shape<T>::LDA];
    T b[2][shape<T>::BK][shape<T>::LDB];
    float c[WARPS][16 * 16];
};

// 16 bytes of a rows x cols matrix from row r, columns c0 .. c0+VEC-1; zeros outside.
template <typename T>
__device__ __forceinline__ uint4 load_chunk(const T *__restrict__ x, size_t ld, size_t rows, size_t cols, size_t r,
                                            size_t c0, bool vec)
{
    using S = shape<T>;
    union {
        uint4 v;
        typename S::raw e[S::VEC];
    } u;
    if (r < rows && c0 + S::VEC <= cols && vec)
        return *reinterpret_cast<const uint4 *>(x + r * ld + c0);
    const typename S::raw *row = reinterpret_cast<const typename S::raw *>(x) + r * ld;
#pragma unroll
    for (int e = 0; e < S::VEC; e++)
        u.e[e] = r < rows && c0 + e < cols ? row[c0 + e] : 0;
    return u.v;
}

#ifdef PB_TC_WMMA

template <typename T> struct frag_type {
    using type = T;
    static constexpr int K = 16;
};
template <> struct frag_type<float> {
    using type = nvcuda::wmma::precision::tf32;
    static constexpr int K = 8;
};

template <typename Frag> __device__ __forceinline__ void to_tf32(Frag &f, float)
{
#pragma unroll
    for (int t = 0; t < f.num_elements; t++)
        f.x[t] = nvcuda::wmma::__float_to_tf32(f.x[t]);
}
template <typename Frag, typename T> __device__ __forceinline__ void to_tf32(Frag &, T) {}

template <typename T>
__device__ __forceinline__ void body(size_t m, size_t n, size_t k, float alpha, const T *__restrict__ a, size_t lda,
                                     const T *__restrict__ b, size_t ldb, float beta, float *__restrict__ c,
                                     size_t ldc, bool vec_a, bool vec_b)
{
    using namespace nvcuda;
    using S = shape<T>;
    using F = frag_type<T>;
    constexpr int FM = WM / 16, FN = WN / 16; // fragments of a warp tile
    __shared__ __align__(128) smem<T> sh;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const size_t row0 = (size_t)blockIdx.y * BM, col0 = (size_t)blockIdx.x * BN;
    const size_t slices = (k + S::BK - 1) / S::BK;

    wmma::fragment<wmma::accumulator, 16, 16, F::K, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    uint4 ra[S::A_PER], rb[S::B_PER];
    auto load = [&](size_t k0) {
#pragma unroll
        for (int i = 0; i < S::A_PER; i++) {
            int ch = tid + i * THREADS, r = ch / (S::BK / S::VEC), cc = ch % (S::BK / S::VEC) * S::VEC;
            ra[i] = load_chunk(a, lda, m, k, row0 + r, k0 + cc, vec_a);
        }
#pragma unroll
        for (int i = 0; i < S::B_PER; i++) {
            int ch = tid + i * THREADS, r = ch / (BN / S::VEC), cc = ch % (BN / S::VEC) * S::VEC;
            rb[i] = load_chunk(b, ldb, k, n, k0 + r, col0 + cc, vec_b);
        }
    };
    auto store = [&](int stage) {
#pragma unroll
        for (int i = 0; i < S::A_PER; i++) {
            int ch = tid + i * THREADS, r = ch / (S::BK / S::VEC), cc = ch % (S::BK / S::VEC) * S::VEC;
            *reinterpret_cast<uint4 *>(&sh.a[stage][r][cc]) = ra[i];
        }
#pragma unroll
        for (int i = 0; i < S::B_PER; i++) {
            int ch = tid + i * THREADS, r = ch / (BN / S::VEC), cc = ch % (BN / S::VEC) * S::VEC;
            *reinterpret_cast<uint4 *>(&sh.b[stage][r][cc]) = rb[i];
        }
    };

    if (slices) {
        load(0);
        store(0);
        __syncthreads();
    }
    for (size_t s = 0; s < slices; s++) {
        const int cur = (int)(s & 1);
        if (s + 1 < slices)
            load((s + 1) * S::BK); // in flight while the tensor cores work
#pragma unroll
        for (int kk = 0; kk < S::BK; kk += F::K) {
            wmma::fragment<wmma::matrix_a, 16, 16, F::K, typename F::type, wmma::row_major> fa[FM];
#pragma unroll
            for (int i = 0; i < FM; i++) {
                wmma::load_matrix_sync(fa[i], &sh.a[cur][wm * WM + i * 16][kk], S::LDA);
                to_tf32(fa[i], T());
            }
#pragma unroll
            for (int j = 0; j < FN; j++) {
                wmma::fragment<wmma::matrix_b, 16, 16, F::K, typename F::type, wmma::row_major> fb;
                wmma::load_matrix_sync(fb, &sh.b[cur][kk][wn * WN + j * 16], S::LDB);
                to_tf32(fb, T());
#pragma unroll
                for (int i = 0; i < FM; i++)
                    wmma::mma_sync(acc[i][j], fa[i], fb, acc[i][j]);
            }
        }
        if (s + 1 < slices)
            store(cur ^ 1); // nobody reads that stage since the last barrier
        __syncthreads();
    }

    float *scratch = sh.c[warp];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) {
            wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const size_t r0 = row0 + wm * WM + i * 16, c0 = col0 + wn * WN + j * 16;
#pragma unroll
            for (int e = 0; e < 8; e++) {
                int idx = lane + 32 * e;
                size_t r = r0 + idx / 16, col = c0 + idx % 16;
                if (r < m && col < n) {
                    float *out = &c[r * ldc + col];
                    *out = beta == 0.0f ? alpha * scratch[idx] : alpha * scratch[idx] + beta * *out;
                }
            }
            __syncwarp();
        }
}

#endif // PB_TC_WMMA

template <typename T>
__global__ void __launch_bounds__(THREADS)
    kernel(size_t m, size_t n, size_t k, float alpha, const T *__restrict__ a, size_t lda, const T *__restrict__ b,
           size_t ldb, float beta, float *__restrict__ c, size_t ldc, bool vec_a, bool vec_b)
{
#if defined(__CUDA_ARCH__) && defined(PB_TC_WMMA)
    body<T>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, vec_a, vec_b);
#elif defined(__CUDA_ARCH__)
    (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc,
        (void)vec_a, (void)vec_b;
    __trap(); // no bf16/tf32 wmma below sm_80; supports() refuses those devices
#endif
}

// Blocks of C along y are limited to 65535.
bool fits(const pb_gemm_args *g, const char **why)
{
    if ((g->m + BM - 1) / BM > 65535 || (g->n + BN - 1) / BN > INT_MAX) {
        *why = "matrix too large for the grid of 128x128 tiles";
        return false;
    }
    return true;
}

template <typename T> pb_status launch(const pb_gemm_args *g, cudaStream_t s)
{
    const T *a = pb__cuda_ptr<const T>(g->a), *b = pb__cuda_ptr<const T>(g->b);
    bool vec_a = pb__aligned16(a) && g->lda * sizeof(T) % 16 == 0, vec_b = pb__aligned16(b) && g->ldb * sizeof(T) % 16 == 0;
    dim3 grid((unsigned)((g->n + BN - 1) / BN), (unsigned)((g->m + BM - 1) / BM));
    kernel<T><<<grid, THREADS, 0, s>>>(g->m, g->n, g->k, (float)g->alpha, a, g->lda, b, g->ldb, (float)g->beta,
                                       pb__cuda_ptr<float>(g->c), g->ldc, vec_a, vec_b);
    PB_CUDA_CHECK_LAUNCH();
    return PB_OK;
}

} // namespace wmma_kernel

const pb_gemm_args *gemm_args(const void *args) { return static_cast<const pb_gemm_args *>(args); }

} // namespace

bool pb__cuda_gemm_tc_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_gemm_args *g = gemm_args(args);
    if (!pb__precision_lowp(g->prec)) {
        *why = "tensor-core kernel: tf32, bf16 and fp16 only";
        return false;
    }
    if (static_cast<const pb_cuda_device *>(dev->impl)->prop.major < 8) {
        *why = "tf32/bf16/fp16 tensor cores (wmma) need compute capability 8.0 or newer";
        return false;
    }
    return wmma_kernel::fits(g, why);
}

pb_status pb__cuda_gemm_tc(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev;
    const pb_gemm_args *g = gemm_args(args);
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    cudaStream_t st = pb__cuda_stream(s);
    switch (g->prec) {
    case PB_TF32:
        return wmma_kernel::launch<float>(g, st);
    case PB_BF16:
        return wmma_kernel::launch<__nv_bfloat16>(g, st);
    case PB_FP16:
        return wmma_kernel::launch<__half>(g, st);
    default:
        return pb__fail(PB_ERR_UNSUPPORTED, "gemm tc: precision %s: tf32, bf16 and fp16 only",
                        pb_precision_name(g->prec));
    }
}
