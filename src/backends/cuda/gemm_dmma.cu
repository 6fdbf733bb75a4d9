// gemm_dmma.cu: FP64 GEMM on the FP64 tensor cores (DMMA).
//
// Row-major C = alpha*A*B + beta*C in double. Hopper has no FP64 wgmma, so FP64 tensor
// work goes through the warp-level mma.sync: each DMMA product is an exact IEEE FP64
// fused multiply-add (round to nearest), so the result equals an FP64 FMA loop up to
// summation order (here the order cuBLAS uses: on an H100 the n = 1024..8192 results were
// bitwise equal to cublasDgemm's). An H100's FP64 SIMT peak (~33 TFLOP/s) is half of its
// DMMA peak (~67), which is why this kernel exists next to gemm_regblock.cu.
//
//  * Instruction: mma.sync.aligned.m16n8k4.row.col.f64 on sm_90. sm_80 has only m8n8k4;
//    the m16n8k4 operand layout is exactly two m8n8k4 stacked along M (A rows g and g+8,
//    C elements 0-1 and 2-3), so the wrapper issues two of those there. On the H100 the
//    m8n8k4 form runs at half rate (measured: 26.7 vs 40.7 TFLOP/s in an earlier
//    version of this kernel at n = 4096), so sm_90 needs m16n8k4.
//  * Fragment layouts (lane = 4*g + t, g = lane/4 in 0..7, t = lane%4 in 0..3):
//      A 16x4 (row):  a0 = A[g][t], a1 = A[g+8][t]
//      B 4x8  (col):  b0 = B[t][g]
//      C 16x8:        c0,c1 = C[g][2t], C[g][2t+1];  c2,c3 = C[g+8][2t], C[g+8][2t+1]
//    One "k-step" is 4 k values; each operand value is one LDS.64 per lane.
//  * Block tile BM x BN, K consumed in slices of BK (= 4 k-steps), STAGES-deep cp.async
//    ring: A and B are copied as is, 16-byte chunks, global -> shared without registers.
//  * Each warp computes WM x WN of C as FM x FN fragments of 16x8; the accumulators
//    (FM*FN*4 doubles per lane) stay in registers.
//  * Schedule (as CUTLASS's multistage mainloop): fragments are double-buffered in
//    registers, those of k-step s+1 are loaded before the DMMAs of k-step s. The one
//    barrier per slice sits before the DMMAs of the slice's last k-step, whose fragments
//    are already loaded, and is followed by the loads of the next slice's first k-step:
//    the shared-memory latency after the barrier hides behind DMMAs. After that barrier
//    nobody reads the slice's stage any more, so the copy issued at the first k-step of
//    slice t (slice t+STAGES-1) goes into the stage of slice t-1. This schedule took the
//    128x128 tile from 45 to 55 TFLOP/s at n = 4096 (8 warps per SM leave little else to
//    hide latency with); it needs two fragment sets live, which is why a k-step is 4 k
//    (an 8-k unit that read A with LDS.128 spilled and lost).
//  * Shared-memory layouts, conflict-free for those loads and for the cp.async writes
//    (8-byte accesses are served per half-warp, 16-byte ones per quarter-warp):
//      A stage [BM][BK]: 16-byte chunk c of row r stored at chunk c ^ 2*(r & 3). A
//        half-warp reads 4 consecutive doubles (one k-step) of rows g..g+3; the XOR puts
//        the 4 rows in the 4 different 32-byte quarters of the 128-byte bank window. A
//        quarter-warp's copy writes 8 chunks of one row, permuted within the row.
//      B stage [BK][BN+4]: a half-warp reads columns g0..g0+3 of rows t = 0..3; the pad
//        of 4 doubles puts consecutive rows 4 banks (8 bytes each) apart, so the reads
//        fill 16 distinct 8-byte slots. Rows stay 16-byte aligned for cp.async.
//    (ncu: 0 shared-memory bank conflicts for loads and stores.)
//  * Edges: cp.async with a source size below 16 (or 0) zero-fills rows past m,
//    columns past n and the K tail, so every slice takes the same path; the source
//    address of an empty copy is the matrix base. 8-byte copies replace the 16-byte
//    ones when a pointer or leading dimension is not 16-byte aligned (flags VA/VB);
//    they cost up to half the product's time, so the host packs such an operand
//    first where the product repays the copy (pb__pack_if_repays).
//    Stores are guarded, 16-byte when C and ldc allow it; beta == 0 never reads C.
//  * 1-D grid walked in the grouped tile order of gemm_tiles.cuh, 64-bit index
//    products; tiles past the last full wave cut along k as regblock's.
//
// Tiles (H100 SXM, 132 SMs; see the DTile list at the end):
//   large  128x128x16, 8 warps of 64x32, 4 stages (130 KiB), 1 block/SM, ~250 registers.
//          Fragments need 0.375 bytes of shared memory per FMA, copies 0.125, against the
//          1 byte/FMA that 128 B/clk feeds at the DMMA rate.
//   medium 128x64x16, 4 warps of 64x32, 4 stages (98 KiB), 2 blocks/SM, ~250 registers.
//   small  64x64x16, 4 warps of 32x32, 4 stages (66 KiB), 3 blocks/SM, ~165 registers.
//   narrow 128x32x16, 4 warps of 32x32 stacked along m, 4 stages (82 KiB), 2 blocks/SM:
//          an n that 64 would waste (n = 85: 29 TFLOP/s where 64x64 ran 23, H200).
// (ptxas: no spills in any of them.)
// Measured on an H100 SXM (square n, alpha = 1, beta = 0, median of 25 event-timed runs;
// TFLOP/s, cublasDgemm in brackets): n = 1024: 40.5 (38.9, medium tile picked);
// 2048: 54.3 (56.7); 4096: 56.4 (59.6), again 56.0 (57.8); 8192: 52.9 (56.4). For
// comparison cuBLAS 13.0 runs sm90_xmma_gemm_f64..._tilesize128x64x16_stage3_warpsize2x2x1
// _tensor16x8x8 (128 threads, 246 registers, 72 KiB). The host picks the tile and the
// plan with regblock's model (pb__plan_fill, which counts the blocks an SM holds), so
// small and skinny products still fill the SMs: on 26 random shapes (H200), 1.09x
// cuBLAS geomean, where the model that planned every tile as one block an SM made
// 8246 x 404 x 2719 run 128x64 tiles at 29 TFLOP/s instead of 128x128 at 41.

