// gemm_wgmma.cu: GEMM on Hopper's tensor cores, variant `wgmma` (sm_90a code only).
//
// Row-major C = alpha*A*B + beta*C with A and B in TF32 (fp32 storage), BF16 or FP16,
// fp32 accumulation and an fp32 C, as `tc` (gemm_tc.cu), with the instructions that only
// sm_90a has (this file is compiled for 90a alone; see CMakeLists.txt):
//  * The tensor-memory accelerator (TMA) copies each tile into shared memory, issued by
//    one thread; an mbarrier per stage counts the bytes in. TMA fills zeros past the
//    matrix's edges, so any m, n, k runs with no edge code in the main loop.
//  * Warpgroup MMA (wgmma.mma_async m64nBN) reads both operands straight from shared
//    memory in the 128-byte swizzled layout TMA writes; no register staging.
//  * A block is 3 warpgroups on a 128 x BN tile of C (BN = 256, or 128 or 64 where C is
//    thin, picked by the wave count): warpgroup 0 issues the copies (producer),
//    warpgroups 1 and 2 each multiply 64 rows (consumers), over a ring of 4-8 K slices of
//    128 bytes a row. The producer gives its registers to the consumers (setmaxnreg):
//    BN/2 accumulators a thread.
//  * Inputs whose rows do not start on 128-byte lines are packed first (TMA would run at
//    half speed), in the timed call.
//  * A is K-major (row-major m x k). B (row-major k x n) is N-major: 16-bit wgmma reads it
//    transposed from shared memory. TF32 wgmma takes K-major operands only, so for tf32
//    B is first transposed into scratch on the stream (counted in the time, 5-8% at 8192).
//  * Tiles are walked in groups of 8 tile rows so that neighbours in time share B in L2.
//  * Where the tiles leave most SMs idle and k is long (1024 x 1024 x 65536), and for the
//    tiles past the last full wave, k is cut over blockIdx.y as in regblock
//    (pb__plan_split), the pieces summed in order afterwards.

#include <cuda.h> // CUtensorMap (the encoder itself is fetched from the driver at run time)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "backends/cuda/check.cuh"
#include "backends/cuda/cuda_impl.cuh"
#include "backends/cuda/gemm_tiles.cuh"
#include "core/precision.h"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PB_WGMMA_DEVICE 1
#endif

