// gemm_thin.cu: GEMM for a thin C (at most 32 columns) on CUDA cores.
//
// Row-major C = alpha*A*B + beta*C where C has n <= 32 columns (4741 x 19 x 6987).
// regblock's narrowest tile is 64 wide: on 19 columns 70% of its FMAs were wasted,
// and it ran at 0.54x cuBLAS. Such a product streams A (m x k) once and does n FMAs
// per element of it, so it sits near the ridge of an H100 or H200 (19 FMAs per 4
// bytes of A: about 45 TFLOP/s at 4.8 TB/s): loads and FMAs must both stay busy.
//
//  * A block covers BM = 32 x TM rows of C and all its columns, rounded up to NP (a
//    multiple of 4). A's rows are read 128 bytes at a time (a slice of BK k-values):
//    with 32 bytes a row (an 8-deep slice) the loads reached only 2 TB/s on an H200,
//    the DRAM pages opened for a sector each. Each of the 4 warps takes a quarter of
//    every slice, for all the block's rows (lane + 32 i) and columns, and the warps'
//    sums are added in shared memory at the end (in warp order).
//  * A is copied global -> shared as is, rows padded by 16 bytes: the row pitch is an
//    odd multiple of 16 bytes, so the 8 rows a quarter-warp reads with 16-byte loads
//    lie in 8 distinct bank groups. B's BK x NP slice sits beside it; its reads are
//    broadcasts (every lane reads the same values). cp.async, STAGES deep, zero-filling
//    rows past m, columns past n and the k tail; 16-byte copies of A where A and lda
//    allow, else one element a copy (a warp still covers 128 contiguous bytes).
//  * Where the row blocks fill the device's block slots badly (m = 4741: 38 blocks
//    for 264 slots), k is cut into pieces. Each piece writes its m x n partial
//    product to a workspace that a second kernel sums in piece order into C: the
//    same result on every run. Where the workspace cannot be had, k is not cut
//    (slower, never an error).

#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/gemm_thin.cuh"
#include "backends/cuda/gemm_tiles.cuh"

#include <climits>
#include <cstdlib>
#include <cstring>

