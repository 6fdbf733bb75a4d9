/* SpMV on OpenMP threads: CSR with the study's horizontal unrolling (U
 * partial sums along one row) and vertical unrolling (U rows at once), and
 * ELLPACK. Rows are split so every thread gets the same rows + non-zeros
 * (a merge-path split of the row ends and the entries), so one long row
 * does not leave the other threads waiting. */
#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/openmp/spmv_openmp.h"
#include "core/backend_impl.h"
#include "core/core.h"
#include "core/cpuinfo.h"
#include "core/plans.h"
#include "sparse/balance.h"
#include "sparse/sparse.h"

/* Row offset i of ptr, 64-bit offsets where wide. */
static inline int64_t offset_at(const void *ptr, bool wide, int32_t i)
{
    return wide ? ((const int64_t *)ptr)[i] : ((const int32_t *)ptr)[i];
}

/* First row of thread t of n: the smallest r with r + ptr[r] >= t * (rows + nnz) / n. */
static int32_t split_row_of(const void *ptr, bool wide, int32_t rows, int t, int n)
{
    int64_t target = ((int64_t)rows + offset_at(ptr, wide, rows)) * t / n;
    int32_t lo = 0, hi = rows;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if ((int64_t)mid + offset_at(ptr, wide, mid) < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int32_t split_row(const int32_t *ptr, int32_t rows, int t, int n)
{
    return split_row_of(ptr, false, rows, t, n);
}

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

/* Row i of CSR with U partial sums (U = 1: the plain loop). */
#define ROW_H(T, U, ptr, idx, val, x, i, out)                                               \
    do {                                                                                   \
        T s_[U] = {0};                                                                     \
        int32_t k_ = ptr[i], e_ = ptr[i + 1];                                              \
        for (; k_ + (U) <= e_; k_ += (U))                                                  \
            for (int u_ = 0; u_ < (U); u_++)                                               \
                s_[u_] += val[k_ + u_] * x[idx[k_ + u_]];                                  \
        for (; k_ < e_; k_++)                                                              \
            s_[0] += val[k_] * x[idx[k_]];                                                 \
        T r_ = 0;                                                                          \
        for (int u_ = 0; u_ < (U); u_++)                                                   \
            r_ += s_[u_];                                                                  \
        out = r_;                                                                          \
    } while (0)

#define DEFINE_CSR(T, SUFFIX, NAME, U, VERTICAL)                                            \
    static void NAME##_##SUFFIX(const struct pb_spmv_args *a, int threads)                 \
    {                                                                                      \
        const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t); \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);           \
        T *y = PB__HOST(a->y, T);                                                          \
        _Pragma("omp parallel num_threads(threads)")                                       \
        {                                                                                  \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                       \
            int32_t i = split_row(ptr, a->rows, t, n), end = split_row(ptr, a->rows, t + 1, n); \
            if (VERTICAL) /* U rows side by side over their common length */              \
                for (; i + (U) <= end; i += (U)) {                                         \
                    T s_[U] = {0};                                                         \
                    int32_t common = ptr[i + 1] - ptr[i];                                  \
                    for (int u = 1; u < (U); u++)                                          \
                        if (ptr[i + u + 1] - ptr[i + u] < common)                          \
                            common = ptr[i + u + 1] - ptr[i + u];                          \
                    for (int32_t j = 0; j < common; j++)                                   \
                        for (int u = 0; u < (U); u++)                                      \
                            s_[u] += val[ptr[i + u] + j] * x[idx[ptr[i + u] + j]];         \
                    for (int u = 0; u < (U); u++) {                                        \
                        for (int32_t k = ptr[i + u] + common; k < ptr[i + u + 1]; k++)     \
                            s_[u] += val[k] * x[idx[k]];                                   \
                        y[i + u] = s_[u];                                                  \
                    }                                                                      \
                }                                                                          \
            for (; i < end; i++)                                                           \
                ROW_H(T, (VERTICAL ? 1 : (U)), ptr, idx, val, x, i, y[i]);                 \
        }                                                                                  \
    }

/* Plain CSR with 64-bit row offsets (beyond 2^31 - 1 non-zeros). */
#define DEFINE_CSR64(T, SUFFIX)                                                             \
    static void csr64_##SUFFIX(const struct pb_spmv_args *a, int threads)                  \
    {                                                                                      \
        const int64_t *ptr = PB__HOST(a->ptr, const int64_t);                              \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);            \
        T *y = PB__HOST(a->y, T);                                                          \
        _Pragma("omp parallel num_threads(threads)")                                       \
        {                                                                                  \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                       \
            int32_t end = split_row_of(ptr, true, a->rows, t + 1, n);                      \
            for (int32_t i = split_row_of(ptr, true, a->rows, t, n); i < end; i++) {       \
                T sum = 0;                                                                 \
                for (int64_t k = ptr[i]; k < ptr[i + 1]; k++)                              \
                    sum += val[k] * x[idx[k]];                                             \
                y[i] = sum;                                                                \
            }                                                                              \
        }                                                                                  \
    }

/* CSR whose gathers of x are prefetched PB_PREFETCH_AHEAD entries ahead. Where
 * x outgrows the cache, each gather is a miss the hardware cannot foresee (the
 * columns are data), and a thread's loop stalls on one at a time; asked for
 * ahead, many are in flight at once (2-core EPYC, a loop alone, x of 32 MiB,
 * 4M rows of 3 random columns: 44.6 -> 30.4 ms; 8 a row 98 -> 72; float
 * 23.4 -> 18.7). Stencils and bands, whose x the hardware prefetches, run
 * 1.1-1.4x slower: auto times it beside csr. The last entry bounds the
 * look-ahead: idx is never read past its end. */
