// gemm_regblock.cu: register-blocked SIMT GEMM (FP32 / FP64 FMA units, no tensor cores).
//
// Row-major C = alpha*A*B + beta*C. The design is the classic SIMT SGEMM of maxas,
// CUTLASS's SIMT path and siboehm's "warptiling" kernel, templated over the element
// type and the tile shape (struct Tile):
//
//  * Block tile BM x BN, K consumed in slices of BK, two shared-memory stages. The
//    global loads of slice t+1 are issued into registers before the FMAs of slice t
//    and written to the other stage just before its last k-row, so their latency
//    hides behind a whole slice of FMAs; one __syncthreads per slice.
//  * A is stored transposed in shared memory (As[k][m]) and B as is (Bs[k][n]), so
//    for each k a lane reads its column slice of A and row slice of B with 16-byte
//    LDS.128. As rows are padded by 4 elements so that the scalar transposing stores
//    are bank-conflict-free (see A_LD).
//  * Each warp computes a WM x WN warp tile; its 32 lanes form a TWM x (32/TWM)
//    grid, and each lane owns REP_M x REP_N chunks of CM x CN elements spaced one
//    lane grid apart: a TM x TN register tile. Per k-row a lane issues TM*TN FMAs
//    for (TM+TN)*sizeof(T)/16 LDS.128. Lanes along N read consecutive 16-byte chunks
//    of B (128 contiguous bytes per 8 lanes), lanes along M share A addresses
//    (broadcast); ncu reports no shared-load bank conflicts.
//  * Register fragments are double-buffered: the LDS of k-row kk+1 are issued before
//    the FMAs of k-row kk, and across the barrier for k-row 0 of the next slice.
//  * Global loads are 16 bytes (float4 / double2) when the pointer and the leading
//    dimension allow it (template flags VA/VB chosen at launch), else scalar. A is
//    read two vectors per row per instruction: a warp touches 16 rows x 32 bytes,
//    whole sectors, and the transposed stores stay conflict-free.
//  * Edges: A rows past m are clamped to row m-1 (their results are never stored),
//    B columns past n and the K tail (both operands) are zero-filled, stores are
//    guarded, 16-byte stores only when C and ldc are aligned (where they are not
//    and k is short, a kernel of its own stages the tile's rows through shared
//    memory to store them whole: STAGED_C). Full K slices take
//    an unpredicated path; the K % BK tail is one extra slice after the main loop.
//  * 1-D grid walked in the grouped tile order of gemm_tiles.cuh, so that co-resident
//    blocks share A and B panels in L2. Index products are 64-bit.
//  * Tiles past the last full wave, or all of them where they leave SMs idle, are
//    cut along k (pb__plan_fill): 3000 x 5000 x 7000 runs 3.64 waves, not 4.
//
// Tiles (measured on an H100 SXM, 132 SMs; see the Tile<> list at the end):
//  FP32 large  128x256x16, 256 threads, 8x16 per lane, 1 block/SM (255 regs, 48.5 KiB
//              shared memory, opted into above the 48 KiB default). 8x16 reads a quarter
//              fewer shared-memory bytes per FMA than 8x8; 1-2% ahead of 128x128.
//  FP32 medium 128x128x8, 256 threads, 8x8, 2 blocks/SM (128 regs, 16.3 KiB).
//  FP32 narrow 128x64x8, 128 threads, 8x8, 4 blocks/SM: a thin C (65536 x 64), or a
//              mid-sized one (1000^2: 128 tiles where 128x128 makes 64).
//  FP32 small  64x64x8, 128 threads, 8x4, 4 blocks/SM.
//  FP64 large  128x128x8, 256 threads, 8x8 doubles, 1 block/SM (~250 regs, 32.5 KiB).
//  FP64 small  64x64x8, 128 threads, 8x4 doubles, 3 blocks/SM.
// The host picks the tile and plan whose estimated time (pb__plan_fill: blocks per
// SM x work per block / efficiency, a fixed cost per block) is least, so small,
// mid-sized and skinny products still fill the SMs.