namespace {

constexpr int BM = 128, THREADS = 384;
constexpr int ROW_BYTES = 128; // a K slice row: the swizzle width
constexpr int B_CHUNK = 64;    // N-major B: 64 columns (128 bytes) a copy

// A block tile of BM x BN: the ring holds as many stages as fit in 200 KiB (at most 8).
template <int BN> struct tile {
    static constexpr int A_STAGE = BM * ROW_BYTES, B_STAGE = BN * ROW_BYTES;
    static constexpr int STAGE_BYTES = A_STAGE + B_STAGE;
    static constexpr int STAGES = 200 * 1024 / STAGE_BYTES < 8 ? 200 * 1024 / STAGE_BYTES : 8;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024; // + alignment of the ring to 1 KiB
};

// The wgmma instruction per input type; K = its k per instruction (32 bytes of a row).
template <typename T> struct mma_type;
template <> struct mma_type<__nv_bfloat16> {
    static constexpr int K = 16;
    static constexpr CUtensorMapDataType TMA = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
};
template <> struct mma_type<__half> {
    static constexpr int K = 16;
    static constexpr CUtensorMapDataType TMA = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
};
template <> struct mma_type<float> { // tf32
    static constexpr int K = 8;
    static constexpr CUtensorMapDataType TMA = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
};

struct params {
    int m, n, k, tiles_m, tiles_n;
    int tile_first;  // block x computes tile tile_first + x
    int slab_slices; // cut along k: K slices per blockIdx.y, into its piece of ws (pb__plan_split)
    float alpha, beta;
    float *c;
    size_t ldc;
    float *ws;
};

#ifdef PB_WGMMA_DEVICE

#define PB_WGMMA_D32 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
    "}"
#define PB_WGMMA_D64 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
    "}"
#define PB_WGMMA_D128 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
    "}"
#define PB_ACC8(i)                                                                                   \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]),       \
        "+f"(d[i + 6]), "+f"(d[i + 7])
#define PB_ACC32 PB_ACC8(0), PB_ACC8(8), PB_ACC8(16), PB_ACC8(24)
#define PB_ACC64 PB_ACC32, PB_ACC8(32), PB_ACC8(40), PB_ACC8(48), PB_ACC8(56)
#define PB_ACC128 PB_ACC64, PB_ACC8(64), PB_ACC8(72), PB_ACC8(80), PB_ACC8(88), PB_ACC8(96), PB_ACC8(104), \
    PB_ACC8(112), PB_ACC8(120)

// d += A (64 x K, descriptor da) * B (K x N, descriptor db), N = 2 x the accumulators;
// TRANS_B = B is N-major (16-bit types only).
template <typename T, int N, int TRANS_B> __device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db);
// ACC = the accumulator count (N / 2), which names the register lists above; DA, DB =
// the operand numbers of the descriptors that follow them.
#define PB_WGMMA_16(TYPE, PTX, N, ACC, DA, DB, TRANS)                                                        \
    template <> __device__ __forceinline__ void mma<TYPE, N, TRANS>(float (&d)[N / 2], uint64_t da, uint64_t db) \
    {                                                                                                        \
        asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " " PB_WGMMA_D##ACC ", %" #DA \
                     ", %" #DB ", 1, 1, 1, 0, " #TRANS ";\n"                                                 \
                     : PB_ACC##ACC                                                                           \
                     : "l"(da), "l"(db));                                                                    \
    }
#define PB_WGMMA_TF32(N, ACC, DA, DB)                                                                        \
    template <> __device__ __forceinline__ void mma<float, N, 0>(float (&d)[N / 2], uint64_t da, uint64_t db)  \
    {                                                                                                        \
        asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " PB_WGMMA_D##ACC ", %" #DA      \
                     ", %" #DB ", 1, 1, 1;\n"                                                                \
                     : PB_ACC##ACC                                                                           \
                     : "l"(da), "l"(db));                                                                    \
    }
#define PB_WGMMA_N(N, ACC, DA, DB)                                                                           \
    PB_WGMMA_16(__nv_bfloat16, "bf16", N, ACC, DA, DB, 0)                                                    \
    PB_WGMMA_16(__nv_bfloat16, "bf16", N, ACC, DA, DB, 1)                                                    \
    PB_WGMMA_16(__half, "f16", N, ACC, DA, DB, 0)                                                            \
    PB_WGMMA_16(__half, "f16", N, ACC, DA, DB, 1)                                                            \
    PB_WGMMA_TF32(N, ACC, DA, DB)
PB_WGMMA_N(256, 128, 128, 129)
PB_WGMMA_N(128, 64, 64, 65)
PB_WGMMA_N(64, 32, 32, 33)

// Shared-memory matrix descriptor, 128-byte swizzle. K-major: rows of 128 bytes, groups
// of 8 rows `sbo` apart (lbo unused). N-major: 8 K rows of 64 columns per 1 KiB atom,
// atoms `sbo` apart along K and `lbo` apart along N.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFF) >> 4) << 32 | 1ull << 62;
}

