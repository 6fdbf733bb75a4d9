// GEMM kernels: C = alpha*A*B + beta*C, row-major, any m, n, k and leading
// dimensions. Built once per precision with -DT=float or -DT=double
// (-DPB_FP64 with it). beta == 0 never reads C; the host calls gemm_scale
// instead of a product kernel when k == 0 or alpha == 0, so the product
// kernels may assume k >= 1 and never touch A or B otherwise.
//
// NDRange layout: dimension 0 runs along the columns of C (consecutive
// work-items touch consecutive addresses of B and C), dimension 1 along the
// rows.

#ifdef PB_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef T
#error "build with -DT=float or -DT=double"
#endif

void store_c(__global T *c, T acc, T alpha, T beta)
{
    if (beta == (T)0)
        *c = alpha * acc;
    else
        *c = alpha * acc + beta * *c;
}

// C = beta*C (0 when beta == 0, whatever C held).
__kernel void gemm_scale(ulong m, ulong n, T beta, __global T *c, ulong ldc)
{
    const ulong j = get_global_id(0), i = get_global_id(1);
    if (i < m && j < n)
        c[i * ldc + j] = beta == (T)0 ? (T)0 : beta * c[i * ldc + j];
}

// One work-item per element of C, operands straight from global memory.
__kernel void gemm_naive(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
                         __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc)
{
    const ulong col = get_global_id(0), row = get_global_id(1);
    if (row >= m || col >= n)
        return;
    __global const T *ar = a + row * lda;
    T acc = 0;
    for (ulong p = 0; p < k; p++)
        acc += ar[p] * b[p * ldb + col];
    store_c(&c[row * ldc + col], acc, alpha, beta);
}

// gemm_naive on a capped NDRange (study 001's number of work-groups): each
// work-item loops over the elements of C a whole NDRange apart.
__kernel void gemm_naive_strided(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
                                 __global const T *restrict b, ulong ldb, T beta, __global T *restrict c,
                                 ulong ldc)
{
    const ulong step_x = get_global_size(0), step_y = get_global_size(1);
    for (ulong row = get_global_id(1); row < m; row += step_y) {
        __global const T *ar = a + row * lda;
        for (ulong col = get_global_id(0); col < n; col += step_x) {
            T acc = 0;
            for (ulong p = 0; p < k; p++)
                acc += ar[p] * b[p * ldb + col];
            store_c(&c[row * ldc + col], acc, alpha, beta);
        }
    }
}

// The classic tiled kernel: a TS x TS work-group computes a TS x TS tile of
// C, walking k in TS-wide steps through local copies of one tile of A and
// one of B. Out-of-range elements load as 0 so any m, n, k works. TS is a
// constant in each caller, so the inner loop unrolls.
//
// A's row is read from local memory 16 bytes at a time (TV): nvcc merges the
// CUDA twin's scalar reads into such loads (LDS.128), NVIDIA's OpenCL
// compiler does not, and the kernel is bound by local-memory instructions.
// The sum runs in the same order as the scalar loop.
#ifdef PB_FP64
typedef double2 TV;
#define TV_WIDTH 2
#define TV_FMA(acc, av, bs, p, TS, tx) acc += av.s0 * bs[(p) * TS + tx]; acc += av.s1 * bs[((p) + 1) * TS + tx]
#else
typedef float4 TV;
#define TV_WIDTH 4
#define TV_FMA(acc, av, bs, p, TS, tx)                                                                   \
    acc += av.s0 * bs[(p) * TS + tx];                                                                    \
    acc += av.s1 * bs[((p) + 1) * TS + tx];                                                              \
    acc += av.s2 * bs[((p) + 2) * TS + tx];                                                              \
    acc += av.s3 * bs[((p) + 3) * TS + tx]
#endif

void tiled(const int TS, __local T *as, __local T *bs, ulong m, ulong n, ulong k, T alpha,
           __global const T *restrict a, ulong lda, __global const T *restrict b, ulong ldb, T beta,
           __global T *restrict c, ulong ldc)
{
    const int tx = get_local_id(0), ty = get_local_id(1);
    const ulong row = get_group_id(1) * TS + ty, col = get_group_id(0) * TS + tx;
    __local const TV *arow = (__local const TV *)(as + ty * TS);
    T acc = 0;
    for (ulong t = 0; t < k; t += TS) {
        as[ty * TS + tx] = row < m && t + tx < k ? a[row * lda + t + tx] : (T)0;
        bs[ty * TS + tx] = t + ty < k && col < n ? b[(t + ty) * ldb + col] : (T)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int p = 0; p < TS; p += TV_WIDTH) {
            const TV av = arow[p / TV_WIDTH];
            TV_FMA(acc, av, bs, p, TS, tx);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n)
        store_c(&c[row * ldc + col], acc, alpha, beta);
}