#define PB_PREFETCH_AHEAD 32
static inline int32_t gather_ahead(int32_t k, int32_t last)
{
    return k < last - PB_PREFETCH_AHEAD ? k + PB_PREFETCH_AHEAD : last;
}
#define DEFINE_CSR_PREFETCH(T, SUFFIX)                                                       \
    static void prefetch_##SUFFIX(const struct pb_spmv_args *a, int threads)               \
    {                                                                                      \
        const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t); \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);           \
        T *y = PB__HOST(a->y, T);                                                          \
        const int32_t last = ptr[a->rows] - 1;                                             \
        _Pragma("omp parallel num_threads(threads)")                                       \
        {                                                                                  \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                       \
            int32_t end = split_row(ptr, a->rows, t + 1, n);                               \
            for (int32_t i = split_row(ptr, a->rows, t, n); i < end; i++) {                \
                T sum = 0;                                                                 \
                for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {                            \
                    __builtin_prefetch(x + idx[gather_ahead(k, last)]);             \
                    sum += val[k] * x[idx[k]];                                             \
                }                                                                          \
                y[i] = sum;                                                                \
            }                                                                              \
        }                                                                                  \
    }

#define DEFINE_ELL(T, SUFFIX)                                                               \
    static void ell_##SUFFIX(const struct pb_spmv_args *a, int threads)                    \
    {                                                                                      \
        const int32_t *idx = PB__HOST(a->idx, const int32_t);                              \
        const T *val = PB__HOST(a->val, const T), *x = PB__HOST(a->x, const T);            \
        T *y = PB__HOST(a->y, T);                                                          \
        const size_t w = (size_t)a->width;                                                 \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                  \
        for (int32_t i = 0; i < a->rows; i++) {                                            \
            T sum = 0;                                                                     \
            for (size_t j = 0; j < w; j++) {                                               \
                int32_t c = idx[(size_t)i * w + j];                                        \
                sum += c >= 0 ? val[(size_t)i * w + j] * x[c] : 0;                         \
            }                                                                              \
            y[i] = sum;                                                                    \
        }                                                                                  \
    }

#define DEFINE_ALL(T, SUFFIX)                                                               \
    DEFINE_CSR(T, SUFFIX, csr32, 1, 0)                                                       \
    DEFINE_CSR(T, SUFFIX, h2, 2, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h4, 4, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h8, 8, 0)                                                        \
    DEFINE_CSR(T, SUFFIX, h16, 16, 0)                                                      \
    DEFINE_CSR(T, SUFFIX, v2, 2, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v4, 4, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v8, 8, 1)                                                        \
    DEFINE_CSR(T, SUFFIX, v16, 16, 1)                                                      \
    DEFINE_CSR64(T, SUFFIX)                                                                \
    DEFINE_CSR_PREFETCH(T, SUFFIX)                                                         \
    DEFINE_ELL(T, SUFFIX)

DEFINE_ALL(float, f32)
DEFINE_ALL(double, f64)

#define DEFINE_RUN(NAME)                                                                    \
    pb_status pb__omp_spmv_##NAME(pb_device *dev, const void *args, pb_stream *s)          \
    {                                                                                      \
        (void)s;                                                                           \
        const struct pb_spmv_args *a = args;                                               \
        if (a->prec == PB_DOUBLE)                                                          \
            NAME##_f64(a, threads_of(dev));                                                \
        else                                                                               \
            NAME##_f32(a, threads_of(dev));                                                \
        return PB_OK;                                                                      \
    }

static DEFINE_RUN(csr32)
static DEFINE_RUN(csr64)
DEFINE_RUN(h2)
DEFINE_RUN(h4)
DEFINE_RUN(h8)
DEFINE_RUN(h16)
DEFINE_RUN(v2)
DEFINE_RUN(v4)
DEFINE_RUN(v8)
DEFINE_RUN(v16)
DEFINE_RUN(ell)
DEFINE_RUN(prefetch)

pb_status pb__omp_spmv_csr(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    return a->ptr_bits == 64 ? pb__omp_spmv_csr64(dev, args, s) : pb__omp_spmv_csr32(dev, args, s);
}

/* ---- bcsr ------------------------------------------------------------------ */

/* The copies a matrix's kernels read besides its CSR. */
enum omp_kernel { K_CSR, K_BCSR, K_DIA, K_PANELS, K_HUBS, K_PREFETCH, K_COUNT };
static const char *const kernel_names[K_COUNT] = {"csr", "bcsr", "dia", "csr-panels", "csr-hubs", "csr-prefetch"};

/* csr-panels' copy: the matrix cut into n panels of `width` columns, each a
 * CSR matrix of its own (row offsets ptr[p], entries idx[p] / val[p]). */
struct omp_panels {
    int n;
    int32_t width;
    int32_t **ptr, **idx;
    void **val;
};

/* What the device keeps for a matrix, one per matrix in use (core/plans.h):
 * the block copy bcsr ran on (stamps of the CSR arrays it came from;
 * refused_b: none made, the best size moved more than CSR, ratio), the
 * diagonal copy dia ran on (likewise), and auto's pick. */
struct omp_plan {
    struct pb_bcsr m;
    uint64_t ptr, idx, val;
    enum pb_precision prec;
    int refused_b;
    double ratio;
    struct pb_dia d;
    uint64_t d_stamp[3];
    enum pb_precision d_prec;
    bool d_refused;
    int d_diags;
    double d_ratio;
    struct omp_panels p; /* the panel copy csr-panels ran on (likewise) */
    uint64_t p_stamp[3];
    enum pb_precision p_prec;
    bool p_refused;
    size_t p_cache, p_l2; /* bytes of the last-level and level-2 caches, read on first use */
    /* csr-hubs' columns renumbered (h_idx), its hubs and x renumbered (h_x),
     * for the column indices with stamp h_stamp in h_prec, or why not */
    struct pb_hubs h;
    int32_t *h_idx;
    void *h_x;
    uint64_t h_stamp;
    enum pb_precision h_prec;
    bool h_refused, h_any;
    /* auto's pick for the arrays with stamps auto_stamp[3], in auto_prec,
     * and each kernel's time when timed (0: not a candidate) */
    uint64_t auto_stamp[3];
    enum pb_precision auto_prec;
    enum omp_kernel auto_pick;
    int auto_b;
    double auto_ms[K_COUNT], auto_ratio;
};