#include "backends/cuda/gemm_tiles.cuh"
#include "backends/cuda/gemm_regblock.cuh"
#include "backends/cuda/gemm_thin.cuh"

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace {

template <typename T> using Vec = pb__vec16<T>;

// Compile-time tile configuration.
//   BM x BN x BK : block tile and K slice
//   WM x WN      : warp tile; THREADS = (BM/WM)*(BN/WN)*32
//   TWM          : lanes along M inside a warp (32/TWM along N)
//   CM x CN      : contiguous chunk a lane owns (multiple of one 16-byte vector)
//   MIN_BLOCKS   : __launch_bounds__ occupancy hint (caps registers at 64K/(THREADS*MIN_BLOCKS))
template <typename T_, int BM_, int BN_, int BK_, int WM_, int WN_, int TWM_, int CM_, int CN_, int MIN_BLOCKS_>
struct Tile {
    using T = T_;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int TWM = TWM_, TWN = 32 / TWM_, CM = CM_, CN = CN_;
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
    static constexpr int VEC = Vec<T>::N;
    static constexpr int WARPS_N = BN / WN;
    static constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    static constexpr int REP_M = WM / (TWM * CM), REP_N = WN / (TWN * CN);
    static constexpr int TM = REP_M * CM, TN = REP_N * CN;

    // A global->smem: each instruction covers A_RPI rows x 2 vectors along k.
    static constexpr int A_RPI = THREADS / 2;
    static constexpr int A_RG = BM / A_RPI, A_CG = BK / (2 * VEC), A_LOADS = A_RG * A_CG;
    // B global->smem: each instruction covers B_RPI full rows of the BK x BN slice.
    static constexpr int B_VPR = BN / VEC, B_RPI = THREADS / B_VPR, B_LOADS = BK / B_RPI;

    // The transposed A stores of one warp hit k-rows kc, kc+VEC (scalar stores of 16 rows
    // each); a pad of 4 elements puts those k-rows 16 words apart in the bank space
    // (4*132 floats, 2*132 doubles), so they never collide, and keeps rows 16-byte aligned.
    static constexpr int A_LD = BM + 4, B_LD = BN;
    static constexpr int A_STAGE = BK * A_LD, B_STAGE = BK * B_LD;
    // The epilogue stages a TWM*CM x TWN*CN chunk per warp, rows padded by a vector.
    static constexpr size_t RING_BYTES = 2 * (size_t)(A_STAGE + B_STAGE) * sizeof(T);
    static constexpr size_t EPI_BYTES = (size_t)(THREADS / 32) * (TWM * CM) * (TWN * CN + VEC) * sizeof(T);
    static constexpr size_t SMEM_BYTES = RING_BYTES > EPI_BYTES ? RING_BYTES : EPI_BYTES;

    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "threads");
    static_assert(TWM * TWN == 32, "lane grid");
    static_assert(WM % (TWM * CM) == 0 && WN % (TWN * CN) == 0, "warp tile vs lane grid");
    static_assert(BM % WM == 0 && BN % WN == 0, "block tile vs warp tile");
    static_assert(CM % VEC == 0 && CN % VEC == 0, "chunks are whole vectors");
    static_assert(BM % A_RPI == 0 && BK % (2 * VEC) == 0, "A load mapping");
    static_assert(THREADS % B_VPR == 0 && BK % B_RPI == 0, "B load mapping");
    static_assert(BK % 2 == 0, "fragment double buffering alternates per k-row");
};

template <typename T> struct Params {
    const T *a;
    const T *b;
    T *c;
    long long m, n, k, lda, ldb, ldc;
    T alpha, beta;
    long long tiles_m, tiles_n;
    bool c_vec; // C pointer and ldc allow 16-byte stores
    long long tile_first; // block x computes tile tile_first + x
    // cut along k (gridDim.y > 1): grid row z takes k from z * k_split, at most
    // k_split of it, and writes alpha = 1 times its product to its piece of ws
    // (pb__plan_split); pb__tile_reduce adds the pieces into C.
    long long k_split;
    T *ws;
};