#include "backends/cuda/cp_async.cuh"
#include "backends/cuda/gemm_tiles.cuh"
#include "backends/cuda/gemm_dmma.cuh"

#include <climits>
#include <cmath>
#include <cstdint>

namespace {

// ---------------- PTX wrappers (sm_80+; the copies are in cp_async.cuh) ----------------

// d (16x8) += A (16x4) * B (4x8); a0/a1 = A rows g/g+8, fragment layouts in the header comment.
__device__ __forceinline__ void dmma_16x8x4(double (&d)[4], double a0, double a1, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a0), "d"(a1), "d"(b));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a0), "d"(b));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
        : "+d"(d[2]), "+d"(d[3])
        : "d"(a1), "d"(b));
#elif defined(__CUDA_ARCH__)
    (void)d, (void)a0, (void)a1, (void)b;
    __trap(); // no DMMA below sm_80; the caller checks the capability
#endif
}

// ---------------- tile configuration ----------------

//   BM x BN x BK : block tile and K slice (BK a multiple of 16: the A swizzle spans 8 chunks)
//   WM x WN      : warp tile, a multiple of 16 x 8; THREADS = (BM/WM)*(BN/WN)*32
//   STAGES       : depth of the cp.async ring (>= 2)
//   MIN_BLOCKS   : __launch_bounds__ occupancy hint (caps registers at 64K/(THREADS*MIN_BLOCKS))
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_> struct DTile {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_;
    static constexpr int WARPS_N = BN / WN;
    static constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    static constexpr int FM = WM / 16, FN = WN / 8; // 16x8 fragments per warp
    static constexpr int KSTEPS = BK / 4;           // DMMA k-steps per slice

    static constexpr int B_LD = BN + 4;                          // padded B row
    static constexpr int A_STAGE = BM * BK, B_STAGE = BK * B_LD; // doubles per stage
    static constexpr size_t SMEM_BYTES = (size_t)STAGES * (A_STAGE + B_STAGE) * sizeof(double);
    // A: 16-byte chunk c of row r is stored at chunk a_chunk(r, c).
    __host__ __device__ static constexpr int a_chunk(int r, int c) { return c ^ ((r & 3) << 1); }

    // Copies: thread tid owns 16-byte chunk (tid % CPR) of rows tid / CPR + i * RPI.
    static constexpr int A_CPR = BK / 2, A_RPI = THREADS / A_CPR, A_CPT = BM / A_RPI;
    static constexpr int B_CPR = BN / 2, B_RPI = THREADS / B_CPR, B_CPT = BK / B_RPI;

    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warp tiling");
    static_assert(BK % 16 == 0, "A swizzle; an even number of k-steps per slice");
    static_assert(THREADS % A_CPR == 0 && BM % A_RPI == 0, "A copy mapping");
    static_assert(THREADS % B_CPR == 0 && BK % B_RPI == 0, "B copy mapping");
    static_assert(STAGES >= 2, "ring");
};