static void *plan_make(void) { return calloc(1, sizeof(struct omp_plan)); }

static void panels_free(struct omp_panels *m)
{
    for (int q = 0; q < m->n; q++) {
        free(m->ptr[q]);
        free(m->idx[q]);
        free(m->val[q]);
    }
    free(m->ptr);
    free(m->idx);
    free(m->val);
    memset(m, 0, sizeof *m);
}

static void hubs_free(struct omp_plan *c)
{
    pb__hubs_free(&c->h);
    free(c->h_idx);
    free(c->h_x);
    c->h_idx = NULL, c->h_x = NULL, c->h_stamp = 0;
}

static void plan_drop(void *plan)
{
    struct omp_plan *c = plan;
    pb__bcsr_free(&c->m);
    pb__dia_free(&c->d);
    panels_free(&c->p);
    hubs_free(c);
    free(c);
}

void pb__omp_spmv_release(pb_device *dev)
{
    if (!dev->impl)
        return;
    pb__plans_clear(dev->impl);
    free(dev->impl);
    dev->impl = NULL;
}

void pb__omp_spmv_buf_gone(pb_device *dev, const pb_buf *buf)
{
    if (dev->impl)
        pb__plans_forget(dev->impl, buf);
}

/* What the device keeps for a's matrix; NULL: out of memory (said). */
static struct omp_plan *plan_of(pb_device *dev, const struct pb_spmv_args *a)
{
    struct pb_plans *p = dev->impl;
    if (!p && (p = dev->impl = calloc(1, sizeof *p)))
        p->make = plan_make, p->drop = plan_drop;
    if (!p) {
        pb__fail(PB_ERR_NOMEM, "out of host memory");
        return NULL;
    }
    return pb__plans_for(p, a->ptr);
}

static pb_status bcsr_ready(pb_device *dev, const struct pb_spmv_args *a, struct omp_plan **out)
{
    struct omp_plan *c = plan_of(dev, a);
    if (!c)
        return PB_ERR_NOMEM;
    *out = c;
    int forced = pb__bcsr_forced_b();
    bool same = c->ptr == a->ptr->stamp && c->idx == a->idx->stamp && c->val == a->val->stamp && c->prec == a->prec;
    if (same && c->m.b && (!forced || forced == c->m.b))
        return PB_OK;
    if (same && c->refused_b && !forced)
        return pb__bcsr_refuse(c->refused_b, c->ratio);
    pb__bcsr_free(&c->m);
    c->ptr = c->idx = c->val = 0, c->refused_b = 0;
    const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t);
    size_t elt = pb_precision_size(a->prec);
    int b = pb__bcsr_pick(ptr, idx, a->rows, a->cols, elt, &c->ratio);
    pb_status st = PB_OK;
    if (forced || (!b && a->nnz == 0))
        b = forced ? forced : 2; /* without non-zeros any size does */
    else if (!b || c->ratio >= 1)
        st = pb__bcsr_refuse(b, c->ratio), c->refused_b = b;
    if (st == PB_OK)
        st = pb__bcsr_build(ptr, idx, a->val->host, elt, a->rows, a->cols, b, &c->m);
    if (st == PB_OK || c->refused_b)
        c->ptr = a->ptr->stamp, c->idx = a->idx->stamp, c->val = a->val->stamp, c->prec = a->prec;
    return st;
}

/* Block rows split over threads by block rows + blocks; each block's B x B
 * values row by row against its B entries of x (fewer in the last block
 * column, whose columns past the matrix hold zeros). */
#define DEFINE_BCSR(T, SUFFIX, B)                                                              \
    static void bcsr_##SUFFIX##_##B(const struct pb_bcsr *m, const struct pb_spmv_args *a, int threads) \
    {                                                                                          \
        const T *val = m->val, *x = PB__HOST(a->x, const T);                                   \
        T *y = PB__HOST(a->y, T);                                                              \
        _Pragma("omp parallel num_threads(threads)")                                          \
        {                                                                                      \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                           \
            int32_t first = split_row(m->ptr, m->block_rows, t, n),                            \
                    last = split_row(m->ptr, m->block_rows, t + 1, n);                          \
            for (int32_t br = first; br < last; br++) {                                        \
                T sum[B] = {0};                                                                \
                for (int32_t k = m->ptr[br]; k < m->ptr[br + 1]; k++) {                        \
                    const T *v = val + (size_t)k * B * B, *xb = x + (size_t)m->idx[k] * B;     \
                    int32_t width = a->cols - m->idx[k] * B;                                   \
                    if (width >= B) {                                                          \
                        for (int r = 0; r < B; r++)                                            \
                            for (int q = 0; q < B; q++)                                        \
                                sum[r] += v[r * B + q] * xb[q];                                \
                    } else {                                                                   \
                        for (int r = 0; r < B; r++)                                            \
                            for (int q = 0; q < width; q++)                                    \
                                sum[r] += v[r * B + q] * xb[q];                                \
                    }                                                                          \
                }                                                                              \
                for (int r = 0; r < B && br * B + r < a->rows; r++)                            \
                    y[br * B + r] = sum[r];                                                    \
            }                                                                                  \
        }                                                                                      \
    }