__device__ __forceinline__ void bar_init(uint32_t bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     " selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
__device__ __forceinline__ void bar_arrive(uint32_t bar)
{
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void bar_expect(uint32_t bar, uint32_t bytes)
{
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}
// A box of the tensor `map` at (c0 innermost, c1) into shared memory at dst.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
                     "r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

template <typename T, int BN, int TRANS_B>
__device__ __forceinline__ void body(const CUtensorMap *map_a, const CUtensorMap *map_b, const params &p)
{
    using Tile = tile<BN>;
    constexpr int BK = ROW_BYTES / (int)sizeof(T), KSTEPS = BK / mma_type<T>::K, STAGES = Tile::STAGES;
    constexpr int STAGE_BYTES = Tile::STAGE_BYTES, A_STAGE = Tile::A_STAGE;
    __shared__ __align__(8) uint64_t bars[2 * STAGES]; // full[STAGES], then empty[STAGES]
    extern __shared__ unsigned char smem_raw[];
    const uint32_t ring = ((uint32_t)__cvta_generic_to_shared(smem_raw) + 1023u) & ~1023u;
    const uint32_t full0 = (uint32_t)__cvta_generic_to_shared(bars), empty0 = full0 + 8 * STAGES;
    auto a_at = [&](int s) { return ring + (uint32_t)(s * STAGE_BYTES); };
    auto b_at = [&](int s) { return ring + (uint32_t)(s * STAGE_BYTES + A_STAGE); };

    long long tile_row0, tile_col0;
    pb__tile_origin(p.tile_first + (long long)blockIdx.x, p.tiles_m, p.tiles_n, BM, BN, &tile_row0, &tile_col0);
    const int row0 = (int)tile_row0, col0 = (int)tile_col0;
    const int all_slices = (p.k + BK - 1) / BK, first = blockIdx.y * p.slab_slices;
    const int slices = max(0, min(all_slices - first, p.slab_slices));
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            bar_init(full0 + 8 * s, 1);  // the producer's expect_tx
            bar_init(empty0 + 8 * s, 2); // one arrival per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0) {
            for (int it = 0; it < slices; it++) {
                const int s = it % STAGES, k0 = (first + it) * BK;
                bar_wait(empty0 + 8 * s, ((it / STAGES) & 1) ^ 1);
                bar_expect(full0 + 8 * s, STAGE_BYTES);
                tma_load(a_at(s), map_a, k0, row0, full0 + 8 * s);
                if (TRANS_B) {
#pragma unroll
                    for (int j = 0; j < BN / B_CHUNK; j++)
                        tma_load(b_at(s) + (uint32_t)(j * BK * ROW_BYTES), map_b, col0 + j * B_CHUNK, k0,
                                 full0 + 8 * s);
                } else {
                    tma_load(b_at(s), map_b, k0, col0, full0 + 8 * s);
                }
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; i++)
        d[i] = 0.0f;
    const int cw = wg - 1; // rows 64*cw .. of the tile
    for (int it = 0; it < slices; it++) {
        const int s = it % STAGES;
        bar_wait(full0 + 8 * s, (it / STAGES) & 1);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++) {
            // A: rows of 128 bytes, this warpgroup's 64 of them; a step is 32 bytes along a row.
            const uint64_t da = smem_desc(a_at(s) + cw * 64 * ROW_BYTES + kk * 32, 16, 1024);
            // B N-major: a step is 16 K rows of 128 bytes; 64-column chunks BK rows apart.
            // B K-major (transposed): as A.
            const uint64_t db = TRANS_B ? smem_desc(b_at(s) + kk * 16 * ROW_BYTES, BK * ROW_BYTES, 1024)
                                        : smem_desc(b_at(s) + kk * 32, 16, 1024);
            mma<T, BN, TRANS_B>(d, da, db);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        // The slice before this one is done with: its stage goes back to the producer.
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        if (it > 0 && threadIdx.x % 128 == 0)
            bar_arrive(empty0 + 8 * ((it - 1) % STAGES));
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");

    // Accumulator layout of m64nN: warp w of the group holds rows 16w + lane/4 and +8;
    // d[4i .. 4i+3] are columns 8i + 2*(lane%4) + {0,1} of those two rows. The tile goes
    // out through shared memory (the ring, idle once both consumers are past their last
    // slice), so that a warp stores whole rows: 128 or 512 contiguous bytes an instruction
    // at any ldc. Stored from the layout above, an odd ldc left 4-byte writes 8 bytes apart
    // (H200, bf16 15148 x 4263 x 52: 0.6 TB/s of C, 0.37x cuBLAS; 1.17x so).
    constexpr int LD = BN + 8; // rows 8 banks apart: a half-warp's float2 writes hit 32 banks
    static_assert(BM * LD * sizeof(float) <= (size_t)STAGES * STAGE_BYTES, "the tile fits in the ring");
    float *const stage = reinterpret_cast<float *>(smem_raw + (ring - (uint32_t)__cvta_generic_to_shared(smem_raw)));
    const int tid = threadIdx.x % 128, lane = tid % 32;
    const int r_top = cw * 64 + tid / 32 * 16 + lane / 4;
    asm volatile("bar.sync 1, 256;" ::: "memory"); // the consumers only: the producer has returned
#pragma unroll
    for (int i = 0; i < BN / 8; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            *reinterpret_cast<float2 *>(stage + (r_top + 8 * h) * LD + 8 * i + 2 * (lane % 4)) =
                make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
    asm volatile("bar.sync 1, 256;" ::: "memory");

    // A piece of a cut tile: its products as they are, into its BM x BN part of the
    // workspace, at (row - row0, col - col0).
    const bool split = gridDim.y > 1;
    const size_t piece = (size_t)blockIdx.y * gridDim.x + blockIdx.x;
    float *const c = split ? p.ws + piece * BM * BN - ((size_t)row0 * BN + col0) : p.c; // as regblock's c_out
    const size_t ldc = split ? (size_t)BN : p.ldc;
    const float alpha = split ? 1.0f : p.alpha, beta = split ? 0.0f : p.beta;
    const int warp = (threadIdx.x - 128) / 32; // 0..7: rows warp, warp + 8, ...
    const int rows = min(BM, p.m - row0), cols = min(BN, p.n - col0);
    if (cols == BN && ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(c + (size_t)row0 * ldc + col0) & 15) == 0) {
        for (int r = warp; r < rows; r += 8)
#pragma unroll
            for (int j = 4 * lane; j < BN; j += 128) {
                const float4 v = *reinterpret_cast<const float4 *>(stage + r * LD + j);
                float4 *out = reinterpret_cast<float4 *>(c + (size_t)(row0 + r) * ldc + col0 + j);
                float4 o = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
                if (beta != 0.0f) {
                    const float4 old = *out;
                    o.x += beta * old.x, o.y += beta * old.y, o.z += beta * old.z, o.w += beta * old.w;
                }
                *out = o;
            }
    } else {
        for (int r = warp; r < rows; r += 8)
            for (int j = lane; j < cols; j += 32) {
                float *out = c + (size_t)(row0 + r) * ldc + col0 + j;
                const float v = alpha * stage[r * LD + j];
                *out = beta != 0.0f ? v + beta * *out : v;
            }
    }
}

#endif // PB_WGMMA_DEVICE

template <typename T, int BN, int TRANS_B>
__global__ void __launch_bounds__(THREADS, 1)
    kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, const params p)
{
#ifdef PB_WGMMA_DEVICE
    body<T, BN, TRANS_B>(&map_a, &map_b, p);
#elif defined(__CUDA_ARCH__)
    (void)map_a, (void)map_b, (void)p;
    __trap(); // built without sm_90a code; supports() refuses such devices
#endif
}

// Out (cols x rows, leading dimension ldo) = In^T (In: rows x cols, leading dimension ldi).
template <typename T>
__global__ void transpose_kernel(const T *__restrict__ in, size_t ldi, size_t rows, size_t cols, T *__restrict__ out,
                                 size_t ldo)
{
    __shared__ T tile[32][33];
    const size_t r0 = (size_t)blockIdx.y * 32, c0 = (size_t)blockIdx.x * 32;
    for (int y = threadIdx.y; y < 32; y += 8)
        if (r0 + y < rows && c0 + threadIdx.x < cols)
            tile[y][threadIdx.x] = in[(r0 + y) * ldi + c0 + threadIdx.x];
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8)
        if (c0 + y < cols && r0 + threadIdx.x < rows)
            out[(c0 + y) * ldo + r0 + threadIdx.x] = tile[threadIdx.x][y];
}

// k == 0: C = beta*C (a TMA map cannot describe an empty A); beta == 0 never reads C.
__global__ void scale_kernel(size_t m, size_t n, float beta, float *__restrict__ c, size_t ldc)
{
    const size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= n)
        return;
    for (size_t r = blockIdx.y; r < m; r += gridDim.y) {
        float *out = c + r * ldc + col;
        *out = beta == 0.0f ? 0.0f : beta * *out;
    }
}