// One SM's FP64 tensor-core rate (H100: about 60 TFLOP/s over 132 SMs).
constexpr double SM_RATE = 4.5e11;

struct Params {
    const double *a;
    const double *b;
    double *c;
    long long m, n, k, lda, ldb, ldc;
    double alpha, beta;
    long long tiles_m, tiles_n;
    bool c_vec; // C pointer and ldc allow 16-byte stores
    long long tile_first; // block x computes tile tile_first + x
    // cut along k, as regblock's (gridDim.y > 1): grid row z takes k from
    // z * k_split, at most k_split of it, into its piece of ws (pb__plan_split)
    long long k_split;
    double *ws;
};

template <class Cfg, bool VA, bool VB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) dmma_gemm_kernel(const Params p)
{
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, STAGES = Cfg::STAGES;
    constexpr int FM = Cfg::FM, FN = Cfg::FN, B_LD = Cfg::B_LD, KSTEPS = Cfg::KSTEPS;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    double *const As = reinterpret_cast<double *>(smem_raw); // [STAGES][BM][BK], chunks swizzled
    double *const Bs = As + STAGES * Cfg::A_STAGE;          // [STAGES][BK][B_LD]
    const unsigned as_u32 = smem_u32(As), bs_u32 = smem_u32(Bs);

    const int tid = threadIdx.x;

    long long m0, n0;
    pb__tile_origin(p.tile_first + blockIdx.x, p.tiles_m, p.tiles_n, BM, BN, &m0, &n0);
    const long long M = p.m, N = p.n;
    const bool split = gridDim.y > 1;
    const long long kz = (long long)blockIdx.y * p.k_split, K = max(0LL, min(p.k - kz, p.k_split));
    const int ktiles = (int)((K + BK - 1) / BK);

    // ---- producer: global -> shared with cp.async ----
    const int a_c = tid % Cfg::A_CPR; // chunk (k = 2*a_c, 2*a_c+1 of the slice)
    const int a_r = tid / Cfg::A_CPR; // rows a_r + i*A_RPI
    const int a_rows = (int)min((long long)BM, M - m0);
    const double *const a_src = p.a + kz + min(m0 + a_r, M - 1) * p.lda + 2 * a_c;
    const int b_c = tid % Cfg::B_CPR; // chunk (columns n0 + 2*b_c, +1)
    const int b_r = tid / Cfg::B_CPR; // k rows b_r + i*B_RPI of the slice
    const long long b_col = n0 + 2 * b_c;
    const int b_cols = (int)max(0LL, min(2LL, N - b_col)); // columns of the chunk inside B
    const double *const b_src = p.b + kz * p.ldb + b_col;

    auto load_slice = [&](int kt, int stage) {
        const long long kbase = (long long)kt * BK;
        const int k_left = (int)min((long long)BK, K - kbase); // k values of the slice inside K
        const unsigned a_dst = as_u32 + (unsigned)(stage * Cfg::A_STAGE) * 8u;
#pragma unroll
        for (int i = 0; i < Cfg::A_CPT; ++i) {
            const int row = a_r + i * Cfg::A_RPI, kk = 2 * a_c;
            const unsigned dst = a_dst + (unsigned)(row * BK + 2 * Cfg::a_chunk(row, a_c)) * 8u;
            const bool row_ok = row < a_rows;
            const double *src = a_src + (long long)i * Cfg::A_RPI * p.lda + kbase;
            if (VA) {
                const int bytes = row_ok ? max(0, min(2, k_left - kk)) * 8 : 0;
                cp_async_16(dst, bytes ? src : p.a, bytes);
            } else {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const bool ok = row_ok && kk + e < k_left;
                    cp_async_8(dst + 8u * e, ok ? src + e : p.a, ok ? 8 : 0);
                }
            }
        }
        const unsigned b_dst = bs_u32 + (unsigned)(stage * Cfg::B_STAGE + b_r * B_LD + 2 * b_c) * 8u;
#pragma unroll
        for (int i = 0; i < Cfg::B_CPT; ++i) {
            const int row = b_r + i * Cfg::B_RPI;
            const unsigned dst = b_dst + (unsigned)(i * Cfg::B_RPI * B_LD) * 8u;
            const bool row_ok = row < k_left;
            const double *src = b_src + (kbase + row) * p.ldb;
            if (VB) {
                const int bytes = row_ok ? b_cols * 8 : 0;
                cp_async_16(dst, bytes ? src : p.b, bytes);
            } else {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const bool ok = row_ok && e < b_cols;
                    cp_async_8(dst + 8u * e, ok ? src + e : p.b, ok ? 8 : 0);
                }
            }
        }
    };

    // ---- consumer: shared -> registers -> DMMA ----
    const int warp = tid >> 5, lane = tid & 31;
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = warp / Cfg::WARPS_N * Cfg::WM, wn0 = warp % Cfg::WARPS_N * Cfg::WN;
    // Lane (g, t) reads A[wm0 + 16fm + 8h + g][4ks + t] and B[4ks + t][wn0 + 8fn + g]. All its
    // A rows are congruent to g mod 4, hence one swizzle: k-step ks starts at chunk
    // a_chunk(g, 2ks) of each row (the XOR leaves bit 0, the chunk half t>>1, alone).
    const int a_lane = (wm0 + g) * BK + t; // + (16fm + 8h)*BK + 2*a_chunk(g, 2ks)
    const int b_lane = t * B_LD + wn0 + g; // + 4ks*B_LD + 8fn

    double acc[FM][FN][4];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[i][j][e] = 0.0;

    struct Frags {     // operands of one k-step
        double a[FM][2]; // A rows g, g+8 of fragment fm
        double b[FN];
    };
    auto load_frags = [&](int stage, int ks, Frags &f) {
        const double *as = As + stage * Cfg::A_STAGE + a_lane + 2 * Cfg::a_chunk(g, 2 * ks);
        const double *bs = Bs + stage * Cfg::B_STAGE + b_lane + 4 * ks * B_LD;
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                f.a[fm][h] = as[(16 * fm + 8 * h) * BK];
#pragma unroll
        for (int fn = 0; fn < FN; ++fn)
            f.b[fn] = bs[8 * fn];
    };
    auto mma_frags = [&](const Frags &f) {
#pragma unroll
        for (int fm = 0; fm < FM; ++fm)
#pragma unroll
            for (int fn = 0; fn < FN; ++fn)
                dmma_16x8x4(acc[fm][fn], f.a[fm][0], f.a[fm][1], f.b[fn]);
    };

    // ---- main loop (schedule in the header comment) ----
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles)
            load_slice(s, s);
        cp_async_commit(); // empty groups keep the group count uniform
    }
    Frags f[2]; // k-step ks uses f[ks & 1]; KSTEPS is even, so a slice starts with f[0]
    if (ktiles > 0) {
        cp_async_wait<STAGES - 2>(); // slice 0 has landed (this thread's copies)
        __syncthreads();             // (everyone's)
        load_frags(0, 0, f[0]);
    }
    int rd = 0, wr = STAGES - 1; // stages of slice kt and of the copy issued during it
    for (int kt = 0; kt < ktiles; ++kt) {
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks) {
            if (ks == KSTEPS - 1) {
                // Groups committed: STAGES-1 + kt+1; at most STAGES-2 pending => slice kt+1 is in.
                cp_async_wait<STAGES - 2>();
                __syncthreads(); // everyone's copies of slice kt+1 are in; stage rd is no longer read
                if (kt + 1 < ktiles)
                    load_frags(rd + 1 == STAGES ? 0 : rd + 1, 0, f[0]);
            } else {
                load_frags(rd, ks + 1, f[(ks + 1) & 1]);
            }
            if (ks == 0) { // stage wr (slice kt-1) was released by the previous slice's barrier
                if (kt + STAGES - 1 < ktiles)
                    load_slice(kt + STAGES - 1, wr);
                cp_async_commit();
            }
            mma_frags(f[ks & 1]);
        }
        rd = rd + 1 == STAGES ? 0 : rd + 1;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }

    // ---- epilogue: C = alpha*acc + beta*C, guarded; beta == 0 never reads C ----
    // A piece of a cut tile goes to its own BM x BN part of ws, at (row - m0, col - n0).
    const double alpha = split ? 1.0 : p.alpha, beta = split ? 0.0 : p.beta;
    const long long piece = (long long)blockIdx.y * gridDim.x + blockIdx.x;
    double *const c_out = split ? p.ws + piece * BM * BN : p.c;
    const long long row_base = split ? m0 : 0, col_base = split ? n0 : 0;
    const long long ldc = split ? BN : p.ldc;
    const bool c_vec = split || p.c_vec;