#define DEFINE_BCSR_ALL(T, SUFFIX)                                                             \
    DEFINE_BCSR(T, SUFFIX, 2)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 3)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 4)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 5)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 6)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 7)                                                                  \
    DEFINE_BCSR(T, SUFFIX, 8)                                                                  \
    static void bcsr_##SUFFIX(const struct pb_bcsr *m, const struct pb_spmv_args *a, int threads) \
    {                                                                                          \
        static void (*const by_b[])(const struct pb_bcsr *, const struct pb_spmv_args *, int) = { \
            bcsr_##SUFFIX##_2, bcsr_##SUFFIX##_3, bcsr_##SUFFIX##_4, bcsr_##SUFFIX##_5,        \
            bcsr_##SUFFIX##_6, bcsr_##SUFFIX##_7, bcsr_##SUFFIX##_8};                          \
        by_b[m->b - 2](m, a, threads);                                                         \
    }
DEFINE_BCSR_ALL(float, f32)
DEFINE_BCSR_ALL(double, f64)

pb_status pb__omp_spmv_bcsr(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_spmv_args *a = args;
    if (a->rows == 0)
        return PB_OK;
    struct omp_plan *c = NULL;
    pb_status st = bcsr_ready(dev, a, &c);
    if (st != PB_OK)
        return st;
    if (a->prec == PB_DOUBLE)
        bcsr_f64(&c->m, a, threads_of(dev));
    else
        bcsr_f32(&c->m, a, threads_of(dev));
    return PB_OK;
}

pb_status pb__omp_spmv_bcsr_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *c = NULL;
    pb_status st = a->rows ? bcsr_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && c && note)
        snprintf(note, len, "%dx%d blocks: %d, %.2f stored per non-zero", c->m.b, c->m.b, c->m.blocks,
                 a->nnz ? (double)c->m.blocks * c->m.b * c->m.b / (double)a->nnz : 0);
    return st;
}

/* ---- dia ------------------------------------------------------------------- */

static pb_status dia_ready(pb_device *dev, const struct pb_spmv_args *a, struct omp_plan **out)
{
    struct omp_plan *c = plan_of(dev, a);
    if (!c)
        return PB_ERR_NOMEM;
    *out = c;
    bool same = c->d_stamp[0] == a->ptr->stamp && c->d_stamp[1] == a->idx->stamp && c->d_stamp[2] == a->val->stamp &&
                c->d_prec == a->prec;
    if (same)
        return c->d_refused ? pb__dia_refuse(c->d_diags, c->d_ratio) : PB_OK;
    pb__dia_free(&c->d);
    const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t);
    size_t elt = pb_precision_size(a->prec);
    struct pb_dia_shape shape;
    c->d_diags = pb__dia_pick(ptr, idx, a->rows, a->cols, elt, &shape, &c->d_ratio);
    /* PARBENCH_DIA_ANY: any ratio (tests run the kernel on every matrix of few diagonals) */
    c->d_refused = c->d_diags == 0 || (c->d_ratio >= 1 && !getenv("PARBENCH_DIA_ANY"));
    pb_status st = c->d_refused ? pb__dia_refuse(c->d_diags, c->d_ratio)
                                : pb__dia_build(ptr, idx, a->val->host, elt, a->rows, a->cols, &shape, &c->d);
    if (st == PB_OK || c->d_refused) {
        c->d_stamp[0] = a->ptr->stamp, c->d_stamp[1] = a->idx->stamp, c->d_stamp[2] = a->val->stamp;
        c->d_prec = a->prec;
    }
    return st;
}

/* Rows in chunks that stay in cache while every diagonal adds to them; each
 * diagonal only over the rows it spans. Entries of a row are added in
 * ascending column order, as CSR's sorted rows. */
#define DIA_CHUNK 1024
#define DEFINE_DIA(T, SUFFIX)                                                                  \
    static void dia_##SUFFIX(const struct pb_dia *m, const struct pb_spmv_args *a, int threads) \
    {                                                                                          \
        const T *val = m->val, *x = PB__HOST(a->x, const T);                                   \
        T *y = PB__HOST(a->y, T);                                                              \
        int64_t rows = m->rows, chunks = (rows + DIA_CHUNK - 1) / DIA_CHUNK;                   \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                      \
        for (int64_t c = 0; c < chunks; c++) {                                                 \
            T acc[DIA_CHUNK] = {0};                                                            \
            int64_t i0 = c * DIA_CHUNK, i1 = i0 + DIA_CHUNK < rows ? i0 + DIA_CHUNK : rows;     \
            for (int q = 0; q < m->diags; q++) {                                               \
                int64_t off = m->offset[q], first = m->first[q], end = first + m->count[q];    \
                int64_t lo = i0 > first ? i0 : first, hi = i1 < end ? i1 : end;                \
                const T *v = val + m->start[q];                                                \
                for (int64_t i = lo; i < hi; i++)                                              \
                    acc[i - i0] += v[i - first] * x[i + off];                                  \
            }                                                                                  \
            memcpy(y + i0, acc, (size_t)(i1 - i0) * sizeof(T));                                \
        }                                                                                      \
    }
DEFINE_DIA(float, f32)
DEFINE_DIA(double, f64)

pb_status pb__omp_spmv_dia(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_spmv_args *a = args;
    if (a->rows == 0)
        return PB_OK;
    struct omp_plan *c = NULL;
    pb_status st = dia_ready(dev, a, &c);
    if (st != PB_OK)
        return st;
    if (a->prec == PB_DOUBLE)
        dia_f64(&c->d, a, threads_of(dev));
    else
        dia_f32(&c->d, a, threads_of(dev));
    return PB_OK;
}

