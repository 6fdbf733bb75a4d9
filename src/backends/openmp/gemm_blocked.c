/* gemm_blocked.c: cache- and register-blocked, vectorised, OpenMP-threaded
 * GEMM (row-major C = alpha*A*B + beta*C) for float and double.
 *
 * Design (GotoBLAS/BLIS): C is cut into one cell per thread (a grid of row
 * and column groups). Within its cell a thread takes B in KC x NC blocks,
 * packed into NR-column micro-panels (stays in L3), and A in MC x KC blocks,
 * packed into MR-row micro-panels (stays in its L2), and runs a micro-kernel
 * that keeps an MR x NR tile of C in vector registers while it streams one A
 * and one B micro-panel. Packing zero-pads ragged edges so the micro-kernel
 * always computes a full tile; edge tiles are written back through a small
 * temporary. Threads share nothing but the inputs, so they never wait for
 * one another before the final join.
 *
 * Vectors are GCC/Clang vector extensions whose width follows the target
 * (AVX-512, AVX or 16-byte baseline); the only intrinsics are the FMA ones,
 * used only where the target has FMA (GCC does not contract a*b+c under
 * -std=c11). The float and double versions are one template: this file
 * includes itself once per element type (the part after #else below). */
#ifndef PB_GEMM_TEMPLATE

#include "gemm_blocked.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#define PB_OMP(directive) _Pragma(#directive)
#else
#define PB_OMP(directive)
#endif

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (VBYTES == 64 || defined(__FMA__))
#include <immintrin.h>
#if VBYTES == 64
#define VFMA_f32 _mm512_fmadd_ps
#define VFMA_f64 _mm512_fmadd_pd
#elif VBYTES == 32
#define VFMA_f32 _mm256_fmadd_ps
#define VFMA_f64 _mm256_fmadd_pd
#else
#define VFMA_f32 _mm_fmadd_ps
#define VFMA_f64 _mm_fmadd_pd
#endif
#endif

/* Micro-tile: GEMM_MR rows x GEMM_NV vectors. The accumulators plus the NV B
 * vectors and a broadcast A value must fit the register file: 32 registers
 * with AVX-512 (24 + 2 + 1), 16 otherwise (12 + 2 + 1, one spare for the
 * product when there is no FMA). On Zen 4, 12x2 measured as fast as 8x3 and
 * 6x4 and wastes less on narrow matrices. */
#define GEMM_NV 2
#if VBYTES == 64
#define GEMM_MR 12
#else
#define GEMM_MR 6
#endif

/* A C of at most this many micro-panels reads A where it is: packing A
 * costs a pass over it that only reuse across many panels repays
 * (1377 x 51 x 7771 float on 2 cores: 0.49x OpenBLAS with A packed). */
#define DIRECT_A_PANELS 4

/* A C of at most this many micro-tiles of rows reads B where it is: with
 * so few rows to reuse it, packing B is a pass over it that does not
 * overlap the arithmetic (79 x 4146 x 10696 double on 2 cores: 0.54x
 * OpenBLAS with B packed). */
#define DIRECT_B_TILES 8
#define PREFETCH_ROWS 12

/* Full unrolling keeps the accumulator array in registers. */
#define PB_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define PB_UNROLL(n) PB_PRAGMA(unroll)
#elif defined(__GNUC__)
#define PB_UNROLL(n) PB_PRAGMA(GCC unroll n)
#else
#define PB_UNROLL(n)
#endif

#define PB_CAT2(a, b) a##_##b
#define PB_CAT(a, b) PB_CAT2(a, b)

/* Packed buffers start on a cache line (and a full AVX-512 vector). */
#define PACK_ALIGN 64

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }
static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static void *alloc_aligned(size_t bytes)
{
    return aligned_alloc(PACK_ALIGN, round_up(bytes ? bytes : 1, PACK_ALIGN));
}

