/* The OpenMP backend: threaded kernels on the host CPU. Buffers are host
 * memory (the core's default), filled by all threads (first touch where the
 * kernels use them); dev->threads picks the thread count. */
#include <omp.h>

#include "anchors/anchors.h"
#include "backends/openmp/conv_omp.h"
#include "backends/openmp/gemm_blocked.h"
#include "backends/openmp/spmv_openmp.h"
#include "backends/openmp/memory_omp.h"
#include "backends/openmp/peak.h"
#include "core/backend_impl.h"
#include "core/cpuinfo.h"
#include "core/energy.h"

static int omp_device_count(void) { return 1; }

static pb_status omp_open(pb_device *dev, int index)
{
    (void)index;
    pb__cpu_model(dev->name, sizeof dev->name);
    int n = omp_get_max_threads(); /* OMP_NUM_THREADS, unchecked */
    dev->threads = n < PB_MAX_THREADS ? n : PB_MAX_THREADS;
    return PB_OK;
}

static void omp_close(pb_device *dev) { pb__omp_spmv_release(dev); }

static pb_status omp_info(pb_device *dev, struct pb_device_info *out)
{
    (void)dev;
    pb__cpu_info(out);
    pb__info_add(out, "omp_max_threads", "%d", omp_get_max_threads());
    pb__info_add(out, "omp_procs", "%d", omp_get_num_procs());
    return PB_OK;
}

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

/* Rows of C split over threads, each row computed in ikj order. */
#define DEFINE_GEMM_PAR_IKJ(T, SUFFIX)                                                       \
    static void gemm_ikj_##SUFFIX(const struct pb_gemm_args *g, int threads)               \
    {                                                                                      \
        const T *a = PB__HOST(g->a, const T), *b = PB__HOST(g->b, const T);                \
        T *c = PB__HOST(g->c, T);                                                          \
        const T alpha = (T)g->alpha, beta = (T)g->beta;                                    \
        const long m = (long)g->m;                                                         \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                  \
        for (long i = 0; i < m; i++) {                                                     \
            T *crow = &c[(size_t)i * g->ldc];                                              \
            for (size_t j = 0; j < g->n; j++)                                              \
                crow[j] = beta == 0 ? 0 : beta * crow[j];                                  \
            for (size_t p = 0; p < g->k; p++) {                                            \
                const T aip = alpha * a[(size_t)i * g->lda + p];                           \
                const T *brow = &b[p * g->ldb];                                            \
                for (size_t j = 0; j < g->n; j++)                                          \
                    crow[j] += aip * brow[j];                                              \
            }                                                                              \
        }                                                                                  \
    }

DEFINE_GEMM_PAR_IKJ(float, f32)
DEFINE_GEMM_PAR_IKJ(double, f64)

static pb_status omp_gemm_ikj(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_gemm_args *g = args;
    if (g->prec == PB_DOUBLE)
        gemm_ikj_f64(g, threads_of(dev));
    else
        gemm_ikj_f32(g, threads_of(dev));
    return PB_OK;
}

static pb_status omp_gemm_blocked(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_gemm_args *g = args;
    int t = threads_of(dev);
    if (g->prec == PB_DOUBLE)
        return pb__gemm_blocked_f64(g->m, g->n, g->k, g->alpha, PB__HOST(g->a, const double), g->lda,
                                    PB__HOST(g->b, const double), g->ldb, g->beta,
                                    PB__HOST(g->c, double), g->ldc, t);
    return pb__gemm_blocked_f32(g->m, g->n, g->k, (float)g->alpha, PB__HOST(g->a, const float),
                                g->lda, PB__HOST(g->b, const float), g->ldb, (float)g->beta,
                                PB__HOST(g->c, float), g->ldc, t);
}

