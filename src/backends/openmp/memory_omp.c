/* OpenMP kernels of the memory families: a cache-blocked transpose (tiles
 * small enough that a tile of the input and one of the output stay in L1),
 * the copy that bounds it, and a threaded pairwise sum. */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "backends/openmp/memory_omp.h"
#include "backends/ref/ref.h"
#include "core/backend_impl.h"

#define TILE 32 /* 32 x 32 doubles = 8 KiB: in and out tiles fit L1 together */

static int threads_of(const pb_device *dev) { return dev->threads > 0 ? dev->threads : 1; }

/* Tiles are dealt to threads over the flattened tile grid, so thin matrices
 * split as well as square ones. */
#define DEFINE_BLOCKED(T, SUFFIX)                                                            \
    static void blocked_##SUFFIX(const struct pb_transpose_args *t, int threads)            \
    {                                                                                      \
        const T *in = PB__HOST(t->in, const T);                                            \
        T *out = PB__HOST(t->out, T);                                                      \
        const size_t tr = (t->rows + TILE - 1) / TILE, tc = (t->cols + TILE - 1) / TILE;   \
        const long tiles = (long)(tr * tc);                                                \
        _Pragma("omp parallel for schedule(static) num_threads(threads)")                  \
        for (long b = 0; b < tiles; b++) {                                                 \
            size_t i0 = (size_t)b / tc * TILE, j0 = (size_t)b % tc * TILE;                 \
            size_t i1 = i0 + TILE < t->rows ? i0 + TILE : t->rows;                         \
            size_t j1 = j0 + TILE < t->cols ? j0 + TILE : t->cols;                         \
            for (size_t j = j0; j < j1; j++)                                               \
                for (size_t i = i0; i < i1; i++)                                           \
                    out[j * t->ld_out + i] = in[i * t->ld_in + j];                         \
        }                                                                                  \
    }
DEFINE_BLOCKED(float, f32)
DEFINE_BLOCKED(double, f64)

pb_status pb__omp_transpose_blocked(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_transpose_args *t = args;
    if (t->prec == PB_DOUBLE)
        blocked_f64(t, threads_of(dev));
    else
        blocked_f32(t, threads_of(dev));
    return PB_OK;
}

pb_status pb__omp_transpose_copy(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_transpose_args *t = args;
    const size_t row_bytes = t->cols * pb_precision_size(t->prec);
    const unsigned char *in = t->in ? t->in->host : NULL;
    unsigned char *out = t->out ? t->out->host : NULL;
    const size_t in_pitch = t->ld_in * pb_precision_size(t->prec), out_pitch = t->ld_out * pb_precision_size(t->prec);
    const long rows = (long)t->rows;
#pragma omp parallel for schedule(static) num_threads(threads_of(dev))
    for (long i = 0; i < rows; i++)
        memcpy(out + (size_t)i * out_pitch, in + (size_t)i * in_pitch, row_bytes);
    return PB_OK;
}

/* Each thread sums its contiguous share pairwise; the shares are added in
 * thread order, so the result does not depend on timing. */
#define MAX_THREADS 1024
pb_status pb__omp_reduce_pairwise(pb_device *dev, const void *args, pb_stream *s)
{
    (void)s;
    const struct pb_reduce_args *r = args;
    int threads = threads_of(dev);
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if ((size_t)threads > r->n)
        threads = r->n ? (int)r->n : 1;
    double part_d[MAX_THREADS];
    float part_f[MAX_THREADS];
    uint32_t part_u[MAX_THREADS];
    const void *in = r->in ? r->in->host : NULL;
    const size_t n = r->n;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
        if (r->type == PB_REDUCE_INT)
            part_u[t] = pb__sum_u32((const uint32_t *)in + lo, hi - lo);
        else if (r->type == PB_REDUCE_FLOAT_DOUBLE)
            part_d[t] = hi > lo ? pb__sum_pairwise_f32_f64((const float *)in + lo, hi - lo) : 0;
        else
            part_f[t] = hi > lo ? pb__sum_pairwise_f32((const float *)in + lo, hi - lo) : 0;
        if (t == 0 && nt < threads) /* fewer threads than asked: the rest add nothing */
            for (int k = nt; k < threads; k++)
                part_u[k] = 0, part_d[k] = 0, part_f[k] = 0;
    }
    float f = 0;
    double d = 0;
    uint32_t u = 0;
    for (int t = 0; t < threads; t++) {
        if (r->type == PB_REDUCE_INT)
            u += part_u[t];
        else if (r->type == PB_REDUCE_FLOAT_DOUBLE)
            d += part_d[t];
        else
            f += part_f[t];
    }
    pb__reduce_store(r, f, d, u);
    return PB_OK;
}