pb_status pb__omp_spmv_dia_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *c = NULL;
    pb_status st = a->rows ? dia_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && c && note)
        snprintf(note, len, "%d diagonal%s, %.2fx CSR's bytes", c->d.diags, c->d.diags == 1 ? "" : "s", c->d_ratio);
    return st;
}

/* ---- csr-panels ------------------------------------------------------------ */

/* Where x outgrows the last-level cache, the gathers of x go to memory
 * a cache line each. csr-panels cuts the matrix into panels of columns whose
 * share of x fits in half of it, and runs them one after the other, every
 * thread on its own rows (the same rows in every panel), adding into y: the
 * gathers then hit the cache, for y read and written once more a panel.
 * (2-core EPYC, L3 32 MiB, double: 4M x 4M with 8 random columns a row from
 * 64.7 to 45.9 ms in 2 panels; 209715 x 3.1M, 30 a row, from 9.4 to 6.7 ms;
 * x of 8 MiB in 2 panels: 7.1 to 10.5 ms.) */
/* Where rows are long, panels are cut finer, for half the level-2 cache, as
 * long as each keeps PB_PANEL_ROW_MIN entries of a row on average: the extra
 * y is then small beside the gathers it keeps in L2 (2-core Xeon VM, L2
 * 2 MiB, L3 300 MiB; 32768 x 4M, 1024 a row, double: csr 158 ms, 144 in 2
 * panels, 97 in 8, 60 in 32, 58 in 64; librsb-tuned 97). */
/* Scattered gathers miss the last-level cache well before x fills half of
 * it: an x of a quarter to a half of it is cut in two (2-core EPYC, L3 32 MiB,
 * float, x 16 MiB, 4M rows, csr -> 2 panels, fastest of 3 rounds: random 8 a
 * row 112 -> 67 ms, rmat 152 -> 91, pareto 86 -> 65, gaps 54 -> 40, plap2d
 * 48 -> 40; lap3d, band and blocks twice as slow, which auto, timing both,
 * leaves to csr). */
static int panels_wanted(struct omp_plan *c, const struct pb_spmv_args *a)
{
    if (!c->p_cache) /* read once per matrix, not per product */
        c->p_cache = pb__cpu_last_cache_bytes(), c->p_l2 = pb__cpu_l2_cache_bytes();
    const double x_bytes = (double)a->cols * (double)pb_precision_size(a->prec);
    int n = pb__panels_for_rows(x_bytes, c->p_cache / 2.0, c->p_l2 / 2.0, a->rows ? (double)a->nnz / a->rows : 0);
    if (n == 0 && c->p_cache && x_bytes > c->p_cache / 4.0)
        n = 2;
    return n;
}

static pb_status panels_refuse(const struct omp_plan *c, const struct pb_spmv_args *a)
{
    if (!c->p_cache)
        return pb__fail(PB_ERR_UNSUPPORTED, "the last-level cache's size is unknown here: no panels");
    return pb__fail(PB_ERR_UNSUPPORTED,
                    "x (%.1f MiB) fits in a quarter of the %.1f MiB last-level cache, and rows of %.1f entries are too "
                    "short to cut for the %.1f MiB level-2 cache: no panels",
                    (double)a->cols * (double)pb_precision_size(a->prec) / 1048576.0, (double)c->p_cache / 1048576.0,
                    a->rows ? (double)a->nnz / a->rows : 0.0, (double)c->p_l2 / 1048576.0);
}

/* The copy in n panels: each row's entries counted per panel, the offsets
 * summed, then the entries filed in row order. */
static pb_status panels_build(const struct pb_spmv_args *a, int n, int threads, struct omp_panels *m)
{
    const int32_t *ptr = PB__HOST(a->ptr, const int32_t), *idx = PB__HOST(a->idx, const int32_t);
    const char *val = PB__HOST(a->val, const char);
    size_t elt = pb_precision_size(a->prec), rows = (size_t)a->rows;
    pb_status st = pb__host_mem_need((double)a->nnz * (double)(elt + 4) + (double)n * (double)(rows + 1) * 4,
                                     "openmp/csr-panels", "for its copy of the matrix");
    if (st != PB_OK)
        return st;
    int32_t width = (int32_t)(((int64_t)a->cols + n - 1) / n);
    m->n = n, m->width = width > 0 ? width : 1;
    m->ptr = calloc((size_t)n, sizeof *m->ptr), m->idx = calloc((size_t)n, sizeof *m->idx);
    m->val = calloc((size_t)n, sizeof *m->val);
    bool ok = m->ptr && m->idx && m->val;
    for (int q = 0; ok && q < n; q++)
        ok = (m->ptr[q] = calloc(rows + 1, sizeof **m->ptr)) != NULL;
    if (!ok) {
        panels_free(m);
        return pb__fail(PB_ERR_NOMEM, "csr-panels: row offsets of %d panels of %zu rows", n, rows);
    }
    const int32_t w = m->width;
    _Pragma("omp parallel for schedule(static) num_threads(threads)")
    for (int32_t i = 0; i < a->rows; i++)
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++)
            m->ptr[idx[k] / w][i + 1]++;
    for (int q = 0; ok && q < n; q++) {
        int32_t *o = m->ptr[q];
        for (size_t i = 0; i < rows; i++)
            o[i + 1] += o[i];
        ok = (m->idx[q] = malloc((size_t)o[rows] * sizeof **m->idx + 1)) != NULL &&
             (m->val[q] = malloc((size_t)o[rows] * elt + 1)) != NULL;
    }
    if (!ok) {
        panels_free(m);
        return pb__fail(PB_ERR_NOMEM, "csr-panels: a copy of %" PRId64 " entries", a->nnz);
    }
    _Pragma("omp parallel for schedule(static) num_threads(threads)")
    for (int32_t i = 0; i < a->rows; i++) {
        int32_t at[PB_PANELS_MAX];
        for (int q = 0; q < n; q++)
            at[q] = m->ptr[q][i];
        for (int32_t k = ptr[i]; k < ptr[i + 1]; k++) {
            int q = idx[k] / w;
            m->idx[q][at[q]] = idx[k];
            memcpy((char *)m->val[q] + (size_t)at[q]++ * elt, val + (size_t)k * elt, elt);
        }
    }
    return PB_OK;
}