namespace {

// NP columns of C a block covers, TM rows a lane (BM = 32 * TM rows a block).
template <typename T_, int NP_, int TM_> struct Thin {
    using T = T_;
    static constexpr int NP = NP_, TM = TM_;
    static constexpr int THREADS = 128, WARPS = THREADS / 32, BM = 32 * TM;
    static constexpr int VEC = pb__vec16<T>::N;
    static constexpr int BK = 128 / (int)sizeof(T), KW = BK / WARPS, STAGES = 4;
    static constexpr int A_LD = BK + VEC; // 16 bytes of pad (see the header comment)
    static constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * NP;
    static constexpr int RED_LD = NP + 1; // the warps' partial sums: a pad word keeps the lanes' rows in distinct banks
    static constexpr size_t PIPE_BYTES = (size_t)STAGES * (A_STAGE + B_STAGE) * sizeof(T);
    static constexpr size_t RED_BYTES = (size_t)WARPS * BM * RED_LD * sizeof(T);
    static constexpr size_t SMEM_BYTES = PIPE_BYTES > RED_BYTES ? PIPE_BYTES : RED_BYTES;
    static_assert(NP % VEC == 0 && KW % VEC == 0, "whole 16-byte vectors");
    static_assert((A_LD * sizeof(T) / 16) % 2 == 1, "A's row pitch: an odd multiple of 16 bytes");
};

template <typename T> struct ThinParams {
    const T *a;
    const T *b;
    T *c;
    long long m, n, k, lda, ldb, ldc;
    T alpha, beta;
    // gridDim.y pieces along k: piece z takes k from z * k_split (a multiple of
    // BK), at most k_split of it, and writes its product to ws + z * m * n.
    long long k_split;
    T *ws;
};

template <class Cfg, bool VA>
__global__ void __launch_bounds__(Cfg::THREADS) thin_kernel(const ThinParams<typename Cfg::T> p)
{
    using T = typename Cfg::T;
    using V = pb__vec16<T>;
    using VT = typename V::type;
    constexpr int BM = Cfg::BM, BK = Cfg::BK, KW = Cfg::KW, NP = Cfg::NP, VEC = Cfg::VEC, STAGES = Cfg::STAGES;
    constexpr int THREADS = Cfg::THREADS, TM = Cfg::TM, A_LD = Cfg::A_LD;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const As = reinterpret_cast<T *>(smem_raw);
    T *const Bs = As + STAGES * Cfg::A_STAGE;

    const int tid = threadIdx.x;
    const long long m0 = (long long)blockIdx.x * BM;
    const long long kz = (long long)blockIdx.y * p.k_split;
    const long long K = max(0LL, min(p.k - kz, p.k_split));
    const long long ktiles = (K + BK - 1) / BK;
    const T *const a_base = p.a + kz, *const b_base = p.b + kz * p.ldb;

    // A warp's copies cover whole 128-byte rows of A (a slice is BK k-values).
    auto load_slice = [&](long long kt, int stage) {
        T *as = As + stage * Cfg::A_STAGE;
        T *bs = Bs + stage * Cfg::B_STAGE;
        const long long k0 = kt * BK;
        const long long rows_left = p.m - m0;
        if (VA) { // thread: 16 bytes at kc of rows r0, r0 + STEP, ...
            constexpr int PER_ROW = BK / VEC, STEP = THREADS / PER_ROW;
            static_assert(THREADS % PER_ROW == 0 && BM % STEP == 0, "whole copies per thread");
            const int r0 = tid / PER_ROW, kc = tid % PER_ROW * VEC;
            const int bytes = (int)max(0LL, min((long long)VEC, K - (k0 + kc))) * (int)sizeof(T);
            const T *src = a_base + (m0 + r0) * p.lda + k0 + kc;
            const unsigned dst = smem_u32(as + r0 * A_LD + kc);
#pragma unroll
            for (int i = 0; i < BM / STEP; ++i) {
                const int n_bytes = r0 + i * STEP < rows_left ? bytes : 0;
                cp_async_16(dst + i * STEP * A_LD * (unsigned)sizeof(T), n_bytes ? src + i * STEP * p.lda : p.a,
                            n_bytes);
            }
        } else { // thread: element kk of rows r0, r0 + STEP, ...
            constexpr int STEP = THREADS / BK;
            static_assert(THREADS % BK == 0 && BM % STEP == 0, "whole copies per thread");
            const int r0 = tid / BK, kk = tid % BK;
            const int bytes = k0 + kk < K ? (int)sizeof(T) : 0;
            const T *src = a_base + (m0 + r0) * p.lda + k0 + kk;
            const unsigned dst = smem_u32(as + r0 * A_LD + kk);
#pragma unroll 8
            for (int i = 0; i < BM / STEP; ++i) {
                const int n_bytes = r0 + i * STEP < rows_left ? bytes : 0;
                const T *from = n_bytes ? src + i * STEP * p.lda : p.a;
                if (sizeof(T) == 8)
                    cp_async_8(dst + i * STEP * A_LD * (unsigned)sizeof(T), from, n_bytes);
                else
                    cp_async_4(dst + i * STEP * A_LD * (unsigned)sizeof(T), from, n_bytes);
            }
        }
#pragma unroll
        for (int i = 0; i < (BK * NP + THREADS - 1) / THREADS; ++i) {
            const int e = tid + i * THREADS;
            if (BK * NP % THREADS != 0 && e >= BK * NP)
                break;
            const int kr = e / NP, col = e % NP;
            const bool ok = col < p.n && k0 + kr < K;
            const T *src = ok ? b_base + (k0 + kr) * p.ldb + col : p.b;
            if (sizeof(T) == 8)
                cp_async_8(smem_u32(bs + e), src, ok ? 8 : 0);
            else
                cp_async_4(smem_u32(bs + e), src, ok ? 4 : 0);
        }
    };

    // Warp w takes k-values [w * KW, (w + 1) * KW) of every slice for all BM
    // rows (lane + 32 i) and all NP columns; the warps' sums are added at the end.
    const int warp = tid >> 5, lane = tid & 31;
    T acc[TM][NP];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < NP; ++j)
            acc[i][j] = T(0);