#pragma unroll
    for (int fm = 0; fm < FM; ++fm) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const long long row = m0 + wm0 + 16 * fm + 8 * h + g;
            if (row >= M)
                continue;
            double *crow = c_out + (row - row_base) * ldc;
#pragma unroll
            for (int fn = 0; fn < FN; ++fn) {
                const long long col = n0 + wn0 + 8 * fn + 2 * t;
                const double r0 = acc[fm][fn][2 * h], r1 = acc[fm][fn][2 * h + 1];
                double *const cel = crow + (col - col_base);
                if (c_vec && col + 1 < N) {
                    double2 *dst = reinterpret_cast<double2 *>(cel);
                    double2 out;
                    if (beta == 0.0) {
                        out = make_double2(alpha * r0, alpha * r1);
                    } else {
                        const double2 old = *dst;
                        out = make_double2(fma(alpha, r0, beta * old.x), fma(alpha, r1, beta * old.y));
                    }
                    *dst = out;
                } else {
                    if (col < N)
                        cel[0] = beta == 0.0 ? alpha * r0 : fma(alpha, r0, beta * cel[0]);
                    if (col + 1 < N)
                        cel[1] = beta == 0.0 ? alpha * r1 : fma(alpha, r1, beta * cel[1]);
                }
            }
        }
    }
}