static const struct pb_variant omp_variants[] = {
    {.desc = {"gemm", "ikj", "ikj loops, rows of C split over threads", 0}, .supports = NULL, .run = omp_gemm_ikj},
    {.desc = {"gemm", "blocked", "packed, cache-blocked, register-tiled SIMD kernel, threaded", 0}, .supports = NULL, .run = omp_gemm_blocked},
    {.desc = {"transpose", "blocked", "32x32 tiles dealt to threads", 0}, .supports = NULL, .run = pb__omp_transpose_blocked},
    {.desc = {"transpose", "copy", "row copies over threads: the bound (out = in)", PB_VARIANT_BOUND}, .supports = NULL, .run = pb__omp_transpose_copy},
    {.desc = {"reduce", "pairwise", "a pairwise sum per thread, added in thread order", 0}, .supports = NULL, .run = pb__omp_reduce_pairwise},
    {.desc = {"peak", "fma", "blocks of independent FMA chains in vector registers, threaded", 0}, .supports = NULL, .run = pb__omp_peak_fma},
    {.desc = {"peak", "read", "read-only sum, one slice per group, threaded", 0}, .supports = NULL, .run = pb__omp_peak_read},
    {.desc = {"peak", "copy", "STREAM Copy: a share per thread, pages first touched by their thread, streaming stores", 0}, .supports = NULL, .run = pb__omp_peak_copy},
    {.desc = {"conv", "ring", "row bands per thread, 2R+1 filtered rows in a cache-resident ring, SIMD loops", 0}, .supports = NULL, .run = pb__omp_conv_ring},
#ifdef PB_HAVE_OPENBLAS
    {.desc = {"gemm", "openblas", "OpenBLAS cblas_sgemm/dgemm", PB_VARIANT_ANCHOR}, .supports = pb__openblas_gemm_supports, .run = pb__openblas_gemm},
#endif
    {.desc = {"spmv", "csr", "CSR, rows split by rows + non-zeros over threads (32- or 64-bit row offsets)", PB_VARIANT_PTR64}, .run = pb__omp_spmv_csr, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-h2", "CSR, horizontal unrolling x2 (2 partial sums per row)", 0}, .run = pb__omp_spmv_h2, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-h4", "CSR, horizontal unrolling x4", 0}, .run = pb__omp_spmv_h4, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-h8", "CSR, horizontal unrolling x8", 0}, .run = pb__omp_spmv_h8, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-h16", "CSR, horizontal unrolling x16", 0}, .run = pb__omp_spmv_h16, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-v2", "CSR, vertical unrolling x2 (2 rows at once)", 0}, .run = pb__omp_spmv_v2, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-v4", "CSR, vertical unrolling x4", 0}, .run = pb__omp_spmv_v4, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-v8", "CSR, vertical unrolling x8", 0}, .run = pb__omp_spmv_v8, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-v16", "CSR, vertical unrolling x16", 0}, .run = pb__omp_spmv_v16, .data = &pb__spmv_csr},
    {.desc = {"spmv", "csr-prefetch", "CSR, each gather of x asked for 32 entries ahead (software prefetch): many misses in flight where x outgrows the cache; rows split as csr's", 0}, .run = pb__omp_spmv_prefetch, .data = &pb__spmv_csr},
    {.desc = {"spmv", "ell", "ELLPACK (row-major), rows split over threads", 0}, .run = pb__omp_spmv_ell, .data = &pb__spmv_ell},
    {.desc = {"spmv", "bcsr", "CSR in, a block CSR copy (made once per matrix, 2x2..8x8, the size moving the fewest bytes; refused where none moves fewer than CSR), block rows split over threads", 0}, .run = pb__omp_spmv_bcsr, .data = &pb__spmv_csr, .prepare = pb__omp_spmv_bcsr_prepare},
    {.desc = {"spmv", "dia", "CSR in, a diagonal copy (made once per matrix: stencils and bands of at most 64 diagonals, no column indices; refused where the diagonals, each stored over the rows it spans, move more bytes than CSR), rows in cache-sized chunks over threads", 0}, .run = pb__omp_spmv_dia, .data = &pb__spmv_csr, .prepare = pb__omp_spmv_dia_prepare},
    {.desc = {"spmv", "csr-panels", "CSR in, a copy cut into panels of columns whose share of x fits in half the last-level cache (made once per matrix; two where x holds a quarter to a half of it; refused where x fits in a quarter), panel after panel over threads that keep their rows, adding into y", 0}, .run = pb__omp_spmv_panels, .data = &pb__spmv_csr, .prepare = pb__omp_spmv_panels_prepare},
    {.desc = {"spmv", "csr-hubs", "CSR in, the columns renumbered once per matrix so that the hub columns (4 times the mean count of entries or more; refused where they hold under 30% of the entries) come first in x; x renumbered before each product, csr over the copy", 0}, .run = pb__omp_spmv_hubs, .data = &pb__spmv_csr, .prepare = pb__omp_spmv_hubs_prepare},
    {.desc = {"spmv", "auto", "CSR in, the kernel picked for the matrix (csr, or the fastest of csr, bcsr, dia, csr-panels, csr-hubs and csr-prefetch timed once where blocks or diagonals move fewer bytes, x outgrows a quarter of the last-level cache (csr-prefetch: a core's level-2 cache) or hub columns hold 30% of the entries; the row says which); 32- or 64-bit row offsets (csr then)", PB_VARIANT_PTR64}, .run = pb__omp_spmv_auto, .data = &pb__spmv_csr, .prepare = pb__omp_spmv_auto_prepare},
#ifdef PB_HAVE_LIBRSB
    {.desc = {"spmv", "librsb", "librsb rsb_spmv (recursive sparse blocks)", PB_VARIANT_ANCHOR}, .run = pb__rsb_spmv, .data = &pb__spmv_csr, .prepare = pb__rsb_spmv_prepare},
    {.desc = {"spmv", "librsb-tuned", "librsb rsb_spmv, the matrix re-blocked once by its autotuner (rsb_tune_spmm)", PB_VARIANT_ANCHOR}, .run = pb__rsb_spmv_tuned, .data = &pb__spmv_csr, .prepare = pb__rsb_spmv_tuned_prepare},
#endif
};

const struct pb_backend pb__backend_openmp = {
    .name = "openmp",
    .summary = "OpenMP threads on the host CPU",
    .threaded = true,
    .device_count = omp_device_count,
    .open = omp_open,
    .close = omp_close,
    .buf_gone = pb__omp_spmv_buf_gone,
    .info = omp_info,
    .energy_domain = pb__energy_domain_host,
    .fill = pb__omp_fill,
    .variants = omp_variants,
    .n_variants = sizeof omp_variants / sizeof omp_variants[0],
};