// ---- host side --------------------------------------------------------------------

PFN_cuTensorMapEncodeTiled_v12000 tma_encoder(void)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
    });
    return fn;
}

// A 2D tensor map of rows x cols (row-major, leading dimension ld elements), boxes of
// box_cols x box_rows, 128-byte swizzle.
template <typename T>
pb_status encode(CUtensorMap *map, const T *base, size_t rows, size_t cols, size_t ld, unsigned box_cols,
                 unsigned box_rows)
{
    const cuuint64_t dims[2] = {cols, rows}, strides[1] = {ld * sizeof(T)};
    const cuuint32_t box[2] = {box_cols, box_rows}, elem[2] = {1, 1};
    const CUresult r = tma_encoder()(map, mma_type<T>::TMA, 2, const_cast<T *>(base), dims, strides, box, elem,
                                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return pb__fail(PB_ERR_DEVICE, "gemm wgmma: cuTensorMapEncodeTiled failed (CUresult %d) for a %zu x %zu matrix",
                        (int)r, rows, cols);
    return PB_OK;
}

// B read K-major (transposed into scratch) where wgmma cannot read it N-major (tf32), or
// where PARBENCH_WGMMA_KMAJOR_B=1 asks for it (to compare the two layouts).
template <typename T> bool b_transposed()
{
    if (sizeof(T) == 4)
        return true;
    const char *e = getenv("PARBENCH_WGMMA_KMAJOR_B");
    return e && *e == '1';
}

template <typename T, int BN>
cudaError_t launch(const CUtensorMap *map_a, const CUtensorMap *map_b, const params &p, size_t blocks, int slabs,
                   bool kmajor_b, cudaStream_t s)
{
    void (*f)(const CUtensorMap, const CUtensorMap, const params) = kernel<T, BN, 0>;
    if constexpr (sizeof(T) == 2)
        if (!kmajor_b)
            f = kernel<T, BN, 1>;
    cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, tile<BN>::SMEM_BYTES);
    if (e == cudaSuccess) {
        const dim3 grid((unsigned)blocks, (unsigned)slabs);
        f<<<grid, THREADS, tile<BN>::SMEM_BYTES, s>>>(*map_a, *map_b, p);
        e = cudaGetLastError();
    }
    return e;
}