// Raise the dynamic shared-memory limit of every kernel of one tile, once per process.
template <class Cfg> cudaError_t prepare_smem()
{
    if constexpr (Cfg::SMEM_BYTES <= 48 * 1024) {
        return cudaSuccess;
    } else {
        static const cudaError_t once = [] {
            const int bytes = (int)Cfg::SMEM_BYTES;
            const void *kernels[] = {(const void *)dmma_gemm_kernel<Cfg, false, false>,
                                     (const void *)dmma_gemm_kernel<Cfg, false, true>,
                                     (const void *)dmma_gemm_kernel<Cfg, true, false>,
                                     (const void *)dmma_gemm_kernel<Cfg, true, true>};
            for (const void *kern : kernels) {
                const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
                if (e != cudaSuccess)
                    return e;
            }
            return cudaSuccess;
        }();
        return once;
    }
}


template <class Cfg>
cudaError_t gemm(const pb__tile_choice &tile, size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                 const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s)
{
    if (m == 0 || n == 0)
        return cudaSuccess;
    if (!pb__gemm_args_ok(m, n, &k, &alpha, a, lda, b, ldb, c, ldc))
        return cudaErrorInvalidValue;
    const size_t tiles_m = (m + Cfg::BM - 1) / Cfg::BM, tiles_n = (n + Cfg::BN - 1) / Cfg::BN;
    if (tiles_m > (size_t)INT_MAX / tiles_n || k / Cfg::BK >= (size_t)INT_MAX - Cfg::STAGES)
        return cudaErrorInvalidValue; // more blocks than a 1-D grid holds, or slices than an int counts

    const cudaError_t prep = prepare_smem<Cfg>();
    if (prep != cudaSuccess)
        return prep;

    Params p;
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
    p.c_vec = pb__aligned16(c) && ldc % 2 == 0;
    bool va = pb__aligned16(a) && lda % 2 == 0;
    bool vb = pb__aligned16(b) && ldb % 2 == 0;

    // An operand whose rows rule out 16-byte copies is packed first where the product
    // repays it: 8-byte copies made 437 x 878 x 4381 take 0.184 ms, against 0.125 ms
    // at k = 4380 (H200).
    cudaError_t e = cudaSuccess;
    double *packed[2] = {nullptr, nullptr};
    const double gain_s = 0.4 * 2.0 * (double)m * (double)n * (double)k / (pb__sm_count() * SM_RATE);
    if (k > 0)
        e = pb__pack_if_repays(&a, &lda, m, k, &va, gain_s, &packed[0], s);
    if (e == cudaSuccess && k > 0)
        e = pb__pack_if_repays(&b, &ldb, k, n, &vb, gain_s, &packed[1], s);
    p.a = a, p.lda = (long long)lda, p.b = b, p.ldb = (long long)ldb;

    p.tile_first = 0;
    p.k_split = (long long)k;
    const size_t tiles = tiles_m * tiles_n;
    pb__split_plan plan = pb__plan_fill(&tile, m, n, k, pb__sm_count(), sizeof(double), SM_RATE, pb__fill_block_s(p.c_vec));
    p.ws = e == cudaSuccess ? pb__plan_workspace<double>(&plan, tiles, Cfg::BM, Cfg::BN, s) : nullptr;

    // The whole tiles, then the cut ones (pb__plan_split).
    auto launch = [&](size_t blocks, int slabs) {
        const dim3 grid((unsigned)blocks, (unsigned)slabs), block(Cfg::THREADS);
        const size_t smem = Cfg::SMEM_BYTES;
        if (va && vb)
            dmma_gemm_kernel<Cfg, true, true><<<grid, block, smem, s>>>(p);
        else if (va)
            dmma_gemm_kernel<Cfg, true, false><<<grid, block, smem, s>>>(p);
        else if (vb)
            dmma_gemm_kernel<Cfg, false, true><<<grid, block, smem, s>>>(p);
        else
            dmma_gemm_kernel<Cfg, false, false><<<grid, block, smem, s>>>(p);
        return cudaGetLastError();
    };
    if (e == cudaSuccess && plan.first > 0)
        e = launch(plan.first, 1);
    if (e == cudaSuccess && plan.first < tiles) {
        const size_t per = (k + plan.slabs - 1) / plan.slabs;
        p.tile_first = (long long)plan.first;
        p.k_split = (long long)((per + Cfg::BK - 1) / Cfg::BK * Cfg::BK);
        e = launch(tiles - plan.first, plan.slabs);
        if (e == cudaSuccess)
            e = pb__tile_reduce(plan, m, n, Cfg::BM, Cfg::BN, (const double *)p.ws, alpha, beta, c, ldc, s);
    }
    for (double *t : {packed[0], packed[1], p.ws})
        if (t) {
            const cudaError_t freed = cudaFreeAsync(t, s);
            if (e == cudaSuccess)
                e = freed;
        }
    return e;
}