static pb_status panels_ready(pb_device *dev, const struct pb_spmv_args *a, struct omp_plan **out)
{
    struct omp_plan *c = plan_of(dev, a);
    if (!c)
        return PB_ERR_NOMEM;
    *out = c;
    int n = panels_wanted(c, a);
    bool same = c->p_stamp[0] == a->ptr->stamp && c->p_stamp[1] == a->idx->stamp && c->p_stamp[2] == a->val->stamp &&
                c->p_prec == a->prec && (c->p_refused ? n == 0 : n == c->p.n);
    if (same)
        return c->p_refused ? panels_refuse(c, a) : PB_OK;
    panels_free(&c->p);
    memset(c->p_stamp, 0, sizeof c->p_stamp);
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "openmp/csr-panels reads 32-bit row offsets");
    c->p_refused = n == 0;
    pb_status st = c->p_refused ? panels_refuse(c, a) : panels_build(a, n, threads_of(dev), &c->p);
    if (st == PB_OK || c->p_refused) {
        c->p_stamp[0] = a->ptr->stamp, c->p_stamp[1] = a->idx->stamp, c->p_stamp[2] = a->val->stamp;
        c->p_prec = a->prec;
    }
    return st;
}

/* Each thread keeps its rows (split by rows + non-zeros of the whole matrix)
 * in every panel; the threads meet after each panel, so that all of them
 * gather from the same part of x. Gathers prefetched as csr-prefetch's: a
 * panel's x is in the last-level cache, not closer (2-core EPYC, 2 panels,
 * two rounds: random 4M x 8 double 88-105 -> 60-75 ms, float 68-69 -> 51-52;
 * pareto:4M:16:2.5 float 91-142 -> 70-79). */
#define DEFINE_PANELS(T, SUFFIX)                                                                 \
    static void panels_##SUFFIX(const struct omp_panels *m, const struct pb_spmv_args *a, int threads) \
    {                                                                                            \
        const int32_t *ptr = PB__HOST(a->ptr, const int32_t);                                    \
        const T *x = PB__HOST(a->x, const T);                                                    \
        T *y = PB__HOST(a->y, T);                                                                \
        _Pragma("omp parallel num_threads(threads)")                                             \
        {                                                                                        \
            int t = omp_get_thread_num(), n = omp_get_num_threads();                             \
            int32_t first = split_row(ptr, a->rows, t, n), end = split_row(ptr, a->rows, t + 1, n); \
            for (int q = 0; q < m->n; q++) {                                                     \
                const int32_t *o = m->ptr[q], *c = m->idx[q], last = o[a->rows] - 1;              \
                const T *v = m->val[q];                                                          \
                for (int32_t i = first; i < end; i++) {                                          \
                    T sum = 0;                                                                   \
                    for (int32_t k = o[i]; k < o[i + 1]; k++) {                                  \
                        __builtin_prefetch(x + c[gather_ahead(k, last)]);              \
                        sum += v[k] * x[c[k]];                                                   \
                    }                                                                            \
                    y[i] = q ? y[i] + sum : sum;                                                 \
                }                                                                                \
                _Pragma("omp barrier")                                                           \
            }                                                                                    \
        }                                                                                        \
    }
DEFINE_PANELS(float, f32)
DEFINE_PANELS(double, f64)

pb_status pb__omp_spmv_panels(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_spmv_args *a = args;
    if (a->rows == 0)
        return PB_OK;
    struct omp_plan *c = NULL;
    pb_status st = panels_ready(dev, a, &c);
    if (st != PB_OK)
        return st;
    if (a->prec == PB_DOUBLE)
        panels_f64(&c->p, a, threads_of(dev));
    else
        panels_f32(&c->p, a, threads_of(dev));
    return PB_OK;
}

pb_status pb__omp_spmv_panels_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *c = NULL;
    pb_status st = a->rows ? panels_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && c && note)
        snprintf(note, len, "%d panels of %d columns (x's share %.1f MiB)", c->p.n, c->p.width,
                 (double)c->p.width * (double)pb_precision_size(a->prec) / 1048576.0);
    return st;
}

/* ---- csr-hubs -------------------------------------------------------------- */

/* A graph's hub columns (sparse.h) renumbered to the front of x, so that the
 * gathers that keep coming back to them hit a few packed cache lines; x is
 * renumbered before each product, and csr runs over the copy. */
static pb_status hubs_make(struct omp_plan *c, const struct pb_spmv_args *a, int threads)
{
    const int32_t *idx = PB__HOST(a->idx, const int32_t);
    size_t elt = pb_precision_size(a->prec);
    pb_status st = pb__host_mem_need((double)a->nnz * 4 + (double)a->cols * (double)(4 + 2 * elt), "openmp/csr-hubs",
                                     "for its copy");
    if (st != PB_OK)
        return st;
    int32_t *count = calloc((size_t)a->cols + 1, sizeof *count);
    if (!count)
        return pb__fail(PB_ERR_NOMEM, "csr-hubs: counts of %d columns", a->cols);
    for (int64_t k = 0; k < a->nnz; k++)
        count[idx[k]]++;
    st = pb__hubs_plan(count, a->cols, a->nnz, c->h_any, &c->h, count); /* count becomes the labels */
    if (st == PB_OK && (!(c->h_idx = malloc((size_t)a->nnz * sizeof *c->h_idx + 1)) ||
                        !(c->h_x = malloc(((size_t)c->h.n + (size_t)a->cols) * elt + 1))))
        st = pb__fail(PB_ERR_NOMEM, "csr-hubs: a copy of %" PRId64 " column indices", a->nnz);
    if (st == PB_OK) {
        _Pragma("omp parallel for schedule(static) num_threads(threads)")
        for (int64_t k = 0; k < a->nnz; k++)
            c->h_idx[k] = count[idx[k]];
    }
    free(count);
    return st;
}