template <typename T> pb_status run(const pb_gemm_args *g, cudaStream_t s)
{
    // Rows are packed to whole 128-byte lines where theirs are not: TMA needs 16-byte
    // aligned rows, and runs at half speed where each 128-byte row of a box spans two
    // lines (H100, 3000 x 5000 x 7000 bf16: 0.56 ms as they are, 0.46 packed).
    constexpr size_t VEC = ROW_BYTES / sizeof(T);
    constexpr int BK = ROW_BYTES / (int)sizeof(T);
    const bool kmajor_b = b_transposed<T>();
    const T *a = pb__cuda_ptr<const T>(g->a), *b = pb__cuda_ptr<const T>(g->b);
    size_t lda = g->lda, ldb = g->ldb;
    const size_t m = g->m, n = g->n, k = g->k;

    // Scratch on the stream, freed behind the work: TMA needs 16-byte aligned rows, so A
    // or B are packed where theirs are not; B^T for the K-major read.
    T *scratch[2] = {nullptr, nullptr};
    float *ws = nullptr;
    cudaError_t e = cudaSuccess;
    auto on_lines = [](const T *x, size_t ld) { return (reinterpret_cast<uintptr_t>(x) & 127) == 0 && ld % VEC == 0; };
    if (!on_lines(a, lda)) {
        e = pb__pack_scratch(a, lda, m, k, VEC, &scratch[0], &lda, s);
        a = scratch[0];
    }
    if (e == cudaSuccess && kmajor_b) {
        const size_t ldt = (k + VEC - 1) / VEC * VEC;
        e = cudaMallocAsync(&scratch[1], n * ldt * sizeof(T), s);
        if (e == cudaSuccess) {
            const dim3 grid((unsigned)((n + 31) / 32), (unsigned)((k + 31) / 32)), block(32, 8);
            transpose_kernel<T><<<grid, block, 0, s>>>(b, ldb, k, n, scratch[1], ldt);
            e = cudaGetLastError();
        }
        b = scratch[1], ldb = ldt;
    } else if (e == cudaSuccess && !on_lines(b, ldb)) {
        e = pb__pack_scratch(b, ldb, k, n, VEC, &scratch[1], &ldb, s);
        b = scratch[1];
    }

    // The tile width: 256 where the tiles fill the GPU, narrower ones for a thin C
    // (65536 x 64 x 4096 wastes 3/4 of a 256-wide tile). Efficiencies relative to 256.
    // PARBENCH_WGMMA_BN=64|128|256 imposes one (tests cover every width so).
    static const pb__tile_choice widths[] = {{BM, 256, 1.0, 1}, {BM, 128, 0.9, 1}, {BM, 64, 0.75, 1}};
    const double sm_rate = sizeof(T) == 4 ? 3e12 : 4.5e12; // one SM's FLOP/s (H100: about 400 tf32, 600 bf16)
    int bn = (int)widths[pb__pick_tile(m, n, k, true, sizeof(float), sm_rate, widths, 3)].bn;
    if (const char *forced = getenv("PARBENCH_WGMMA_BN"))
        for (const pb__tile_choice &w : widths)
            if (atoi(forced) == (int)w.bn)
                bn = (int)w.bn;
    params p;
    p.m = (int)m, p.n = (int)n, p.k = (int)k;
    p.tiles_m = (int)((m + BM - 1) / BM), p.tiles_n = (int)((n + bn - 1) / bn);
    p.alpha = (float)g->alpha, p.beta = (float)g->beta;
    p.c = pb__cuda_ptr<float>(g->c), p.ldc = g->ldc;
    const int slices = (int)((k + BK - 1) / BK);
    const size_t tiles = (size_t)p.tiles_m * p.tiles_n;
    pb__split_plan plan = pb__plan_split(tiles, k, pb__sm_count(), sizeof(float), sm_rate);
    p.tile_first = 0;
    p.slab_slices = slices;
    p.ws = nullptr;
    if (e == cudaSuccess)
        ws = pb__plan_workspace<float>(&plan, tiles, BM, bn, s);
    pb_status st = PB_OK;
    if (e == cudaSuccess) {
        CUtensorMap map_a, map_b;
        st = encode<T>(&map_a, a, m, k, lda, BK, BM);
        if (st == PB_OK)
            st = kmajor_b ? encode<T>(&map_b, b, n, k, ldb, BK, (unsigned)bn)
                          : encode<T>(&map_b, b, k, n, ldb, B_CHUNK, BK);
        // The whole tiles, then the cut ones (pb__plan_split).
        auto launch_tiles = [&](size_t blocks, int slabs) {
            return bn == 256 ? launch<T, 256>(&map_a, &map_b, p, blocks, slabs, kmajor_b, s)
                : bn == 128  ? launch<T, 128>(&map_a, &map_b, p, blocks, slabs, kmajor_b, s)
                             : launch<T, 64>(&map_a, &map_b, p, blocks, slabs, kmajor_b, s);
        };
        if (st == PB_OK && plan.first > 0)
            e = launch_tiles(plan.first, 1);
        if (st == PB_OK && e == cudaSuccess && plan.first < tiles) {
            p.tile_first = (int)plan.first;
            p.slab_slices = (slices + plan.slabs - 1) / plan.slabs;
            p.ws = ws;
            e = launch_tiles(tiles - plan.first, plan.slabs);
            if (e == cudaSuccess)
                e = pb__tile_reduce(plan, m, n, BM, bn, (const float *)ws, p.alpha, p.beta, p.c, p.ldc, s);
        }
    }
    if (ws) {
        const cudaError_t freed = cudaFreeAsync(ws, s);
        if (e == cudaSuccess)
            e = freed;
    }
    for (T *x : scratch)
        if (x) {
            const cudaError_t freed = cudaFreeAsync(x, s);
            if (e == cudaSuccess)
                e = freed;
        }
    if (st != PB_OK)
        return st;
    PB_CUDA_CHECK(e);
    return PB_OK;
}