// STAGED_C: C's rows rule out 16-byte stores, and the epilogue passes the tile
// through shared memory (a separate kernel: the branch in one kernel cost 4-5%
// on 4096^3 and 8192^3, the compiler allocating the main loop's registers anew).
template <class Cfg, bool VA, bool VB, bool STAGED_C>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) gemm_kernel(const Params<typename Cfg::T> p)
{
    using T = typename Cfg::T;
    using V = Vec<T>;
    using VT = typename V::type;
    constexpr int VEC = Cfg::VEC, BK = Cfg::BK, CM = Cfg::CM, CN = Cfg::CN;
    constexpr int TM = Cfg::TM, TN = Cfg::TN, A_LD = Cfg::A_LD, B_LD = Cfg::B_LD;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const As = reinterpret_cast<T *>(smem_raw);
    T *const Bs = As + 2 * Cfg::A_STAGE;

    const int tid = threadIdx.x;

    long long m0, n0;
    pb__tile_origin(p.tile_first + blockIdx.x, p.tiles_m, p.tiles_n, Cfg::BM, Cfg::BN, &m0, &n0);
    const long long M = p.m, N = p.n;
    const bool split = gridDim.y > 1;
    const long long kz = (long long)blockIdx.y * p.k_split, K = max(0LL, min(p.k - kz, p.k_split));
    const T *const a_base = p.a + kz, *const b_base = p.b + kz * p.ldb;

    // ---- global load setup (source pointers advance by one slice per load) ----
    const int a_r = tid >> 1;        // row within a row group
    const int a_c = (tid & 1) * VEC; // k offset within a vector pair
    const T *a_src[Cfg::A_RG];
#pragma unroll
    for (int rg = 0; rg < Cfg::A_RG; ++rg) {
        const long long row = min(m0 + rg * Cfg::A_RPI + a_r, M - 1); // clamp: rows >= m are never stored
        a_src[rg] = a_base + row * p.lda + a_c;
    }
    const int b_r = tid / Cfg::B_VPR;
    const int b_c = (tid % Cfg::B_VPR) * VEC;
    const long long b_col = n0 + b_c;
    const bool b_vec_ok = VB && b_col + VEC <= N;
    const T *b_src = b_base + b_r * p.ldb + b_col;
    const long long b_row_step = (long long)Cfg::B_RPI * p.ldb, b_slice_step = (long long)BK * p.ldb;

    T a_st[Cfg::A_LOADS][VEC]; // staging registers for the next slice
    T b_st[Cfg::B_LOADS][VEC];

    // Load the next slice into the staging registers. FULL: all BK k-rows exist,
    // else only krem < BK of them.
    auto load_slice = [&](int krem, auto full_tag) {
        constexpr bool FULL = decltype(full_tag)::value;
#pragma unroll
        for (int i = 0; i < Cfg::A_LOADS; ++i) {
            const int kc = i / Cfg::A_RG * 2 * VEC;
            const T *src = a_src[i % Cfg::A_RG] + kc;
            if (FULL && VA) {
                V::split(__ldg(reinterpret_cast<const VT *>(src)), a_st[i]);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    a_st[i][e] = (FULL || kc + a_c + e < krem) ? __ldg(src + e) : T(0);
            }
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_LOADS; ++i) {
            const T *src = b_src + i * b_row_step;
            const bool row_ok = FULL || i * Cfg::B_RPI + b_r < krem;
            if (b_vec_ok) {
                V::split(row_ok ? __ldg(reinterpret_cast<const VT *>(src)) : VT{}, b_st[i]);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    b_st[i][e] = (row_ok && b_col + e < N) ? __ldg(src + e) : T(0);
            }
        }
#pragma unroll
        for (int rg = 0; rg < Cfg::A_RG; ++rg)
            a_src[rg] += BK;
        b_src += b_slice_step;
    };
    // Write the staged slice into stage buf (A transposed).
    auto store_slice = [&](int buf) {
        T *as = As + buf * Cfg::A_STAGE;
        T *bs = Bs + buf * Cfg::B_STAGE;
#pragma unroll
        for (int i = 0; i < Cfg::A_LOADS; ++i) {
            const int row = i % Cfg::A_RG * Cfg::A_RPI + a_r, kc = i / Cfg::A_RG * 2 * VEC + a_c;
#pragma unroll
            for (int e = 0; e < VEC; ++e)
                as[(kc + e) * A_LD + row] = a_st[i][e];
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_LOADS; ++i)
            *reinterpret_cast<VT *>(&bs[(i * Cfg::B_RPI + b_r) * B_LD + b_c]) = V::join(b_st[i]);
    };

    // ---- compute setup ----
    const int warp = tid >> 5, lane = tid & 31;
    const int lane_m = lane / Cfg::TWN, lane_n = lane % Cfg::TWN;
    const int a_off = warp / Cfg::WARPS_N * Cfg::WM + lane_m * CM;
    const int b_off = warp % Cfg::WARPS_N * Cfg::WN + lane_n * CN;

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = T(0);

    // Register fragments of one k-row: the lane's TM values of A and TN values of B.
    auto load_frags = [&](int buf, int kk, T *fa, T *fb) {
        const T *as = As + buf * Cfg::A_STAGE + kk * A_LD + a_off;
        const T *bs = Bs + buf * Cfg::B_STAGE + kk * B_LD + b_off;
#pragma unroll
        for (int r = 0; r < Cfg::REP_M; ++r)
#pragma unroll
            for (int v = 0; v < CM; v += VEC)
                V::split(*reinterpret_cast<const VT *>(as + r * Cfg::TWM * CM + v), fa + r * CM + v);
#pragma unroll
        for (int r = 0; r < Cfg::REP_N; ++r)
#pragma unroll
            for (int v = 0; v < CN; v += VEC)
                V::split(*reinterpret_cast<const VT *>(bs + r * Cfg::TWN * CN + v), fb + r * CN + v);
    };
    auto outer_product = [&](const T *fa, const T *fb) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
    };

    // Main loop over the full slices. The global loads of slice t+1 are issued first
    // and stay in flight during the FMAs of slice t; they are written to the other
    // stage just before the last k-row of slice t. That stage was last read in slice
    // t-1, before the barrier all threads have passed, so one barrier per slice
    // suffices. Fragments are double-buffered in registers: the LDS of k-row kk+1
    // (after the barrier, k-row 0 of the next slice) overlap the FMAs of k-row kk.
    // Slices 0 .. nfull-1 are full; a last slice of K % BK k-rows follows the loop.
    const int nfull = (int)(K / BK), ktail = (int)(K % BK);
    T fa[2][TM], fb[2][TN];
    if (nfull > 0) {
        load_slice(BK, std::true_type{});
        store_slice(0);
        __syncthreads();
        load_frags(0, 0, fa[0], fb[0]);
    }
    for (int t = 0; t < nfull; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < nfull;
        if (more)
            load_slice(BK, std::true_type{});
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const int cur = kk & 1;
            if (kk + 1 < BK) {
                load_frags(buf, kk + 1, fa[cur ^ 1], fb[cur ^ 1]);
            } else if (more) {
                store_slice(buf ^ 1);
                __syncthreads();
                load_frags(buf ^ 1, 0, fa[cur ^ 1], fb[cur ^ 1]);
            }
            outer_product(fa[cur], fb[cur]);
        }
    }
    if (ktail > 0) { // K tail, zero-filled past k; not overlapped (once per block)
        __syncthreads(); // the last full slice may still be reading either stage
        load_slice(ktail, std::false_type{});
        store_slice(0);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            load_frags(0, kk, fa[0], fb[0]);
            outer_product(fa[0], fb[0]);
        }
    }

    // ---- epilogue: C = alpha*acc + beta*C, guarded; beta == 0 never reads C ----
    // A piece of a cut tile goes to its own BM x BN part of ws, at (row - m0, col - n0).
    const T alpha = split ? T(1) : p.alpha, beta = split ? T(0) : p.beta;
    const long long piece = (long long)blockIdx.y * gridDim.x + blockIdx.x;
    // c_out is addressed from (0, 0) like C, a pointer before ws (never read
    // through): offsets from the piece's start instead ran 2-3% slower (H200,
    // 2048^3 to 8192^3, A/B in one call), the compiler scheduling the loop anew.
    T *const c_out = split ? p.ws + piece * Cfg::BM * Cfg::BN - (m0 * Cfg::BN + n0) : p.c;
    const long long ldc = split ? Cfg::BN : p.ldc;
    const bool c_vec = split || p.c_vec;
    if constexpr (STAGED_C) {
        // Scalar stores straight from the registers would write one element
        // every 16 bytes along a row (39333 x 6110 x 30: 1.0 TB/s); instead each warp
        // passes its tile through shared memory (idle now), one lane chunk
        // (CM x CN) of every lane at a time, and writes whole rows of it: a
        // warp's store covers TWN * CN consecutive elements.
        constexpr int RW = Cfg::TWM * CM, CW = Cfg::TWN * CN, SLD = CW + VEC; // pad: 16-byte rows
        static_assert(Cfg::THREADS / 32 * RW * SLD * sizeof(T) == Cfg::EPI_BYTES, "epilogue staging");
        T *const stage = As + warp * RW * SLD;
        const long long row0 = m0 + a_off - lane_m * CM, col0 = n0 + b_off - lane_n * CN; // the warp's origin
        __syncthreads(); // every warp has read its last fragments
#pragma unroll
        for (int r = 0; r < Cfg::REP_M; ++r) {
#pragma unroll
            for (int sc = 0; sc < Cfg::REP_N; ++sc) {
#pragma unroll
                for (int i = 0; i < CM; ++i)
#pragma unroll
                    for (int v = 0; v < CN; v += VEC)
                        *reinterpret_cast<VT *>(&stage[(lane_m * CM + i) * SLD + lane_n * CN + v]) =
                            V::join(&acc[r * CM + i][sc * CN + v]);
                __syncwarp();
#pragma unroll
                for (int t = 0; t < RW * CW / 32; ++t) {
                    const int at = lane + 32 * t, rr = at / CW, cc = at % CW;
                    const long long row = row0 + r * RW + rr, col = col0 + sc * CW + cc;
                    if (row < M && col < N) {
                        T *dst = c_out + row * ldc + col;
                        const T res = stage[rr * SLD + cc];
                        *dst = beta == T(0) ? alpha * res : fma(alpha, res, beta * *dst);
                    }
                }
                __syncwarp(); // the stage is rewritten in the next pass
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < Cfg::REP_M; ++r) {
#pragma unroll
            for (int i = 0; i < CM; ++i) {
                const long long row = m0 + a_off + r * Cfg::TWM * CM + i;
                if (row >= M)
                    continue;
                T *crow = c_out + row * ldc;
#pragma unroll
                for (int s = 0; s < Cfg::REP_N; ++s) {
#pragma unroll
                    for (int v = 0; v < CN; v += VEC) {
                        const long long col = n0 + b_off + s * Cfg::TWN * CN + v;
                        const T *res = &acc[r * CM + i][s * CN + v];
                        T out[VEC];
                        if (c_vec && col + VEC <= N) {
                            VT *dst = reinterpret_cast<VT *>(crow + col);
                            if (beta == T(0)) {
#pragma unroll
                                for (int e = 0; e < VEC; ++e)
                                    out[e] = alpha * res[e];
                            } else {
                                T old[VEC];
                                V::split(*dst, old);
#pragma unroll
                                for (int e = 0; e < VEC; ++e)
                                    out[e] = fma(alpha, res[e], beta * old[e]);
                            }
                            *dst = V::join(out);
                        } else {
#pragma unroll
                            for (int e = 0; e < VEC; ++e) {
                                if (col + e < N) {
                                    T *dst = crow + col + e;
                                    *dst = beta == T(0) ? alpha * res[e] : fma(alpha, res[e], beta * *dst);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// Raise the dynamic shared-memory limit of every kernel of Cfg, once per process.
template <class Cfg> cudaError_t prepare_smem()
{
    if constexpr (Cfg::SMEM_BYTES <= 48 * 1024) {
        return cudaSuccess;
    } else {
        static const cudaError_t once = [] {
            const int bytes = (int)Cfg::SMEM_BYTES;
            const void *kernels[] = {(const void *)gemm_kernel<Cfg, false, false, false>,
                                     (const void *)gemm_kernel<Cfg, false, true, false>,
                                     (const void *)gemm_kernel<Cfg, true, false, false>,
                                     (const void *)gemm_kernel<Cfg, true, true, false>,
                                     (const void *)gemm_kernel<Cfg, false, false, true>,
                                     (const void *)gemm_kernel<Cfg, false, true, true>,
                                     (const void *)gemm_kernel<Cfg, true, false, true>,
                                     (const void *)gemm_kernel<Cfg, true, true, true>};
            cudaError_t e = cudaSuccess;
            for (const void *k : kernels)
                if (e == cudaSuccess)
                    e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
            return e;
        }();
        return once;
    }
}

template <class Cfg, bool STAGED_C>
void launch_kernel(bool va, bool vb, dim3 grid, dim3 block, cudaStream_t s, const Params<typename Cfg::T> &p)
{
    const size_t smem = STAGED_C ? Cfg::SMEM_BYTES : Cfg::RING_BYTES;
    if (va && vb)
        gemm_kernel<Cfg, true, true, STAGED_C><<<grid, block, smem, s>>>(p);
    else if (va)
        gemm_kernel<Cfg, true, false, STAGED_C><<<grid, block, smem, s>>>(p);
    else if (vb)
        gemm_kernel<Cfg, false, true, STAGED_C><<<grid, block, smem, s>>>(p);
    else
        gemm_kernel<Cfg, false, false, STAGED_C><<<grid, block, smem, s>>>(p);
}

template <class Cfg>
cudaError_t gemm(const pb__tile_choice &tile, size_t m, size_t n, size_t k, typename Cfg::T alpha,
                 const typename Cfg::T *a, size_t lda, const typename Cfg::T *b, size_t ldb, typename Cfg::T beta,
                 typename Cfg::T *c, size_t ldc, cudaStream_t s)
{
    using T = typename Cfg::T;
    if (m == 0 || n == 0)
        return cudaSuccess;
    if (!pb__gemm_args_ok(m, n, &k, &alpha, a, lda, b, ldb, c, ldc))
        return cudaErrorInvalidValue;
    const size_t tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + Cfg::BN - 1) / Cfg::BN;
    if (tiles_m > (size_t)INT_MAX / tiles_n || k / Cfg::BK >= (size_t)INT_MAX)
        return cudaErrorInvalidValue; // more blocks than a 1-D grid holds, or slices than an int counts

    const cudaError_t prep = prepare_smem<Cfg>();
    if (prep != cudaSuccess)
        return prep;

    constexpr int VEC = Cfg::VEC;
    Params<T> p;
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
    p.tiles_m = (long long)tiles_m;
    p.tiles_n = (long long)tiles_n;
    p.c_vec = pb__aligned16(c) && ldc % VEC == 0;
    bool va = pb__aligned16(a) && lda % VEC == 0;
    bool vb = pb__aligned16(b) && ldb % VEC == 0;
    p.tile_first = 0;
    p.k_split = (long long)k;
    p.ws = nullptr;
    const size_t tiles = tiles_m * tiles_n;
    pb__split_plan plan = pb__plan_fill(&tile, m, n, k, pb__sm_count(), sizeof(T), pb__plan_fma_rate(sizeof(T)),
                                        pb__fill_block_s(p.c_vec));

    // Scratch on the stream, freed behind the work: A or B packed where their
    // layout rules out 16-byte loads and the product is long enough to repay
    // the copy (a leading dimension of 8191: 0.78x cuBLAS without, the copy
    // costing 1-2% of the product; 511 x 463 x 1023: the copies cost more
    // than the product), and the pieces.
    T *scratch[3] = {nullptr, nullptr, nullptr};
    cudaError_t e = cudaSuccess;
    // Scalar loads of one operand cost about a quarter of the product's time (H200,
    // packed against not, PARBENCH_GEMM_PACK: 21% on 419 x 5946 x 4728's B, 27% on
    // 5591 x 425 x 1003's A, 22% on 350 x 11237 x 13908's B).
    const double gain_s = 0.25 * plan.waves;
    if (k > 0 && n >= 128)
        e = pb__pack_if_repays(&a, &lda, m, k, &va, gain_s, &scratch[0], s);
    if (e == cudaSuccess && k > 0 && m >= 128)
        e = pb__pack_if_repays(&b, &ldb, k, n, &vb, gain_s, &scratch[1], s);
    p.a = a, p.lda = (long long)lda, p.b = b, p.ldb = (long long)ldb;
    if (e == cudaSuccess)
        scratch[2] = pb__plan_workspace<T>(&plan, tiles, Cfg::BM, Cfg::BN, s);

    // The whole tiles, then the cut ones (pb__plan_split).
    auto launch = [&](size_t blocks, int slabs) {
        const dim3 grid((unsigned)blocks, (unsigned)slabs), block(Cfg::THREADS);
        // C's rows staged where they rule out 16-byte stores and k is short enough for
        // the stores to matter (H200, with the staging in the same kernel: 39333 x 6110
        // x 30 0.97 -> 0.73 ms, 1655 x 1189 x 520 78 -> 71 us, but 1005 x 754 x 13263
        // 4% slower, its main loop's registers allocated anew). Pieces of cut tiles go
        // to ws, whose rows are aligned.
        if (slabs == 1 && !p.c_vec && k <= 1024)
            launch_kernel<Cfg, true>(va, vb, grid, block, s, p);
        else
            launch_kernel<Cfg, false>(va, vb, grid, block, s, p);
        return cudaGetLastError();
    };
    if (e == cudaSuccess && plan.first > 0)
        e = launch(plan.first, 1);
    if (e == cudaSuccess && plan.first < tiles) {
        const size_t per = (k + plan.slabs - 1) / plan.slabs;
        p.tile_first = (long long)plan.first;
        p.k_split = (long long)((per + Cfg::BK - 1) / Cfg::BK * Cfg::BK);
        p.ws = scratch[2];
        e = launch(tiles - plan.first, plan.slabs);
        if (e == cudaSuccess)
            e = pb__tile_reduce(plan, m, n, Cfg::BM, Cfg::BN, p.ws, alpha, beta, c, ldc, s);
    }
    for (T *t : scratch)
        if (t) {
            const cudaError_t freed = cudaFreeAsync(t, s);
            if (e == cudaSuccess)
                e = freed;
        }
    return e;
}

//                      T       BM   BN  BK  WM  WN TWM CM CN MINB
using F32Large = Tile<float, 128, 256, 16, 64, 64, 4, 4, 4, 1>;  // 8x16 per thread, 256 threads
using F32Medium = Tile<float, 128, 128, 8, 32, 64, 4, 4, 4, 2>;  // 8x8, 256 threads
using F32Narrow = Tile<float, 128, 64, 8, 64, 32, 8, 4, 4, 4>;  // 8x8, 128 threads
using F32Small = Tile<float, 64, 64, 8, 32, 32, 4, 4, 4, 4>;     // 8x4, 128 threads
using F64Large = Tile<double, 128, 128, 8, 32, 64, 4, 2, 2, 1>;  // 8x8, 256 threads
using F64Small = Tile<double, 64, 64, 8, 32, 32, 4, 2, 2, 3>;    // 8x4, 128 threads

template <class Cfg> constexpr pb__tile_choice choice(double eff) { return {Cfg::BM, Cfg::BN, eff, Cfg::MIN_BLOCKS}; }
// The small tile's 0.77: its rate against the large one's, the tiles' waste set apart,
// on 4096^3 (0.81), 8246 x 404 x 2719 (0.71), 5217 x 1235 x 5829 (0.87) and 419 x 5946 x 4728
// (0.70) on an H200 (regblock-tile-oracle/ and regblock-pack-quarter/ under bench/results).
// At 0.83 the last shape ran the small tile, 1.22x the large one's time.
constexpr pb__tile_choice f32_choices[] = {choice<F32Large>(1.0), choice<F32Medium>(0.985), choice<F32Narrow>(0.95),
                                           choice<F32Small>(0.77)};
constexpr pb__tile_choice f64_choices[] = {choice<F64Large>(1.0), choice<F64Small>(0.905)};

} // namespace

cudaError_t pb__cuda_gemm_regblock_f32(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                                       const float *b, size_t ldb, float beta, float *c, size_t ldc, cudaStream_t s)
{
    if (pb__cuda_gemm_thin_wanted(n))
        return pb__cuda_gemm_thin_f32(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    const bool c_vec = pb__aligned16(c) && ldc % 4 == 0;
    const int i = pb__pick_fill_tile(m, n, k, c_vec, sizeof(float), pb__plan_fma_rate(sizeof(float)), f32_choices, 4);
    const pb__tile_choice &t = f32_choices[i];
    switch (i) {
    case 0:
        return gemm<F32Large>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 1:
        return gemm<F32Medium>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 2:
        return gemm<F32Narrow>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    default:
        return gemm<F32Small>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    }
}

cudaError_t pb__cuda_gemm_regblock_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                       const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s)
{
    if (pb__cuda_gemm_thin_wanted(n))
        return pb__cuda_gemm_thin_f64(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    const bool c_vec = pb__aligned16(c) && ldc % 2 == 0;
    const int i = pb__pick_fill_tile(m, n, k, c_vec, sizeof(double), pb__plan_fma_rate(sizeof(double)), f64_choices, 2);
    if (i == 0)
        return gemm<F64Large>(f64_choices[0], m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    return gemm<F64Small>(f64_choices[1], m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}