    // Slice kt+STAGES-1 is copied into the stage slice kt-1 was read from: every
    // thread has passed this iteration's barrier, so nobody reads it any more.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles)
            load_slice(s, s);
        cp_async_commit(); // empty groups keep the count uniform
    }
    for (long long kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>(); // this thread's copies of slice kt have landed
        __syncthreads();             // everyone's
        if (kt + STAGES - 1 < ktiles)
            load_slice(kt + STAGES - 1, (int)((kt + STAGES - 1) % STAGES));
        cp_async_commit();
        const int stage = (int)(kt % STAGES);
        const T *as = As + stage * Cfg::A_STAGE + lane * A_LD + warp * KW;
        const T *bs = Bs + stage * Cfg::B_STAGE + warp * KW * NP;
#pragma unroll
        for (int kq = 0; kq < KW; kq += VEC) {
            T a[TM][VEC];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                V::split(*reinterpret_cast<const VT *>(as + i * 32 * A_LD + kq), a[i]);
#pragma unroll
            for (int kv = 0; kv < VEC; ++kv) {
                T b[NP];
#pragma unroll
                for (int j = 0; j < NP; j += VEC)
                    V::split(*reinterpret_cast<const VT *>(bs + (kq + kv) * NP + j), b + j);
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < NP; ++j)
                        acc[i][j] = fma(a[i][kv], b[j], acc[i][j]);
            }
        }
    }

    // The warps' partial sums through shared memory (the stages are free once
    // every copy has landed and every warp has left the loop), added in warp
    // order; then C = alpha*sum + beta*C (beta == 0 never reads C), or the
    // piece into ws. Consecutive threads take consecutive columns of a row.
    cp_async_wait<0>();
    __syncthreads();
    T *const red = reinterpret_cast<T *>(smem_raw);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < NP; ++j)
            red[(warp * BM + lane + 32 * i) * Cfg::RED_LD + j] = acc[i][j];
    __syncthreads();
    const bool piece = gridDim.y > 1;
    for (int e = tid; e < BM * NP; e += THREADS) {
        const int r = e / NP, col = e % NP;
        const long long row = m0 + r;
        if (row >= p.m || col >= p.n)
            continue;
        T sum = red[r * Cfg::RED_LD + col];
#pragma unroll
        for (int w = 1; w < Cfg::WARPS; ++w)
            sum += red[(w * BM + r) * Cfg::RED_LD + col];
        if (piece) {
            p.ws[((long long)blockIdx.y * p.m + row) * p.n + col] = sum;
        } else {
            T *dst = p.c + row * p.ldc + col;
            *dst = p.beta == T(0) ? p.alpha * sum : fma(p.alpha, sum, p.beta * *dst);
        }
    }
}

// C = alpha * (the sum of the pieces, in piece order) + beta * C.
template <typename T>
__global__ void thin_reduce(long long m, long long n, int pieces, const T *__restrict__ ws, T alpha, T beta,
                            T *__restrict__ c, long long ldc)
{
    const long long total = m * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x) {
        T sum = 0;
        for (int z = 0; z < pieces; ++z)
            sum += ws[z * total + e];
        T *dst = c + e / n * ldc + e % n;
        *dst = beta == T(0) ? alpha * sum : fma(alpha, sum, beta * *dst);
    }
}