static pb_status hubs_ready(pb_device *dev, const struct pb_spmv_args *a, struct omp_plan **out)
{
    struct omp_plan *c = plan_of(dev, a);
    if (!c)
        return PB_ERR_NOMEM;
    *out = c;
    bool any = getenv("PARBENCH_HUBS_ANY") != NULL; /* tests: whatever share the hubs hold */
    if (c->h_stamp && c->h_stamp == a->idx->stamp && c->h_prec == a->prec && c->h_any == any)
        return c->h_refused ? pb__hubs_refuse(c->h.share) : PB_OK;
    hubs_free(c);
    if (a->ptr_bits == 64)
        return pb__fail(PB_ERR_UNSUPPORTED, "openmp/csr-hubs reads 32-bit row offsets");
    c->h_any = any;
    pb_status st = hubs_make(c, a, threads_of(dev));
    c->h_refused = st == PB_ERR_UNSUPPORTED;
    if (st != PB_OK) {
        double share = c->h.share;
        hubs_free(c);
        c->h.share = share;
        if (!c->h_refused)
            return st;
    }
    c->h_stamp = a->idx->stamp, c->h_prec = a->prec;
    return st;
}

#define DEFINE_HUBS_X(T, SUFFIX)                                                                 \
    static void hubs_x_##SUFFIX(const struct omp_plan *c, const struct pb_spmv_args *a, int threads) \
    {                                                                                            \
        const T *x = PB__HOST(a->x, const T);                                                    \
        T *xh = c->h_x;                                                                          \
        const int32_t n = c->h.n, *list = c->h.list;                                             \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                        \
        for (int64_t p = 0; p < (int64_t)n + a->cols; p++)                                       \
            xh[p] = p < n ? x[list[p]] : x[p - n];                                               \
    }
DEFINE_HUBS_X(float, f32)
DEFINE_HUBS_X(double, f64)

pb_status pb__omp_spmv_hubs(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    if (a->rows == 0)
        return PB_OK;
    struct omp_plan *c = NULL;
    pb_status st = hubs_ready(dev, a, &c);
    if (st != PB_OK)
        return st;
    if (a->prec == PB_DOUBLE)
        hubs_x_f64(c, a, threads_of(dev));
    else
        hubs_x_f32(c, a, threads_of(dev));
    /* csr over the renumbered columns and x: the same arguments, two arrays swapped */
    struct pb_buf idx = *a->idx, x = *a->x;
    idx.host = c->h_idx, x.host = c->h_x;
    struct pb_spmv_args b = *a;
    b.idx = &idx, b.x = &x;
    return pb__omp_spmv_csr(dev, &b, s);
}

pb_status pb__omp_spmv_hubs_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *c = NULL;
    pb_status st = a->rows ? hubs_ready(dev, a, &c) : PB_OK;
    if (st == PB_OK && c && note)
        snprintf(note, len, "%d hub columns holding %.0f%% of the entries first in x, csr over the copy", c->h.n,
                 100 * c->h.share);
    return st;
}

/* auto: csr, or a copy that moves fewer bytes than CSR -- blocks where a
 * sample of rows says so (bcsr), whole diagonals where the matrix has at most
 * 64 (dia) -- or whose gathers of x hit the cache (csr-panels, where x
 * outgrows half of it), where the candidates, timed on this machine, say it
 * runs faster. Picked once per matrix. csr's split of rows + non-zeros over the
 * threads holds on every other class of the zoo (rows of any length stay on
 * one thread, in order). No byte ratio alone decided it: on the 2-core EPYC,
 * bands whose 2x2 blocks move 0.85-0.88x CSR's bytes ran 1.3x faster as
 * blocks on one matrix and 7-14% slower on two others. */
static double seconds_of(pb_status (*run)(pb_device *, const void *, pb_stream *), pb_device *dev,
                         const struct pb_spmv_args *a)
{
    double t0 = pb__now();
    run(dev, a, NULL);
    return pb__now() - t0;
}

static pb_status (*const kernel_runs[K_COUNT])(pb_device *, const void *, pb_stream *) = {
    pb__omp_spmv_csr, pb__omp_spmv_bcsr, pb__omp_spmv_dia, pb__omp_spmv_panels, pb__omp_spmv_hubs,
    pb__omp_spmv_prefetch};