static int resolve_threads(int threads)
{
#ifdef _OPENMP
    return threads >= 1 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

/* Split nt threads into a grid of row_groups x (nt / row_groups) cells of C,
 * making the largest cell (in micro-tiles) smallest. Each thread packs its own
 * A and B for its cell, so threads never wait for one another before the
 * final join: on a machine whose few cores are often shared with other work,
 * a barrier (where OpenMP waiters spin) costs far more than packing twice.
 * Ties go to fewer row groups: a column split keeps each private B block small. */
static int choose_row_groups(int nt, size_t row_tiles, size_t col_panels)
{
    int best = 1;
    size_t best_cost = SIZE_MAX;
    for (int tm = 1; tm <= nt; tm++) {
        if (nt % tm != 0)
            continue;
        size_t tn = (size_t)(nt / tm);
        size_t cost = (row_tiles + (size_t)tm - 1) / (size_t)tm * ((col_panels + tn - 1) / tn);
        if (cost < best_cost) {
            best_cost = cost;
            best = tm;
        }
    }
    return best;
}

/* Blocking per element type, for Zen 4 (32 KiB L1d, 1 MiB L2 per core,
 * 32 MiB L3) and measured there:
 *  KC: depth of a k slice. C is read and written once per slice, so deep
 *      slices pay off: 768 (float) was ~10% faster than 256 at n = 2048. The
 *      micro-panels then outgrow L1 and stream from L2, which the hardware
 *      prefetcher sustains easily (~7 bytes per cycle needed).
 *  MC: rows of an A block; MC x KC (float 576 KiB, double 768 KiB) stays in
 *      the 1 MiB L2 while all the B micro-panels stream past it.
 *  NC: columns of a B block; KC x NC (float 9 MiB, double 12 MiB) is meant
 *      for L3; with two threads each one's block is half of n wide. */
#define T float
#define SFX f32
#define GEMM_KC 768
#define GEMM_MC 192
#define GEMM_NC 3072
#ifdef VFMA_f32
#define VFMA VFMA_f32
#endif
#define PB_GEMM_TEMPLATE
#include "gemm_blocked.c"
#undef PB_GEMM_TEMPLATE
#undef VFMA
#undef T
#undef SFX
#undef GEMM_KC
#undef GEMM_MC
#undef GEMM_NC

#define T double
#define SFX f64
#define GEMM_KC 512
#define GEMM_MC 192
#define GEMM_NC 3072
#ifdef VFMA_f64
#define VFMA VFMA_f64
#endif
#define PB_GEMM_TEMPLATE
#include "gemm_blocked.c"
#undef PB_GEMM_TEMPLATE
#undef VFMA
#undef T
#undef SFX
#undef GEMM_KC
#undef GEMM_MC
#undef GEMM_NC

#else /* PB_GEMM_TEMPLATE: everything below is instantiated per element type */

#define FN(name) PB_CAT(name, SFX)
#define VEC FN(vec)
#define W ((int)(VBYTES / sizeof(T)))
#define NV GEMM_NV
#define NR (NV * W)
#define MR GEMM_MR

typedef T VEC __attribute__((vector_size(VBYTES)));

/* A blocks are whole micro-panels: the packing buffer holds exactly MC rows. */
_Static_assert(GEMM_MC % MR == 0, "GEMM_MC must be a multiple of the micro-tile rows");
_Static_assert(MR % 3 == 0, "ragged row tiles run a third or two thirds of MR rows");

static inline VEC FN(vload)(const T *p)
{
    VEC v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void FN(vstore)(T *p, VEC v) { memcpy(p, &v, sizeof v); }

/* Broadcast; x - 0 == x exactly (also for -0, inf, NaN), so this folds away. */
static inline VEC FN(vsplat)(T x) { return x - (VEC){0}; }

static inline VEC FN(vfma)(VEC acc, VEC x, VEC y)
{
#ifdef VFMA
    return VFMA(x, y, acc);
#else
    return acc + x * y;
#endif
}

/* C tile (mr x nr valid of rows x vecs * W) = alpha * Apanel * Bpanel + beta * C,
 * where beta == 0 means C is not read. Element (i, p) of A at a[i * a_row +
 * p * a_col]: a packed micro-panel (1, MR) or A itself (lda, 1); row p of
 * the NR columns of B at b + p * b_row: a packed micro-panel (NR) or B
 * itself (ldb). rows: MR, or fewer for a ragged last row tile; vecs: NV, or
 * fewer for a ragged last column panel (constants at every call). Inlined
 * into the callers below, which fix the strides. */
static inline __attribute__((always_inline)) void FN(micro_tile)(const int rows, const int vecs, size_t kc,
                                                                 const T *restrict a, size_t a_row, size_t a_col,
                                                                 const T *restrict b, size_t b_row, T alpha, T beta,
                                                                 T *restrict c, size_t ldc, size_t mr, size_t nr)
{
    VEC acc[MR][NV];
    PB_UNROLL(MR)
    for (int i = 0; i < rows; i++)
        PB_UNROLL(NV)
        for (int v = 0; v < vecs; v++)
            acc[i][v] = (VEC){0};

    for (size_t p = 0; p < kc; p++) {
        VEC bv[NV];
        /* B's own rows lie more than a page apart, where the hardware's
         * prefetchers stop: fetch a few rows ahead (past kc reads nothing). */
        if (b_row != NR)
            PB_UNROLL(NV)
            for (int v = 0; v < vecs; v += (int)(64 / VBYTES) > 0 ? (int)(64 / VBYTES) : 1)
                __builtin_prefetch(b + PREFETCH_ROWS * b_row + v * W);
        PB_UNROLL(NV)
        for (int v = 0; v < vecs; v++)
            bv[v] = FN(vload)(b + v * W);
        PB_UNROLL(MR)
        for (int i = 0; i < rows; i++) {
            VEC ai = FN(vsplat)(a[(size_t)i * a_row]);
            PB_UNROLL(NV)
            for (int v = 0; v < vecs; v++)
                acc[i][v] = FN(vfma)(acc[i][v], ai, bv[v]);
        }
        a += a_col;
        b += b_row;
    }

    VEC va = FN(vsplat)(alpha), vb = FN(vsplat)(beta);
    if (mr == (size_t)rows && nr == (size_t)(vecs * W)) {
        PB_UNROLL(MR)
        for (int i = 0; i < rows; i++) {
            T *row = c + (size_t)i * ldc;
            for (int v = 0; v < vecs; v++) {
                VEC out = beta == 0 ? va * acc[i][v] : FN(vfma)(vb * FN(vload)(row + v * W), va, acc[i][v]);
                FN(vstore)(row + v * W, out);
            }
        }
        return;
    }
    T tile[MR][NR];
    PB_UNROLL(MR)
    for (int i = 0; i < rows; i++)
        for (int v = 0; v < vecs; v++)
            FN(vstore)(tile[i] + v * W, acc[i][v]);
    for (size_t i = 0; i < mr; i++) {
        T *row = c + i * ldc;
        for (size_t j = 0; j < nr; j++)
            row[j] = beta == 0 ? alpha * tile[i][j] : alpha * tile[i][j] + beta * row[j];
    }
}

/* micro_tile over the vectors of B that cover nr columns: one where nr fits
 * in it (19 double columns are 16 + 8 wide, not 16 + 16), else NV. */
static inline __attribute__((always_inline)) void FN(micro_tile_cols)(const int rows, size_t kc, const T *restrict a,
                                                                      size_t a_row, size_t a_col, const T *restrict b,
                                                                      size_t b_row, T alpha, T beta, T *restrict c,
                                                                      size_t ldc, size_t mr, size_t nr)
{
    if (NV > 1 && nr <= (size_t)W)
        FN(micro_tile)(rows, 1, kc, a, a_row, a_col, b, b_row, alpha, beta, c, ldc, mr, nr);
    else
        FN(micro_tile)(rows, NV, kc, a, a_row, a_col, b, b_row, alpha, beta, c, ldc, mr, nr);
}

/* micro_tile over a packed A micro-panel (pack_a) whose last row tile may be
 * ragged: it runs a third, two thirds or all of MR rows, whichever covers
 * mr (20 rows are 12 + 8, not 12 + 12 of which 4 are zeros). */
static inline __attribute__((always_inline)) void FN(micro_tile_packed_a)(size_t kc, const T *restrict a,
                                                                         const T *restrict b, size_t b_row, T alpha,
                                                                         T beta, T *restrict c, size_t ldc, size_t mr,
                                                                         size_t nr)
{
    if (mr <= MR / 3)
        FN(micro_tile_cols)(MR / 3, kc, a, 1, MR, b, b_row, alpha, beta, c, ldc, mr, nr);
    else if (mr <= 2 * MR / 3)
        FN(micro_tile_cols)(2 * MR / 3, kc, a, 1, MR, b, b_row, alpha, beta, c, ldc, mr, nr);
    else
        FN(micro_tile_cols)(MR, kc, a, 1, MR, b, b_row, alpha, beta, c, ldc, mr, nr);
}

/* A packed into MR-interleaved micro-panels, B into an NR-column one. */
static void FN(micro_kernel)(size_t kc, const T *restrict a, const T *restrict b, T alpha, T beta, T *restrict c,
                             size_t ldc, size_t mr, size_t nr)
{
    FN(micro_tile_packed_a)(kc, a, b, NR, alpha, beta, c, ldc, mr, nr);
}

/* MR whole rows of A read where they are (rows lda apart). */
static void FN(micro_kernel_rows)(size_t kc, const T *restrict a, size_t lda, const T *restrict b, T alpha, T beta,
                                  T *restrict c, size_t ldc, size_t nr)
{
    FN(micro_tile_cols)(MR, kc, a, lda, 1, b, NR, alpha, beta, c, ldc, MR, nr);
}

/* NR whole columns of B read where they are (rows ldb apart). */
static void FN(micro_kernel_cols)(size_t kc, const T *restrict a, const T *restrict b, size_t ldb, T alpha, T beta,
                                  T *restrict c, size_t ldc, size_t mr)
{
    FN(micro_tile_packed_a)(kc, a, b, ldb, alpha, beta, c, ldc, mr, NR);
}

/* Pack rows [0, mc) x cols [0, kc) of A into MR-row micro-panels: element
 * (r, p) of panel q goes to dst[q*MR*kc + p*MR + r]; rows past mc are zero. */
static void FN(pack_a)(size_t mc, size_t kc, const T *a, size_t lda, T *restrict dst)
{
    for (size_t i0 = 0; i0 < mc; i0 += MR, dst += MR * kc) {
        size_t rows = min_size(MR, mc - i0);
        for (size_t r = 0; r < rows; r++) {
            const T *src = a + (i0 + r) * lda;
            for (size_t p = 0; p < kc; p++)
                dst[p * MR + r] = src[p];
        }
        for (size_t r = rows; r < MR; r++)
            for (size_t p = 0; p < kc; p++)
                dst[p * MR + r] = 0;
    }
}

/* Pack NR-column micro-panel q of the kc x nc block of B: row p of the panel
 * goes to dst[q*NR*kc + p*NR]; columns past nc are zero. */
static void FN(pack_b_panel)(size_t q, size_t nc, size_t kc, const T *b, size_t ldb, T *restrict dst)
{
    size_t j0 = q * (size_t)NR, cols = min_size((size_t)NR, nc - j0);
    dst += j0 * kc;
    for (size_t p = 0; p < kc; p++, dst += NR) {
        memcpy(dst, b + p * ldb + j0, cols * sizeof(T));
        for (size_t j = cols; j < (size_t)NR; j++)
            dst[j] = 0;
    }
}

/* C = beta * C (k == 0 or alpha == 0); beta == 0 writes zeros without reading. */
static void FN(scale_c)(size_t m, size_t n, T beta, T *c, size_t ldc)
{
    if (beta == 1)
        return;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            c[i * ldc + j] = beta == 0 ? (T)0 : beta * c[i * ldc + j];
}

/* Serial blocked product on one cell of C (m x n), with private packing
 * buffers: B blocks of up to NC columns, A blocks of MC rows, k in slices of
 * kc_step. alpha and beta as in BLAS; beta == 0 means C is not read. */
static void FN(gemm_cell)(size_t m, size_t n, size_t k, size_t kc_step, T alpha, const T *a, size_t lda,
                          const T *b, size_t ldb, T beta, T *c, size_t ldc, T *apack, T *bpack)
{
    const bool direct_a = (n + NR - 1) / (size_t)NR <= DIRECT_A_PANELS;
    const bool direct_b = !direct_a && (m + MR - 1) / MR <= DIRECT_B_TILES;
    for (size_t jc = 0; jc < n; jc += GEMM_NC) {
        size_t nc = min_size(GEMM_NC, n - jc);
        size_t panels = (nc + NR - 1) / (size_t)NR;
        for (size_t pc = 0; pc < k; pc += kc_step) {
            size_t kc = min_size(kc_step, k - pc);
            T beta_eff = pc == 0 ? beta : (T)1; /* later slices accumulate */
            /* direct_b: only a ragged last panel is packed */
            for (size_t q = direct_b ? nc / NR : 0; q < panels; q++)
                FN(pack_b_panel)(q, nc, kc, b + pc * ldb + jc, ldb, bpack);
            for (size_t ic = 0; ic < m; ic += GEMM_MC) {
                size_t mc = min_size(GEMM_MC, m - ic);
                if (direct_a) { /* whole row tiles from A itself, the ragged last one packed */
                    size_t whole = mc / MR * MR;
                    if (whole < mc)
                        FN(pack_a)(mc - whole, kc, a + (ic + whole) * lda + pc, lda, apack);
                    for (size_t q = 0; q < panels; q++) {
                        size_t j0 = q * (size_t)NR, nr = min_size((size_t)NR, nc - j0);
                        for (size_t i0 = 0; i0 < whole; i0 += MR)
                            FN(micro_kernel_rows)(kc, a + (ic + i0) * lda + pc, lda, bpack + j0 * kc, alpha,
                                                  beta_eff, c + (ic + i0) * ldc + jc + j0, ldc, nr);
                        if (whole < mc)
                            FN(micro_kernel)(kc, apack, bpack + j0 * kc, alpha, beta_eff,
                                             c + (ic + whole) * ldc + jc + j0, ldc, mc - whole, nr);
                    }
                    continue;
                }
                FN(pack_a)(mc, kc, a + ic * lda + pc, lda, apack);
                /* The B micro-panel is reused across the A block's micro-panels. */
                for (size_t q = 0; q < panels; q++) {
                    size_t j0 = q * (size_t)NR, nr = min_size((size_t)NR, nc - j0);
                    for (size_t i0 = 0; i0 < mc; i0 += MR) {
                        T *ct = c + (ic + i0) * ldc + jc + j0;
                        if (direct_b && nr == (size_t)NR)
                            FN(micro_kernel_cols)(kc, apack + i0 * kc, b + pc * ldb + jc + j0, ldb, alpha, beta_eff,
                                                  ct, ldc, min_size(MR, mc - i0));
                        else
                            FN(micro_kernel)(kc, apack + i0 * kc, bpack + j0 * kc, alpha, beta_eff, ct, ldc,
                                             min_size(MR, mc - i0), nr);
                    }
                }
            }
        }
    }
}

static pb_status FN(gemm)(size_t m, size_t n, size_t k, T alpha, const T *a, size_t lda, const T *b,
                          size_t ldb, T beta, T *c, size_t ldc, int threads)
{
    if (lda < k || ldb < n || ldc < n)
        return PB_ERR_INVALID;
    if (m == 0 || n == 0)
        return PB_OK;
    if (!c || (k > 0 && alpha != 0 && (!a || !b)))
        return PB_ERR_INVALID;
    if (k == 0 || alpha == 0) {
        FN(scale_c)(m, n, beta, c, ldc);
        return PB_OK;
    }

    size_t row_tiles = (m + MR - 1) / MR, col_panels = (n + NR - 1) / (size_t)NR;
    int nt = resolve_threads(threads);
    /* Below ~2 MFLOP starting threads costs more than it saves. */
    if ((double)m * (double)n * (double)k < 1e6)
        nt = 1;
    if ((size_t)nt > row_tiles * col_panels)
        nt = (int)(row_tiles * col_panels);
    if (col_panels <= DIRECT_A_PANELS && (size_t)nt > row_tiles)
        nt = (int)row_tiles;
    /* A thin C splits by rows: split by columns, every thread would read all of A. */
    int row_groups = col_panels <= DIRECT_A_PANELS ? nt : choose_row_groups(nt, row_tiles, col_panels);
    size_t col_groups = (size_t)(nt / row_groups);
    size_t cell_rows = (row_tiles + (size_t)row_groups - 1) / (size_t)row_groups * MR;
    size_t cell_cols = (col_panels + col_groups - 1) / col_groups * (size_t)NR;

    /* Equal k slices of at most KC: no thin last slice costing a whole pass over C. */
    size_t slices = (k + GEMM_KC - 1) / GEMM_KC, kc_step = (k + slices - 1) / slices;
    size_t align = PACK_ALIGN / sizeof(T);
    size_t a_elems = round_up(min_size(cell_rows, GEMM_MC) * kc_step, align);
    size_t b_elems = round_up(min_size(cell_cols, round_up(GEMM_NC, NR)) * kc_step, align);
    T *pack = alloc_aligned((a_elems + b_elems) * (size_t)nt * sizeof(T));
    if (!pack)
        return PB_ERR_NOMEM;

    PB_OMP(omp parallel num_threads(nt) if (nt > 1))
    {
#ifdef _OPENMP
        int tid = omp_get_thread_num(), team = omp_get_num_threads();
#else
        int tid = 0, team = 1;
#endif
        T *my_pack = pack + (size_t)tid * (a_elems + b_elems);
        /* One cell per thread; if the runtime gave fewer threads than asked,
         * they share the cells out. */
        for (int cell = tid; cell < nt; cell += team) {
            size_t gm = (size_t)(cell % row_groups), gn = (size_t)(cell / row_groups);
            size_t r0 = row_tiles * gm / (size_t)row_groups * MR;
            size_t r1 = min_size(row_tiles * (gm + 1) / (size_t)row_groups * MR, m);
            size_t c0 = col_panels * gn / col_groups * (size_t)NR;
            size_t c1 = min_size(col_panels * (gn + 1) / col_groups * (size_t)NR, n);
            if (r0 < r1 && c0 < c1)
                FN(gemm_cell)(r1 - r0, c1 - c0, k, kc_step, alpha, a + r0 * lda, lda, b + c0, ldb, beta,
                              c + r0 * ldc + c0, ldc, my_pack, my_pack + a_elems);
        }
    }

    free(pack);
    return PB_OK;
}

pb_status PB_CAT(pb__gemm_blocked, SFX)(size_t m, size_t n, size_t k, T alpha, const T *a, size_t lda,
                                        const T *b, size_t ldb, T beta, T *c, size_t ldc, int threads)
{
    return FN(gemm)(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
}

#undef FN
#undef VEC
#undef W
#undef NV
#undef NR
#undef MR

#endif /* PB_GEMM_TEMPLATE */