//                     BM   BN  BK  WM  WN STAGES MINB
using DLarge = DTile<128, 128, 16, 64, 32, 4, 1>; // 8 warps, 64 accumulator doubles a lane
using DMedium = DTile<128, 64, 16, 64, 32, 4, 2>; // 4 warps, 2 blocks/SM
using DSmall = DTile<64, 64, 16, 32, 32, 4, 3>;   // 4 warps, 32 accumulator doubles a lane, 3 blocks/SM
using DNarrow = DTile<128, 32, 16, 32, 32, 4, 2>; // 4 warps stacked along m: n awkward for 64

// Efficiencies relative to the large tile at full occupancy (H100, square n = 1024..8192;
// the narrow tile: H200, 4096^3, 48.2 TFLOP/s against 56.7).
constexpr pb__tile_choice dmma_choices[] = {{DLarge::BM, DLarge::BN, 1.0, DLarge::MIN_BLOCKS},
                                            {DMedium::BM, DMedium::BN, 0.95, DMedium::MIN_BLOCKS},
                                            {DSmall::BM, DSmall::BN, 0.85, DSmall::MIN_BLOCKS},
                                            {DNarrow::BM, DNarrow::BN, 0.85, DNarrow::MIN_BLOCKS}};

} // namespace

cudaError_t pb__cuda_gemm_dmma_f64(size_t m, size_t n, size_t k, double alpha, const double *a, size_t lda,
                                   const double *b, size_t ldb, double beta, double *c, size_t ldc, cudaStream_t s)
{
    const bool c_vec = pb__aligned16(c) && ldc % 2 == 0;
    const int i = pb__pick_fill_tile(m, n, k, c_vec, sizeof(double), SM_RATE, dmma_choices, 4);
    const pb__tile_choice &t = dmma_choices[i];
    switch (i) {
    case 0:
        return gemm<DLarge>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 1:
        return gemm<DMedium>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    case 2:
        return gemm<DSmall>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    default:
        return gemm<DNarrow>(t, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
    }
}