static void auto_decide(pb_device *dev, const struct pb_spmv_args *a, struct omp_plan *k)
{
    k->auto_pick = K_CSR;
    memset(k->auto_ms, 0, sizeof k->auto_ms);
    bool candidate[K_COUNT] = {[K_CSR] = true};
    int n = 1;
    double ratio = 0;
    int b = pb__bcsr_pick(PB__HOST(a->ptr, const int32_t), PB__HOST(a->idx, const int32_t), a->rows, a->cols,
                          pb_precision_size(a->prec), &ratio);
    struct omp_plan *c = NULL;
    if (b && ratio < 1 && bcsr_ready(dev, a, &c) == PB_OK)
        candidate[K_BCSR] = true, n++, k->auto_b = c->m.b, k->auto_ratio = c->ratio;
    if (dia_ready(dev, a, &c) == PB_OK)
        candidate[K_DIA] = true, n++;
    if (panels_ready(dev, a, &c) == PB_OK)
        candidate[K_PANELS] = true, n++;
    if (hubs_ready(dev, a, &c) == PB_OK)
        candidate[K_HUBS] = true, n++;
    /* csr-prefetch where x outgrows a core's level-2 cache (or its size is unknown;
     * panels_ready read it into the plan), or where tests impose it */
    const char *forced = getenv("PARBENCH_AUTO_PICK"); /* tests run every pick (as OpenCL's auto) */
    if (!k->p_l2 || (double)a->cols * (double)pb_precision_size(a->prec) > (double)k->p_l2 ||
        (forced && strcmp(forced, kernel_names[K_PREFETCH]) == 0))
        candidate[K_PREFETCH] = true, n++;
    if (n > 1) { /* in turns, one untimed product each, then the fastest of 5 */
        double best[K_COUNT];
        for (int q = 0; q < K_COUNT; q++)
            best[q] = INFINITY;
        for (int r = -1; r < 5; r++)
            for (int q = 0; q < K_COUNT; q++)
                if (candidate[q]) {
                    double t = seconds_of(kernel_runs[q], dev, a);
                    if (r >= 0)
                        best[q] = fmin(best[q], t);
                }
        for (int q = 0; q < K_COUNT; q++)
            if (candidate[q]) {
                k->auto_ms[q] = best[q] * 1e3;
                if (best[q] < best[k->auto_pick])
                    k->auto_pick = (enum omp_kernel)q;
            }
        for (int q = 0; forced && q < K_COUNT; q++)
            if (strcmp(forced, kernel_names[q]) == 0 && candidate[q])
                k->auto_pick = (enum omp_kernel)q;
        if (k->auto_pick != K_BCSR) { /* the copies are not kept for nothing */
            pb__bcsr_free(&k->m);
            k->ptr = k->idx = k->val = 0;
        }
        if (k->auto_pick != K_DIA) {
            pb__dia_free(&k->d);
            memset(k->d_stamp, 0, sizeof k->d_stamp);
        }
        if (k->auto_pick != K_PANELS) {
            panels_free(&k->p);
            memset(k->p_stamp, 0, sizeof k->p_stamp);
        }
        if (k->auto_pick != K_HUBS)
            hubs_free(k);
    }
    pb__clear_error(); /* out of memory, or no gain on the whole matrix: csr */
    k->auto_stamp[0] = a->ptr->stamp, k->auto_stamp[1] = a->idx->stamp, k->auto_stamp[2] = a->val->stamp;
    k->auto_prec = a->prec;
}

/* The plan of a's matrix with auto's pick made; NULL: csr (64-bit offsets,
 * no rows, out of memory). */
static struct omp_plan *auto_ready(pb_device *dev, const struct pb_spmv_args *a)
{
    struct omp_plan *k = a->ptr_bits == 64 || a->rows == 0 ? NULL : plan_of(dev, a);
    if (!k) {
        pb__clear_error(); /* csr needs no memory */
        return NULL;
    }
    if (k->auto_stamp[0] != a->ptr->stamp || k->auto_stamp[1] != a->idx->stamp ||
        k->auto_stamp[2] != a->val->stamp || k->auto_prec != a->prec)
        auto_decide(dev, a, k);
    return k;
}

pb_status pb__omp_spmv_auto(pb_device *dev, const void *args, pb_stream *s)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *k = auto_ready(dev, a);
    return kernel_runs[k ? k->auto_pick : K_CSR](dev, args, s);
}

pb_status pb__omp_spmv_auto_prepare(pb_device *dev, const void *args, char *note, size_t len)
{
    const struct pb_spmv_args *a = args;
    struct omp_plan *k = auto_ready(dev, a);
    enum omp_kernel pick = k ? k->auto_pick : K_CSR;
    size_t at = 0;
    pb__appendf(note, len, &at, "%s", kernel_names[pick]);
    if (pick == K_BCSR)
        pb__appendf(note, len, &at, " %dx%d", k->m.b, k->m.b);
    if (pick == K_DIA)
        pb__appendf(note, len, &at, " (%d diagonal%s)", k->d.diags, k->d.diags == 1 ? "" : "s");
    if (pick == K_PANELS)
        pb__appendf(note, len, &at, " (%d panels)", k->p.n);
    if (pick == K_HUBS)
        pb__appendf(note, len, &at, " (%d hubs)", k->h.n);
    double others = 0; /* ms of the candidates besides csr */
    for (int q = K_CSR + 1; k && q < K_COUNT; q++)
        others += k->auto_ms[q];
    if (others > 0) {
        pb__appendf(note, len, &at, ", fastest of csr %.3f ms", k->auto_ms[K_CSR]);
        if (k->auto_ms[K_BCSR] > 0)
            pb__appendf(note, len, &at, " bcsr %dx%d %.3f ms (%.2fx CSR's bytes)", k->auto_b, k->auto_b,
                        k->auto_ms[K_BCSR], k->auto_ratio);
        if (k->auto_ms[K_DIA] > 0)
            pb__appendf(note, len, &at, " dia %.3f ms (%.2fx CSR's bytes)", k->auto_ms[K_DIA], k->d_ratio);
        if (k->auto_ms[K_PANELS] > 0)
            pb__appendf(note, len, &at, " csr-panels %.3f ms", k->auto_ms[K_PANELS]);
        if (k->auto_ms[K_HUBS] > 0)
            pb__appendf(note, len, &at, " csr-hubs %.3f ms", k->auto_ms[K_HUBS]);
        if (k->auto_ms[K_PREFETCH] > 0)
            pb__appendf(note, len, &at, " csr-prefetch %.3f ms", k->auto_ms[K_PREFETCH]);
    } else {
        pb__appendf(note, len, &at, ": rows split by rows + non-zeros over %d threads", pb_device_threads(dev));
    }
    return PB_OK;
}