// The local arrays are 16-byte aligned for the TV reads (TS is a multiple of
// TV_WIDTH, so every row starts aligned).
#define PB_TILED(TS)                                                                                     \
    __kernel __attribute__((reqd_work_group_size(TS, TS, 1))) void gemm_tiled##TS(                      \
        ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,                      \
        __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc)               \
    {                                                                                                    \
        __local T as[TS * TS] __attribute__((aligned(16)));                                              \
        __local T bs[TS * TS];                                                                           \
        tiled(TS, as, bs, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                                 \
    }
PB_TILED(8)
PB_TILED(16)
PB_TILED(32)

// Study 001's one-row design: work-group i (dimension 1) computes row i of C.
// The row of A goes to local memory, chunk elements at a time (the host
// passes the largest chunk local memory holds); then each work-item walks
// the columns j = lid, lid + size, ... and reads B from global memory. When
// the whole row fits it is loaded once; otherwise every column block walks
// the chunks again.
__kernel void gemm_onerow(ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,
                          __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc,
                          __local T *arow, ulong chunk)
{
    const ulong i = get_group_id(1);
    const ulong lid = get_local_id(0), size = get_local_size(0);
    __global const T *ar = a + i * lda;
    const bool whole = k <= chunk;
    if (whole) {
        for (ulong p = lid; p < k; p += size)
            arow[p] = ar[p];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (ulong j0 = 0; j0 < n; j0 += size) {
        const ulong j = j0 + lid;
        T acc = 0;
        if (whole) {
            if (j < n)
                for (ulong p = 0; p < k; p++)
                    acc += arow[p] * b[p * ldb + j];
        } else {
            for (ulong p0 = 0; p0 < k; p0 += chunk) {
                const ulong len = min(chunk, k - p0);
                barrier(CLK_LOCAL_MEM_FENCE); // everyone is done with the previous chunk
                for (ulong p = lid; p < len; p += size)
                    arow[p] = ar[p0 + p];
                barrier(CLK_LOCAL_MEM_FENCE);
                if (j < n)
                    for (ulong p = 0; p < len; p++)
                        acc += arow[p] * b[(p0 + p) * ldb + j];
            }
        }
        if (j < n && i < m)
            store_c(&c[i * ldc + j], acc, alpha, beta);
    }
}

// Register blocking, the OpenCL twin of the CUDA regblock kernel
// (src/backends/cuda/gemm_regblock.cu, tiles F32Medium / F64Large, and with
// RB_SMALL F32Small / F64Small): a 1-D work-group of 256 work-items computes
// a 128 x 128 tile of C (128 work-items, 64 x 64 small), walking k in slices
// of 8 through two local-memory stages with one barrier per slice. The
// figures below are the large tile's.
//
//  * A's slice is stored transposed (as[k][row], rows padded by 4 elements so
//    the scalar transposing stores avoid bank conflicts and rows stay 16-byte
//    aligned), B's as is; for each k a work-item reads its A and B fragments
//    with 16-byte local loads (float4 / double2).
//  * The work-group is 8 "warps" of 32 work-items in a 4 x 2 grid, each warp
//    covering 32 x 64 of the tile; a warp's 32 work-items form a 4 x 8 grid
//    and each owns RB_REP_M x RB_REP_N chunks of one vector (4 floats or 2
//    doubles) per row, spaced one grid apart: an 8 x 8 register tile.
//  * The global loads of slice t+1 are issued into registers before the
//    multiply-adds of slice t and written to the other stage just before its
//    last k-row; register fragments are double-buffered per k-row.
//  * Global loads are 16 bytes when the leading dimension allows it (buffer
//    bases are aligned): four kernels gemm_regblock_{v,s}{v,s} for A and B,
//    the host picks one. C is stored 16 bytes at a time when c_vec is set.
//  * Edges: A rows past m are clamped to row m-1 (never stored), B columns
//    past n and the k tail are zero-filled, stores are guarded; full slices
//    take an unpredicated path and the k % 8 tail is one extra slice.
//  * Work-groups are walked in groups of RB_GROUP_M tile rows (column-major
//    inside a group) so that co-resident work-groups share panels in L2.
//  * Tiles may be cut along k (the host's plan, src/core/gemm_plan.h, as the
//    CUDA twin's): piece z of a tile takes k from z * k_split, at most k_split
//    of it, and writes its products as they are to its own RB_BM x RB_BN part
//    of ws, which gemm_tile_reduce sums into C.
//
// NDRange: dimension 0 is RB_THREADS x (the tiles of this launch, from tile
// tile_first on), dimension 1 the pieces of each tile (1: whole tiles).
#ifdef PB_FP64
typedef double2 VT;
#define RB_VEC 2
#define RB_SPLIT(v, d) ((d)[0] = (v).s0, (d)[1] = (v).s1)
#define RB_JOIN(s) ((double2)((s)[0], (s)[1]))
#else
typedef float4 VT;
#define RB_VEC 4
#define RB_SPLIT(v, d) ((d)[0] = (v).s0, (d)[1] = (v).s1, (d)[2] = (v).s2, (d)[3] = (v).s3)
#define RB_JOIN(s) ((float4)((s)[0], (s)[1], (s)[2], (s)[3]))
#endif

// Two tiles, as the CUDA twin picks by shape (gemm.c chooses): 128 x 128 with
// 256 work-items, and with -DRB_SMALL 64 x 64 with 128 work-items (8 x 4 per
// work-item) for products too small to fill the device with the large one.
#ifdef RB_SMALL
#define RB_BM 64
#define RB_BN 64
#define RB_WN 32
#else
#define RB_BM 128
#define RB_BN 128
#define RB_WN 64
#endif
#define RB_BK 8
#define RB_WM 32 /* warp tile */
#define RB_WARPS_N (RB_BN / RB_WN)
#define RB_THREADS ((RB_BM / RB_WM) * RB_WARPS_N * 32)
#define RB_TWM 4 /* lanes of a warp along m */
#define RB_TWN (32 / RB_TWM)
#define RB_REP_M (RB_WM / (RB_TWM * RB_VEC))
#define RB_REP_N (RB_WN / (RB_TWN * RB_VEC))
#define RB_TM (RB_REP_M * RB_VEC) /* register tile: 8 x 8 (8 x 4 small) */
#define RB_TN (RB_REP_N * RB_VEC)
#define RB_A_CG (RB_BK / (2 * RB_VEC)) /* A loads per work-item and slice (RB_BM rows x 2 vectors each) */
#define RB_B_VPR (RB_BN / RB_VEC)       /* vectors per row of B's slice */
#define RB_B_RPI (RB_THREADS / RB_B_VPR) /* rows of B one load covers */
#define RB_B_LOADS (RB_BK / RB_B_RPI)
#define RB_A_LD (RB_BM + 4)
#define RB_B_LD RB_BN
#define RB_A_STAGE (RB_BK * RB_A_LD)
#define RB_B_STAGE (RB_BK * RB_B_LD)
#define RB_GROUP_M 8

#if RB_BM != RB_THREADS / 2 || RB_TM != 8 || (RB_TN != 8 && RB_TN != 4) || RB_B_LOADS < 1 ||                 \
    RB_BK % (2 * RB_VEC) != 0
#error "regblock tile configuration"
#endif

// Loads the next slice of A and B into the staging registers: all RB_BK
// k-rows when full, else the first krem. Advances the source pointers.
void rb_load_slice(const bool va, const bool b_vec_ok, const bool full, const int krem, __global const T **a_src,
                   __global const T **b_src, const int a_c, const int b_r, const long b_col, const long n,
                   const long b_row_step, const long b_slice_step, T a_st[RB_A_CG][RB_VEC],
                   T b_st[RB_B_LOADS][RB_VEC])
{
#pragma unroll
    for (int i = 0; i < RB_A_CG; i++) {
        const int kc = i * 2 * RB_VEC;
        __global const T *src = *a_src + kc;
        if (full && va) {
            const VT v = *(__global const VT *)src;
            RB_SPLIT(v, a_st[i]);
        } else {
#pragma unroll
            for (int e = 0; e < RB_VEC; e++)
                a_st[i][e] = (full || kc + a_c + e < krem) ? src[e] : (T)0;
        }
    }
#pragma unroll
    for (int i = 0; i < RB_B_LOADS; i++) {
        __global const T *src = *b_src + i * b_row_step;
        const bool row_ok = full || i * RB_B_RPI + b_r < krem;
        if (b_vec_ok) {
            const VT v = row_ok ? *(__global const VT *)src : (VT)0;
            RB_SPLIT(v, b_st[i]);
        } else {
#pragma unroll
            for (int e = 0; e < RB_VEC; e++)
                b_st[i][e] = (row_ok && b_col + e < n) ? src[e] : (T)0;
        }
    }
    *a_src += RB_BK;
    *b_src += b_slice_step;
}

// Writes the staged slice into one stage (A transposed).
void rb_store_slice(__local T *as, __local T *bs, const int a_r, const int a_c, const int b_r, const int b_c,
                    T a_st[RB_A_CG][RB_VEC], T b_st[RB_B_LOADS][RB_VEC])
{
#pragma unroll
    for (int i = 0; i < RB_A_CG; i++) {
        const int kc = i * 2 * RB_VEC + a_c;
#pragma unroll
        for (int e = 0; e < RB_VEC; e++)
            as[(kc + e) * RB_A_LD + a_r] = a_st[i][e];
    }
#pragma unroll
    for (int i = 0; i < RB_B_LOADS; i++)
        *(__local VT *)&bs[(i * RB_B_RPI + b_r) * RB_B_LD + b_c] = RB_JOIN(b_st[i]);
}

// The work-item's fragments of one k-row: RB_TM values of A, RB_TN of B.
void rb_load_frags(__local const T *as, __local const T *bs, T fa[RB_TM], T fb[RB_TN])
{
#pragma unroll
    for (int r = 0; r < RB_REP_M; r++) {
        const VT v = *(__local const VT *)(as + r * RB_TWM * RB_VEC);
        RB_SPLIT(v, fa + r * RB_VEC);
    }
#pragma unroll
    for (int r = 0; r < RB_REP_N; r++) {
        const VT v = *(__local const VT *)(bs + r * RB_TWN * RB_VEC);
        RB_SPLIT(v, fb + r * RB_VEC);
    }
}

void rb_outer(T acc[RB_TM][RB_TN], const T fa[RB_TM], const T fb[RB_TN])
{
#pragma unroll
    for (int i = 0; i < RB_TM; i++)
#pragma unroll
        for (int j = 0; j < RB_TN; j++)
            acc[i][j] = fma(fa[i], fb[j], acc[i][j]);
}

// First row and column of tile pid in the grouped order: RB_GROUP_M tile rows
// walked column by column (the CUDA twin's pb__tile_origin).
void rb_tile_origin(const long pid, const long tiles_m, const long tiles_n, long *m0, long *n0)
{
    const long per_group = RB_GROUP_M * tiles_n;
    const long first_m = pid / per_group * RB_GROUP_M;
    const long gsize = min((long)RB_GROUP_M, tiles_m - first_m);
    const long in_group = pid % per_group;
    *m0 = (first_m + in_group % gsize) * RB_BM;
    *n0 = in_group / gsize * RB_BN;
}

// cut (a constant of each kernel): this launch computes pieces of tiles cut along
// k; whole tiles take the plain path, with none of the pieces' arithmetic.
void regblock(const bool va, const bool vb, const bool cut, __local T *As, __local T *Bs, ulong m, ulong n, ulong k,
              T alpha, __global const T *restrict a, ulong lda, __global const T *restrict b, ulong ldb, T beta,
              __global T *restrict c, ulong ldc, int c_vec, ulong tiles_m, ulong tiles_n, ulong tile_first,
              ulong k_split, __global T *restrict ws)
{
    const int tid = get_local_id(0);
    const long M = m, N = n;
    long m0, n0;
    rb_tile_origin((long)tile_first + get_group_id(0), tiles_m, tiles_n, &m0, &n0);
    const long kz = cut ? (long)get_group_id(1) * (long)k_split : 0;
    const long K = cut ? max(0L, min((long)k - kz, (long)k_split)) : (long)k;

    // Global load setup.
    const int a_r = tid >> 1, a_c = (tid & 1) * RB_VEC;
    const long a_row = min(m0 + a_r, M - 1); // rows >= m are never stored
    __global const T *a_src = a + a_row * (long)lda + kz + a_c;
    const int b_r = tid / RB_B_VPR, b_c = (tid % RB_B_VPR) * RB_VEC;
    const long b_col = n0 + b_c;
    const bool b_vec_ok = vb && b_col + RB_VEC <= N;
    __global const T *b_src = b + (kz + b_r) * (long)ldb + b_col;
    const long b_row_step = RB_B_RPI * (long)ldb, b_slice_step = RB_BK * (long)ldb;
    T a_st[RB_A_CG][RB_VEC], b_st[RB_B_LOADS][RB_VEC];

    // Compute setup.
    const int warp = tid >> 5, lane = tid & 31;
    const int lane_m = lane / RB_TWN, lane_n = lane % RB_TWN;
    const int a_off = warp / RB_WARPS_N * RB_WM + lane_m * RB_VEC;
    const int b_off = warp % RB_WARPS_N * RB_WN + lane_n * RB_VEC;

    T acc[RB_TM][RB_TN];
#pragma unroll
    for (int i = 0; i < RB_TM; i++)
#pragma unroll
        for (int j = 0; j < RB_TN; j++)
            acc[i][j] = 0;

    const long nfull = K / RB_BK;
    const int ktail = (int)(K % RB_BK);
    T fa[2][RB_TM], fb[2][RB_TN];
    if (nfull > 0) {
        rb_load_slice(va, b_vec_ok, true, RB_BK, &a_src, &b_src, a_c, b_r, b_col, N, b_row_step, b_slice_step,
                      a_st, b_st);
        rb_store_slice(As, Bs, a_r, a_c, b_r, b_c, a_st, b_st);
        barrier(CLK_LOCAL_MEM_FENCE);
        rb_load_frags(As + a_off, Bs + b_off, fa[0], fb[0]);
    }
    // Stage buf^1 was last read in slice t-1, before the barrier of that
    // slice that everyone has passed, so one barrier per slice suffices.
    for (long t = 0; t < nfull; t++) {
        const int buf = t & 1;
        const bool more = t + 1 < nfull;
        if (more)
            rb_load_slice(va, b_vec_ok, true, RB_BK, &a_src, &b_src, a_c, b_r, b_col, N, b_row_step,
                          b_slice_step, a_st, b_st);
        __local T *as = As + buf * RB_A_STAGE, *bs = Bs + buf * RB_B_STAGE;
#pragma unroll
        for (int kk = 0; kk < RB_BK; kk++) {
            const int cur = kk & 1;
            if (kk + 1 < RB_BK) {
                rb_load_frags(as + (kk + 1) * RB_A_LD + a_off, bs + (kk + 1) * RB_B_LD + b_off, fa[cur ^ 1],
                              fb[cur ^ 1]);
            } else {
                __local T *as2 = As + (buf ^ 1) * RB_A_STAGE, *bs2 = Bs + (buf ^ 1) * RB_B_STAGE;
                if (more)
                    rb_store_slice(as2, bs2, a_r, a_c, b_r, b_c, a_st, b_st);
                barrier(CLK_LOCAL_MEM_FENCE); // in every slice: uniform control flow
                if (more)
                    rb_load_frags(as2 + a_off, bs2 + b_off, fa[cur ^ 1], fb[cur ^ 1]);
            }
            rb_outer(acc, fa[cur], fb[cur]);
        }
    }
    if (ktail > 0) { // zero-filled past k; the barrier above ended all reads of both stages
        rb_load_slice(va, b_vec_ok, false, ktail, &a_src, &b_src, a_c, b_r, b_col, N, b_row_step, b_slice_step,
                      a_st, b_st);
        rb_store_slice(As, Bs, a_r, a_c, b_r, b_c, a_st, b_st);
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int kk = 0; kk < RB_BK; kk++) {
            rb_load_frags(As + kk * RB_A_LD + a_off, Bs + kk * RB_B_LD + b_off, fa[0], fb[0]);
            rb_outer(acc, fa[0], fb[0]);
        }
    }

    // Epilogue: C = alpha*acc + beta*C, guarded; beta == 0 never reads C. A piece
    // of a cut tile goes to its own part of ws, at (row - m0, col - n0).
    if (cut) {
        c = ws + ((long)get_group_id(1) * get_num_groups(0) + get_group_id(0)) * (RB_BM * RB_BN);
        ldc = RB_BN;
        alpha = 1;
        beta = 0;
        c_vec = 1;
    }
    const long r_off = cut ? m0 : 0, c_off = cut ? n0 : 0;
#pragma unroll
    for (int r = 0; r < RB_REP_M; r++) {
#pragma unroll
        for (int i = 0; i < RB_VEC; i++) {
            const long row = m0 + a_off + r * RB_TWM * RB_VEC + i;
            if (row >= M)
                continue;
            __global T *crow = c + (row - r_off) * (long)ldc;
#pragma unroll
            for (int s = 0; s < RB_REP_N; s++) {
                const long col = n0 + b_off + s * RB_TWN * RB_VEC;
                const T *res = &acc[r * RB_VEC + i][s * RB_VEC];
                if (c_vec && col + RB_VEC <= N) {
                    __global VT *dst = (__global VT *)(crow + (col - c_off));
                    T out[RB_VEC];
                    if (beta == (T)0) {
#pragma unroll
                        for (int e = 0; e < RB_VEC; e++)
                            out[e] = alpha * res[e];
                    } else {
                        T old[RB_VEC];
                        const VT o = *dst;
                        RB_SPLIT(o, old);
#pragma unroll
                        for (int e = 0; e < RB_VEC; e++)
                            out[e] = fma(alpha, res[e], beta * old[e]);
                    }
                    *dst = RB_JOIN(out);
                } else {
#pragma unroll
                    for (int e = 0; e < RB_VEC; e++)
                        if (col + e < N) {
                            __global T *dst = crow + (col - c_off) + e;
                            *dst = beta == (T)0 ? alpha * res[e] : fma(alpha, res[e], beta * *dst);
                        }
                }
            }
        }
    }
}

// VA / VB: A / B may be read 16 bytes at a time (lda / ldb multiples of a
// vector; buffer bases are always aligned). The host always launches
// RB_THREADS work-items; the kernels do not say so with
// reqd_work_group_size because NVIDIA's compiler then ignores the register
// cap the host asks for (see program_options in backend_opencl.c).
#define PB_REGBLOCK(NAME, VA, VB, CUT)                                                                   \
    __kernel void gemm_regblock_##NAME(                                                                  \
        ulong m, ulong n, ulong k, T alpha, __global const T *restrict a, ulong lda,                      \
        __global const T *restrict b, ulong ldb, T beta, __global T *restrict c, ulong ldc, int c_vec,    \
        ulong tiles_m, ulong tiles_n, ulong tile_first, ulong k_split, __global T *restrict ws)           \
    {                                                                                                    \
        __local VT as[2 * RB_A_STAGE / RB_VEC], bs[2 * RB_B_STAGE / RB_VEC];                             \
        regblock(VA, VB, CUT, (__local T *)as, (__local T *)bs, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, \
                 c_vec, tiles_m, tiles_n, tile_first, k_split, ws);                                      \
    }