// Opt the kernels of Cfg into their shared memory, once per process, and
// return how many blocks of them an SM holds (0 where that failed).
template <class Cfg> int blocks_per_sm(cudaError_t *err)
{
    static cudaError_t once_err = cudaSuccess;
    static const int once = [] {
        const int bytes = (int)Cfg::SMEM_BYTES;
        cudaError_t e = cudaFuncSetAttribute(thin_kernel<Cfg, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(thin_kernel<Cfg, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        int n = 0;
        if (e == cudaSuccess)
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, thin_kernel<Cfg, false>, Cfg::THREADS,
                                                              Cfg::SMEM_BYTES);
        once_err = e;
        return e == cudaSuccess ? n : 0;
    }();
    *err = once_err;
    return once;
}

template <class Cfg>
cudaError_t thin(size_t m, size_t n, size_t k, typename Cfg::T alpha, const typename Cfg::T *a, size_t lda,
                 const typename Cfg::T *b, size_t ldb, typename Cfg::T beta, typename Cfg::T *c, size_t ldc,
                 cudaStream_t s)
{
    using T = typename Cfg::T;
    if (m == 0 || n == 0)
        return cudaSuccess;
    if (n > (size_t)Cfg::NP || !pb__gemm_args_ok(m, n, &k, &alpha, a, lda, b, ldb, c, ldc))
        return cudaErrorInvalidValue;
    const size_t row_blocks = (m + Cfg::BM - 1) / Cfg::BM;
    if (row_blocks > (size_t)INT_MAX)
        return cudaErrorInvalidValue; // more blocks than a grid's x holds

    cudaError_t e = cudaSuccess;
    const int per_sm = blocks_per_sm<Cfg>(&e);
    if (e != cudaSuccess)
        return e;

    // Pieces along k where the row blocks alone fill the block slots badly
    // (m = 4741: 38 blocks of 128 rows for 264 slots; m = 40000: 313 blocks,
    // a second wave 19% full): the count of least waves per piece, a larger
    // one taken only where it saves 5%; each piece at least 8 slices, their
    // partial products at most 256 MiB.
    const size_t slots = (size_t)pb__sm_count() * (size_t)(per_sm > 0 ? per_sm : 1);
    size_t cap = std::min<size_t>(std::max<size_t>(k / (8 * Cfg::BK), 1), 1024);
    cap = std::min(cap, std::max<size_t>(((size_t)256 << 20) / (m * n * sizeof(T)), 1));
    size_t pieces = 1;
    double least = 0;
    for (size_t q = 1; q <= cap; ++q) {
        const double waves = (double)((row_blocks * q + slots - 1) / slots) / (double)q;
        if (q == 1 || waves < 0.95 * least)
            pieces = q, least = waves;
    }
    size_t k_split = k;
    if (pieces > 1) {
        k_split = ((k + pieces - 1) / pieces + Cfg::BK - 1) / Cfg::BK * Cfg::BK;
        pieces = (k + k_split - 1) / k_split;
    }

    ThinParams<T> p;
    p.a = a;
    p.b = b;
    p.c = c;
    p.m = (long long)m;
    p.n = (long long)n;
    p.k = (long long)k;
    p.lda = (long long)lda;
    p.ldb = (long long)ldb;
    p.ldc = (long long)ldc;
    p.alpha = alpha;
    p.beta = beta;
    p.k_split = (long long)(k_split > 0 ? k_split : 1);
    p.ws = nullptr;
    if (pieces > 1 && cudaMallocAsync(&p.ws, pieces * m * n * sizeof(T), s) != cudaSuccess) {
        (void)cudaGetLastError(); // the failed allocation's error, not left for the next check
        p.ws = nullptr;
        pieces = 1;
        p.k_split = (long long)(k > 0 ? k : 1);
    }

    const dim3 grid((unsigned)row_blocks, (unsigned)pieces), block(Cfg::THREADS);
    if (pb__aligned16(a) && lda % Cfg::VEC == 0)
        thin_kernel<Cfg, true><<<grid, block, Cfg::SMEM_BYTES, s>>>(p);
    else
        thin_kernel<Cfg, false><<<grid, block, Cfg::SMEM_BYTES, s>>>(p);
    e = cudaGetLastError();
    if (e == cudaSuccess && pieces > 1) {
        const size_t blocks = std::min<size_t>((m * n + 255) / 256, 4096);
        thin_reduce<T><<<(unsigned)blocks, 256, 0, s>>>((long long)m, (long long)n, (int)pieces, p.ws, alpha, beta, c,
                                                        (long long)ldc);
        e = cudaGetLastError();
    }
    if (p.ws) {
        const cudaError_t freed = cudaFreeAsync(p.ws, s);
        if (e == cudaSuccess)
            e = freed;
    }
    return e;
}

// Float: 128 rows a block (TM = 4), slices of 32 k. Double: slices of 16 k, 128
// rows up to 16 columns, 64 (TM = 2) above: 4 x 32 accumulators would not fit.
template <typename T, int NP> using ThinFor = Thin<T, NP, (sizeof(T) == 8 && NP > 16) ? 2 : 4>;

// NP: n rounded up to a multiple of 4 (n = 19 in 24 columns wasted a fifth of the FMAs).
template <typename T>
cudaError_t thin_any(size_t m, size_t n, size_t k, T alpha, const T *a, size_t lda, const T *b, size_t ldb, T beta,
                     T *c, size_t ldc, cudaStream_t s)
{
    switch ((n + 3) / 4) {
    case 0:
    case 1:
        return thin<ThinFor<T, 4>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 2:
        return thin<ThinFor<T, 8>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 3:
        return thin<ThinFor<T, 12>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 4:
        return thin<ThinFor<T, 16>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 5:
        return thin<ThinFor<T, 20>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 6:
        return thin<ThinFor<T, 24>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 7:
        return thin<ThinFor<T, 28>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    default:
        return thin<ThinFor<T, 32>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    }
}

} // namespace

bool pb__cuda_gemm_thin_wanted(size_t n)
{
    const char *off = getenv("PARBENCH_GEMM_THIN");
    return n <= PB_GEMM_THIN_MAX_N && getenv("PARBENCH_GEMM_TILE") == nullptr && !(off && strcmp(off, "0") == 0);
}

cudaError_t pb__cuda_gemm_thin_f32(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                                   const float *b, size_t ldb, float beta, float *c, size_t ldc, cudaStream_t s)
{
    return thin_any<float>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}

cudaError_t pb__cuda_gemm_thin_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                   const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s)
{
    return thin_any<double>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}