const pb_gemm_args *gemm_args(const void *args) { return static_cast<const pb_gemm_args *>(args); }

} // namespace

bool pb__cuda_gemm_wgmma_supports(const pb_device *dev, const void *args, const char **why)
{
    const pb_gemm_args *g = gemm_args(args);
    if (!pb__precision_lowp(g->prec)) {
        *why = "Hopper tensor-core kernel: tf32, bf16 and fp16 only";
        return false;
    }
    const cudaDeviceProp &prop = static_cast<const pb_cuda_device *>(dev->impl)->prop;
    if (prop.major != 9 || prop.minor != 0) {
        *why = "wgmma and TMA are sm_90a instructions: compute capability 9.0 only";
        return false;
    }
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel<__nv_bfloat16, 256, 1>) != cudaSuccess) {
        (void)cudaGetLastError();
        *why = "built without sm_90a code (PB_CUDA_ARCHS lacks 90)";
        return false;
    }
    if (!tma_encoder()) {
        *why = "the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer needed)";
        return false;
    }
    if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX - 256 ||
        ((g->m + BM - 1) / BM) * ((g->n + 63) / 64) > INT_MAX) {
        *why = "m, n and k are limited to 2^31 - 1 (TMA coordinates)";
        return false;
    }
    return true;
}

pb_status pb__cuda_gemm_wgmma(pb_device *dev, const void *args, pb_stream *s)
{
    (void)dev;
    const pb_gemm_args *g = gemm_args(args);
    if (g->m == 0 || g->n == 0)
        return PB_OK;
    cudaStream_t st = pb__cuda_stream(s);
    if (g->k == 0) {
        const dim3 grid((unsigned)((g->n + 255) / 256), (unsigned)(g->m < 65535 ? g->m : 65535));
        scale_kernel<<<grid, 256, 0, st>>>(g->m, g->n, (float)g->beta, pb__cuda_ptr<float>(g->c), g->ldc);
        PB_CUDA_CHECK_LAUNCH();
        return PB_OK;
    }
    switch (g->prec) {
    case PB_TF32:
        return run<float>(g, st);
    case PB_BF16:
        return run<__nv_bfloat16>(g, st);
    case PB_FP16:
        return run<__half>(g, st);
    default:
        return pb__fail(PB_ERR_UNSUPPORTED, "gemm wgmma: precision %s: tf32, bf16 and fp16 only",
                        pb_precision_name(g->prec));
    }
}