PB_REGBLOCK(vv, true, true, false)
PB_REGBLOCK(vs, true, false, false)
PB_REGBLOCK(sv, false, true, false)
PB_REGBLOCK(ss, false, false, false)
PB_REGBLOCK(cut_vv, true, true, true)
PB_REGBLOCK(cut_vs, true, false, true)
PB_REGBLOCK(cut_sv, false, true, true)
PB_REGBLOCK(cut_ss, false, false, true)

// C = alpha * (the sum of the pieces, in piece order) + beta * C over the
// `count` cut tiles from tile `first` (regblock's pieces in ws).
__kernel void gemm_tile_reduce(ulong m, ulong n, ulong tiles_m, ulong tiles_n, ulong first, ulong count, int slabs,
                               __global const T *restrict ws, T alpha, T beta, __global T *restrict c, ulong ldc)
{
    const long per_tile = RB_BM * RB_BN, total = (long)count * per_tile;
    for (long i = get_global_id(0); i < total; i += get_global_size(0)) {
        const long t = i / per_tile, e = i % per_tile;
        long m0, n0;
        rb_tile_origin((long)first + t, tiles_m, tiles_n, &m0, &n0);
        const long row = m0 + e / RB_BN, col = n0 + e % RB_BN;
        if (row >= (long)m || col >= (long)n)
            continue;
        T sum = 0;
        for (int z = 0; z < slabs; z++)
            sum += ws[(z * (long)count + t) * per_tile + e];
        __global T *dst = c + row * (long)ldc + col;
        *dst = beta == (T)0 ? alpha * sum : fma(alpha, sum, beta * *dst);
    }
}
